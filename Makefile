.PHONY: test docs example bench
test:
	scripts/test
docs:
	cargo run -q -p devassert -- rule --write-docs docs/rules
example:
	cargo run -q -p devassert -- explain examples/crash-embedding.log
