.PHONY: test docs example bench
test:
	scripts/test
docs:
	cargo run -q -p devassert -- rule --write-docs docs/rules
	cargo run -q -p devassert -- rule --write-python python/devassert/_rules.py
example:
	cargo run -q -p devassert -- explain examples/crash-embedding.log
