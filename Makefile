# The two commands the README gives. Each sets up its own virtualenv from scratch if needed.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: demo test test-grammar bench load dist

# One virtualenv; each command installs into it only what it needs: the demo its extra (the
# server, the openai SDK), the tests and tools the development set, `dist` the build front end.
# The stamps are rebuilt when the package's metadata or its C helper changes.
SOURCES = pyproject.toml hatch_build.py toolcall_middleware/core/_scan.c

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.demo-installed: $(SOURCES) | $(BIN)/python
	$(BIN)/pip install -q -e '.[demo]'
	touch $@

$(VENV)/.dev-installed: $(SOURCES) | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $@ $(VENV)/.demo-installed

# The target the CI scripts and older notes name: the development install.
$(BIN)/toolcall-middleware: $(VENV)/.dev-installed

# The demo model behind the middleware, driven by the openai SDK (chat and responses, streamed);
# then the parser alone on a sample of raw Kimi K2 output.
demo: $(VENV)/.demo-installed
	$(BIN)/toolcall-middleware demo
	$(BIN)/toolcall-middleware parse --model moonshotai/Kimi-K2.6 examples/samples/kimi_k2.txt

test: $(VENV)/.dev-installed
	$(BIN)/ruff check toolcall_middleware integrations tests benchmarks examples docs hatch_build.py
	$(BIN)/mypy
	$(BIN)/pytest
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir $(VENV)/site

# The grammar engines' own library (xgrammar, at the version vLLM pins; it reads llama.cpp's GBNF
# too) compiles every dialect's constraint (tests/grammar). It pulls torch, so it has its own
# virtualenv, with torch's CPU build; `make test` skips these tests, this target runs them and
# fails when the engine cannot be installed.
GRAMMAR_VENV ?= .venv-grammar
GRAMMAR_BIN = $(GRAMMAR_VENV)/bin

$(GRAMMAR_VENV)/.installed: $(SOURCES)
	$(PYTHON) -m venv $(GRAMMAR_VENV)
	$(GRAMMAR_BIN)/pip install -q --upgrade pip
	$(GRAMMAR_BIN)/pip install -q torch==2.13.0
	$(GRAMMAR_BIN)/pip install -q --no-deps xgrammar==0.2.8
	$(GRAMMAR_BIN)/pip install -q apache-tvm-ffi pydantic numpy typing-extensions transformers pytest hypothesis
	$(GRAMMAR_BIN)/pip install -q --no-deps -e .
	touch $@

test-grammar: $(GRAMMAR_VENV)/.installed
	TOOLCALL_MIDDLEWARE_GRAMMAR_ENGINES=required $(GRAMMAR_BIN)/pytest -p no:cacheprovider tests/grammar

bench: $(VENV)/.dev-installed
	$(BIN)/python benchmarks/parse_throughput.py
	$(BIN)/python benchmarks/middleware_overhead.py
	$(BIN)/python benchmarks/wsgi_overhead.py
	$(BIN)/python benchmarks/instruction_count.py

# 200 streaming clients at once on a real uvicorn, half leaving mid-stream, several rounds: nothing
# lost or duplicated for those that stay, the server's memory flat (not part of `make test`).
load: $(VENV)/.dev-installed
	$(BIN)/python benchmarks/load_test.py

# A wheel and a source archive in dist/, built in isolation (the build back end comes from the
# package index): `pip install dist/toolcall_middleware-*.whl` installs the package elsewhere.
dist: | $(BIN)/python
	$(BIN)/pip install -q build
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
