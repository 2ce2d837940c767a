"""The pure parts of compaction: the summary request, the compaction object, and the summary
sealed into a compaction item and read back out of a later request's input."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai.types.responses.compacted_response import CompactedResponse

from toolcall_middleware.core.apis.responses._compaction import (
    compact_path,
    compacted,
    expand_compactions,
    seal,
    summary_request,
    unseal,
)
from toolcall_middleware.core.request import BadRequest

ANSWER = {
    "output": [
        {"type": "reasoning", "summary": []},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Launch Tuesday."}]},
    ],
    "usage": {
        "input_tokens": 12,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 3,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    },
}


def test_the_compact_routes() -> None:
    assert compact_path("/v1/responses/compact") == "/v1/responses"
    assert compact_path("/api/responses/compact/") == "/api/responses"
    assert compact_path("/v1/responses") is None


def test_the_summary_request_keeps_the_conversation_and_asks_for_a_summary() -> None:
    body = {"model": "m", "input": "Hi", "instructions": "Be kind.", "prompt_cache_key": "k", "tools": [{}]}
    asked = summary_request(body)
    assert asked["model"] == "m" and asked["prompt_cache_key"] == "k" and "tools" not in asked
    assert asked["stream"] is False and asked["store"] is False
    roles = [(i["role"], i["content"]) for i in asked["input"]]
    assert roles[:2] == [("developer", "Be kind."), ("user", "Hi")] and roles[-1][0] == "user"
    assert "summary" in asked["instructions"].lower()


@pytest.mark.parametrize(
    ("body", "param", "code"),
    [
        ({"input": "Hi"}, "model", "missing_required_parameter"),
        ({"model": 3, "input": "Hi"}, "model", "invalid_value"),
        ({"model": "m", "input": 3}, "input", "invalid_value"),
        ({"model": "m", "instructions": ["x"]}, "instructions", "invalid_value"),
        ([], None, "invalid_body"),
    ],
)
def test_a_bad_compact_request_names_the_field(body: Any, param: str | None, code: str) -> None:
    with pytest.raises(BadRequest) as refused:
        summary_request(body)
    assert (refused.value.param, refused.value.code) == (param, code)


def test_the_compaction_object_is_the_apis() -> None:
    body = {"model": "m", "input": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]}
    out = compacted(body, ANSWER, now=1700000000)
    # (The SDK types `output` as output items only, where the API lists user messages too.)
    parsed = CompactedResponse.model_validate({**out, "output": out["output"][-1:]})
    assert parsed.object == "response.compaction" and parsed.created_at == 1700000000
    assert parsed.usage.total_tokens == 15
    user, item = out["output"]
    assert user["role"] == "user" and user["content"] == [{"type": "input_text", "text": "Hi"}]
    assert user["id"].startswith("msg_") and user["status"] == "completed"
    assert item["type"] == "compaction" and unseal(item["encrypted_content"]) == "Launch Tuesday."


@given(st.text())
def test_a_sealed_summary_reads_back_as_it_was(summary: str) -> None:
    assert unseal(seal(summary)) == summary


@given(st.text())
def test_only_our_own_content_unseals(content: str) -> None:
    if not content.startswith("tcm-summary-v1:"):
        assert unseal(content) is None


@given(st.lists(st.sampled_from(["user", "compaction", "call"]), max_size=8), st.text(min_size=1))
def test_expansion_replaces_each_item_of_ours_in_place_and_keeps_the_rest(kinds: list[str], summary: str) -> None:
    make = {
        "user": {"role": "user", "content": "hello"},
        "compaction": {"type": "compaction", "id": "cmp_1", "encrypted_content": seal(summary)},
        "call": {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
    }
    body = {"model": "m", "input": [make[k] for k in kinds]}
    out = expand_compactions(body)
    if "compaction" not in kinds:
        assert out is body
        return
    assert body["input"] == [make[k] for k in kinds]  # the request itself is left as it was
    assert len(out["input"]) == len(kinds)
    for kind, item in zip(kinds, out["input"], strict=True):
        if kind == "compaction":
            assert item["role"] == "user" and item["content"].endswith("\n\n" + summary)
        else:
            assert item == make[kind]


def test_a_compaction_item_of_another_server_is_refused() -> None:
    body = {"input": [{"role": "user", "content": "x"}, {"type": "compaction", "encrypted_content": "gAAA"}]}
    with pytest.raises(BadRequest) as refused:
        expand_compactions(body)
    assert refused.value.param == "input[1]"
