#!/bin/bash
# On a GPU host: two fleet_ssh runs side by side, started together, ROUNDS times, so that
# whatever the machine does meanwhile (warming up, its own daemons) weighs on both alike; the
# run-to-run drift that sequential runs on this machine showed (the same build's runs wandering
# by a third) cancels within a pair. A and B each name a bench binary and whether its hosts run
# training jobs whose logs are followed: `A=carry/fleet_ssh:0 B=carry/fleet_ssh:1` measures what
# following the logs costs; `A=carry/fleet_ssh.old:0 B=carry/fleet_ssh:0` compares
# two builds. Needs `carry/` (in the repository root) holding the debs of tools/device-sshd.sh and the
# stripped bench binaries (`cargo bench --bench fleet_ssh --no-run`, then copy
# target/release/deps/fleet_ssh-*). All reports land in one file, $OUT/pairs-$HOSTS.tar.gz.
# Usage: A=BIN:LOGS B=BIN:LOGS ROUNDS=4 SECS=35 HOSTS=50 bash tools/device-pair.sh
set -u
OUT=${OUT:-$(mktemp -d)}   # where the reports go: $OUT, else a new temporary folder
echo "reports in $OUT" >&2
bash tools/device-sshd.sh carry/debs >/dev/null 2>&1 || { echo "no sshd"; exit 1; }
ulimit -n 20000
SECS=${SECS:-35}
ROUNDS=${ROUNDS:-4}
HOSTS=${HOSTS:-50}
REP=$(mktemp -d)
one() { # round name bin job_logs
  GPUFLEET_BENCH_ALLSMI=/nonexistent GPUFLEET_BENCH_REPORT=$REP/rep-$1-$2.txt \
  GPUFLEET_BENCH_HOSTS=$HOSTS GPUFLEET_BENCH_SECS=$SECS GPUFLEET_BENCH_JOB_LOGS=$4 \
    timeout $((SECS+200)) "$3" --bench > $REP/out-$1-$2.txt 2>&1
}
for r in $(seq 1 "$ROUNDS"); do
  one "$r" A "${A%:*}" "${A##*:}" & a=$!
  one "$r" B "${B%:*}" "${B##*:}" & b=$!
  wait $a $b
  for side in A B; do
    echo "$r $side $(grep -m1 'console CPU over' $REP/rep-$r-$side.txt | sed 's/.*= //; s/ of one core.*//') $(grep -m1 'ssh links:' $REP/rep-$r-$side.txt | sed 's/^ *//') $(grep -m1 'peak RSS (VmHWM)' $REP/rep-$r-$side.txt | sed 's/.*: //')"
  done
done
tar -czf "$OUT/pairs-$HOSTS.tar.gz" -C "$REP" .
