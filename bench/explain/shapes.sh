#!/usr/bin/env bash
# Benchmark: `devassert explain` (release build) on several log shapes, each
# beside `grep -c` and `rg -c` with the same literals, in the same run, from
# the page cache. Prints MB/s per tool and explain's time ratios.
# usage: bench/explain/shapes.sh [SIZE_BYTES] [SHAPE...]
#   SIZE_BYTES  per log (default 256 MiB; the logs go to bench/out/)
#   SHAPE       progress, tracebacks, glued, separate, warnings, huge (default: all; see make_shapes.py)
#   BEFORE=BIN  also times another devassert binary (a change's before).
#   REPEAT=N    runs per tool, the fastest kept (default 3).
set -euo pipefail
cd "$(dirname "$0")/../.."
size="${1:-268435456}"
shift || true
out=bench/out
mkdir -p "$out"
mapfile -t logs < <(python3 bench/explain/make_shapes.py "$out" "$size" "$@")
cargo build --release -q -p devassert
# A private copy: a shared CARGO_TARGET_DIR's binary may be replaced mid-run.
cp "${CARGO_TARGET_DIR:-target}/release/devassert" "$out/devassert-bench"
bin="$out/devassert-bench"
command -v /usr/bin/time >/dev/null || { echo "install GNU time (apt-get install time)" >&2; exit 2; }
command -v rg >/dev/null || { echo "install ripgrep (apt-get install ripgrep)" >&2; exit 2; }
repeat="${REPEAT:-3}"
# The literals explain's prefilter starts from that matter most in these logs.
lits=(-e Assertion -e "device-side assert" -e Traceback -e "CUDA error")
best() { # fastest of $repeat runs: prints "seconds cpu_seconds"
  local b="" c=""
  for _ in $(seq "$repeat"); do
    # Not /dev/null: GNU grep stops at the first match when its output is discarded.
    /usr/bin/time -f "%e %U %S" -o "$out/time.txt" "$@" >"$out/stdout.txt" || true
    # The last line: GNU time first writes "Command exited with non-zero status 1" when explain finds a failure.
    read -r s u k < <(tail -n 1 "$out/time.txt")
    if [ -z "$b" ] || awk "BEGIN{exit !($s < $b)}"; then b=$s; c=$(awk "BEGIN{printf \"%.2f\", $u + $k}"); fi
  done
  echo "$b $c"
}
printf '%-11s %8s | %-16s | %-16s | %-16s | %s\n' shape MiB "grep -c (MB/s)" "rg -c (MB/s)" "explain (MB/s)" "explain/grep explain/rg  cpu: explain/grep explain/rg  finding"
for log in "${logs[@]}"; do
  shape=$(basename "$log" | sed -E 's/^explain-(.*)-[0-9]+\.log$/\1/')
  bytes=$(stat -L -c %s "$log")
  cat "$log" >/dev/null
  read -r g_s g_c < <(best grep -c -F "${lits[@]}" "$log")
  read -r r_s r_c < <(best rg -c -F "${lits[@]}" "$log")
  read -r e_s e_c < <(best "$bin" explain --format json "$log")
  finding=$(python3 -c 'import json,sys; r=json.load(sys.stdin); f=(r["findings"] or [{}])[0]; print(f.get("rule"), f.get("evidence", {}).get("count"))' <"$out/stdout.txt")
  extra=""
  if [ -n "${BEFORE:-}" ]; then
    read -r b_s _ < <(best "$BEFORE" explain --format json "$log")
    extra=$(python3 -c "print(f'  before {$bytes / 1e6 / max($b_s, 0.001):.0f} MB/s ({$b_s}s)')")
  fi
  python3 - "$shape" "$bytes" "$g_s" "$r_s" "$e_s" "$g_c" "$r_c" "$e_c" "$finding" "$extra" <<'EOF'
import sys
shape, n, (g, r, e, gc, rc, ec), finding, extra = sys.argv[1], int(sys.argv[2]), map(float, sys.argv[3:9]), sys.argv[9], sys.argv[10]
mbs = lambda s: n / 1e6 / max(s, 0.001)
# CPU time (user + system, all threads) beside wall time: on a loaded machine
# the wall time measures the load as much as the tool.
print(f"{shape:<11} {n / 2**20:8.0f} | {g:6.2f}s {mbs(g):6.0f}  | {r:6.2f}s {mbs(r):6.0f}  | {e:6.2f}s {mbs(e):6.0f}  | "
      f"{e / max(g, 0.001):8.2f}x {e / max(r, 0.001):8.2f}x  {ec / max(gc, 0.01):8.2f}x {ec / max(rc, 0.01):8.2f}x  {finding}{extra}")
EOF
done
