#!/usr/bin/env bash
# Benchmark: `devassert explain` (release build) against `grep -c Assertion`
# on the same generated log, in the same run, with peak memory.
# usage: bench/explain/run.sh [SIZE_BYTES]   (default 1 GiB; the log goes to bench/out/)
#   BEFORE=BIN  also times another devassert binary (a change's before) in the
#               same run, and checks that its JSON report is the same.
set -euo pipefail
cd "$(dirname "$0")/../.."
size="${1:-1073741824}"
out=bench/out
mkdir -p "$out"
log="$out/explain-$size.log"
[ -s "$log" ] || python3 bench/explain/make_log.py "$log" "$size" >/dev/null
cargo build --release -q -p devassert
bin="${CARGO_TARGET_DIR:-target}/release/devassert"
command -v /usr/bin/time >/dev/null || { echo "install GNU time (apt-get install time)" >&2; exit 2; }
# Warm the page cache so both tools read from memory.
cat "$log" >/dev/null
measure() { # prints "seconds peak_kib cpu_seconds" (cpu: user + system, less swayed by a busy machine)
  # Not /dev/null: GNU grep stops at the first match when its output is discarded.
  /usr/bin/time -f "%e %M %U %S" -o "$out/time.txt" "$@" >"$out/stdout.txt" || true  # explain exits 1 when it finds a failure
  # The last line: GNU time first writes "Command exited with non-zero status 1" when explain finds a failure.
  tail -n 1 "$out/time.txt" | awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }'
}
read -r g_s g_kb g_cpu < <(measure grep -c Assertion "$log" || true)
read -r e_s e_kb e_cpu < <(measure "$bin" explain --format json "$log")
cp "$out/stdout.txt" "$out/after.json"
python3 -c 'import json,sys; r=json.load(sys.stdin); f=r["findings"][0]; print("finding:", f["rule"], f["evidence"].get("kernel"), "lines", f["evidence"].get("count"), "fallout kinds", len(r["fallout"]))' <"$out/after.json"
echo "log: $(du -h "$log" | cut -f1) ($(wc -l < "$log") lines)"
echo "grep -c Assertion: ${g_s}s (cpu ${g_cpu}s), peak ${g_kb} KiB"
echo "devassert explain: ${e_s}s (cpu ${e_cpu}s), peak ${e_kb} KiB ($((e_kb / 1024)) MiB)"
if [ -n "${BEFORE:-}" ]; then
  read -r b_s b_kb b_cpu < <(measure "$BEFORE" explain --format json "$log")
  cmp -s "$out/stdout.txt" "$out/after.json" && same=same || same=DIFFERENT
  echo "before ($BEFORE): ${b_s}s (cpu ${b_cpu}s), peak ${b_kb} KiB ($((b_kb / 1024)) MiB); JSON report $same"
fi
python3 -c "print(f'time ratio explain/grep: {float(\"$e_s\") / max(float(\"$g_s\"), 0.001):.1f}x (goal <= 2x); memory goal <= 64 MiB: {\"met\" if $e_kb <= 65536 else \"missed\"}')"
