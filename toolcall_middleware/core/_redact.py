"""`redact`: a text with the credentials of every URL in it hidden, before it reaches any output.

A URL's user information and its query may carry credentials (`https://user:password@host`,
`redis://:password@host/0`, `https://host/v1?api_key=…`). Whatever the middleware and `serve`
print, log, serve or report of a URL (start-up lines, `/healthz` and `/readyz`, error bodies,
log records, spans, configuration errors) goes through `redact` first: the password (or a user
name standing alone, which is a token), each query value and the fragment become `***`. The
scheme, host, port, path and user name stay, so an operator still sees where a URL points.

```python
>>> redact("proxy to http://user:s3cr3t@127.0.0.1:8000/v1?api_key=k&v=2")
'proxy to http://user:***@127.0.0.1:8000/v1?api_key=***&v=***'
```
"""

from __future__ import annotations

import re

MASK = "***"
# A URL as it is written in prose, JSON, a repr or a log line: a scheme, then up to the first
# space, quote or angle bracket, less the punctuation that ends a sentence. (A bounded scheme
# and no nested repetition: linear on any text.)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s\"'<>`\\]*[^\s\"'<>`\\,.;:!?)\]]")


def redact(text: str) -> str:
    """`text` with each URL's password, lone user name, query values and fragment masked."""
    if "://" not in text:
        return text
    return _URL.sub(lambda found: redact_url(found.group()), text)


def redact_url(url: str) -> str:
    """One URL (`scheme://authority/path?query#fragment`) with its credentials masked."""
    scheme, _, rest = url.partition("://")
    cut = next((i for i, c in enumerate(rest) if c in "/?#"), len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if "@" in authority:
        user_info, _, host = authority.rpartition("@")
        user, has_password, _ = user_info.partition(":")
        authority = f"{user}:{MASK}@{host}" if has_password else f"{MASK}@{host}"
    tail, hashed, _ = tail.partition("#")
    path, asked, query = tail.partition("?")
    if asked:
        pairs = (pair.partition("=") for pair in query.split("&"))
        path += "?" + "&".join(f"{name}={MASK}" if has_value else MASK for name, has_value, _ in pairs)
    return f"{scheme}://{authority}{path}" + (f"#{MASK}" if hashed else "")


__all__ = ["MASK", "redact", "redact_url"]
