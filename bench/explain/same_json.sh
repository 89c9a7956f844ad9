#!/usr/bin/env bash
# Whether two devassert builds explain every log alike: `explain --format
# json` (stdout and exit status, timings masked) of each on the fixtures,
# examples and corpus logs, the shared corpus's dev logs and the shapes of
# `shapes.sh` (if made), compared byte for byte. A reader change that must
# not change what explain says shows here as "same".
# usage: bench/explain/same_json.sh BEFORE_BIN AFTER_BIN
set -euo pipefail
cd "$(dirname "$0")/../.."
before=$(realpath "$1")
after=$(realpath "$2")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mask() { sed -E 's/("seconds": )[0-9.e+-]+/\10/'; }
logs=$(find crates/devassert/tests/fixtures/logs crates/devassert/tests/corpus examples -type f \( -name '*.log' -o -name '*.out' -o -name '*.err' \) | sort)
if [[ -d /work/shared/corpus/dev-logs ]]; then
    logs+=$'\n'$(find /work/shared/corpus/dev-logs -type f -name '*.log' | sort)
fi
logs+=$'\n'$( (find bench/out -maxdepth 1 -name 'explain-*.log' 2>/dev/null || true) | sort)
n=0
differ=0
while read -r log; do
    [[ -n $log ]] || continue
    n=$((n + 1))
    for side in before after; do
        bin=$before
        [[ $side == after ]] && bin=$after
        code=0
        "$bin" explain --format json "$log" 2>/dev/null | mask >"$out/$side.json" || code=$?
        echo "exit $code" >>"$out/$side.json"
    done
    if ! cmp -s "$out/before.json" "$out/after.json"; then
        echo "differs: $log"
        { diff "$out/before.json" "$out/after.json" || true; } | head -20
        differ=$((differ + 1))
    fi
done <<<"$logs"
if [[ $differ -eq 0 ]]; then
    echo "same: $n logs"
else
    echo "$differ of $n logs differ" >&2
    exit 1
fi
