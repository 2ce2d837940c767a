"""The pure rules of the Responses state: expansion, references, scoping, ids, pagination."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcall_middleware.core.framing._utf8 import json_bytes, json_text
from toolcall_middleware.core.request._errors import BadRequest
from toolcall_middleware.store._state import (
    Echo,
    StateError,
    as_item,
    expand,
    forward_bytes,
    history_of,
    items_json,
    mint_id,
    page,
    scope_of,
    wanted_state,
)


def user(text: str, ident: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "message", "role": "user", "content": text}
    if ident:
        item["id"] = ident
    return item


STORED = {
    "input": [as_item(user("hi", "msg_1"), "input[0]")],
    "response": {
        "instructions": "be brief",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "hm"}]},
            {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed", "content": []},
        ],
    },
}


def test_history_is_the_stored_input_then_output() -> None:
    assert [item["id"] for item in history_of(STORED)] == ["msg_1", "rs_1", "msg_2"]


def test_expand_puts_history_before_the_new_input_and_drops_the_stateful_fields() -> None:
    body = {"model": "m", "input": "next", "previous_response_id": "resp_x", "instructions": "new rules"}
    forward, whole, own = expand(body, history_of(STORED), {})
    assert [i["id"] for i in forward["input"][:3]] == ["msg_1", "rs_1", "msg_2"]
    assert forward["input"][3]["content"] == [{"type": "input_text", "text": "next"}]
    assert "previous_response_id" not in forward
    assert forward["instructions"] == "new rules"  # the request's own: never inherited
    assert whole == forward["input"] and own == [forward["input"][3]]


def test_expand_puts_the_historys_own_items_in_both_lists() -> None:
    """A chain's context is thousands of items: a copy of each per turn made turns grow with it."""
    history = history_of(STORED)
    forward, whole, _ = expand({"model": "m", "input": "next", "previous_response_id": "r"}, history, {})
    assert all(a is b for a, b in zip(forward["input"], history, strict=False))
    assert all(a is b for a, b in zip(whole, history, strict=False))


TEXT = st.text(st.characters(codec="utf-8") | st.sampled_from(["\ud800", "\u2028", '"', "\\", "\x00"]), max_size=8)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
ITEMS = st.lists(st.dictionaries(TEXT, VALUES, max_size=4), max_size=5)


@given(ITEMS, ITEMS, st.dictionaries(TEXT, VALUES, max_size=3), st.integers(0, 3))
def test_a_body_written_from_the_historys_json_is_the_body_encoded(
    history: list[dict[str, Any]], own: list[dict[str, Any]], fields: dict[str, Any], at: int
) -> None:
    """Any items, any text (a lone surrogate too: the whole body is escaped then), `input` at any
    place among the fields: the same bytes as encoding the body whole; and where it says the
    history's text lies, the bytes less it are the body with only the request's own items."""
    fields.pop("input", None)
    members = list(fields.items())
    members.insert(min(at, len(members)), ("input", [*history, *own]))
    forward = dict(members)
    body, span = forward_bytes(forward, len(history), items_json(history))
    assert body == json_bytes(forward)
    assert forward_bytes(forward, len(history), None) == (json_bytes(forward), None)  # (not known: encoded)
    if span is not None:
        start, end = span
        assert history and body[start:end].startswith(items_json(history).encode())
        assert json.loads(body[:start] + body[end:]) == json.loads(json_bytes({**forward, "input": own}))
    elif history:
        with pytest.raises(UnicodeEncodeError):  # (only a lone surrogate has it written whole)
            json_text(forward).encode()


def test_with_nothing_to_expand_the_input_goes_on_as_the_client_wrote_it() -> None:
    body = {"model": "m", "input": [{"role": "user", "content": "hi"}], "store": True}
    forward, whole, _ = expand(body, [], {})
    assert forward == body
    assert whole[0]["id"].startswith("msg_") and whole[0]["content"] == [{"type": "input_text", "text": "hi"}]
    assert expand({"input": "hi"}, [], {})[0] == {"input": "hi"}


def test_instructions_are_not_inherited() -> None:
    forward, _, _ = expand({"model": "m", "input": "next"}, history_of(STORED), {})
    assert "instructions" not in forward


def test_item_reference_resolves_from_history_then_from_the_index() -> None:
    body = {
        "input": [{"type": "item_reference", "id": "rs_1"}, {"type": "item_reference", "id": "fc_9"}, user("go")],
    }
    found = {"fc_9": {"type": "function_call", "id": "fc_9", "call_id": "call_9", "name": "f", "arguments": "{}"}}
    forward, _, own = expand(body, history_of(STORED), found)
    assert [i["type"] for i in forward["input"][3:]] == ["reasoning", "function_call", "message"]
    assert forward["input"][5] == user("go")  # the client's own item, as it wrote it
    assert own[0]["id"] == "rs_1" and own[2]["id"].startswith("msg_")
    alone, _, _ = expand({"input": [{"type": "item_reference", "id": "fc_9"}]}, [], found)
    assert alone["input"] == [found["fc_9"]]


