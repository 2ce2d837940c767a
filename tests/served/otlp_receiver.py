"""A tiny OTLP/HTTP trace receiver on loopback, for the tests of exported spans: it takes
`POST /v1/traces` (protobuf, as the OpenTelemetry exporter sends it, gzip or not) and keeps every
span it was sent, decoded with `opentelemetry-proto` (which the exporter depends on)."""

from __future__ import annotations

import contextlib
import gzip
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def plain(value: AnyValue) -> Any:
    """An attribute's value as Python's (strings, numbers, booleans: what spans carry here)."""
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind is not None else None


@dataclass
class Received:
    """A span as the receiver got it: its name, attributes, and its resource's attributes."""

    name: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    error: bool


@dataclass
class Receiver:
    url: str
    spans: list[Received] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


@contextlib.contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    """A receiver listening on a free loopback port until the block ends."""
    receiver = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            receiver.paths.append(self.path)
            request = ExportTraceServiceRequest.FromString(body)
            for resource_spans in request.resource_spans:
                resource = {a.key: plain(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        attributes = {a.key: plain(a.value) for a in span.attributes}
                        error = span.status.code == span.status.STATUS_CODE_ERROR
                        receiver.spans.append(Received(span.name, attributes, resource, error))
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
