"""A request body read from its bytes (`core.request._body`): what `json.loads` reads, with its tools
shared by every request that sends the same ones (`core._memo`), found in the bytes by the C helper
(`member_span`) where it is built."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from toolcall_middleware.config import ToolCallConfig
from toolcall_middleware.core import _compiled as compiled
from toolcall_middleware.core import _memo as memo
from toolcall_middleware.core._exchange import Exchange, RouteMatch
from toolcall_middleware.core.request._body import read_request

from .test_json_loads import outcome, same, values

native = compiled.native
needs_c = pytest.mark.skipif(native is None, reason="the C helper is not built here")

# Keys a body may hold, the name looked for among them (and spellings of it that are not it).
keys = st.sampled_from(["tools", "model", "messages", "tool", "toolss", "Tools", "", 't"ools', "tools\\", "é"])
members = st.lists(st.tuples(keys, values), max_size=6)


def spaced(text: str, rng: random.Random) -> str:
    """`text` (compact JSON) with JSON whitespace after some of its structural characters outside
    strings, as hosts and clients lay bodies out."""
    out: list[str] = []
    in_string = escaped = False
    for char in text:
        out.append(char)
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in ",:[]{}" and rng.random() < 0.4:
            out.append(rng.choice([" ", "\n", "\t", "\r\n", "  "]))
    return "".join(out)


def body_text(pairs: list[tuple[str, Any]], seed: int, ascii_only: bool) -> bytes:
    """A JSON object with these members in this order, duplicates kept (json.dumps would merge them)."""
    rng = random.Random(seed)
    parts = [json.dumps(k, ensure_ascii=ascii_only) + ":" + json.dumps(v, ensure_ascii=ascii_only) for k, v in pairs]
    return (" " * rng.randint(0, 2) + spaced("{" + ",".join(parts) + "}", rng) + "\n" * rng.randint(0, 1)).encode(
        "utf-8", "surrogatepass"
    )


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    memo.forget()
    yield
    memo.forget()


@needs_c
@given(members, st.integers(0, 2**16), st.booleans())
@example([("tools", [{"a": 'x"}]'}]), ("tools", "\\"), ("b", {"tools": 1})], 0, False)
@example([("messages", [{"content": '{"tools": [1]}, "x": "'}]), ("tools", [])], 1, True)
def test_the_span_is_the_value_json_loads_reads_for_the_member(
    pairs: list[tuple[str, Any]], seed: int, a: bool
) -> None:
    raw = body_text(pairs, seed, a)
    span = native.member_span(raw, b"tools")
    expected = json.loads(raw)
    if "tools" not in expected:
        assert span is None
        return
    escaped = any("\\" in json.dumps(key, ensure_ascii=a) for key, _ in pairs)
    if span is None:
        assert escaped  # only a key written with an escape makes the scanner give up
        return
    start, end = span
    assert same(json.loads(raw[start:end]), expected["tools"])
    rest = json.loads(raw[:start] + b"null" + raw[end:])
    assert rest["tools"] is None and same({**rest, "tools": expected["tools"]}, expected)


@needs_c
@pytest.mark.parametrize(
    "raw",
    [
        b'{"tool\\u0073": [1], "tools": [2]}',  # an escaped key may spell the name: not certain
        b'{"a": 1} {"tools": []}',  # something after the object
        b'["tools", {"tools": []}]',  # no object
        b'{"tools": [1, 2}',  # brackets that never close
        b'{"tools" [1]}',  # no colon
        b'{"tools": [1] "a": 2}',  # no comma
        b'{"tools": "unterminated}',
        b"\xef\xbb\xbf" + b'{"tools": []}',  # a byte-order mark first: decoded whole
        '{"tools": []}'.encode("utf-16-le"),
        b'{"tools": }',
        b"",
    ],
)
def test_what_the_scan_is_not_certain_of_gives_no_span(raw: bytes) -> None:
    assert native.member_span(raw, b"tools") is None


@pytest.fixture(scope="module", params=["c", "python"])
def reader(request: pytest.FixtureRequest) -> Iterator[str]:
    """Bodies are read the same with the C helper (where it is built) and without it."""
    if request.param == "c" and native is None:
        pytest.skip("the C helper is not built here")
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "python":
            patch.setattr(compiled, "native", None)
        yield request.param


@given(members, st.integers(0, 2**16), st.booleans())
def test_a_body_reads_as_json_loads_reads_it(reader: str, pairs: list[tuple[str, Any]], seed: int, a: bool) -> None:
    raw = body_text(pairs, seed, a)
    assert same(read_request(raw), json.loads(raw))
    assert same(read_request(raw), json.loads(raw))  # the second time, the tools come from the memo


@given(st.binary() | st.text().map(lambda t: t.encode("utf-8", "surrogatepass")))
@example(b'{"tools": [1,], "model": "m"}')  # the tools' own bytes are no JSON
@example(b'{"tools": [1], "model": }')  # the rest is no JSON
@example(b'{"tools": [1]}}')
@example(b'{"tools": [1], "tools": {"a": 1}}')
@example(b'{"tools": "\xff"}')  # not UTF-8
# The tools' bytes are read as the body's UTF-8: alone, their encoding would be guessed from them.
@example(b'{"tools":\xef\xbb\xbf1}')
@example(b'{"tools":\x001}')
@example(b'{"tools":1\x00\x00\x00}')
@example(b'{"tools":\xff\xfe"\x00a\x00"\x00}')
@example(b'{"tools":[\x00]}')
# Tools nested too deep to decode, in a body that is no JSON anyway: the body's error.
@example(b'{"model":"m","messages":[],"x":tru,"tools":' + b"[" * 993 + b"]" * 993 + b"}")
def test_any_bytes_give_the_value_or_the_error_json_loads_gives(reader: str, raw: bytes) -> None:
    got, expected = outcome(read_request, raw), outcome(json.loads, raw)
    assert got[0] == expected[0]
    assert same(got[1], expected[1]) if got[0] == "value" else got[1] == expected[1]


def tool(name: str) -> dict[str, Any]:
    parameters = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    return {
        "type": "function",
        "function": {"name": name, "description": f"The {name} tool.", "parameters": parameters},
    }


def request(text: str, **extra: Any) -> bytes:
    tools = [tool("get_weather"), tool("get_time")]
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": text}], "tools": tools, **extra}).encode()


@pytest.mark.parametrize("raw", [bytearray(b'{"tools": [1]}'), '{"tools": [1], "a": "\u00e9"}'])
def test_a_body_that_is_no_bytes_reads_as_json_loads_reads_it(reader: str, raw: bytearray | str) -> None:
    assert read_request(raw) == json.loads(raw)  # type: ignore[arg-type]


def test_requests_with_the_same_tools_share_them_and_read_them_once(
    reader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The body's tools are one object for every request that sends them, and what the rewrite,
    the rules and the parser read of them is read once: keys made from the shared object's key."""
    from toolcall_middleware.core.policy import _tools as policy_tools
    from toolcall_middleware.core.request import _tools as request_tools

    reads: list[str] = []
    real_normalize, real_rules = request_tools._normalize_tools, policy_tools.ToolRules.read
    monkeypatch.setattr(request_tools, "_normalize_tools", lambda body: reads.append("tools") or real_normalize(body))
    monkeypatch.setattr(
        policy_tools.ToolRules, "read", staticmethod(lambda *a: reads.append("rules") or real_rules(*a))
    )
    made = []
    for turn in range(3):
        exchange = Exchange(ToolCallConfig(dialect="hermes"), RouteMatch("chat", "chat"))
        new = exchange.forward(request(f"turn {turn}")).body
        assert new is not None and b"get_time" in new and b'"tools"' not in new
        exchange.start("POST", 200, [(b"content-type", b"text/event-stream")])
        exchange.prepare()  # (as the shells do once the head is handed over: the rules are read)
        made.append(exchange.request["tools"])
    assert made[0] is made[1] is made[2]
    assert reads == ["tools", "rules"]  # the first request read them; the others took what it read
    keys = [key for key in memo._MEMO if key[0] in ("tools", "rules", "schemas")]
    assert len(keys) == 3 and all(b"shared" in key[1] and len(key[1]) < 100 for key in keys)  # its stand-in


