"""The built-in demo model: a raw-output model server that writes any dialect's raw text.

```python
from toolcall_middleware.demo import DemoApp
app = ToolCallMiddleware(DemoApp("qwen3_coder"), dialect="qwen3_coder")
```

`toolcall-middleware serve` without `--upstream` serves it behind the middleware, and
`toolcall-middleware demo` runs an agent loop against it with the official `openai` SDK.
"""

from __future__ import annotations

from ._app import DemoApp, Written
from ._manifest import Manifest, OfferedTool, read_manifest
from ._model import DemoModel, Reply

__all__ = ["DemoApp", "DemoModel", "Manifest", "OfferedTool", "Reply", "Written", "read_manifest"]
