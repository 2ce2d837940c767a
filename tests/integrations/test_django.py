"""Django's `MIDDLEWARE` entry under Django's own test clients: `Client` (sync) and `AsyncClient`
(async), whole and streamed; the view reads the rewritten request through `request.body` and
`request.read()`; a streaming response keeps its kind (`is_async`); a bad request is a 400; what
is not ours passes through. The whole-application wrappers run under real servers (test_served)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import django
import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "examples.django_project.settings")
django.setup()

from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse  # noqa: E402
from django.test import AsyncClient, Client, override_settings  # noqa: E402
from django.urls import path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402
from toolcall_middleware.integrations.django import ToolCallDjangoMiddleware, wrap_asgi, wrap_wsgi  # noqa: E402

from examples.django_project import urls as example_urls  # noqa: E402
from examples.raw_wire import chat_events  # noqa: E402
from tests.asgi.harness import chat_answer as chat_answer_bytes  # noqa: E402
from tests.generations import COUNTS, LOOKUP, generation  # noqa: E402

from .inproc import chat_request, check_chat, check_responses, responses_request  # noqa: E402

SEEN: list[dict[str, Any]] = []


@csrf_exempt
def echo(request: HttpRequest) -> JsonResponse:
    """What a view reads of the request, every way Django offers."""
    body = request.body
    SEEN.append({"body": body, "read": request.read(), "length": request.META["CONTENT_LENGTH"]})
    return JsonResponse({"ok": True})


@csrf_exempt
async def async_stream(request: HttpRequest) -> StreamingHttpResponse:
    body = json.loads(request.body)

    async def events() -> AsyncIterator[str]:
        for event in chat_events(body, "django-async"):
            await asyncio.sleep(0)
            yield event

    return StreamingHttpResponse(events(), content_type="text/event-stream")


NOT_AN_ANSWER = b'{"not": "an answer"}'


@csrf_exempt
def odd(request: HttpRequest) -> HttpResponse:
    """A JSON body that is no answer, with a length and a validator of its own."""
    response = HttpResponse(NOT_AN_ANSWER, content_type="application/json", status=201)
    response["ETag"] = '"v1"'
    response["Content-Length"] = str(len(NOT_AN_ANSWER))
    return response


@csrf_exempt
def answered(request: HttpRequest) -> HttpResponse:
    """A whole chat answer with a length and a validator the rewrite makes wrong."""
    body = chat_answer_bytes()
    response = HttpResponse(body, content_type="application/json")
    response["ETag"] = '"v1"'
    response["Content-Length"] = str(len(body))
    return response


@csrf_exempt
def no_counting(request: HttpRequest) -> HttpResponse:
    """A host that cannot count tokens: the middleware estimates them instead."""
    return HttpResponse(b'{"detail": "Not Found"}', content_type="application/json", status=404)


@csrf_exempt
def fickle(request: HttpRequest) -> HttpResponse:
    """The counting host of `tests.generations` as a view."""
    ctype, body = generation(request.body)
    return HttpResponse(body, content_type=ctype.decode())


urlpatterns = [
    *example_urls.urlpatterns,
    path("echo/v1/chat/completions", echo),
    path("async/v1/chat/completions", async_stream),
    path("odd/v1/chat/completions", odd),
    path("answered/v1/chat/completions", answered),
    path("fickle/v1/chat/completions", fickle),
    path("v1/messages/count_tokens", no_counting),
]
HERE = override_settings(
    ROOT_URLCONF=__name__,
    TOOLCALL_MIDDLEWARE={"dialect": "hermes", "route_prefixes": ["", "/echo", "/async", "/odd", "/answered"]},
)


def post(client: Client, url: str, body: Any) -> Any:
    data = body if isinstance(body, bytes) else json.dumps(body)
    return client.post(url, data=data, content_type="application/json")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_under_the_sync_client(stream: bool) -> None:
    response = post(Client(), "/v1/chat/completions", chat_request(stream=stream))
    assert response.status_code == 200
    if stream:
        assert response.streaming and not response.is_async and not response.has_header("Content-Length")
        body = b"".join(response.streaming_content)
    else:
        body = response.content
        assert response["Content-Length"] == str(len(body))
    check_chat(body, stream=stream)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_under_the_sync_client(stream: bool) -> None:
    response = post(Client(), "/v1/responses", responses_request(stream=stream))
    body = b"".join(response.streaming_content) if stream else response.content
    check_responses(body, stream=stream)


@pytest.mark.parametrize("view", ["/v1/chat/completions", "/async/v1/chat/completions"], ids=["sync", "async"])
def test_a_stream_under_the_async_client_keeps_its_kind(view: str) -> None:
    async def run() -> tuple[bool, bytes]:
        response = await AsyncClient().post(view, data=chat_request(stream=True), content_type="application/json")
        assert response.streaming
        if response.is_async:
            chunks = [chunk async for chunk in response.streaming_content]
        else:
            chunks = list(response.streaming_content)
        assert len(chunks) > 10  # still a stream, not one gathered body
        return response.is_async, b"".join(chunks)

    with HERE:
        is_async, body = asyncio.run(run())
    assert is_async == (view.startswith("/async"))  # the view's kind, untouched by the middleware
    check_chat(body, stream=True)


@pytest.mark.parametrize("view", ["/v1/chat/completions", "/async/v1/chat/completions"], ids=["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_record_counts_the_bytes_sent_and_times_the_view(stream: bool, view: str) -> None:
    """Django's middleware drives the exchange as the ASGI and WSGI shells do: the record
    `on_report` gets counts the body the client got and times the view (the host)."""
    reports: list[dict[str, Any]] = []
    config = {"dialect": "hermes", "route_prefixes": ["", "/async"], "on_report": reports.append}

    async def run() -> bytes:
        response = await AsyncClient().post(view, data=chat_request(stream=stream), content_type="application/json")
        if not response.streaming:
            return bytes(response.content)
        if response.is_async:
            return b"".join([chunk async for chunk in response.streaming_content])
        return b"".join(response.streaming_content)

    with override_settings(ROOT_URLCONF=__name__, TOOLCALL_MIDDLEWARE=config):
        body = asyncio.run(run())
    (record,) = reports
    assert record["response_bytes"] == len(body) > 0
    assert record["upstream_seconds"] is not None and record["upstream_seconds"] >= 0


def test_whole_chat_under_the_async_client() -> None:
    async def run() -> bytes:
        data = chat_request(stream=False)
        response = await AsyncClient().post("/v1/chat/completions", data=data, content_type="application/json")
        return bytes(response.content)

    check_chat(asyncio.run(run()), stream=False)


def test_the_view_reads_the_rewritten_request() -> None:
    SEEN.clear()
    original = json.dumps(chat_request(stream=False)).encode()
    with HERE:
        post(Client(), "/echo/v1/chat/completions", original)
    (seen,) = SEEN
    body = json.loads(seen["body"])
    assert seen["body"] != original and "tools" not in body and "get_weather" in body["messages"][0]["content"]
    assert seen["read"] == seen["body"] and seen["length"] == str(len(seen["body"]))


def test_a_malformed_request_is_a_400_naming_the_field() -> None:
    response = post(Client(), "/v1/chat/completions", {**chat_request(stream=False), "tools": "nope"})
    assert response.status_code == 400 and response.json()["error"]["param"] == "tools"
    assert response["x-should-retry"] == "false"  # the SDKs would send it again as it is


def test_what_is_not_ours_passes_through() -> None:
    client = Client()
    assert client.get("/").content == b"a raw-output model endpoint"
    response = client.get("/v1/chat/completions")  # the view's own 405
    assert response.status_code == 405


def test_a_body_that_is_not_json_is_refused_before_the_view() -> None:
    """As on every route and shell: a 400 `invalid_json`, the view never reached (it was)."""
    SEEN.clear()
    with HERE:
        response = post(Client(), "/echo/v1/chat/completions", b"not json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_json"
    assert response["x-should-retry"] == "false" and SEEN == []


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("regenerate", [0, 2])
def test_an_answer_that_broke_tool_choice_is_asked_again_only_when_configured(regenerate: int, mode: str) -> None:
    nonce = f"django{regenerate}{mode}"
    config = {"dialect": "hermes", "route_prefixes": ["", "/fickle"], "regenerate": regenerate}
    body = {
        **chat_request(stream=False),
        "messages": [{"role": "user", "content": f"nonce={nonce} script=text,call"}],
        "tools": [{"type": "function", "function": LOOKUP}],
        "tool_choice": "required",
    }
    with override_settings(ROOT_URLCONF=__name__, TOOLCALL_MIDDLEWARE=config):
        if mode == "sync":
            response = post(Client(), "/fickle/v1/chat/completions", body)
        else:
            data = json.dumps(body)
            response = asyncio.run(AsyncClient().post("/fickle/v1/chat/completions", data, "application/json"))
    if regenerate:
        assert response.status_code == 200 and COUNTS[nonce] == 2
        assert response.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "lookup"
    else:
        assert response.status_code == 502 and COUNTS[nonce] == 1
        assert response["x-should-retry"] == "false"
        assert response.json()["error"]["code"] == "tool_call_required"


def test_the_middleware_declares_both_modes() -> None:
    async def get_response(request: Any) -> Any:
        return None

    assert ToolCallDjangoMiddleware.sync_capable and ToolCallDjangoMiddleware.async_capable
    assert asyncio.iscoroutinefunction(ToolCallDjangoMiddleware(get_response))
    assert not asyncio.iscoroutinefunction(ToolCallDjangoMiddleware(lambda request: None))


def test_the_wrappers_take_config_options() -> None:
    assert wrap_wsgi(lambda e, s: [], dialect="kimi_k2").config.dialect == "kimi_k2"
    assert wrap_asgi(lambda s, r, se: None, strict=True).config.strict  # type: ignore[arg-type,return-value]


def test_a_missing_django_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "django", None)
    with pytest.raises(ImportError, match=r"pip install 'toolcall-middleware\[django\]'"):
        ToolCallDjangoMiddleware(lambda request: None)


def test_a_whole_body_that_is_no_answer_is_the_views_response_as_it_was() -> None:
    with HERE:
        response = post(Client(), "/odd/v1/chat/completions", chat_request(stream=False))
    assert response.status_code == 201 and response.content == NOT_AN_ANSWER
    assert response["ETag"] == '"v1"' and response["Content-Length"] == str(len(NOT_AN_ANSWER))


def test_a_whole_answer_gets_its_new_length_and_loses_its_validator() -> None:
    with HERE:
        response = post(Client(), "/answered/v1/chat/completions", chat_request(stream=False))
    assert response.status_code == 200 and response.json()["choices"][0]["message"]["tool_calls"]
    assert response["Content-Length"] == str(len(response.content)) and not response.has_header("ETag")


def test_a_status_the_exchange_chose_reaches_the_client() -> None:
    body = {"model": "qwen3", "messages": [{"role": "user", "content": "Hi"}]}
    with HERE:
        response = post(Client(), "/v1/messages/count_tokens", body)
    # The host's 404 is answered with an estimate: "user" and "Hi", at four characters a token.
    assert response.status_code == 200 and response.json() == {"input_tokens": 2}
    assert response["Content-Length"] == str(len(response.content))


@pytest.mark.parametrize(
    ("option", "where"),
    [
        ({"store": "memory"}, "wrap_asgi"),
        ({"keepalive_interval": 5}, "ASGI middleware"),
        ({"compaction": "emulate"}, "wrap_wsgi"),
    ],
)
def test_an_option_the_middleware_entry_cannot_honour_fails_at_construction(option: dict[str, Any], where: str) -> None:
    with override_settings(TOOLCALL_MIDDLEWARE={"dialect": "hermes", **option}):
        with pytest.raises(ValueError, match="ToolCallDjangoMiddleware cannot honour") as caught:
            ToolCallDjangoMiddleware(lambda request: HttpResponse())
    assert where in str(caught.value)
    with pytest.raises(ValueError, match="ToolCallWSGIMiddleware cannot honour"):
        wrap_wsgi(lambda environ, start_response: [], dialect="hermes", store="memory")
    wrap_asgi(echo, dialect="hermes", store="memory")  # the ASGI one keeps a store
