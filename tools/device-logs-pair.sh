#!/bin/bash
# On the lent machine: what following 50 jobs' logs adds to the console's CPU (issue 19), as
# fleet_ssh runs without and with `--job-logs` side by side: each round starts both at once
# (each with its own sshd, stand-ins and log writer), so whatever the machine does meanwhile
# (warming up, its own daemons) weighs on both alike; run-to-run drift, which sequential runs
# on this machine showed (the same build's runs wandering by a third), cancels in the pair.
# Carry `carry/` holding the debs of tools/device-sshd.sh and the stripped bench binary as
# carry/fleet_ssh (`cargo bench --bench fleet_ssh --no-run`, then copy
# target/release/deps/fleet_ssh-*). All reports land in one file, $OUT/pairs.tar.gz.
# Usage: ROUNDS=4 SECS=35 HOSTS=50 [BIN=carry/fleet_ssh] bash tools/device-logs-pair.sh
set -u
bash tools/device-sshd.sh carry/debs >/dev/null 2>&1 || { echo "no sshd"; exit 1; }
ulimit -n 20000
SECS=${SECS:-35}
ROUNDS=${ROUNDS:-4}
REP=$(mktemp -d)
one() { # round kind job_logs
  GPUFLEET_BENCH_ALLSMI=/nonexistent GPUFLEET_BENCH_REPORT=$REP/rep-$1-$2.txt \
  GPUFLEET_BENCH_HOSTS=${HOSTS:-50} GPUFLEET_BENCH_SECS=$SECS GPUFLEET_BENCH_JOB_LOGS=$3 \
    timeout $((SECS+120)) "${BIN:-carry/fleet_ssh}" --bench > $REP/out-$1-$2.txt 2>&1
}
for r in $(seq 1 "$ROUNDS"); do
  one "$r" nologs 0 & a=$!
  one "$r" logs 1 & b=$!
  wait $a $b
  for kind in nologs logs; do
    echo "$r $kind $(grep -m1 'console CPU over' $REP/rep-$r-$kind.txt | sed 's/.*= //; s/ of one core.*//') $(grep -m1 'ssh links:' $REP/rep-$r-$kind.txt | sed 's/^ *//')"
  done
done
tar -czf "$OUT/pairs.tar.gz" -C "$REP" .
