"""Framework integrations (Flask, Django, Quart), shipped as `toolcall_middleware.integrations`.

Each imports its framework lazily and uses only the public API:

```python
from toolcall_middleware.integrations.flask import init_app    # Flask: around app.wsgi_app
from toolcall_middleware.integrations.quart import init_app    # Quart: around app.asgi_app
from toolcall_middleware.integrations.django import ToolCallDjangoMiddleware, wrap_asgi, wrap_wsgi
```
"""


__all__: list[str] = []
