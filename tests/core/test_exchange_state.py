"""The exchange's state machine, as a table: every (state, trigger) pair either reaches the state
written here or raises `IllegalTransition`; and a real exchange, driven with real bytes, reaches
each state where the module doc says it does."""

from __future__ import annotations

import itertools
import json
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.asgi.harness import chat_answer, chat_stream
from toolcall_middleware import ToolCallConfig, ToolCallExchange
from toolcall_middleware._routing import route_request
from toolcall_middleware.core._exchange import Exchange, RouteMatch
from toolcall_middleware.core._exchange_state import TRANSITIONS, IllegalTransition, State, Trigger, next_state
from toolcall_middleware.core._failure import UpstreamFailure
from toolcall_middleware.core._stream_body import StreamBody

S, T = State, Trigger

# The specification, written out independently of the module's table: what each trigger does
# from each state. Any pair not listed must raise.
ALLOWED: dict[tuple[State, Trigger], State] = {
    (S.REQUEST, T.READ): S.HEAD,
    (S.REQUEST, T.REFUSE): S.REFUSED,
    (S.HEAD, T.STREAM): S.STREAM,
    (S.HEAD, T.BUFFER): S.BUFFER,
    (S.HEAD, T.PASS): S.PASS,
    (S.HEAD, T.FAIL): S.DONE,
    (S.STREAM, T.FALL_BACK): S.PASS,
    (S.STREAM, T.GIVE_UP): S.GIVEN_UP,
    (S.STREAM, T.TERMINAL): S.ENDED,
    (S.STREAM, T.END): S.DONE,
    (S.STREAM, T.FAIL): S.DONE,
    (S.BUFFER, T.PASS): S.PASS,
    (S.BUFFER, T.FALL_BACK): S.PASS,
    (S.BUFFER, T.END): S.DONE,
    (S.BUFFER, T.FAIL): S.DONE,
    (S.BUFFER, T.AGAIN): S.AGAIN,
    (S.AGAIN, T.READ): S.HEAD,
    (S.PASS, T.FALL_BACK): S.PASS,
    (S.PASS, T.END): S.DONE,
    (S.GIVEN_UP, T.FALL_BACK): S.PASS,
    (S.GIVEN_UP, T.END): S.DONE,
    (S.ENDED, T.FALL_BACK): S.ENDED,  # the client's answer is complete: nothing changes
    (S.ENDED, T.END): S.DONE,
}
FINAL = {S.REFUSED, S.DONE}

