"""A FastAPI app whose middleware option is misspelled, as a user's first try may be
(`add_middleware` builds the middleware only when the server first calls the app)."""

from __future__ import annotations

from fastapi import FastAPI

from toolcall_middleware import ToolCallMiddleware

app = FastAPI()
app.add_middleware(ToolCallMiddleware, dialect="hermez")


@app.post("/v1/chat/completions")
def chat() -> dict[str, str]:
    return {"never": "reached"}
