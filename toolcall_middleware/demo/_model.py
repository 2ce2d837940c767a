"""The demo model: a deterministic raw-output "model" that writes a chosen dialect's raw text.

It knows nothing of OpenAI tool calling. It reads the system text for the tool manifest the request
rewriting injected (`manifest.read_manifest`), reads its own earlier turns with the dialect's parser
(its own raw calls), and decides:

- the last turn answers a call of its previous turn (tool results): it answers from those results;
- otherwise, when an offered tool fits the user's words (or one is required): it calls it, with
  arguments taken from the user's words (a place for `city`/`location`, a number for integers, an
  enum value the user named), one call per place the user named when parallel calls are allowed;
- otherwise it answers in plain text.

Calls are written with the request renderers (`render_assistant`), the inverse of the parsers, so
what the demo model writes is exactly what a model of that dialect writes; a short reasoning block
comes first in the dialect's reasoning syntax (`<think>…</think>`, harmony's analysis channel, …).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core._parser import parse
from ..core.dialects._rendering import ToolResult
from ..core.request._render import native_call_id, render_assistant, render_reasoning, render_tool_results, renderer
from ._manifest import Manifest, OfferedTool, read_manifest
from ._transcript import Transcript, Turn, read_transcript

Arguments = dict[str, Any]
_PLACE_PARAMS = ("city", "location", "place", "town", "country", "region", "destination", "where")
_STOPWORDS = frozenset({"get", "the", "and", "for", "what", "with", "from", "this", "that", "tool", "function"})
_PLACE = re.compile(r"[A-Z][\w'-]*(?:[ \t]+[A-Z][\w'-]*)*")


@dataclass(frozen=True)
class Reply:
    """What the demo model decided: its reasoning, then either calls or a text answer."""

    reasoning: str
    calls: tuple[tuple[str, Arguments], ...] = ()
    answer: str = ""
    first_call_index: int = 0  # calls written before in the conversation (Kimi numbers them)


class DemoModel:
    """`DemoModel("hermes").respond(body)`: the raw text a `hermes` model would write for this request."""

    def __init__(self, dialect: str, *, reasoning: bool = True) -> None:
        renderer(dialect)  # an unknown dialect (or `auto`) fails here, naming the dialects
        self.dialect = dialect
        self.reasoning = reasoning

    def respond(self, body: Mapping[str, Any]) -> str:
        return self.write(self.reply(body))

    # -- deciding --------------------------------------------------------------------------

    def reply(self, body: Mapping[str, Any]) -> Reply:
        transcript = read_transcript(body)
        manifest = read_manifest(transcript.system)
        made = [self._calls_in(t.text) if t.role == "assistant" else [] for t in transcript.turns]
        n_before = sum(len(m) for m in made)
        turns = transcript.turns
        if len(turns) >= 2 and turns[-1].role != "assistant" and made[-2]:
            outputs = self._outputs(turns[-1].text)
            answer = " ".join(f"{name} returned: {out}" for name, out in zip(made[-2], outputs, strict=False))
            return Reply("The tool answered; I can reply now.", answer=answer or turns[-1].text.strip())
        question = _question(transcript)
        tool = _choose(manifest, question)
        if tool is None:
            return Reply("No offered tool fits the question; I answer directly.", answer=_plain_answer(manifest))
        places = _places(question)
        place_param = next((p for p in _fill_order(tool) if p.lower() in _PLACE_PARAMS), None)
        if place_param is not None and len(places) > 1 and not manifest.single:
            calls = tuple((tool.name, _arguments(tool, question, place)) for place in places)
        else:
            calls = ((tool.name, _arguments(tool, question, places[0] if places else None)),)
        about = f" about {', '.join(places)}" if places else ""
        thought = f"The user asks{about}; the {tool.name} tool can answer that, so I call it."
        return Reply(thought, calls=calls, first_call_index=n_before)

    def _calls_in(self, text: str) -> list[str]:
        """The names of the calls in one of its own earlier turns."""
        return [c.name for c in parse(text, self.dialect).tool_calls]

    def _outputs(self, text: str) -> list[str]:
        """The tool outputs in a results turn, read with the dialect's own result markup."""
        found = [m.group("out").strip() for m in re.finditer(_result_pattern(self.dialect), text, re.S)]
        return found if found else [text.strip()]

    # -- writing ---------------------------------------------------------------------------

    def write(self, reply: Reply) -> str:
        """The reply as the dialect's raw text: reasoning block, then the calls or the answer."""
        harmony = self.dialect == "gpt_oss"
        out = render_reasoning(self.dialect, reply.reasoning) if self.reasoning else ""
        if reply.calls:
            calls = []
            for n, (name, args) in enumerate(reply.calls):
                index = reply.first_call_index + n
                call_id = native_call_id(self.dialect, f"call_demo{index}", name, index)
                calls.append((call_id, name, json.dumps(args, ensure_ascii=False)))
            return out + render_assistant(self.dialect, "", calls)
        if harmony:
            return out + f"<|channel|>final<|message|>{reply.answer}<|return|>"
        return out + renderer(self.dialect).assistant(reply.answer, "")


