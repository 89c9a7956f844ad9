#!/usr/bin/env bash
# Issue 38's inputs, far larger than any real one, each read by devassert
# (and by an older build beside it, for the closing note's before/after):
# peak RSS (max resident, mapped file pages included), wall time and exit
# code per case. The inputs are made by bounded_make.py and deleted after.
# usage: bench/scan/bounded.sh [SCALE] [OLD_DEVASSERT]   (SCALE 1.0: the issue's sizes)
set -euo pipefail
cd "$(dirname "$0")/../.."
scale="${1:-1.0}"
old="${2:-}"
new="${DEVASSERT:-target/release/devassert}"
[ -x "$new" ] || new=target/debug/devassert
py="${DEVASSERT_TEST_PYTHON:-$HOME/.cache/devassert/venv/bin/python}"
if [ -n "${BOUNDED_INPUTS:-}" ]; then
  work="$BOUNDED_INPUTS"   # made before by bounded_make.py; kept
else
  work="$(mktemp -d "${TMPDIR:-/tmp}/devassert-bounded.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  "$py" bench/scan/bounded_make.py "$work" "$scale"
fi

cases=(
  "jsonl 50M-id line|scan line.jsonl good.jsonl --vocab 50000"
  "csv 1 GiB cell|scan cell.csv --classes 10"
  "config.json 110 MB|check model-config"
  "tokenizer_config.json 110 MB|check model-tokcfg"
  "safetensors index 120 MB|check model-index"
  "tokenizer.json 60 MB|check model-tokjson"
  "parquet 300 MB metadata|scan meta.parquet good.jsonl --vocab 50000"
  "arrow 500 MB metadata|scan meta.arrow good.jsonl --vocab 50000"
  "inductor-dir 26 x 30-40 MB|explain crash.log --inductor-dir inductor"
  "max-decoded 8G, ulimit -v 3G|scan good.jsonl --vocab 50000 --max-decoded 8G"
)

measure() { # BIN ARGS… → "RSS_MiB TIME_s EXIT"
  local bin="$1"; shift
  local limit=unlimited
  [[ "$*" == *"--max-decoded 8G"* ]] && limit=$((3 << 20))
  local code=0
  ( ulimit -v "$limit"; cd "$work" && /usr/bin/time -f "%M %e" -o "$work/.t" \
      "$bin" "$@" --format json >/dev/null 2>"$work/.err" ) || code=$?
  read -r kb secs < <(tail -1 "$work/.t")
  echo "$((kb / 1024)) $secs $code"
}

printf '| case | before: RSS MiB / s / exit | after: RSS MiB / s / exit |\n|---|---|---|\n'
for c in "${cases[@]}"; do
  name="${c%%|*}"; args="${c#*|}"
  after=$(measure "$(realpath "$new")" $args || true)
  before="-"
  [ -n "$old" ] && before=$(measure "$(realpath "$old")" $args || true)
  printf '| %s | %s | %s |\n' "$name" "$before" "$after"
done
