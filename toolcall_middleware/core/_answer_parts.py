"""The parts of an answer: its reader, its parser and its rules, made for one exchange (or one
choice of it), and what is recorded of them."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ._api import Api
from ._detect import reader_for
from ._exchange_data import AnswerSetup, Report
from ._parser import ArgumentsStreaming, StreamParser
from .emitters._meta import token_count
from .inbound import Reader
from .policy import PolicyFilter, PolicyLimits
from .policy._report import PolicyReport
from .request._bridge_messages import template_thinking


@lru_cache(maxsize=32)
def _limits(max_calls: int | None, max_arguments_bytes: int | None) -> PolicyLimits:
    """The config' caps, made once (every answer has them; they are frozen)."""
    return PolicyLimits(max_calls=max_calls, max_arguments_bytes=max_arguments_bytes)


def stopped_by_model(finish_reason: str | None) -> bool:
    """The host says the model ended its output itself (`stop`, or `tool_calls` from a host that
    read a call): nothing was cut off (see `StreamParser.close`). `length`, another reason, or
    none (a stream that just ended) is not that."""
    return finish_reason in ("stop", "tool_calls")


NATIVE_INDEX = 1 << 20  # the indexes of a host's own calls, apart from the parser's (the policy renumbers)


class Prepared:
    """The parts of an answer that do not depend on the host's answer (the parser and the rules),
    made when the response's head arrives rather than with its first body.

    A model server sends its head and then computes its first token (the prompt's prefill, which
    takes milliseconds): made then, these parts are ready before the first text comes, and the
    time they take is not added to the client's wait for it. The reader is made for the host's own
    API, the kind its answer nearly always has; an answer of another kind makes its own.
    """

    __slots__ = ("kind", "parser", "policy", "reader", "stream")

    def __init__(self, setup: AnswerSetup, *, stream: bool, kind: Api) -> None:
        self.stream = stream
        self.kind = kind
        streaming: ArgumentsStreaming = setup.config.arguments_streaming if stream else "whole"
        self.parser = parser_for(setup, streaming)
        self.policy = policy_for(setup, streaming)
        self.reader = host_reader_for(setup, kind, stream)


def host_reader_for(setup: AnswerSetup, kind: Api, stream: bool) -> Reader:
    """A new reader of the host's answer (the data it decodes nested deeper than the config'
    `max_depth` is no answer)."""
    return reader_for(kind, stream=stream, max_depth=setup.config.limits.max_depth)


def parser_for(setup: AnswerSetup, streaming: ArgumentsStreaming) -> StreamParser:
    """A new parser for one answer (or one choice) of an exchange."""
    config, rules = setup.config, setup.rules
    return StreamParser(
        setup.dialect,
        model=setup.model,
        tools=rules.get("tools") or rules.get("functions"),
        generation_prompt=config.generation_prompt,
        # (the request's own switch tells whether the template opened a reasoning block)
        thinking=config.thinking if config.thinking is not None else template_thinking(rules),
        repair=config.repair,
        arguments_streaming=streaming,
        # `call_ids="openai"`: the model's own ids stay behind and the emitters mint `call_…`
        # ones. Ids a host gives its calls in its protocol (`tool_use.id`) are kept either way.
        model_ids=config.call_ids == "model",
        reasoning_calls=config.reasoning_calls,
        # A call that never closes is let go as it passes the limit, not held to the stream's end.
        max_call_chars=config.limits.max_call_bytes,
        dialect_mismatch=config.dialect_mismatch,
    )


def policy_for(setup: AnswerSetup, streaming: ArgumentsStreaming) -> PolicyFilter:
    """The request's tool rules for one answer (or one choice) of an exchange."""
    config, rules = setup.config, setup.rules
    return PolicyFilter(
        # A request that offers no function (no `tools`, an empty list, hosted tools only) gets
        # no calls: as with OpenAI, a name it did not offer is text (or, strict, an error).
        rules.get("tools") or rules.get("functions") or [],
        rules.get("tool_choice", rules.get("function_call")),
        rules.get("parallel_tool_calls"),
        strict=config.strict,
        repair=config.repair,
        streaming=streaming,
        limits=_limits(config.limits.max_calls, config.limits.max_call_bytes),
    )


def record_answer(record: Report, choices: list[tuple[PolicyReport, bool, str | None]]) -> None:
    """Put into the exchange's record what an answer's choices did: each one's rules' report,
    whether its parser was cut off inside a call, and the other dialect whose call it found
    (`StreamParser.dialect_found`)."""
    record.rewritten_response = True
    found = emitted = 0
    truncated = False
    for policy, cut, other in choices:
        found += policy.calls_found
        emitted += policy.calls_emitted
        truncated = truncated or cut
        record.dialect_found = record.dialect_found or other
        for note in policy.notes:
            record.notes.append(str(note))
            if note.reason == "unknown_name":
                record.unknown_tools.append(note.name)
    record.calls_found, record.calls_emitted, record.truncated = found, emitted, truncated


def record_usage(record: Report, usage: Mapping[str, Any] | None) -> None:
    """Add the tokens the host's answer says it used (`usage`, in any API's style) to the record;
    an answer asked again (`regenerate`) adds its own: the record has what the host spent."""
    if not isinstance(usage, Mapping):
        return
    record.input_tokens = (record.input_tokens or 0) + token_count(usage, "input_tokens", "prompt_tokens")
    record.output_tokens = (record.output_tokens or 0) + token_count(usage, "output_tokens", "completion_tokens")


__all__ = [
    "NATIVE_INDEX",
    "Prepared",
    "host_reader_for",
    "parser_for",
    "policy_for",
    "record_answer",
    "record_usage",
    "stopped_by_model",
]