CONFIG = ToolCallConfig(dialect="hermes")
SSE = [(b"content-type", b"text/event-stream")]
JSON = [(b"content-type", b"application/json")]
REQUEST = json.dumps(
    {
        "model": "m",
        "messages": [{"role": "user", "content": "x"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
    }
).encode()


@pytest.mark.parametrize(("state", "trigger"), list(itertools.product(State, Trigger)))
def test_every_pair_reaches_its_state_or_raises(state: State, trigger: Trigger) -> None:
    expected = ALLOWED.get((state, trigger))
    if expected is None:
        with pytest.raises(IllegalTransition) as raised:
            next_state(state, trigger)
        assert raised.value.state is state and raised.value.trigger is trigger
        assert state.name in str(raised.value) and trigger.name in str(raised.value)
    else:
        assert next_state(state, trigger) is expected


def test_the_table_declares_every_state_and_no_other_move() -> None:
    assert set(TRANSITIONS) == set(State)
    declared = {(state, trigger): to for state, moves in TRANSITIONS.items() for trigger, to in moves.items()}
    assert declared == ALLOWED


def test_every_state_is_reachable_and_every_exchange_can_finish() -> None:
    reached, frontier = {S.REQUEST}, [S.REQUEST]
    while frontier:
        for to in TRANSITIONS[frontier.pop()].values():
            if to not in reached:
                reached.add(to)
                frontier.append(to)
    assert reached == set(State)
    for state in State:
        assert (not TRANSITIONS[state]) == (state in FINAL)
        seen, todo = {state}, [state]
        while todo:
            for to in TRANSITIONS[todo.pop()].values():
                if to not in seen:
                    seen.add(to)
                    todo.append(to)
        assert seen & FINAL, f"{state.name} can never finish"


def test_an_illegal_trigger_leaves_the_exchange_where_it_was() -> None:
    ex = Exchange(CONFIG, RouteMatch("chat", "chat"))
    with pytest.raises(IllegalTransition):
        ex.start("POST", 200, SSE)  # a response head before the request was read
    assert ex.state is S.REQUEST
    ex.forward(REQUEST)
    with pytest.raises(IllegalTransition):
        ex.move(Trigger.REFUSE)  # the host has the request: too late to refuse it
    assert ex.state is S.HEAD


# -- a real exchange, driven with real bytes -------------------------------------------------------


def _unread() -> ToolCallExchange:
    route = route_request(CONFIG, "POST", "/v1/chat/completions", None)
    assert route is not None
    ex = ToolCallExchange(CONFIG, route)
    assert ex.state is S.REQUEST
    return ex


def _exchange(headers: list[tuple[bytes, bytes]] | None = None) -> ToolCallExchange:
    ex = _unread()
    assert ex.forward(REQUEST).body is not None
    assert ex.state is S.HEAD
    if headers is not None:
        ex.start("POST", 200, headers)
    return ex


def test_a_malformed_request_is_refused() -> None:
    ex = _unread()
    refusal = ex.forward(json.dumps({"model": "m", "messages": "not a list"}).encode()).refusal
    assert refusal is not None
    status, _, _ = refusal
    assert status == 400 and ex.state is S.REFUSED


def test_forward_rewrites_a_request_or_says_the_answer_that_refuses_it() -> None:
    forwarded = _unread().forward(REQUEST)
    assert forwarded.refusal is None and forwarded.body is not None and b"get_weather" in forwarded.body
    refused = _unread()
    forward = refused.forward(json.dumps({"model": "m", "messages": "not a list"}).encode())
    assert forward.body is None and forward.refusal is not None and refused.state is S.REFUSED
    status, headers, body = forward.refusal
    assert status == 400 and (b"content-length", str(len(body)).encode()) in headers
    assert json.loads(body)["error"]["param"] == "messages"
    unread = _unread()
    assert unread.forward(REQUEST, complete=False).body is None and unread.state is S.HEAD  # over the limit


def test_a_request_over_the_limit_goes_unread_to_the_host() -> None:
    ex = _unread()
    assert ex.forward(REQUEST, complete=False).body is None
    assert ex.state is S.HEAD


def test_a_stream_is_rewritten_to_its_end() -> None:
    ex = _exchange(SSE)
    assert ex.state is S.STREAM
    events = chat_stream().split(b"\n\n")
    body = b"\n\n".join(events[:-3]) + b"\n\n"  # the text, without its finish chunk and `[DONE]`
    out = ex.feed(body)
    assert out and ex.state is S.STREAM
    assert ex.end() is not None and ex.state is S.DONE


def test_a_terminal_event_ends_the_stream_before_the_host_does() -> None:
    ex = _exchange(SSE)
    out = ex.feed(chat_stream())  # ends in `[DONE]`: the client's stream is over
    assert out is not None and out.endswith(b"data: [DONE]\n\n")
    assert ex.state is S.ENDED
    assert ex.feed(b'data: {"late": true}\n\n') == b""  # the host's rest is dropped
    assert ex.end() == b"" and ex.state is S.DONE


def test_a_stream_that_is_no_answer_is_given_up_and_only_decoded() -> None:
    ex = _exchange(SSE)
    odd = b'data: {"not": "an answer"}\n\n'
    assert ex.feed(odd) == odd and ex.state is S.GIVEN_UP
    assert ex.feed(b"data: more\n\n") == b"data: more\n\n"
    assert ex.end() == b"" and ex.state is S.DONE


def test_a_whole_body_is_buffered_then_written() -> None:
    ex = _exchange(JSON)
    assert ex.state is S.BUFFER
    answer = chat_answer("<tool_call>\n" + json.dumps({"name": "get_weather", "arguments": {}}) + "\n</tool_call>")
    assert ex.feed(answer) == b"" and ex.state is S.BUFFER
    out = ex.end()
    assert out is not None and b"tool_calls" in out and ex.state is S.DONE


def test_a_whole_answer_that_broke_tool_choice_is_asked_again_then_final() -> None:
    """`regenerate=1`: the first broken answer moves to AGAIN (nothing out), `again` back to HEAD;
    the second broken answer is the 502, marked final, and the record counts two generations."""
    config = ToolCallConfig(dialect="hermes", regenerate=1)
    route = route_request(config, "POST", "/v1/chat/completions", None)
    assert route is not None
    ex = ToolCallExchange(config, route)
    ex.forward(json.dumps({**json.loads(REQUEST), "tool_choice": "required"}).encode())
    for generation in (1, 2):
        ex.start("POST", 200, JSON)
        out = ex.end(chat_answer("No call."))
        if generation == 1:
            assert out == b"" and ex.state is S.AGAIN and not ex.no_retry
            ex.again()
            assert ex.state is S.HEAD and ex.record.generations == 2
    assert out is not None and json.loads(out)["error"]["code"] == "tool_call_required"
    assert ex.state is S.DONE and ex.status == 502 and ex.no_retry and ex.record.status == 502


def test_a_whole_body_that_is_no_answer_is_given_back() -> None:
    ex = _exchange(JSON)
    assert ex.end(b'{"not": "an answer"}') is not None
    assert ex.state is S.PASS


def test_a_whole_body_over_its_cap_is_given_back() -> None:
    config = ToolCallConfig(dialect="hermes", limits={"max_response_bytes": 10})
    route = route_request(config, "POST", "/v1/chat/completions", None)
    assert route is not None
    ex = ToolCallExchange(config, route)
    ex.forward(REQUEST)
    ex.start("POST", 200, JSON)
    assert ex.feed(b'{"id": "a body longer than ten bytes"') == b""
    assert ex.state is S.PASS


def test_another_content_type_passes_from_the_head() -> None:
    ex = _exchange([(b"content-type", b"text/plain")])
    assert ex.state is S.PASS


def test_a_host_failure_mid_stream_ends_it_in_an_error() -> None:
    ex = _exchange(SSE)
    ex.feed(chat_stream().split(b"\n\n")[0] + b"\n\n")
    out = ex.abort("the host broke off")
    assert out is not None and b"error" in out and ex.state is S.DONE


def test_a_host_failure_before_anything_went_out() -> None:
    ex = _exchange(JSON)
    failure = ex.failed(UpstreamFailure("the upstream broke off", status=502), head_sent=False)
    assert failure.handled and failure.answer is not None and failure.answer[0] == 502
    assert ex.state is S.DONE


def test_an_app_failure_before_anything_went_out_is_the_servers() -> None:
    ex = _exchange(JSON)
    failure = ex.failed(RuntimeError("the app broke"), head_sent=False)
    assert not failure.handled and failure.answer is None and failure.last is None
    assert ex.state is S.BUFFER


def test_an_app_failure_mid_stream_ends_the_stream_in_an_error() -> None:
    ex = _exchange(SSE)
    ex.feed(chat_stream().split(b"\n\n")[0] + b"\n\n")
    failure = ex.failed(RuntimeError("the app broke"), head_sent=True)
    assert not failure.handled and failure.last is not None and b"error" in failure.last
    assert ex.state is S.DONE


def test_a_failure_of_ours_passes_the_rest_through(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    ex = _exchange(SSE)

    def broken(self: StreamBody, ex: Any, data: bytes) -> bytes:
        raise RuntimeError("a bug")

    monkeypatch.setattr(StreamBody, "feed", broken)
    with caplog.at_level(logging.ERROR, logger="toolcall_middleware"):
        assert ex.feed(b"data: {}\n\n") is None
    assert ex.state is S.PASS and "rewriting failed" in caplog.text


def test_a_shell_can_pass_a_body_it_cannot_rewrite() -> None:
    ex = _exchange(JSON)
    ex.pass_through("a streamed JSON response: passed through")
    assert ex.state is S.PASS and ex.record.notes[-1] == "a streamed JSON response: passed through"
    ex.pass_through()  # already passing: the table keeps it there
    assert ex.state is S.PASS


# -- properties: any chunking of the host's body takes the same path through the table ----------


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=len(chat_stream()) + 40), max_size=12))
def test_a_stream_ends_at_its_terminal_event_however_it_is_chunked(cuts: list[int]) -> None:
    """Property: whatever the pieces, the exchange streams until the piece that holds `[DONE]`,
    is ENDED from then on (the host's rest is dropped), and DONE once the host's body ends."""
    data = chat_stream() + b'data: {"after": "the end"}\n\n'
    terminal = len(chat_stream())  # the end of `[DONE]`
    ex = _exchange(SSE)
    out = b""
    start = 0
    for cut in [*sorted(set(cuts)), len(data)]:
        piece = data[start:cut]
        if not piece:
            continue
        was = ex.state
        got = ex.feed(piece)
        assert got is not None
        out += got
        start = cut
        assert ex.state is (S.ENDED if cut >= terminal else S.STREAM)
        if was is S.ENDED:
            assert got == b""
    assert ex.end() == b"" and ex.state is S.DONE
    assert out.endswith(b"data: [DONE]\n\n") and b"after" not in out


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_a_whole_body_is_gathered_however_it_is_chunked(cuts: list[int]) -> None:
    """Property: a whole body stays BUFFER, giving nothing, until its end, then DONE with the
    same answer whatever the pieces."""
    data = chat_answer()
    ex = _exchange(JSON)
    start = 0
    for cut in sorted(set(cuts)):
        assert ex.feed(data[start:cut]) == b"" and ex.state is S.BUFFER
        start = max(start, cut)
    out = ex.end(data[start:])
    assert out is not None and ex.state is S.DONE
    whole = _exchange(JSON).end(data)
    assert whole is not None and _without_ids(json.loads(out)) == _without_ids(json.loads(whole))


