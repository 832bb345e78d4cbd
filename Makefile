# iolab: `make demo` and `make test` install what they need (Debian, as root).
.PHONY: setup demo test test-quick docs bench clean

setup:
	./scripts/setup

demo: setup
	.venv/bin/iolab run scenarios/demo.toml

test: setup
	.venv/bin/pytest -q -ra -n auto --dist worksteal

# Everything but the slow tests that boot VMs under emulation and the tests that need root.
test-quick: setup
	.venv/bin/pytest -q -ra -n auto --dist worksteal -m "not slow and not root"

# The generated docs: docs/architecture.md (the stages) and docs/iolab.1 (the man page).
docs: setup
	.venv/bin/python scripts/docs.py

clean:
	rm -rf .venv build *.egg-info
	$(MAKE) -C probe clean 2>/dev/null || true