def test_an_input_item_that_is_no_object_is_a_400_naming_it() -> None:
    with pytest.raises(BadRequest) as caught:
        expand({"input": [user("hi"), "hi"], "previous_response_id": "r"}, history_of(STORED), {})
    assert caught.value.param == "input[1]"


def test_an_unknown_item_reference_is_a_404_naming_the_item() -> None:
    with pytest.raises(StateError) as caught:
        expand({"input": [{"type": "item_reference", "id": "rs_gone"}]}, [], {})
    assert caught.value.status == 404 and caught.value.param == "input[0]" and "rs_gone" in caught.value.message


def test_wanted_state_reads_ids_and_refuses_both_kinds_of_continuation() -> None:
    wanted = wanted_state({"conversation": {"id": "conv_1"}, "input": [{"type": "item_reference", "id": "a"}]})
    assert (wanted.previous_response_id, wanted.conversation, wanted.references) == (None, "conv_1", ("a",))
    with pytest.raises(BadRequest, match="Mutually exclusive"):
        wanted_state({"conversation": "conv_1", "previous_response_id": "resp_1"})
    with pytest.raises(BadRequest, match="previous_response_id"):
        wanted_state({"previous_response_id": 7})


def test_items_get_ids_and_typed_content() -> None:
    item = as_item({"role": "assistant", "content": "ok"}, "input[0]")
    assert item["type"] == "message" and item["status"] == "completed" and item["id"].startswith("msg_")
    assert item["content"] == [{"type": "output_text", "text": "ok", "annotations": []}]
    assert as_item({"type": "function_call_output", "call_id": "c", "output": "x"}, "i")["id"].startswith("fco_")
    assert as_item(user("kept", "msg_own"), "i")["id"] == "msg_own"


def test_ids_are_unguessable() -> None:
    ids = {mint_id("resp") for _ in range(1000)}
    assert len(ids) == 1000
    assert all(re.fullmatch(r"resp_[0-9a-f]{48}", ident) for ident in ids)


@given(st.binary(min_size=8, max_size=64), st.binary(min_size=8, max_size=64))
def test_a_scope_is_per_credential_and_never_holds_it(first: bytes, second: bytes) -> None:
    a = scope_of([(b"authorization", b"Bearer " + first)], "secret")
    assert a == scope_of([(b"Authorization", b"Bearer " + first)], "secret")
    assert a != scope_of([(b"authorization", b"Bearer " + first)], "another secret")
    if first != second:
        assert a != scope_of([(b"authorization", b"Bearer " + second)], "secret")
    assert first.hex() not in a  # (8 bytes or more: a chance match of 16 hex digits is negligible)


def test_x_api_key_scopes_like_authorization() -> None:
    assert scope_of([(b"x-api-key", b"k")], "s") == scope_of([(b"x-api-key", b"k"), (b"host", b"h")], "s")
    assert scope_of([(b"x-api-key", b"k")], "s") != scope_of([], "s")


IDS = st.lists(st.integers(0, 10_000), unique=True, max_size=60).map(lambda ns: [{"id": f"i{n}"} for n in ns])


@given(IDS, st.integers(1, 100), st.sampled_from(["asc", "desc"]))
def test_paging_through_a_list_gives_every_item_once_in_order(
    items: list[dict[str, Any]], limit: int, order: str
) -> None:
    seen: list[str] = []
    after = None
    while True:
        got = page(items, after=after, limit=str(limit), order=order)
        seen += [item["id"] for item in got["data"]]
        if not got["has_more"]:
            break
        after = got["last_id"]
    expected = [item["id"] for item in items]
    assert seen == (expected if order == "asc" else expected[::-1])


def test_page_defaults_and_bad_parameters() -> None:
    items = [{"id": f"i{n}"} for n in range(30)]
    got = page(items, after=None, limit=None, order=None)
    assert len(got["data"]) == 20 and got["first_id"] == "i29" and got["has_more"] is True
    for bad in ({"limit": "0"}, {"limit": "many"}, {"order": "up"}):
        with pytest.raises(BadRequest):
            page(items, after=None, limit=bad.get("limit"), order=bad.get("order"))
    with pytest.raises(StateError):
        page(items, after="nope", limit=None, order=None)


def test_echo_gives_the_response_our_id_and_the_stateful_fields() -> None:
    echo = Echo("resp_ours", True, "resp_before", "conv_1")
    out = echo.apply({"id": "resp_host", "store": False, "previous_response_id": None, "output": []})
    assert out["id"] == "resp_ours" and out["store"] is True and out["previous_response_id"] == "resp_before"
    assert out["conversation"] == {"id": "conv_1"}