def _without_ids(answer: dict[str, Any]) -> dict[str, Any]:
    """A Chat answer less its calls' ids (new ones each time)."""
    for choice in answer["choices"]:
        for call in choice["message"].get("tool_calls") or []:
            call.pop("id")
    return answer


def test_a_failure_of_ours_after_the_answer_ended_changes_nothing_and_one_before_the_head_raises() -> None:
    """A failure of ours is `FALL_BACK`, taken by the table: after the client's stream ended it
    stays ENDED; where the table lists no such move (no head yet), it raises rather than being
    skipped by asking first."""
    ended = _exchange(SSE)
    ended.feed(chat_stream())
    assert ended.state is S.ENDED
    ended.pass_through()
    assert ended.state is S.ENDED
    unread = _exchange()
    with pytest.raises(IllegalTransition):
        unread.pass_through()
    assert unread.state is S.HEAD


def test_the_guards_pick_the_triggers_the_module_doc_names() -> None:
    from toolcall_middleware.core._exchange_state import (
        HostHead,
        buffered_trigger,
        head_final,
        head_trigger,
        unread_event_trigger,
        whole_trigger,
    )
    from toolcall_middleware.core._http import Body

    assert head_trigger(HostHead(Body.SSE), readable=True) is T.STREAM
    assert head_trigger(HostHead(Body.JSON), readable=True) is T.BUFFER
    assert head_trigger(HostHead(Body.SSE), readable=False) is T.PASS
    assert head_trigger(HostHead(Body.PASS), readable=True) is T.PASS
    assert head_trigger(HostHead(Body.PASS, replaced="error"), readable=False) is T.BUFFER
    assert head_final(S.STREAM, HostHead(Body.SSE))
    assert not head_final(S.STREAM, HostHead(Body.SSE, sized=True))
    assert not head_final(S.STREAM, HostHead(Body.SSE, identity=False))
    assert not head_final(S.BUFFER, HostHead(Body.JSON))
    assert buffered_trigger(10, 10) is None and buffered_trigger(11, 10) is T.PASS
    assert unread_event_trigger(done=True, answer_required=False, bridged=False) is T.TERMINAL
    assert unread_event_trigger(done=False, answer_required=False, bridged=False) is T.GIVE_UP
    assert unread_event_trigger(done=True, answer_required=True, bridged=False) is T.TERMINAL  # a remote host's end
    assert unread_event_trigger(done=True, answer_required=True, bridged=True) is None
    assert unread_event_trigger(done=False, answer_required=True, bridged=False) is None
    assert whole_trigger(read=True, answer_required=False, again=True) is T.AGAIN
    assert whole_trigger(read=False, answer_required=False, again=False) is T.PASS
    assert whole_trigger(read=False, answer_required=True, again=False) is T.END
    assert whole_trigger(read=True, answer_required=False, again=False) is T.END
