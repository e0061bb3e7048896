#!/bin/bash
# On a GPU host: what one attached console costs the watcher (benches/watch_ssh.rs with
# GPUFLEET_BENCH_ATTACH=1). The release binary watches and serves HOSTS real sshd hosts of 8
# GPUs; its CPU is read over windows of SECS seconds in turn without and with one
# `gpufleet attach` console in tmux (160x48), WINDOWS with it and one more without.
# Run from the repository root of a copy of the tree that carries target/release/gpufleet
# (GPUFLEET names another), the bench binary (BIN; `cargo bench --bench watch_ssh --no-run`
# builds it as target/release/deps/watch_ssh-<hash>) and carry/debs (tools/device-sshd.sh);
# tmux must be installed. The report lands in $OUT/attach-HOSTS.txt, the bench's output and the
# watcher's warnings (watch-main.log) beside it.
# Usage: BIN=carry/watch_ssh SECS=30 WINDOWS=2 bash tools/device-attach.sh 200
set -u
OUT=${OUT:-$(mktemp -d)}   # where the report goes: $OUT, else a new temporary folder
echo "report in $OUT" >&2
command -v tmux >/dev/null || { echo "no tmux"; exit 1; }
[ -x /usr/sbin/sshd ] || bash tools/device-sshd.sh carry/debs >/dev/null 2>&1 || { echo "no sshd"; exit 1; }
ulimit -n 20000
HOSTS=${1:-200}
SECS=${SECS:-30}
WINDOWS=${WINDOWS:-2}
BIN=${BIN:-carry/watch_ssh}
GPUFLEET_BENCH_ATTACH=1 GPUFLEET_BENCH_ATTACH_WINDOWS=$WINDOWS GPUFLEET_BENCH_SECS=$SECS \
GPUFLEET_BENCH_WATCH_LOG=$OUT \
GPUFLEET_BENCH_HOSTS=$HOSTS GPUFLEET_BENCH_BIN=${GPUFLEET:-target/release/gpufleet} \
GPUFLEET_BENCH_REPORT=$OUT/attach-$HOSTS.txt \
  timeout $(( (2 * WINDOWS + 1) * SECS + WINDOWS * 60 + 180 )) "$BIN" --bench > "$OUT/attach-$HOSTS.out" 2>&1
echo "$HOSTS hosts rc=$? | load $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$OUT/attach-$HOSTS.txt"
