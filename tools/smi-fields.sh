# Sourced by the H200 measurement scripts: `fields_of NAME` prints the quoted names of
# `pub const NAME: &[&str] = &[ ... ];` in $SOURCE (src/telemetry/smi_csv.rs), joined with
# commas, so the scripts ask nvidia-smi for exactly what the link asks.
fields_of() {
  awk -v name="$1" '
    index($0, "pub const " name ":") == 1 { on = 1 }
    on { buf = buf $0 "\n"; if (index($0, "];")) exit }
    END {
      sub(/^[^=]*=/, "", buf)
      n = 0
      while (match(buf, /"[^"]*"/)) {
        printf "%s%s", (n++ ? "," : ""), substr(buf, RSTART + 1, RLENGTH - 2)
        buf = substr(buf, RSTART + RLENGTH)
      }
    }' "$SOURCE"
}
