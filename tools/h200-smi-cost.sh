#!/usr/bin/env bash
# What the SSH link costs a GPU host in nvidia-smi CPU time, against a poller that starts
# nvidia-smi every second. Read-only: runs nothing but nvidia-smi queries.
#
# Usage (from the repository root): tools/h200-smi-cost.sh [OUTDIR [STREAM_FIELDS ALL_FIELDS]]
#   OUTDIR defaults to a new temporary folder, named on stderr.
#   The field lists (comma-separated) default to STREAM_FIELDS and QUERY_FIELDS of
#   src/telemetry/smi_csv.rs, read from the source so they cannot drift from what the link asks.
#   DURATION=<seconds> (default 30, a multiple of 30) lengthens every run: CPU time is counted in
#   clock ticks (10 ms at CLK_TCK 100), coarse against a stream's ~0.02 s per 30 s.
# Measures, each normalised to CPU-s per 30 s:
#   (a) one `-lms 1000` stream of the stream fields: utime+stime from /proc/PID/stat;
#   (b) the full query (all fields, no -lms) the link runs every 30 s: run DURATION/30 + 1 times
#       (both ends of the window, so it errs high), children time from bash `times`;
#   (c) one process per second with all fields (bash loop, `times`), the poller it replaces;
# and prints the ratio (c)/(a+b); the goal is at least 10.
# Writes OUTDIR/smi-split-cost.txt (summary and raw numbers) and the captured outputs.
set -euo pipefail

usage() {
  echo "usage: $0 [OUTDIR [STREAM_FIELDS ALL_FIELDS]]" >&2
  exit 2
}
[ $# -le 1 ] || [ $# -eq 3 ] || usage
OUT=${1:-$(mktemp -d)}
echo "writing to $OUT" >&2
DURATION=${DURATION:-30}
case "$DURATION" in
  '' | *[!0-9]*) echo "DURATION must be a whole number of seconds" >&2; exit 2 ;;
esac
if [ "$DURATION" -lt 30 ] || [ $((DURATION % 30)) -ne 0 ]; then
  echo "DURATION must be a multiple of 30 (the full query's period)" >&2
  exit 2
fi
SOURCE=src/telemetry/smi_csv.rs

# shellcheck source=tools/smi-fields.sh
. "$(dirname "$0")/smi-fields.sh"

