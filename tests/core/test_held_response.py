"""`HeldResponse`: what a shell writes of the app's response, driven with a real exchange and real
bytes. A table of cases (which head, which messages, which body, in what order), then properties:
a body that is not ours comes back exactly as the app sent it, head and messages in order, however
it is split and whatever is sent between its pieces; one that is ours is written the same however
it is split, after the other messages, in order."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.asgi.harness import chat_answer, chat_request, chat_stream
from toolcall_middleware import ToolCallConfig, ToolCallExchange
from toolcall_middleware._routing import route_request
from toolcall_middleware.core._exchange_state import BUFFER, DONE, ENDED, PASS, STREAM
from toolcall_middleware.core._held_response import APPS_HEAD, Head, HeldResponse, Writes
from toolcall_middleware.core._stream_body import StreamBody

CONFIG = ToolCallConfig(dialect="hermes")
SSE = [(b"content-type", b"text/event-stream")]
JSON = [(b"content-type", b"application/json"), (b"content-length", b"999"), (b"etag", b"x")]
TEXT = [(b"content-type", b"text/plain")]
ANSWER = chat_answer()
NOT_AN_ANSWER = json.dumps({"not": "an answer", "pad": "x" * 40}).encode()

CALL_ID = re.compile(rb"call_[A-Za-z0-9]{24}")
Msg = tuple[str, Any]  # ("body", bytes) or ("other", n): the app's messages, as a shell would hold them


def exchange(config: ToolCallConfig = CONFIG, *, stream: bool = False) -> ToolCallExchange:
    route = route_request(config, "POST", "/v1/chat/completions", None)
    assert route is not None
    ex = ToolCallExchange(config, route)
    assert ex.forward(chat_request(stream=stream)).body is not None
    return ex


def held(headers: list[tuple[bytes, bytes]], config: ToolCallConfig = CONFIG, **head: Any) -> HeldResponse[Msg]:
    response: HeldResponse[Msg] = HeldResponse(exchange(config, stream=headers is SSE))
    response.head("POST", 200, headers, **head)
    return response


def written(writes: list[bytes | Writes[Msg]]) -> list[Any]:
    """Everything the shell writes, in order: heads, the app's messages, bodies of ours (a piece
    of a stream under way is its bytes alone, more to follow; b"" writes nothing)."""
    out: list[Any] = []
    for w in writes:
        if isinstance(w, bytes):
            if w:
                out.append(("ours", w, True))
            continue
        if w.head is not None:
            out.append(w.head)
        out.extend(w.messages)
        if w.body is not None:
            out.append(("ours", w.body, w.more))
    return out


def writes_of(answer: bytes | Writes[Msg]) -> Writes[Msg]:
    """What `HeldResponse.body` answered, when it is no stream's usual piece."""
    assert isinstance(answer, Writes), answer
    return answer


def drive(response: HeldResponse[Msg], messages: list[Msg]) -> list[Any]:
    """The app's messages after its head, the last body its end."""
    last = max(i for i, (kind, _) in enumerate(messages) if kind == "body")
    writes: list[bytes | Writes[Msg]] = []
    for i, message in enumerate(messages):
        if message[0] == "body":
            writes.append(response.body(message, message[1], end=i == last))
        else:
            writes.append(response.other(message))
    return written(writes)


def whole_rewrite(data: bytes) -> bytes:
    """What the exchange writes for `data` given whole: the split-invariant reference."""
    ex = exchange()
    ex.start("POST", 200, JSON)
    out = ex.end(data)
    assert out is not None and ex.state is DONE
    return out


# -- the table -------------------------------------------------------------------------------------


def test_a_whole_answer_of_ours_replaces_the_bodies_held_and_gets_its_length() -> None:
    response = held(JSON)
    assert response.head_held and response.exchange.state is BUFFER
    messages: list[Msg] = [("body", ANSWER[:50]), ("other", 1), ("other", 2), ("body", ANSWER[50:]), ("other", 3)]
    new_head, *rest = drive(response, messages)
    assert isinstance(new_head, Head) and new_head.status is None
    assert new_head.headers is not None
    # The app's length and validators go (the body is new), and the new length is said last.
    assert [k for k, _ in new_head.headers] == [b"content-type", b"content-length"]
    assert new_head.headers[-1][1] == str(len(rest[2][1])).encode()
    # The other messages follow the head, in order, then the body of ours (the last one), then
    # what the app sent after its body (trailers, say).
    assert rest[:2] == [("other", 1), ("other", 2)] and rest[2][0] == "ours" and rest[2][2] is False
    assert b"tool_calls" in rest[2][1] and rest[3] == ("other", 3) and not response.head_held


def test_trailers_to_follow_leave_the_length_out() -> None:
    out = drive(held(JSON, trailers=True), [("body", ANSWER)])
    assert isinstance(out[0], Head) and out[0].headers == [(b"content-type", b"application/json")]


