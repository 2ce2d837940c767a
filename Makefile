# The two commands the README gives. Each sets up its own virtualenv from scratch if needed.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: demo test lint bench load

$(BIN)/toolcall-middleware: pyproject.toml hatch_build.py toolcall_middleware/core/_scan.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

# The demo model behind the middleware, driven by the openai SDK (chat and responses, streamed);
# then the parser alone on a sample of raw Kimi K2 output.
demo: $(BIN)/toolcall-middleware
	$(BIN)/toolcall-middleware demo
	$(BIN)/toolcall-middleware parse --model moonshotai/Kimi-K2.6 examples/samples/kimi_k2.txt

test: $(BIN)/toolcall-middleware
	$(BIN)/ruff check toolcall_middleware integrations tests benchmarks examples docs hatch_build.py
	$(BIN)/mypy
	$(BIN)/pytest
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir $(VENV)/site

bench: $(BIN)/toolcall-middleware
	$(BIN)/python benchmarks/parse_throughput.py
	$(BIN)/python benchmarks/middleware_overhead.py
	$(BIN)/python benchmarks/wsgi_overhead.py
	$(BIN)/python benchmarks/instruction_count.py

# 200 streaming clients at once on a real uvicorn, half leaving mid-stream, several rounds: nothing
# lost or duplicated for those that stay, the server's memory flat (not part of `make test`).
load: $(BIN)/toolcall-middleware
	$(BIN)/python benchmarks/load_test.py
