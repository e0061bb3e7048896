#!/usr/bin/env bash
# What one SSH link costs a GPU host, on the host: every program the link starts there, on the
# link's own schedule, run side by side for DURATION seconds, their CPU summed. Read-only: runs
# nothing but nvidia-smi queries and `dmesg --follow-new`.
#
# Usage (from the repository root): tools/h200-remote-cost.sh [OUTDIR]
#   OUTDIR defaults to a new temporary folder, named on stderr.
#   DURATION=<seconds> (default 120). The field lists are read from src/telemetry/smi_csv.rs
#   (STREAM_FIELDS, QUERY_FIELDS, COMPUTE_APPS_FIELDS), so they cannot drift from the link's.
# Two schedules, one after the other, with the periods of LinkOptions::default():
#   unwatched: the stream (`-lms 1000`), the full query every 60 s, the process list every 30 s
#              (the watcher, and a console showing the fleet view);
#   looked at: the same with the process list every 5 s (the host's view open in the console).
# Both follow the kernel log with `dmesg --follow-new`. sshd's own share (encrypting a few
# hundred bytes a second) is not in these figures.
# Writes OUTDIR/remote-cost.txt.
set -euo pipefail

[ $# -le 1 ] || { echo "usage: $0 [OUTDIR]" >&2; exit 2; }
OUT=${1:-$(mktemp -d)}
echo "writing to $OUT" >&2
DURATION=${DURATION:-120}
SOURCE=src/telemetry/smi_csv.rs
[ -r "$SOURCE" ] || { echo "$SOURCE not found: run from the repository root" >&2; exit 2; }
command -v nvidia-smi >/dev/null || { echo "nvidia-smi not on PATH" >&2; exit 1; }

# shellcheck source=tools/smi-fields.sh
. "$(dirname "$0")/smi-fields.sh"
STREAM=$(fields_of STREAM_FIELDS)
ALL=$(fields_of QUERY_FIELDS)
APPS=$(fields_of COMPUTE_APPS_FIELDS)
# The link's periods, in seconds, from the defaults in src/remote/mod.rs.
period_of() {
  awk -v key="$1" '$1 == key ":" && $2 ~ /^[0-9_]+,$/ { gsub(/[^0-9]/, "", $2); print $2 / 1000; exit }' \
    src/remote/mod.rs
}
FULL_S=$(period_of detail_interval_ms)
APPS_LOOKED_S=$(period_of processes_interval_ms)
APPS_UNWATCHED_S=$(period_of processes_unwatched_interval_ms)
[ -n "$FULL_S" ] && [ -n "$APPS_LOOKED_S" ] && [ -n "$APPS_UNWATCHED_S" ] ||
  { echo "could not read the link's periods from src/remote/mod.rs" >&2; exit 2; }
FORMAT=--format=csv,noheader,nounits
TICK=$(getconf CLK_TCK)
mkdir -p "$OUT"
REPORT=$OUT/remote-cost.txt

# utime + stime (+ children's, for the loops) of a process, in seconds.
cpu_of() {
  local stat rest
  stat=$(cat "/proc/$1/stat") || { echo 0; return; }
  rest=${stat##*) }
  # shellcheck disable=SC2086
  set -- $rest
  awk -v u="${12}" -v s="${13}" -v cu="${14}" -v cs="${15}" -v t="$TICK" \
    'BEGIN { printf "%.3f", (u + s + cu + cs) / t }'
}

# A loop that runs one query every PERIOD seconds and, at the end, prints its children's CPU.
every() {
  local period=$1
  shift
  bash -c '
    end=$((SECONDS + $1)); period=$2; shift 2
    while [ "$SECONDS" -lt "$end" ]; do
      "$@" >/dev/null 2>&1 || true
      left=$((end - SECONDS)); [ "$left" -le 0 ] && break
      sleep "$(( period < left ? period : left ))"
    done
    times' _ "$DURATION" "$period" "$@" | sed -n 2p | awk '{
      total = 0
      for (i = 1; i <= 2; i++) { split($i, p, "m"); sub(/s$/, "", p[2]); total += p[1] * 60 + p[2] }
      printf "%.3f", total
    }'
}

run_schedule() {
  local label=$1 apps_period=$2
  nvidia-smi --query-gpu="$STREAM" "$FORMAT" -lms 1000 >"$OUT/stream-$label.csv" 2>&1 &
  local smi=$!
  local dmesg_pid=""
  if dmesg --follow-new >"$OUT/dmesg-$label.txt" 2>&1 & then dmesg_pid=$!; fi
  every "$FULL_S" nvidia-smi --query-gpu="$ALL" "$FORMAT" >"$OUT/full-$label.cpu" &
  local full=$!
  every "$apps_period" nvidia-smi --query-compute-apps="$APPS" "$FORMAT" >"$OUT/apps-$label.cpu" &
  local apps=$!
  sleep "$DURATION"
  local stream_cpu dmesg_cpu=0
  stream_cpu=$(cpu_of "$smi")
  if [ -n "$dmesg_pid" ] && [ -e "/proc/$dmesg_pid" ]; then dmesg_cpu=$(cpu_of "$dmesg_pid"); fi
  kill "$smi" 2>/dev/null || true
  [ -n "$dmesg_pid" ] && kill "$dmesg_pid" 2>/dev/null || true
  wait "$full" "$apps" 2>/dev/null || true
  local full_cpu apps_cpu
  full_cpu=$(cat "$OUT/full-$label.cpu")
  apps_cpu=$(cat "$OUT/apps-$label.cpu")
  awk -v l="$label" -v a="$stream_cpu" -v f="$full_cpu" -v p="$apps_cpu" -v k="$dmesg_cpu" \
      -v d="$DURATION" -v n="$(grep -c . "$OUT/stream-$label.csv" || true)" 'BEGIN {
    total = a + f + p + k
    printf "%s: stream %.3f s (%d lines) + full query %.3f s + process list %.3f s + dmesg %.3f s = %.3f CPU-s in %d s = %.3f%% of a core\n",
      l, a, n, f, p, k, total, d, 100 * total / d
  }' | tee -a "$REPORT"
}

{
  echo "# tools/h200-remote-cost.sh, $(date -u +%Y-%m-%dT%H:%M:%SZ), DURATION=$DURATION s, CLK_TCK=$TICK"
  echo "gpus: $(nvidia-smi --query-gpu=index "$FORMAT" | grep -c . || true)"
  echo "stream fields: $STREAM"
  echo "full query fields: $ALL"
  echo "process list fields: $APPS"
  echo "periods: full query every $FULL_S s; process list every $APPS_UNWATCHED_S s, or $APPS_LOOKED_S s while looked at"
} >"$REPORT"
run_schedule unwatched "$APPS_UNWATCHED_S"
run_schedule looked-at "$APPS_LOOKED_S"
echo "report: $REPORT"