def test_other_tools_are_other_objects(reader: str) -> None:
    first = read_request(request("a"))
    second = read_request(request("b", tools=[tool("get_weather")]))
    spaced_out = read_request(request("c").replace(b'", "', b'",  "'))  # the same tools, laid out otherwise
    assert first["tools"] is not second["tools"] and len(second["tools"]) == 1
    assert same(spaced_out["tools"], first["tools"])


def test_the_memo_bound_forgets_shared_objects_too() -> None:
    for i in range(memo.MAX_ENTRIES * 2):
        memo.shared([i])
    assert len(memo._MEMO) <= memo.MAX_ENTRIES and len(memo._SHARED) <= memo.MAX_ENTRIES
    remembered = [value for value in memo._MEMO.values()]
    assert all(any(value is kept for kept in remembered) for value, _ in memo._SHARED.values())


@pytest.mark.parametrize(
    "api, host", [("chat", "chat"), ("responses", "responses"), ("responses", "chat"), ("messages", "chat")]
)
@pytest.mark.parametrize("forward", [False, True])
@pytest.mark.parametrize("stream", [False, True])
def test_no_exchange_changes_the_shared_tools(reader: str, api: str, host: str, forward: bool, stream: bool) -> None:
    """Every request that sends the same tools holds the same object: nothing may write to it. Full
    exchanges of each API (its own host's, or bridged to a Chat host), streamed and whole, with
    the tools forwarded or not, leave it as it was sent."""
    from tests.asgi.harness import chat_answer, chat_stream, responses_answer, responses_stream

    parameters = tool("x")["function"]["parameters"]
    tools: list[dict[str, Any]] = {
        "chat": [tool("get_weather")],
        "responses": [{"type": "function", "name": "get_weather", "parameters": parameters}, {"type": "web_search"}],
        "messages": [{"name": "get_weather", "description": "w", "input_schema": parameters}],
    }[api]
    sent = copy.deepcopy(tools)
    body = {
        "chat": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        "responses": {"model": "m", "input": "hi", "tool_choice": "auto"},
        "messages": {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]},
    }[api]
    raw = json.dumps({**body, "tools": tools, "stream": stream}).encode()
    call = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    if host == "chat":
        answer = chat_stream(call) if stream else chat_answer(call)
    else:
        answer = responses_stream(call) if stream else responses_answer(call)
    ctype = b"text/event-stream" if stream else b"application/json"
    seen = []
    for _ in range(2):
        config = ToolCallConfig(dialect="hermes", forward_tools=forward)
        exchange = Exchange(config, RouteMatch(api, host))  # type: ignore[arg-type]
        exchange.forward(raw)
        seen.append(exchange.request["tools"])
        exchange.start("POST", 200, [(b"content-type", ctype)])
        out = exchange.feed(answer) + exchange.end()
        assert b"get_weather" in out and b"<tool_call>" not in out
    assert seen[0] is seen[1] and seen[0] == sent