if [ $# -eq 3 ]; then
  STREAM=$2
  ALL=$3
else
  if [ ! -r "$SOURCE" ]; then
    echo "$SOURCE not found: run from the repository root, or pass the field lists" >&2
    exit 2
  fi
  STREAM=$(fields_of STREAM_FIELDS)
  ALL=$(fields_of QUERY_FIELDS)
fi
count() { echo "$1" | tr ',' '\n' | grep -c .; }
if [ -z "$STREAM" ] || [ -z "$ALL" ]; then
  echo "could not read the field lists from $SOURCE" >&2
  exit 1
fi
command -v nvidia-smi >/dev/null || { echo "nvidia-smi not on PATH" >&2; exit 1; }

mkdir -p "$OUT"
REPORT=$OUT/smi-split-cost.txt
TICK=$(getconf CLK_TCK)
FORMAT=--format=csv,noheader,nounits

# CPU seconds (user + system) of a live process. The fields after the command name, which
# could itself hold ") ", are counted from its closing parenthesis: utime and stime are fields
# 14 and 15 of proc(5), so the 12th and 13th after it.
cpu_of_pid() {
  local stat rest
  stat=$(cat "/proc/$1/stat")
  rest=${stat##*) }
  # shellcheck disable=SC2086
  set -- $rest
  awk -v u="${12}" -v s="${13}" -v t="$TICK" 'BEGIN { printf "%.3f", (u + s) / t }'
}

# Children user + system seconds from the second line of bash `times` ("0m0.146s 0m0.948s").
children_cpu() {
  sed -n 2p | awk '{
    total = 0
    for (i = 1; i <= 2; i++) { split($i, p, "m"); sub(/s$/, "", p[2]); total += p[1] * 60 + p[2] }
    printf "%.3f", total
  }'
}

per30() { awk -v x="$1" -v d="$DURATION" 'BEGIN { printf "%.3f", x * 30 / d }'; }

{
  echo "# tools/h200-smi-cost.sh, $(date -u +%Y-%m-%dT%H:%M:%SZ), DURATION=$DURATION s, CLK_TCK=$TICK"
  echo "stream fields ($(count "$STREAM")): $STREAM"
  echo "all fields ($(count "$ALL")): $ALL"
} >"$REPORT"

# Both lists must be accepted, or the runs below would measure an error message.
for list in "$STREAM" "$ALL"; do
  if ! nvidia-smi --query-gpu="$list" "$FORMAT" >>"$OUT/preflight.txt" 2>&1; then
    echo "nvidia-smi refused --query-gpu=$list (see $OUT/preflight.txt)" | tee -a "$REPORT" >&2
    exit 1
  fi
done
GPUS=$(nvidia-smi --query-gpu=index "$FORMAT" | grep -c . || true)
echo "gpus: $GPUS" >>"$REPORT"

# (a) The link's long-lived stream.
nvidia-smi --query-gpu="$STREAM" "$FORMAT" -lms 1000 >"$OUT/stream.csv" 2>&1 &
SMI=$!
sleep "$DURATION"
if [ "$(cat "/proc/$SMI/comm" 2>/dev/null)" != nvidia-smi ]; then
  echo "the stream (pid $SMI) ended early: $(head -n 3 "$OUT/stream.csv")" | tee -a "$REPORT" >&2
  exit 1
fi
A_RAW=$(cpu_of_pid "$SMI")
kill "$SMI"
wait "$SMI" 2>/dev/null || true
STREAM_LINES=$(grep -c . "$OUT/stream.csv" || true)
echo "(a) stream of $(count "$STREAM") fields at -lms 1000 for $DURATION s: cpu_s=$A_RAW ($STREAM_LINES lines)" >>"$REPORT"

# (b) The link's periodic full query, both ends of each 30 s period.
RUNS=$((DURATION / 30 + 1))
B_TIMES=$(bash -c '
  for i in $(seq "$1"); do
    nvidia-smi --query-gpu="$2" "$3" >/dev/null || echo "full query failed: exit $?" >&2
    [ "$i" -lt "$1" ] && sleep 30
  done
  times' _ "$RUNS" "$ALL" "$FORMAT")
B_RAW=$(echo "$B_TIMES" | children_cpu)
{
  echo "(b) full query of $(count "$ALL") fields, $RUNS runs 30 s apart: cpu_s=$B_RAW; bash times:"
  echo "$B_TIMES"
} >>"$REPORT"

# (c) A poller: one nvidia-smi process per second with every field.
C_TIMES=$(bash -c '
  for _ in $(seq "$1"); do
    nvidia-smi --query-gpu="$2" "$3" >/dev/null || echo "query failed: exit $?" >&2
    sleep 1
  done
  times' _ "$DURATION" "$ALL" "$FORMAT")
C_RAW=$(echo "$C_TIMES" | children_cpu)
{
  echo "(c) one process per second, $(count "$ALL") fields, $DURATION runs: cpu_s=$C_RAW; bash times:"
  echo "$C_TIMES"
} >>"$REPORT"

A=$(per30 "$A_RAW")
B=$(per30 "$B_RAW")
C=$(per30 "$C_RAW")
SUMMARY=$(awk -v a="$A" -v b="$B" -v c="$C" -v tick="$TICK" -v d="$DURATION" 'BEGIN {
  link = a + b
  # Below the clock resolution, (a) and (b) each hide up to one tick.
  if (link > 0) ratio = sprintf("%.1fx", c / link)
  else ratio = sprintf("over %.0fx (a+b below the clock resolution)", c / (2 / tick * 30 / d))
  printf "summary (CPU-s per 30 s): stream (a) %.3f + full query (b) %.3f = link %.3f; ", a, b, link
  printf "process per second (c) %.3f; ratio c/(a+b) = %s; required >= 10x: %s",
    c, ratio, (link == 0 || c / link >= 10) ? "met" : "NOT met"
}')
echo "$SUMMARY" >>"$REPORT"
nvidia-smi >"$OUT/smi.txt" 2>&1 || true
echo "$SUMMARY"
echo "report: $REPORT"
