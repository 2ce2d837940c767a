"""The model endpoint's views: raw model output as JSON, or streamed as SSE.

Plain sync views, as most Django model endpoints are. Under ASGI Django runs them in a thread and
serves the streams as it does any sync iterator; the middleware keeps the iterator's kind.
"""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from examples.raw_wire import chat_answer, chat_events, responses_answer, responses_events


@csrf_exempt
@require_POST
def chat(request: HttpRequest) -> HttpResponse:
    body = json.loads(request.body)  # already the rewritten request: tools flattened into text
    if not body.get("stream"):
        return JsonResponse(chat_answer(body, "django"))
    return StreamingHttpResponse(chat_events(body, "django"), content_type="text/event-stream")


@csrf_exempt
@require_POST
def responses(request: HttpRequest) -> HttpResponse:
    body = json.loads(request.body)
    if not body.get("stream"):
        return JsonResponse(responses_answer(body, "django"))
    return StreamingHttpResponse(responses_events(body, "django"), content_type="text/event-stream")


def index(request: HttpRequest) -> HttpResponse:
    return HttpResponse("a raw-output model endpoint")