# -- the rewritten body written out: the manifest's JSON made once -------------------------------


@given(values, st.text(), st.lists(st.sampled_from(["a", "b"]), max_size=2), st.sampled_from([None, 0, 1]))
@example({"a": "\x00toolcall-middleware: spliced\x00"}, "x", [], None)  # the body holds the marker's text
@example({"a": 1}, "\ud800", ["a"], 1)  # a lone surrogate: every non-ASCII character escaped
def test_a_body_written_with_a_spliced_string_is_the_body_written(
    value: Any, text: str, keys: list[str], index: int | None
) -> None:
    """`json_bytes_with` writes what `json_bytes` writes, the string at the path from its token."""
    from json.encoder import encode_basestring

    from toolcall_middleware.core.framing._utf8 import json_bytes, json_bytes_with

    body: dict[str, Any] = {"value": value}
    holder: Any = body
    for key in keys:  # containers of our own along the path
        holder[key] = {"n": 1}
        holder = holder[key]
    path: list[str | int] = [*keys, "s"]
    if index is not None:
        holder["s"] = [1, 2]
        holder, path = holder["s"], [*path, index]
    holder[path[-1]] = text
    out = json_bytes_with(body, path, encode_basestring)
    assert out == json_bytes(body)
    assert holder[path[-1]] == text  # put back


@given(st.text(), st.text(min_size=1), st.sampled_from(["alone", "after", "before", "other"]))
def test_the_manifest_token_is_the_texts(system: str, manifest: str, where: str) -> None:
    from json.encoder import encode_basestring

    from toolcall_middleware.core.request._render import manifest_token

    text = {"alone": manifest, "after": system + "\n\n" + manifest, "before": manifest + "\n\n" + system}.get(
        where, system
    )
    assert manifest_token(text, manifest) == encode_basestring(text)
    assert manifest_token(text, manifest) == encode_basestring(text)  # (the second time, made once)


@pytest.mark.parametrize("dialect", ["hermes", "mistral", "qwen3_coder", "kimi_k2", "gpt_oss"])
@pytest.mark.parametrize("api", ["chat", "responses", "messages", "messages-blocks"])
@pytest.mark.parametrize("tools", [1, 30])
def test_a_rewritten_body_is_the_same_with_its_manifest_spliced(dialect: str, api: str, tools: int) -> None:
    """Many tools' manifest (the system message, the instructions, Anthropic's `system` as a
    string or as blocks; before or after the system text, as the dialect's template puts it) is
    written from its JSON made once: the host gets the same bytes as written in full."""
    from toolcall_middleware.core import _forwarded as forwarded

    offered = [tool(f"tool_{i}") for i in range(tools)]
    system = "Be brief. \u00e9 \U0001f600"
    if api == "chat":
        raw = {"model": "m", "messages": [{"role": "system", "content": system}, {"role": "user", "content": "hi"}]}
    elif api == "responses":
        raw = {"model": "m", "input": "hi", "instructions": system}
        offered = [{"type": "function", **t["function"]} for t in offered]
    else:
        blocks = [{"type": "text", "text": system}] if api == "messages-blocks" else system
        raw = {"model": "m", "max_tokens": 9, "system": blocks, "messages": [{"role": "user", "content": "hi"}]}
        offered = [{"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in offered]
    data = json.dumps({**raw, "tools": offered}).encode()
    kind = "messages" if api.startswith("messages") else api
    written = []
    for threshold in (0, 1 << 30):  # every manifest spliced; none
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(forwarded, "SPLICED_MANIFEST", threshold)
            exchange = Exchange(ToolCallConfig(dialect=dialect), RouteMatch(kind, kind))  # type: ignore[arg-type]
            written.append(exchange.forward(data).body)
    assert written[0] is not None and written[0] == written[1]
    assert b"tool_0" in written[0] and (tools == 1 or b"tool_29" in written[0])
