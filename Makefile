# memengine — the two commands of the quick start are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed
EVAL   ?= ../shared/eval

.PHONY: install demo test lint eval bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
	  { echo "memengine needs Python >= 3.10; $(PYTHON) is older: make PYTHON=python3.12 …"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

lint: $(STAMP)
	$(BIN)/ruff check memengine tests examples cli.py
	$(BIN)/ruff format --check memengine tests examples cli.py
	$(BIN)/mypy

eval: $(STAMP)
	$(BIN)/memengine eval locomo $(EVAL)/locomo/locomo_dev.json --mode bm25,vector,fast --swap-names 15 --json eval-locomo.json
	$(BIN)/memengine eval memset $(EVAL)/memsets/ja_dev.json --mode bm25,vector,fast --json eval-memset-ja.json
	$(BIN)/memengine eval memset $(EVAL)/memsets/en_dev.json --mode bm25,vector,fast --json eval-memset-en.json
	@echo '--- the same fast path with the opt-in coverage rule (examples/coverage.toml)'
	$(BIN)/memengine eval locomo $(EVAL)/locomo/locomo_dev.json --mode fast --swap-names 15 --config examples/coverage.toml --json eval-locomo-coverage.json
	$(BIN)/memengine eval memset $(EVAL)/memsets/ja_dev.json --mode fast --config examples/coverage.toml --json eval-memset-ja-coverage.json
	$(BIN)/memengine eval memset $(EVAL)/memsets/en_dev.json --mode fast --config examples/coverage.toml --json eval-memset-en-coverage.json
	@echo '--- the project'"'"'s own held-out sets (eval/README.md), every set of a language pooled: default, then examples/coverage.toml'
	for l in ja en; do \
	  $(BIN)/memengine eval memset eval/heldout_$${l}_*.json --mode bm25,vector,fast --json eval-heldout-$$l.json || exit 1; \
	  $(BIN)/memengine eval memset eval/heldout_$${l}_*.json --mode fast --config examples/coverage.toml --json eval-heldout-$$l-coverage.json || exit 1; \
	done
	@echo '--- the check-only held-out sets alone (eval/README.md: _b, _d, _f, _g; read their totals only)'
	for l in ja en; do \
	  $(BIN)/memengine eval memset eval/heldout_$${l}_[bdfg].json --mode fast --json eval-heldout-$$l-check.json || exit 1; \
	done
	@echo '--- the companion loop: each question'"'"'s recent messages stored before it is asked (--store-recent)'
	for l in ja en; do \
	  $(BIN)/memengine eval memset eval/heldout_$${l}_*.json --mode fast --store-recent --json eval-heldout-$$l-stored.json || exit 1; \
	done

bench: $(STAMP)
	$(BIN)/memengine bench --json bench.json

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache demo.db*
