.PHONY: test test-oldest test-compiled-oldest docs example bench bench-scan bench-explain bench-guard bench-preflight bench-pytest bench-fuzz
test:
	scripts/test
# The tests that run real PyTorch, on the oldest torch supported (README).
test-oldest:
	scripts/test-torch --oldest
# The compiled suites on the oldest torch whose compiled regions are checked (2.9).
test-compiled-oldest:
	scripts/test-torch --compiled-oldest
docs:
	cargo run -q -p devassert -- rule --write-docs docs/rules
	cargo run -q -p devassert -- rule --write-python python/devassert/_findings/rules.py
# explain exits 1 when it finds a failure (docs/json.md): the example has one.
example:
	scripts/devassert explain examples/crash-embedding.log || [ $$? -eq 1 ]
# The benchmarks, each against its peer in the same run (bench/*/run.sh).
bench: bench-scan bench-explain bench-guard bench-preflight bench-pytest bench-fuzz
bench-scan:
	bench/scan/run.sh
	bench/scan/bounded.sh
bench-explain:
	bench/explain/run.sh
	bench/explain/shapes.sh
bench-guard:
	bench/guard/run.sh
bench-preflight:
	bench/preflight/run.sh
bench-pytest:
	bench/pytest/run.sh
# Minutes per fuzz family (the bounded harness CI runs for 60 s in all).
bench-fuzz:
	bench/fuzz/run.sh
	bench/fuzz/scale.sh
