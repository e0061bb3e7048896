#!/usr/bin/env bash
# Runs on a GPU host such as the H200 of docs/PERFORMANCE.md (read-only: queries and NVML
# getters only, never a setter).
# Usage: tools/h200-console.sh BIN [OUTDIR]   (default: a new temporary folder, printed at the end)
# Writes: snapshot.json, snapshot.txt, tui-fleet.typescript, tui-host.typescript, perf.txt,
#         smi-cost.txt
set -u
BIN=$1
OUT=${2:-$(mktemp -d)}
mkdir -p "$OUT"
FIELDS=index,uuid,name,pci.bus_id,driver_version,memory.total,memory.used,memory.free,utilization.gpu,utilization.memory,temperature.gpu,temperature.memory,power.draw,power.limit,enforced.power.limit,power.min_limit,power.max_limit,power.default_limit,clocks.sm,clocks.mem,clocks.max.sm,pstate,fan.speed,clocks_event_reasons.active,clocks_event_reasons.hw_slowdown,clocks_event_reasons.hw_thermal_slowdown,clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_power_brake_slowdown,ecc.errors.uncorrected.volatile.total,retired_pages.pending,persistence_mode,compute_mode,temperature.gpu.tlimit

"$BIN" snapshot --local --json > "$OUT/snapshot.json" 2>&1; echo "[exit $?]" >> "$OUT/snapshot.json"
"$BIN" snapshot --local > "$OUT/snapshot.txt" 2>&1; echo "[exit $?]" >> "$OUT/snapshot.txt"
# Start-up cost alone: one snapshot (NVML load + init + one read), user/sys seconds and peak RSS.
/usr/bin/time -f "snapshot --local: user_s=%U sys_s=%S max_rss_kb=%M" "$BIN" snapshot --local >/dev/null 2>> "$OUT/snapshot.txt"

# Screens: the fleet view, then the host view, each in a 160x48 pseudo-terminal.
(sleep 4; printf q) | script -q -c "stty cols 160 rows 48; TERM=xterm-256color $BIN --local" "$OUT/tui-fleet.typescript" >/dev/null 2>&1
(sleep 2; printf '\r'; sleep 4; printf q) | script -q -c "stty cols 160 rows 48; TERM=xterm-256color $BIN --local" "$OUT/tui-host.typescript" >/dev/null 2>&1

cpu_s() { awk '{printf "%.2f", ($14+$15)/'"$(getconf CLK_TCK)"'}' "/proc/$1/stat"; }

# The console at 1 s for 60 s, in the host view half of the time; with it, one nvidia-smi
# stream at -lms 1000 for 30 s (what gpufleet runs per SSH host).
(sleep 30; printf '\r'; sleep 40; printf q) | script -q -c "stty cols 160 rows 48; TERM=xterm-256color exec $BIN --local --interval-ms 1000" /dev/null >/dev/null 2>&1 &
sleep 1
PID=$(pgrep -n -x gpufleet)
nvidia-smi --query-gpu=$FIELDS --format=csv,noheader,nounits -lms 1000 > /dev/null &
SMI=$!
nvidia-smi --query-gpu=index,utilization.gpu,memory.used,temperature.gpu,power.draw --format=csv,noheader,nounits -lms 1000 > /dev/null &
SMI_MIN=$!
sleep 30
{
  echo "stream of all $(echo $FIELDS | tr ',' '\n' | wc -l) fields at -lms 1000, 30 s: cpu_s=$(cpu_s $SMI)"
  echo "stream of 5 fields at -lms 1000, 30 s: cpu_s=$(cpu_s $SMI_MIN)"
} > "$OUT/smi-cost.txt"
kill $SMI $SMI_MIN
sleep 30
{
  echo "gpufleet --local --interval-ms 1000, 61 s from start (1 s startup + 60 s):"
  echo "cpu_s=$(cpu_s $PID)"
  grep -E 'VmHWM|VmRSS|Threads' "/proc/$PID/status"
  echo "largest resident mappings (kB):"
  awk '/^[0-9a-f]+-[0-9a-f]+ /{name=$6} /^Rss:/{rss[name]+=$2} END{for (n in rss) print rss[n], n}' "/proc/$PID/smaps" | sort -rn | head -12
} > "$OUT/perf.txt"
wait
# One nvidia-smi process per second for 30 s (what a per-tick poller costs).
bash -c "for i in \$(seq 30); do nvidia-smi --query-gpu=$FIELDS --format=csv,noheader,nounits > /dev/null; sleep 1; done; times" > "$OUT/times.txt" 2>&1
echo "one process per second, 30 s (bash 'times': shell, then children user/sys):" >> "$OUT/smi-cost.txt"
cat "$OUT/times.txt" >> "$OUT/smi-cost.txt"
nvidia-smi >> "$OUT/smi-cost.txt" 2>&1
ls -la "$OUT"
