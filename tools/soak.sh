#!/bin/bash
# A long soak of the built release: the console (in tmux, 160x48) and `gpufleet watch` side by
# side on the same HOSTS real-sshd hosts of 8 GPUs at a 1 s interval, the RSS of both (and the
# load average) logged once a minute from the moment every host streams, then the watcher's
# usual 60 s window and GPU-lost alert (`benches/watch_ssh.rs` does the work).
# Builds the release binary and the bench first unless NO_BUILD=1.
# Usage: MINUTES=120 HOSTS=50 bash tools/soak.sh [LOG]   (LOG default: target/soak-<date>.log)
set -eu
cd "$(dirname "$0")/.."
MINUTES=${MINUTES:-120}
HOSTS=${HOSTS:-50}
TARGET=${CARGO_TARGET_DIR:-target}
LOG=${1:-$TARGET/soak-$(date -u +%Y%m%dT%H%M%SZ).log}
if [ "${NO_BUILD:-0}" != 1 ]; then
  cargo build --release --locked
  cargo bench --locked --bench watch_ssh --no-run
fi
bin=$(ls -t "$TARGET"/release/deps/watch_ssh-* | grep -v '\.d$' | head -1)
# The bench runs the release binary at target/release/gpufleet under the checkout.
[ -x target/release/gpufleet ] || { echo "no target/release/gpufleet: build it first"; exit 1; }
[ "$(ulimit -n)" -ge $((HOSTS * 8 + 256)) ] || ulimit -n $((HOSTS * 8 + 256))
mkdir -p /run/sshd 2>/dev/null || true
{
  echo "soak: $MINUTES minutes, $HOSTS hosts, $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, started $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
  GPUFLEET_SOAK_MINUTES=$MINUTES GPUFLEET_SOAK_CONSOLE=1 GPUFLEET_BENCH_HOSTS=$HOSTS \
    "$bin" --bench 2>&1
  echo "ended $(date -u +%FT%TZ)"
} | tee "$LOG"
echo "log: $LOG"
