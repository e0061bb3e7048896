#!/bin/bash
# On a GPU host: what following 50 jobs' logs adds to the console's CPU, as
# interleaved fleet_ssh runs without and with `--job-logs`. Needs `carry/` (in the repository root) holding the debs of
# tools/device-sshd.sh and the stripped bench binary as carry/fleet_ssh (`cargo bench --bench
# fleet_ssh --no-run`, then copy target/release/deps/fleet_ssh-*); reports land in $OUT.
# Usage: SECS=35 bash tools/device-logs-ab.sh nologs logs nologs logs nologs logs
set -u
OUT=${OUT:-$(mktemp -d)}   # where the reports go: $OUT, else a new temporary folder
echo "reports in $OUT" >&2
bash tools/device-sshd.sh carry/debs >/dev/null 2>&1 || { echo "no sshd"; exit 1; }
ulimit -n 20000
SECS=${SECS:-35}
i=0
for kind in "$@"; do
  i=$((i+1))
  jl=0; [ "$kind" = logs ] && jl=1
  GPUFLEET_BENCH_ALLSMI=/nonexistent GPUFLEET_BENCH_REPORT=$OUT/rep-$i-$kind.txt \
  GPUFLEET_BENCH_HOSTS=${HOSTS:-50} GPUFLEET_BENCH_SECS=$SECS GPUFLEET_BENCH_JOB_LOGS=$jl \
    timeout $((SECS+120)) carry/fleet_ssh --bench > $OUT/out-$i-$kind.txt 2>&1
  echo "$i $kind rc=$? $(grep -m1 -i 'cpu' $OUT/rep-$i-$kind.txt 2>/dev/null)"
done
