"""The built-in demo model served bare: a raw-output model server, for the proxy to sit in front of.

    DEMO_DIALECT=qwen3_coder uvicorn examples.demo_model:app --port 8000        # raw text
    toolcall-middleware serve --upstream http://127.0.0.1:8000 --dialect qwen3_coder --port 8080

Clients of port 8000 see the model's raw markup in `content`; clients of port 8080 get real tool calls.
"""

from __future__ import annotations

import os

from toolcall_middleware.demo import DemoApp

app = DemoApp(os.environ.get("DEMO_DIALECT", "hermes"))
