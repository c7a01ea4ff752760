# gdnconsole: `make demo` and `make test` work from a clean clone (they create .venv when missing).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-fast test-deps wheels lint bench mutation screenshots record clean

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

# SGLang's own sources, the oracle some tests read (tests/wheels.py): downloaded once, under build/sgw.
wheels: $(STAMP)
	@$(BIN)/python -I tests/tools/sglang_wheels.py build/sgw

test: test-deps wheels lint
	$(BIN)/pytest

# The unit tests alone: no sshd, network namespace, tmux or simulated host's processes (those are marked
# `functional` at collection, tests/functional.py); `make test` runs both, and CI runs `make test`.
test-fast: wheels lint
	$(BIN)/pytest -m "not functional"

bench: $(STAMP)
	@$(BIN)/python -c "import importlib.metadata as m; assert m.version('sgtop') == '0.1.7'" 2>/dev/null || $(BIN)/python -m pip install --quiet --disable-pip-version-check sgtop==0.1.7 || echo "sgtop not installed: bench_serving_poll.py leaves its rows out"
	$(BIN)/python bench/run.py

# Mutation testing of the SGLang core and the log core ([tool.mutmut] in pyproject.toml), from scratch each
# time (a result kept from an earlier run would hide a test that got weaker), niced, MUTATION_JOBS workers;
# then one line per module and the total (tests/tools/mutation.py). The whole core takes a while on two
# cores; before landing a change to one module, `make mutation MUTATE=gdnconsole/sglang/flags.py` (one or
# more paths) runs and scores only those. Survivors by name: `$(BIN)/python tests/tools/mutation.py
# --survivors`, each one's diff: `$(BIN)/mutmut show NAME`; equivalent ones are listed in
# mutation-equivalents.toml. What mutmut cannot reach (properties, cached functions) gets hand mutants
# (tests/tools/hand_mutants.py).
MUTATION_JOBS ?= 2
MUTATION_FAIL_UNDER ?= 90
MUTATE ?=
mutation: $(STAMP)
	rm -rf mutants && mkdir mutants
	nice -n 10 $(BIN)/mutmut run --max-children $(MUTATION_JOBS) \
		$(foreach m,$(MUTATE),'$(subst /,.,$(m:.py=)).*') > mutants/run.log 2>&1 \
		|| { tail -c 3000 mutants/run.log; exit 1; }
	$(BIN)/python tests/tools/mutation.py --fail-under $(MUTATION_FAIL_UNDER) $(if $(MUTATE),--only $(MUTATE)); \
		score=$$?; nice -n 10 $(BIN)/python tests/tools/hand_mutants.py $(if $(MUTATE),--only $(MUTATE)) \
		&& exit $$score

screenshots: $(STAMP)
	$(BIN)/python -m tests.ui.screenshots screenshots

# The seed story in a real terminal (tmux, 120x36) through asciinema; needs tmux and asciinema.
record: $(STAMP)
	$(BIN)/python -m tests.ui.record screenshots/demo-seed.cast

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache mutants
