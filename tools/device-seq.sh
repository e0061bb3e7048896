#!/bin/bash
# On a GPU host: fleet_ssh runs one after another, one per argument (a bench binary), so
# that a large fleet (1,000 hosts: one sshd and 8,000 stand-in streams) has the machine to
# itself; give the builds interleaved (old new old new) so drift weighs on both. Carry `carry/`
# holding the debs of tools/device-sshd.sh and the stripped bench binaries. All reports land in
# one file, $OUT/seq-$HOSTS.tar.gz.
# Usage: HOSTS=1000 SECS=40 bash tools/device-seq.sh carry/fleet_ssh.old carry/fleet_ssh ...
set -u
OUT=${OUT:-$(mktemp -d)}   # where the reports go: $OUT, else a new temporary folder
echo "reports in $OUT" >&2
bash tools/device-sshd.sh carry/debs >/dev/null 2>&1 || { echo "no sshd"; exit 1; }
ulimit -n 20000
SECS=${SECS:-40}
HOSTS=${HOSTS:-1000}
REP=$(mktemp -d)
i=0
for bin in "$@"; do
  i=$((i+1))
  name=$(basename "$bin")
  GPUFLEET_BENCH_ALLSMI=/nonexistent GPUFLEET_BENCH_REPORT=$REP/rep-$i-$name.txt \
  GPUFLEET_BENCH_HOSTS=$HOSTS GPUFLEET_BENCH_SECS=$SECS \
    timeout $((SECS+240)) "$bin" --bench > $REP/out-$i-$name.txt 2>&1
  echo "$i $name rc=$? $(grep -m1 'console CPU over' $REP/rep-$i-$name.txt | sed 's/.*= //; s/ of one core.*//') $(grep -m1 'ssh links:' $REP/rep-$i-$name.txt | sed 's/^ *//') loop $(grep -m1 "^  ${name:0:15}:" $REP/rep-$i-$name.txt | awk "{print \$2}") $(grep -m1 'peak RSS (VmHWM)' $REP/rep-$i-$name.txt | sed 's/.*: //') | $(grep -m1 'all hosts streaming' $REP/rep-$i-$name.txt) | $(grep -m1 'measured window' $REP/rep-$i-$name.txt | sed 's/.*window: //') | load $(cut -d' ' -f1-3 /proc/loadavg)"
  sleep 5
done
tar -czf "$OUT/seq-$HOSTS.tar.gz" -C "$REP" .
