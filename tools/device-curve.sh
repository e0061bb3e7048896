#!/bin/bash
# On a GPU host: the fleet_ssh curve, one run per host count, each beside all-smi's SSH mode on
# the same hosts over the same window where ALLSMI names its binary (so the two clients are
# measured in the same run); left out above ALLSMI_MAX hosts (default 200).
# Needs `carry/` (in the repository root) holding the debs of tools/device-sshd.sh, the stripped bench binary and, for the
# comparison, an all-smi binary (`cargo install all-smi`). All reports land in one file,
# $OUT/curve.tar.gz, with a line a run on stdout.
# GPUFLEET_BENCH_FULL_HISTORY=1 starts every host with a full history (the bench's
# --full-history), so the window measures the console at its full size.
# Usage: BIN=carry/fleet_ssh ALLSMI=carry/all-smi SECS=30 bash tools/device-curve.sh 50 200 1000
set -u
OUT=${OUT:-$(mktemp -d)}   # where the reports go: $OUT, else a new temporary folder
echo "reports in $OUT" >&2
bash tools/device-sshd.sh carry/debs >/dev/null 2>&1 || { echo "no sshd"; exit 1; }
ulimit -n 20000
SECS=${SECS:-30}
BIN=${BIN:-carry/fleet_ssh}
ALLSMI=${ALLSMI:-/nonexistent}
REP=$(mktemp -d)
for hosts in "$@"; do
  peer=/nonexistent
  [ "$hosts" -le "${ALLSMI_MAX:-200}" ] && peer=$ALLSMI
  GPUFLEET_BENCH_ALLSMI=$peer GPUFLEET_BENCH_REPORT=$REP/rep-$hosts.txt \
  GPUFLEET_BENCH_HOSTS=$hosts GPUFLEET_BENCH_SECS=$SECS \
    timeout $((SECS+240)) "$BIN" --bench > "$REP/out-$hosts.txt" 2>&1
  echo "$hosts rc=$? | $(grep -m1 'console CPU over' "$REP/rep-$hosts.txt" | sed 's/.*= //; s/ of one core.*//') | $(grep -m1 'peak RSS (VmHWM)' "$REP/rep-$hosts.txt" | sed 's/.*: //') | $(grep -m1 "RSS at the window's end" "$REP/rep-$hosts.txt" | sed 's/;.*//') | $(grep -m1 'all hosts streaming' "$REP/rep-$hosts.txt") | $(grep -m1 'measured window' "$REP/rep-$hosts.txt" | sed 's/.*window: //') | $(grep -m1 '^all-smi' "$REP/rep-$hosts.txt" | sed 's/.*window): //') | load $(cut -d' ' -f1-3 /proc/loadavg)"
  sleep 3
done
tar -czf "$OUT/curve.tar.gz" -C "$REP" .