def _common_start(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _result_pattern(dialect: str) -> str:
    """A pattern for one tool output in the dialect's results markup, derived from its renderer.

    Two results with the same id and name are rendered: what comes right before each output is the
    common end of the two texts before them, what comes right after is the common start of the two
    texts after them (the outer wrapper of the whole turn is in neither).
    """
    text = render_tool_results(dialect, [ToolResult("CALLID", "OUTA", "NAME"), ToolResult("CALLID", "OUTB", "NAME")])
    a, b = text.index("OUTA"), text.index("OUTB")
    before, between, after = text[:a], text[a + 4 : b], text[b + 4 :]
    prefix = _common_start(before[::-1], between[::-1])[::-1]
    suffix = _common_start(between, after)

    def literal(part: str) -> str:
        return re.escape(part).replace("CALLID", ".*?").replace("NAME", ".*?")

    if not prefix.strip() and not suffix.strip():
        # Outputs only separated (Nemotron's and Apertus' `[A, B]`): an output follows the turn's
        # opening or a separator, and ends at a separator or the turn's close.
        start, stop = literal(before), literal(after)
        return f"(?:{start}|{literal(between)})(?P<out>.*?)(?={literal(between)}|{stop}\\s*\\Z)"
    end = literal(suffix) if suffix.strip() else f"{literal(prefix)}|\\s*\\Z"
    return f"{literal(prefix)}(?P<out>.*?)(?={end})"  # a lookahead: the next output's prefix may overlap


def _question(transcript: Transcript) -> str:
    users = [t for t in transcript.turns if t.role == "user"]
    return users[-1].text if users else ""


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3 and w not in _STOPWORDS}


def _choose(manifest: Manifest, question: str) -> OfferedTool | None:
    """The forced tool, else the tool whose name and description share most words with the question."""
    if not manifest.tools:
        return None
    if manifest.forced is not None:
        return next((t for t in manifest.tools if t.name == manifest.forced), None)
    asked = _words(question)
    scores = [len(asked & _words(t.name.replace("_", " ") + " " + t.description)) for t in manifest.tools]
    best = max(range(len(scores)), key=lambda i: scores[i])
    if scores[best] == 0 and not manifest.required:
        return None
    return manifest.tools[best]


def _places(question: str) -> list[str]:
    """Capitalised names in the question, except a sentence's first word."""
    places = []
    for m in _PLACE.finditer(question):
        before = question[: m.start()].rstrip()
        if not before or before[-1] in ".?!":
            words = m.group(0).split(maxsplit=1)
            if len(words) < 2:
                continue
            places.append(words[1])
        elif m.group(0) != "I":
            places.append(m.group(0))
    return places


def _fill_order(tool: OfferedTool) -> list[str]:
    return list(tool.required) if tool.required else list(tool.properties)


def _arguments(tool: OfferedTool, question: str, place: str | None) -> Arguments:
    args: Arguments = {}
    for name in _fill_order(tool):
        args[name] = _value(name, tool.properties.get(name, {}), question, place)
    return args


def _value(name: str, schema: Mapping[str, Any], question: str, place: str | None) -> Any:
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), "string") if isinstance(kind, list) else kind
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return next((v for v in enum if isinstance(v, str) and v.lower() in question.lower()), enum[0])
    if kind in ("integer", "number"):
        number = re.search(r"\d+", question)
        return int(number.group(0)) if number else 1
    if kind == "boolean":
        return True
    if kind == "array":
        return [place] if place is not None else []
    if kind == "object":
        return {}
    if name.lower() in _PLACE_PARAMS and place is not None:
        return place
    return question.strip()


def _plain_answer(manifest: Manifest) -> str:
    if manifest.tools:
        names = ", ".join(t.name for t in manifest.tools)
        return f"I am the demo model. I could call {names}, but nothing in your message asks for it."
    return "I am the demo model. Offer me a tool (a weather tool, say) and ask something it can answer."


__all__ = ["DemoModel", "Reply", "Turn"]