def test_the_new_length_is_spelled_as_the_shell_asks() -> None:
    response: HeldResponse[Msg] = HeldResponse(exchange(), length_name=b"Content-Length")
    response.head("POST", 200, JSON)
    writes = writes_of(response.body(("body", ANSWER), ANSWER, end=True))
    assert writes.head is not None and writes.head.headers is not None
    assert writes.body is not None and writes.head.headers[-1] == (b"Content-Length", str(len(writes.body)).encode())


def test_a_whole_body_that_is_no_answer_is_given_back_as_sent() -> None:
    messages: list[Msg] = [("other", 1), ("body", NOT_AN_ANSWER[:7]), ("other", 2), ("body", NOT_AN_ANSWER[7:])]
    response = held(JSON)
    assert drive(response, messages) == [APPS_HEAD, *messages]
    assert response.exchange.state is PASS


def test_a_whole_body_over_the_cap_is_given_back_at_once_and_the_rest_follows() -> None:
    response = held(JSON, ToolCallConfig(dialect="hermes", limits={"max_response_bytes": 10}))
    assert response.body(("body", b"0123456789"), b"0123456789", end=False) == Writes()
    over = response.body(("body", b"abc"), b"abc", end=False)
    assert over == Writes(APPS_HEAD, (("body", b"0123456789"), ("body", b"abc")))
    assert response.body(("body", b"z"), b"z", end=True) == Writes(None, (("body", b"z"),))


def test_a_body_passed_through_from_its_head_goes_under_the_apps_head() -> None:
    response = held(TEXT)
    assert response.exchange.state is PASS and not response.passing  # (its head is still held)
    assert response.body(("body", b"a"), b"a", end=False) == Writes(APPS_HEAD, (("body", b"a"),))
    assert response.passing  # from here on, whatever the app sends goes as it sent it
    assert response.other(("other", 1)) == Writes(None, (("other", 1),))
    assert response.body(("body", b"b"), b"b", end=True) == Writes(None, (("body", b"b"),))


def test_a_streams_head_goes_with_its_first_body_or_when_released() -> None:
    response = held(SSE)
    assert response.exchange.state is STREAM and response.head_held
    first = writes_of(response.body(("body", b""), b": hi\n\n", end=False))
    assert first.head is not None and first.head.headers is not None and first.body == b": hi\n\n" and first.more
    assert not response.head_held
    # Then each piece is the bytes of ours alone: b"" while text is held back (nothing is written).
    assert response.body(("body", b"x"), b": more\n\n", end=False) == b": more\n\n"
    assert response.body(("body", b"x"), b"data: {", end=False) == b""  # (an event not whole yet)
    # The end is always written, ending the response.
    ended = held(SSE)
    ended.body(("body", b""), b": hi\n\n", end=False)
    assert ended.body(("body", b"x"), b"", end=True) == Writes(None, (), b"", False)
    released = held(SSE).release()
    assert released.head is not None and released.messages == ()


def test_a_stream_that_failed_on_our_side_passes_the_piece_as_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: StreamBody, ex: Any, data: bytes) -> bytes:
        raise ValueError("a bug of ours")

    monkeypatch.setattr(StreamBody, "feed", broken)
    response = held(SSE)
    writes = response.body(("body", b"raw"), b"raw", end=False)
    assert writes == Writes(Head(SSE), (("body", b"raw"),))  # the head it was held under, then the piece
    assert response.exchange.state is PASS and response.passing


def test_the_end_of_a_stream_after_its_terminal_event_drops_the_rest() -> None:
    response = held(SSE, trailers=True)
    first = writes_of(response.body(("body", chat_stream()), chat_stream(), end=False))
    assert first.body is not None and first.body.endswith(b"data: [DONE]\n\n")
    assert response.exchange.state is ENDED and not first.more  # the response ends with it
    assert response.body(("body", b"late"), b"data: {}\n\n", end=False) == Writes()
    assert response.other(("debug", 0)) == Writes()
    assert response.other(("trailers", 0), trailers=True) == Writes(None, (("trailers", 0),))
    untold = held(SSE)
    untold.body(("body", b""), chat_stream(), end=False)
    assert untold.other(("trailers", 0), trailers=True) == Writes()  # trailers the head never announced


def test_a_body_in_a_file_goes_under_the_apps_head_when_nothing_was_held() -> None:
    response = held(JSON)
    assert response.other(("pathsend", "/f"), in_file=True) == Writes(APPS_HEAD, (("pathsend", "/f"),))
    assert response.exchange.state is PASS
    stream = held(SSE)
    stream.body(("body", b""), b": hi\n\n", end=False)  # the stream's head is out
    assert stream.other(("pathsend", "/f"), in_file=True) == Writes(None, (("pathsend", "/f"),))
    assert stream.exchange.state is PASS


