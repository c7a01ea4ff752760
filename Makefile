# gdnconsole: `make demo` and `make test` work from a clean clone (they create .venv when missing).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-deps lint bench screenshots record clean

$(STAMP): pyproject.toml gdnconsole/logs/_linescan.c
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/gdnconsole demo

lint: $(STAMP)
	$(BIN)/ruff check gdnconsole tests bench
	$(BIN)/ruff format --check gdnconsole tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	cd gdnconsole/sim && PYTHONPATH=. ../../$(BIN)/lint-imports --config contracts.toml
	cd gdnconsole/sim && ../../$(BIN)/mypy --config-file mypy.ini -p gdnsim -p sglang -m pynvml

# sshd, tmux and iproute2: installed when missing (as root with apt-get); else their tests are skipped.
test-deps:
	@bash tests/tools/test-deps

test: test-deps lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python bench/run.py

screenshots: $(STAMP)
	$(BIN)/python -m tests.ui.screenshots screenshots

# The seed story in a real terminal (tmux, 120x36) through asciinema; needs tmux and asciinema.
record: $(STAMP)
	$(BIN)/python -m tests.ui.record screenshots/demo-seed.cast

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
