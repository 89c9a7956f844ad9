#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with seeds from the test fixtures: the crash
# logs, the catalog's device lines, the scan test files (made by the real
# writers in tests/scan_data/gen.py) and the model directories the check
# tests build. Each seed is prefixed the way its target reads it (the
# selector byte of scan_formats and model_dir). Files over 64 KiB are left
# out: libFuzzer mutates small inputs faster.
#
# usage: fuzz/seed.sh   (needs the test venv: DEVASSERT_TEST_PYTHON or scripts/venv)
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=fuzz/corpus
mkdir -p "$corpus"/{log_reader,catalog_match,scan_formats,model_dir}
small() { [ "$(stat -c %s "$1")" -le 65536 ]; }
# seed TARGET SELECTOR FILE: the file, behind the selector byte if one is given.
seed() {
    local out="$corpus/$1/$(sha1sum "$3" | cut -c1-16)-$2"
    if [ "$2" = - ]; then cp "$3" "$out"; else { printf "\\x$(printf %02x "$2")"; cat "$3"; } >"$out"; fi
}

find crates/devassert/tests/fixtures/logs -type f | while read -r f; do
    if small "$f"; then seed log_reader - "$f"; fi
done

# catalog_match splits its input at \x01 into file, kernel, assertion.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
grep -hv '^#' crates/devassert-log/tests/fixtures/catalog-device-lines.tsv | cut -f3 | while IFS= read -r line; do
    i=$((i + 1))
    printf '%s' "$line" | sed -E 's/^([^:]*):[0-9]+: ([^:]*): (.*)$/\1\x01\2\x01\3/' >"$tmp/line$i"
    seed catalog_match - "$tmp/line$i"
done

python=${DEVASSERT_TEST_PYTHON:-$(scripts/venv)}
"$python" crates/devassert/tests/scan_data/gen.py "$tmp/scan" raw llmc npy npz safetensors arrow parquet jsonl csv png >/dev/null
# The selector is the index in InputFormat::ALL: raw llm.c npy npz
# safetensors arrow arrow-stream parquet jsonl csv tsv png.
find "$tmp/scan" -type f | while read -r f; do
    small "$f" || continue
    case "$f" in
        *.bin | *.tok) sels="0 1" ;;
        *.npy) sels=2 ;;
        *.npz) sels=3 ;;
        *.safetensors) sels=4 ;;
        *.arrow) sels="5 6" ;;
        *.parquet) sels=7 ;;
        *.jsonl | *.json) sels=8 ;;
        *.csv) sels=9 ;;
        *.tsv) sels=10 ;;
        *.png) sels=11 ;;
        *) continue ;;
    esac
    for s in $sels; do seed scan_formats "$s" "$f"; done
done

# model_dir: the selector is the index in the target's FILES.
models=$(ls -d "$HOME"/.cache/devassert/models/*/ 2>/dev/null | head -1 || true)
if [ -n "$models" ]; then
    names=(config.json tokenizer.json tokenizer_config.json special_tokens_map.json added_tokens.json
        model.safetensors model.safetensors.index.json vocab.json vocab.txt)
    for k in "${!names[@]}"; do
        find "$models" -name "${names[$k]}" -type f | while read -r f; do
            if small "$f"; then seed model_dir "$k" "$f"; fi
        done
    done
else
    echo "seed.sh: no model directories under ~/.cache/devassert/models (run the check tests once); model_dir gets no seeds" >&2
fi

# The generated seeds: small decompression bombs (over the fuzz decode
# budget), a valid file of every scan format, hostile logs and configs
# (crates/devassert-fuzzing/src/seeds.rs, shared with the bounded CI run).
cargo run -q -p devassert-fuzzing --example write_seeds -- "$corpus"

for t in "$corpus"/*/; do echo "$(find "$t" -type f | wc -l) seeds in $t"; done
