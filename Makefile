# The two commands the README gives. Each sets up its own virtualenv from scratch if needed.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: demo test lint bench

$(BIN)/toolcall-middleware: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

demo: $(BIN)/toolcall-middleware
	$(BIN)/toolcall-middleware parse --model moonshotai/Kimi-K2.6 examples/samples/kimi_k2.txt
	$(BIN)/toolcall-middleware parse --model Qwen/Qwen3-Coder-30B-A3B-Instruct --tools examples/samples/qwen3_coder.tools.json examples/samples/qwen3_coder.txt
	$(BIN)/toolcall-middleware parse --model openai/gpt-oss-20b examples/samples/gpt_oss.txt
	$(BIN)/toolcall-middleware parse --model Qwen/Qwen3-8B --stream --chunk 16 examples/samples/hermes.txt

test: $(BIN)/toolcall-middleware
	$(BIN)/ruff check toolcall_middleware integrations tests benchmarks examples
	$(BIN)/mypy
	$(BIN)/pytest

bench: $(BIN)/toolcall-middleware
	$(BIN)/python benchmarks/parse_throughput.py
	$(BIN)/python benchmarks/middleware_overhead.py
	$(BIN)/python benchmarks/wsgi_overhead.py
