"""Anthropic content blocks read for a host that takes text: the text of each block, and the
media that text cannot carry.

Clients send more than `text` blocks: a `tool_result` holds text, images, documents and search
results (Claude Code's `Read` of an image, a web search); `system` and a `{"role": "system"}`
message hold text blocks with `cache_control` marks. Both request rewrites (a host that speaks
Messages, and the bridge to Chat) read them the same way here:

- `block_text(block)`: a block's text, or `None` when it is media or carries no text. `text` is its
  text; `search_result` its title and source, then its text blocks; a `document` with a `text` or
  `content` source its title, then its text; `tool_reference` names the tool; any other block type
  a short note (`[server_tool_use]`), so the transcript says something was there.
- `is_media(block)`: an `image`, or a `document` whose data (base64 or a URL) is not text. Media
  stay blocks for a Messages host and become Chat content parts (`chat_part`) for a Chat host.
- `read_content(value, where)`: a string or an array of blocks as `(text, media)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._schema import JSON_OBJECT
from ._errors import invalid

TEXT_SOURCES = ("text", "content")


def is_media(block: Mapping[str, Any]) -> bool:
    """An image, or a document whose source is not text (a PDF as base64 or at a URL)."""
    kind = block.get("type")
    if kind == "image":
        return True
    if kind == "document":
        source = block.get("source")
        return not (isinstance(source, JSON_OBJECT) and source.get("type") in TEXT_SOURCES)
    return False


def block_text(block: Mapping[str, Any]) -> str | None:
    """The text a block carries (see the module doc); `None` for media."""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return text if isinstance(text, str) else ""
    if is_media(block):
        return None
    if kind == "search_result":
        head = " ".join(str(block[k]) for k in ("title", "source") if isinstance(block.get(k), str))
        return "\n".join(filter(None, (head, _texts(block.get("content")))))
    if kind == "document":
        source = block["source"]
        body = source.get("data") if source.get("type") == "text" else _texts(source.get("content"))
        title = block.get("title")
        return "\n".join(filter(None, (title if isinstance(title, str) else None, str(body or ""))))
    if kind == "tool_reference":
        return f"[tool_reference: {block.get('tool_name') or block.get('name')}]"
    return f"[{kind}]"


def _texts(content: Any) -> str:
    """The text blocks of a nested `content` (a string, or blocks)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(b["text"] for b in content if isinstance(b, JSON_OBJECT) and isinstance(b.get("text"), str))


def read_content(value: Any, where: str) -> tuple[str, list[Mapping[str, Any]]]:
    """A string or an array of blocks: its text (blocks joined by newlines) and its media blocks."""
    if value is None:
        return "", []
    if isinstance(value, str):
        return value, []
    if not isinstance(value, list):
        raise invalid(where, "expected a string or an array of content blocks")
    texts: list[str] = []
    media: list[Mapping[str, Any]] = []
    for j, block in enumerate(value):
        if not isinstance(block, JSON_OBJECT):
            raise invalid(f"{where}.{j}", "expected a content block object")
        text = block_text(block)
        if text is None:
            media.append(block)
        elif text:
            texts.append(text)
    return "\n".join(texts), media


def chat_part(block: Mapping[str, Any]) -> dict[str, Any]:
    """A media block as a Chat content part: an `image_url`, or a `file` (a base64 document);
    a document at a URL, which Chat parts cannot point at, as a text note with the URL."""
    source: Mapping[str, Any] = block["source"] if isinstance(block.get("source"), JSON_OBJECT) else {}
    data_url = f"data:{source.get('media_type')};base64,{source.get('data')}"
    if block.get("type") == "image":
        url = data_url if source.get("type") == "base64" else str(source.get("url", ""))
        return {"type": "image_url", "image_url": {"url": url}}
    if source.get("type") == "base64":
        name = block.get("title") if isinstance(block.get("title"), str) else "document"
        return {"type": "file", "file": {"filename": name, "file_data": data_url}}
    return {"type": "text", "text": f"[document: {source.get('url') or source.get('file_id') or ''}]"}


__all__ = ["block_text", "chat_part", "is_media", "read_content"]
