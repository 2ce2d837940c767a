"""The stateful Responses API as a user drives it: the official `openai` SDK against the
middleware on a real uvicorn, in front of a Chat-only host (bridged) and a native Responses host,
with each store backend. The host repeats every user turn it was sent, so an answer shows whether
the earlier turns came back in front of the new one."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import openai
import pytest

from tests.servers import serve, uvicorn
from tests.store.redis_server import redis_server

SETUPS = [("bridged", "memory"), ("native", "sqlite"), ("bridged", "redis")]


@contextlib.contextmanager
def served(app: str, store: str) -> Iterator[str]:
    """`tests.store.hosts:<app>` on uvicorn with the store `$TOOLCALL_TEST_STORE` names."""
    before = os.environ.get("TOOLCALL_TEST_STORE")
    os.environ["TOOLCALL_TEST_STORE"] = store
    try:
        command, port = uvicorn(f"tests.store.hosts:{app}")
        with serve(command, port) as base:
            yield base
    finally:
        if before is None:
            os.environ.pop("TOOLCALL_TEST_STORE")
        else:
            os.environ["TOOLCALL_TEST_STORE"] = before


@pytest.fixture(scope="module", params=SETUPS, ids=["-".join(s) for s in SETUPS])
def base(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    app, backend = request.param
    with contextlib.ExitStack() as stack:
        if backend == "sqlite":
            store = f"sqlite:///{tmp_path_factory.mktemp('store') / 'state.db'}"
        elif backend == "redis":
            store = stack.enter_context(redis_server())
        else:
            store = "memory"
        yield stack.enter_context(served(app, store))


def client(base: str, key: str = "sk-alice") -> openai.OpenAI:
    return openai.OpenAI(api_key=key, base_url=base + "/v1", max_retries=0)


def test_previous_response_id_continues_whole_and_streamed(base: str) -> None:
    sdk = client(base)
    first = sdk.responses.create(model="m", input="My name is Ada.")
    assert first.output_text == "Heard: My name is Ada." and first.store is True
    second = sdk.responses.create(model="m", input="What is my name?", previous_response_id=first.id)
    assert second.output_text == "Heard: My name is Ada. | What is my name?"
    assert second.previous_response_id == first.id and second.id != first.id
    with sdk.responses.stream(model="m", input="Again?", previous_response_id=second.id) as stream:
        third = stream.get_final_response()
    assert third.output_text == "Heard: My name is Ada. | What is my name? | Again?"
    assert third.previous_response_id == second.id
    assert sdk.responses.retrieve(third.id).output_text == third.output_text


def test_retrieve_replay_input_items_and_delete(base: str) -> None:
    sdk = client(base)
    first = sdk.responses.create(model="m", input="one")
    events = list(sdk.responses.create(model="m", input="two", previous_response_id=first.id, stream=True))
    done = events[-1]
    assert done.type == "response.completed"
    ident = done.response.id
    replay = list(sdk.responses.retrieve(ident, stream=True))
    assert [e.type for e in replay] == [e.type for e in events]
    assert replay[-1].response.output_text == "Heard: one | two"
    later = list(sdk.responses.retrieve(ident, stream=True, starting_after=2))
    assert [e.sequence_number for e in later] == [e.sequence_number for e in events if e.sequence_number > 2]
    items = sdk.responses.input_items.list(ident, order="asc")
    assert [item.type for item in items.data] == ["message", "reasoning", "message", "message"]
    assert items.data[0].content[0].text == "one" and items.data[-1].content[0].text == "two"
    paged = [item.id for item in sdk.responses.input_items.list(ident, limit=1)]  # the SDK follows `has_more`
    assert paged == [item.id for item in reversed(items.data)]
    sdk.responses.delete(ident)
    with pytest.raises(openai.NotFoundError, match=ident):
        sdk.responses.retrieve(ident)
    with pytest.raises(openai.NotFoundError):
        sdk.responses.delete(ident)


def test_store_false_keeps_nothing(base: str) -> None:
    sdk = client(base)
    unstored = sdk.responses.create(model="m", input="secret", store=False)
    assert unstored.store is False
    with pytest.raises(openai.NotFoundError):
        sdk.responses.retrieve(unstored.id)
    with pytest.raises(openai.NotFoundError, match="Previous response"):
        sdk.responses.create(model="m", input="more", previous_response_id=unstored.id)


def test_state_is_visible_only_to_the_credential_that_made_it(base: str) -> None:
    alice, mallory = client(base), client(base, "sk-mallory")
    response = alice.responses.create(model="m", input="private")
    conversation = alice.conversations.create()
    with pytest.raises(openai.NotFoundError):
        mallory.responses.retrieve(response.id)
    with pytest.raises(openai.NotFoundError):
        mallory.responses.input_items.list(response.id)
    with pytest.raises(openai.NotFoundError):
        mallory.responses.delete(response.id)
    with pytest.raises(openai.NotFoundError):
        mallory.responses.create(model="m", input="x", previous_response_id=response.id)
    with pytest.raises(openai.NotFoundError):
        mallory.conversations.retrieve(conversation.id)
    with pytest.raises(openai.NotFoundError):
        mallory.responses.create(model="m", input="x", conversation=conversation.id)
    assert alice.responses.retrieve(response.id).output_text == "Heard: private"  # untouched by the attempts


def test_conversations(base: str) -> None:
    sdk = client(base)
    conversation = sdk.conversations.create(
        items=[{"type": "message", "role": "user", "content": "I like tea."}], metadata={"topic": "drinks"}
    )
    assert conversation.id.startswith("conv_") and conversation.metadata == {"topic": "drinks"}
    first = sdk.responses.create(model="m", input="What do I like?", conversation=conversation.id)
    assert first.output_text == "Heard: I like tea. | What do I like?"
    assert first.conversation is not None and first.conversation.id == conversation.id
    with sdk.responses.stream(model="m", input="And?", conversation={"id": conversation.id}) as stream:
        second = stream.get_final_response()
    assert second.output_text == "Heard: I like tea. | What do I like? | And?"
    items = list(sdk.conversations.items.list(conversation.id, order="asc"))
    assert [item.type for item in items] == [
        "message",
        "message",
        "reasoning",
        "message",
        "message",
        "reasoning",
        "message",
    ]
    added = sdk.conversations.items.create(
        conversation.id, items=[{"type": "message", "role": "user", "content": "Hi"}]
    )
    assert len(added.data) == 1
    assert sdk.conversations.items.retrieve(added.data[0].id, conversation_id=conversation.id).id == added.data[0].id
    third = sdk.responses.create(model="m", input="Last", conversation=conversation.id)
    assert third.output_text.endswith("| And? | Hi | Last")
    sdk.conversations.items.delete(added.data[0].id, conversation_id=conversation.id)
    with pytest.raises(openai.NotFoundError):
        sdk.conversations.items.retrieve(added.data[0].id, conversation_id=conversation.id)
    updated = sdk.conversations.update(conversation.id, metadata={"topic": "tea"})
    assert updated.metadata == {"topic": "tea"} and sdk.conversations.retrieve(conversation.id).metadata == {
        "topic": "tea"
    }
    assert sdk.conversations.delete(conversation.id).deleted is True
    with pytest.raises(openai.NotFoundError):
        sdk.conversations.retrieve(conversation.id)
    with pytest.raises(openai.BadRequestError, match="Mutually exclusive"):
        sdk.responses.create(model="m", input="x", conversation="conv_x", previous_response_id=first.id)


WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def test_a_tool_loop_that_refers_to_stored_items(base: str) -> None:
    """What the Vercel AI SDK sends by default: the second step refers to the first answer's
    reasoning by `item_reference` and repeats its call, with no `previous_response_id`."""
    sdk = client(base)
    first = sdk.responses.create(model="m", input="Weather in Paris?", tools=[WEATHER])
    reasoning = next(item for item in first.output if item.type == "reasoning")
    call = next(item for item in first.output if item.type == "function_call")
    second = sdk.responses.create(
        model="m",
        tools=[WEATHER],
        input=[
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "item_reference", "id": reasoning.id},
            {"type": "item_reference", "id": call.id},
            {"type": "function_call_output", "call_id": call.call_id, "output": "Sunny, 21C"},
        ],
    )
    assert second.output_text == "It is Sunny."
    with pytest.raises(openai.NotFoundError, match="rs_missing"):
        sdk.responses.create(model="m", input=[{"type": "item_reference", "id": "rs_missing"}])


def test_an_unreachable_store_is_a_503_not_a_crash() -> None:
    with redis_server() as url, served("bridged", url) as base:
        sdk = client(base)
        first = sdk.responses.create(model="m", input="hello")
    with served("bridged", url) as base:  # the same store URL, its server gone
        sdk = client(base)
        with pytest.raises(openai.InternalServerError, match="store is unavailable") as caught:
            sdk.responses.create(model="m", input="hello")
        assert caught.value.status_code == 503
        with pytest.raises(openai.InternalServerError, match="store is unavailable"):
            sdk.responses.retrieve(first.id)