def test_other_messages_wait_with_a_held_whole_body() -> None:
    response = held(JSON)
    assert response.other(("hints", 1)) == Writes()
    assert response.exchange.state is BUFFER and response.head_held


def test_the_end_without_a_message_and_a_dropped_head() -> None:
    response = held(JSON)
    response.body(("body", NOT_AN_ANSWER), NOT_AN_ANSWER, end=False)
    assert response.end() == Writes(APPS_HEAD, (("body", NOT_AN_ANSWER),))
    unanswered: HeldResponse[Msg] = HeldResponse(exchange())
    assert unanswered.end() == Writes()  # the app never sent its head: nothing of ours to say
    with pytest.raises(RuntimeError):
        unanswered.body(("body", b"x"), b"x", end=True)
    replaced = held(JSON)
    replaced.body(("body", b"{"), b"{", end=False)
    replaced.replaced()  # the app's error response replaces the one being gathered
    assert replaced.exchange.state is PASS
    assert replaced.body(("body", b"e"), b"e", end=True) == Writes(APPS_HEAD, (("body", b"e"),))
    dropped = held(JSON)
    dropped.drop()
    assert not dropped.head_held


# -- properties ------------------------------------------------------------------------------------


def interleaved(data: bytes) -> st.SearchStrategy[list[Msg]]:
    """`data` cut into body messages anywhere, other messages between and around them."""

    @st.composite
    def build(draw: st.DrawFn) -> list[Msg]:
        cuts = sorted(draw(st.sets(st.integers(1, max(1, len(data) - 1)), max_size=6)))
        pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        messages: list[Msg] = []
        others = 0
        for piece in pieces:
            for _ in range(draw(st.integers(0, 2))):
                others += 1
                messages.append(("other", others))
            messages.append(("body", piece))
        if draw(st.booleans()):
            messages.append(("body", b""))  # an empty last body, as ASGI apps often end
        return messages

    return build()


@settings(max_examples=60, deadline=None)
@given(interleaved(NOT_AN_ANSWER))
def test_a_body_not_ours_comes_back_exactly_as_sent(messages: list[Msg]) -> None:
    response = held(JSON)
    assert drive(response, messages) == [APPS_HEAD, *messages]
    assert response.passing


@settings(max_examples=40, deadline=None)
@given(interleaved(b"x" * 40), st.integers(1, 39))
def test_a_body_over_the_cap_comes_back_exactly_as_sent(messages: list[Msg], cap: int) -> None:
    config = ToolCallConfig(dialect="hermes", limits={"max_response_bytes": cap})
    assert drive(held(JSON, config), messages) == [APPS_HEAD, *messages]


@settings(max_examples=40, deadline=None)
@given(interleaved(ANSWER))
def test_an_answer_of_ours_is_the_same_however_it_is_split(messages: list[Msg]) -> None:
    *out, (kind, body, more) = drive(held(JSON), messages)
    whole = whole_rewrite(ANSWER)
    others = [m for m in messages if m[0] == "other"]
    assert out[0].headers[-1] == (b"content-length", str(len(whole)).encode())
    assert out == [Head(out[0].headers), *others] and (kind, more) == ("ours", False)
    assert CALL_ID.sub(b"call_", body) == CALL_ID.sub(b"call_", whole)  # (each answer draws its call's id)


def test_an_answer_asked_again_is_dropped_and_the_next_one_held_as_the_first() -> None:
    """`regenerate`: the first generation's head and every message held are dropped, and what else
    the app sends of that response; the next is held and written as the first would have been,
    the 502 of a broken answer marked `x-should-retry: false` (the host's own header dropped)."""
    config = ToolCallConfig(dialect="hermes", regenerate=1)
    route = route_request(config, "POST", "/v1/chat/completions", None)
    assert route is not None
    ex = ToolCallExchange(config, route)
    ex.forward(json.dumps({**json.loads(chat_request()), "tool_choice": "required"}).encode())
    response: HeldResponse[Msg] = HeldResponse(ex)
    no_call = chat_answer("No call.")
    writes = []
    for generation in (1, 2):
        response.head("POST", 200, [*JSON, (b"x-should-retry", b"true")])
        writes += [response.other(("other", generation)), response.body(("body", no_call), no_call, end=True)]
        if generation == 1:
            writes.append(response.other(("other", "trailers"), trailers=True))
            assert written(writes) == [] and not response.head_held
            ex.again()
    head, other, (_, body, more) = written(writes)
    assert other == ("other", 2) and not more and json.loads(body)["error"]["code"] == "tool_call_required"
    assert head.status == 502 and (b"x-should-retry", b"false") in head.headers
    assert (b"x-should-retry", b"true") not in head.headers
