#!/usr/bin/env bash
# Benchmark: `devassert explain` (release build) on several log shapes, each
# beside `grep -c` and `rg -c` with the same literals, in the same run, from
# the page cache. Prints MB/s per tool and explain's time ratios.
# usage: bench/explain/shapes.sh [SIZE_BYTES] [SHAPE...]
#   SIZE_BYTES  per log (default 256 MiB; the logs go to bench/out/)
#   SHAPE       progress, tracebacks, glued, separate, warnings, huge (default: all; see make_shapes.py)
#   BEFORE=BIN  also times another devassert binary (a change's before).
#   REPEAT=N    runs per tool, the least wall and CPU time kept (default 3).
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
command -v rg >/dev/null || { echo "install ripgrep (apt-get install ripgrep)" >&2; exit 2; }
repeat="${REPEAT:-3}"
# The literals explain's prefilter starts from that matter most in these logs.
lits=(-e Assertion -e "device-side assert" -e Traceback -e "CUDA error")
best() { # least wall and least CPU time of $repeat runs: prints "seconds cpu_seconds"
  # Timed by wait4's rusage (microseconds): GNU time's 10 ms steps made a
  # 0.00 s grep on glued lines a ratio of its rounding. CPU time is user +
  # system of all threads; the least of each is kept (under load the two
  # need not come from the same run).
  python3 - "$repeat" "$out/stdout.txt" "$@" <<'PY'
import os, sys, time
repeat, out, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
best = None
for _ in range(repeat):
    # Not /dev/null: GNU grep stops at the first match when its output is discarded.
    with open(out, "wb") as f:
        t = time.perf_counter()
        pid = os.posix_spawnp(cmd[0], cmd, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, f.fileno(), 1)])
        _, _, ru = os.wait4(pid, 0)
        wall = time.perf_counter() - t
    cpu = ru.ru_utime + ru.ru_stime
    best = (wall, cpu) if best is None else (min(best[0], wall), min(best[1], cpu))
print(f"{best[0]:.4f} {best[1]:.4f}")
PY
}
printf '%-11s %8s | %-16s | %-16s | %-16s | %s\n' shape MiB "grep -c (MB/s)" "rg -c (MB/s)" "explain (MB/s)" "explain/grep explain/rg  cpu: explain/grep explain/rg  finding"
for log in "${logs[@]}"; do
  shape=$(basename "$log" | sed -E 's/^explain-(.*)-[0-9]+\.log$/\1/')
  bytes=$(stat -L -c %s "$log")
  cat "$log" >/dev/null
  read -r g_s g_c < <(best grep -c -F "${lits[@]}" "$log")
  read -r r_s r_c < <(best rg -c -F "${lits[@]}" "$log")
  # Every occurrence, not the first of each line: the peer of reading every
  # assertion of a glued line (grep -c reads a glued line to its first).
  read -r m_s m_c < <(best rg -c --count-matches -F "${lits[@]}" "$log")
  read -r e_s e_c < <(best "$bin" explain --format json "$log")
  finding=$(python3 -c 'import json,sys; r=json.load(sys.stdin); f=(r["findings"] or [{}])[0]; print(f.get("rule"), f.get("evidence", {}).get("count"))' <"$out/stdout.txt")
  extra=""
  if [ -n "${BEFORE:-}" ]; then
    read -r b_s b_c < <(best "$BEFORE" explain --format json "$log")
    extra=$(python3 -c "print(f'  before {$bytes / 1e6 / max($b_s, 0.001):.0f} MB/s ({$b_s}s, cpu {$b_c}s: {$b_c / max($g_c, 0.001):.2f}x grep)')")
  fi
  python3 - "$shape" "$bytes" "$g_s" "$r_s" "$e_s" "$g_c" "$r_c" "$e_c" "$m_c" "$finding" "$extra" <<'EOF'
import sys
shape, n, (g, r, e, gc, rc, ec, mc), finding, extra = sys.argv[1], int(sys.argv[2]), map(float, sys.argv[3:10]), sys.argv[10], sys.argv[11]
mbs = lambda s: n / 1e6 / max(s, 0.001)
# CPU time (user + system, all threads) beside wall time: on a loaded machine
# the wall time measures the load as much as the tool.
print(f"{shape:<11} {n / 2**20:8.0f} | {g:6.2f}s {mbs(g):6.0f}  | {r:6.2f}s {mbs(r):6.0f}  | {e:6.2f}s {mbs(e):6.0f}  | "
      f"{e / max(g, 0.001):8.2f}x {e / max(r, 0.001):8.2f}x  {ec / max(gc, 0.001):8.2f}x {ec / max(rc, 0.001):8.2f}x  "
      f"(cpu {ec:.3f}s grep {gc:.3f}s rg {rc:.3f}s, rg --count-matches {mc:.3f}s: {ec / max(mc, 0.001):.2f}x)  {finding}{extra}")
EOF
done
