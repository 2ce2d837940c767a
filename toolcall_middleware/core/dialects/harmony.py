"""`gpt_oss`: the OpenAI harmony response format of gpt-oss-20b/120b.

The output is a sequence of messages, each a header, `<|message|>`, a body and an end token:

    <|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>commentary to=functions.f
    <|constrain|>json<|message|>{"a": 1}<|call|>

The prompt ends with `<|start|>assistant`, so the first header usually starts at `<|channel|>`
(or at ` to=functions.f`, when the recipient sits in the role part of the header). A header holds
the channel, an optional recipient (`to=…`, in the role part or after the channel) and an optional
content type (`<|constrain|>json`, or a bare `json`). What a message is follows from its header:

- recipient `functions.NAME`: a call, on any channel (models also address tools from `analysis`);
  the body is a JSON object, ended by `<|call|>` (a stop token, so usually by the end of output)
  or `<|end|>`. Markers inside its JSON strings are text: the end is searched outside strings.
- a bare recipient (`to=get_weather`) that the request offers as a tool: that call, as vLLM reads
  it. A bare recipient nobody offered is text, its header included: nothing runs it, and nothing
  the model wrote is lost.
- a built-in tool (`browser.search`, `python`, `container.exec`): a tool the client did not offer
  and cannot run. Its message is neither a call nor meant for the user, so it is dropped.
- no recipient: `analysis` is reasoning; `final`, `commentary` (a user-visible preamble) and
  unknown channels are content. Text bodies end only at `<|end|>` or `<|return|>`: a model that
  writes `<|call|>` or `<|channel|>` inside its reasoning wrote text (it cannot emit the token).

A host that decodes with `skip_special_tokens=True` strips every marker, and the output collapses
to `analysisWe need…assistantfinalThe answer…`, as SGLang's text fallback reads it. Where that is
unambiguous it is read back: an output that begins with `analysis` directly followed by a capital
letter or a digit (prose has a space there) is reasoning up to `assistantfinal`, and content after
it. Calls cannot be recovered from such text (their JSON runs into the header words), so the host
should keep the special tokens: `skip_special_tokens=False` (see the docs' dialect page).

Malformed markup never becomes a call. A header whose words are not header words comes back raw
as content, and so does one with no `<|message|>` within `HEADER_CAP` characters, or a call body
that is not a JSON object. A header of header words that breaks off (at `<|end|>`, a new
`<|start|>` or a second `<|channel|>`) is stray markup and vanishes. The output ending inside a
header or a call body is a `TruncatedCall`: a header without its message is not a call. The
dialect splits reasoning itself (`reasoning=None`): reasoning streams as it arrives.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum

from .._events import Event, OversizedCall, ReasoningDelta, TextDelta, TruncatedCall
from .._schema import JSON_OBJECT
from .._textscan import JsonStringTracker, alternation, partial_marker_len
from ._base import Call, Dialect, ParseContext, call_events, dump_arguments, load_object
from ._rendering import CallToRender, Renderer, ToolSpec, dumps
from ._typescript import ts_type
from .call_grammar import Args, CallGrammar, Lit, Name

START = "<|start|>"
END = "<|end|>"
MESSAGE = "<|message|>"
CHANNEL = "<|channel|>"
CONSTRAIN = "<|constrain|>"
CALL = "<|call|>"
RETURN = "<|return|>"
MARKERS = (START, END, MESSAGE, CHANNEL, CONSTRAIN, CALL, RETURN)
TEXT_ENDS = (END, RETURN)
SKIP_ENDS = (END, CALL, RETURN)
ROLE_RECIPIENT = " to="  # the output's first header may start in the role part: ` to=functions.f`
STRIPPED_ANALYSIS = "analysis"  # what `<|channel|>analysis<|message|>` leaves with its tokens stripped
STRIPPED_FINAL = "assistantfinal"  # what `<|end|><|start|>assistant<|channel|>final<|message|>` leaves
HEADER_CAP = 512  # a header longer than this is not one: the model is writing text

_ANY = alternation(MARKERS)
_TEXT_END = alternation(TEXT_ENDS)
_SKIP_END = alternation(SKIP_ENDS)
_WORD = re.compile(r"[\w.\-/+]+")  # a role, channel or content-type word
FUNCTIONS = "functions."
# The built-in tools' namespaces: a message to one is for a tool the client cannot run (dropped).
BUILT_IN_TOOLS = ("browser.", "python", "container.")


class _Mode(Enum):
    START = "start"  # nothing seen: the output may open with the role part of a header
    LOOSE = "loose"  # between messages: text here is content
    HEADER = "header"
    REASONING = "reasoning"
    CONTENT = "content"
    CALL = "call"
    SKIP = "skip"  # the body of a message to a built-in tool
    SPENT = "spent"  # after a call over `ctx.max_call_chars`: nothing more is read
    STRIPPED = "stripped"  # reasoning of an output whose special tokens the host stripped


def classify(header: str) -> tuple[str, str | None] | None:
    """`(channel, recipient)` of a header (the text before `<|message|>`); `None` if malformed.

    The role part holds at most a role and a recipient; the channel part a channel, a recipient
    and a content type. More words, or other characters, are text the model wrote, not a header.
    """
    if header.startswith(START):
        header = header[len(START) :]
    role, _, channel_part = header.partition(CHANNEL)
    recipient: str | None = None
    channel = ""
    for part, limit in ((role, 1), (channel_part.replace(CONSTRAIN, " "), 2)):
        words = []
        for word in part.split():
            if not word.startswith("to="):
                words.append(word)
            elif len(word) == 3 or recipient not in (None, word[3:]):
                return None
            else:
                recipient = word[3:]
        if len(words) > limit or not all(_WORD.fullmatch(w) for w in words):
            return None
        if limit == 2 and words:
            channel = words[0]  # the first word after <|channel|>; a second is the content type
    return channel, recipient


def _stripped_start(text: str) -> bool:
    """Whether the output begins as one whose special tokens were stripped: `analysis` and then,
    with no space, a capital letter or a digit (`analysisWe need to…`)."""
    n = len(STRIPPED_ANALYSIS)
    return len(text) > n and text.startswith(STRIPPED_ANALYSIS) and (text[n].isupper() or text[n].isdigit())


class HarmonyParser:
    """A channel state machine over the harmony token stream, held back only at partial markers."""

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self._mode = _Mode.START
        self._pending = ""
        self._header = ""  # the raw header so far, opening marker included
        self._scan = 0  # where the search for the next marker in `_header` resumes
        self._min_cut = 0  # a cut at HEADER_CAP must not split a marker already read
        self._has_channel = False
        self._name = ""  # the function a call body belongs to
        self._offered = True  # whether the request offers it (else the message is text)
        self._head = ""  # the raw header of that call, `<|message|>` included
        self._body: list[str] = []
        self._body_chars = 0
        self._tracker = JsonStringTracker(MARKERS)

    def feed(self, text: str) -> list[Event]:
        out: list[Event] = []
        self._pending += text
        while self._step(out, final=False):
            pass
        return out

    def take_plain(self, text: str) -> str | None:
        """No plain-text shortcut (`ToolMachine.take_plain`): every piece takes `feed`."""
        return None

    def close(self) -> list[Event]:
        out: list[Event] = []
        while self._step(out, final=True):
            pass
        if self._mode is _Mode.HEADER and self._header:
            out.append(TruncatedCall(self._header))  # cut off in a header: no call, no text
        elif self._mode is _Mode.CALL:
            body = "".join(self._body)
            obj = load_object(body)
            if obj is not None and not self._offered:
                self._text(out, self._head + body)
            elif obj is not None:  # `<|call|>` is a stop token: a call usually ends with the output
                out.extend(call_events(self.ctx, Call(self._name, dump_arguments(obj))))
            else:
                out.append(TruncatedCall(self._head + body))
        self._mode = _Mode.LOOSE
        self._header = self._pending = ""
        self._body = []
        return out

    def _step(self, out: list[Event], final: bool) -> bool:
        """Advance one state; `False` when more input is needed."""
        mode = self._mode
        if mode is _Mode.START:
            s = self._pending
            if s.startswith(ROLE_RECIPIENT):
                self._open_header("")
            elif _stripped_start(s):
                self._pending = s[len(STRIPPED_ANALYSIS) :]
                self._mode = _Mode.STRIPPED
            elif final or not (ROLE_RECIPIENT.startswith(s) or STRIPPED_ANALYSIS.startswith(s)):
                self._mode = _Mode.LOOSE
            else:
                return False
            return True
        if mode is _Mode.STRIPPED:
            return self._read_stripped(out, final)
        if mode is _Mode.HEADER:
            return self._read_header(out, final)
        if mode is _Mode.CALL:
            return self._read_call(out)
        if mode is _Mode.SPENT:
            self._pending = ""
            return False
        if not self._pending:
            return False
        if mode is _Mode.LOOSE:
            return self._scan_text(out, final, _ANY, MARKERS, TextDelta)
        if mode is _Mode.REASONING:
            return self._scan_text(out, final, _TEXT_END, TEXT_ENDS, ReasoningDelta)
        if mode is _Mode.CONTENT:
            return self._scan_text(out, final, _TEXT_END, TEXT_ENDS, TextDelta)
        return self._scan_text(out, final, _SKIP_END, SKIP_ENDS, None)

    def _scan_text(
        self,
        out: list[Event],
        final: bool,
        ends: re.Pattern[str],
        markers: tuple[str, ...],
        kind: type[TextDelta] | type[ReasoningDelta] | None,
    ) -> bool:
        """Emit text up to the next marker (a partial one is held back), then act on the marker."""
        s = self._pending
        m = ends.search(s)
        stop = m.start() if m else len(s) - (0 if final else partial_marker_len(s, markers))
        if stop and kind is not None:
            out.append(kind(s[:stop]))
        if m is None:
            self._pending = s[stop:]
            return False
        marker = m.group()
        self._pending = s[m.end() :]
        if self._mode is not _Mode.LOOSE:
            self._mode = _Mode.LOOSE  # the message ended
        elif marker in (START, CHANNEL):
            self._open_header(marker)
        # Any other marker between messages is a stray end or header part: markup, dropped.
        return True

    def _read_stripped(self, out: list[Event], final: bool) -> bool:
        """Reasoning up to `assistantfinal` (a partial one held back), content after it."""
        s = self._pending
        at = s.find(STRIPPED_FINAL)
        stop = at if at >= 0 else len(s) - (0 if final else partial_marker_len(s, (STRIPPED_FINAL,)))
        if stop:
            out.append(ReasoningDelta(s[:stop]))
        if at < 0:
            self._pending = s[stop:]
            return False
        self._pending = s[at + len(STRIPPED_FINAL) :]
        self._mode = _Mode.CONTENT
        return True

    # -- headers ---------------------------------------------------------------------------

    def _open_header(self, opener: str) -> None:
        self._mode = _Mode.HEADER
        self._header = opener
        self._scan = self._min_cut = len(opener)
        self._has_channel = opener == CHANNEL

    def _read_header(self, out: list[Event], final: bool) -> bool:
        h = self._header = self._header + self._pending
        self._pending = ""
        while True:
            m = _ANY.search(h, self._scan)
            if m is None:
                keep = 0 if final else partial_marker_len(h[self._scan :], MARKERS)
                if len(h) - keep >= HEADER_CAP:  # no marker can start before the cap any more
                    return self._abandon(out, max(HEADER_CAP, self._min_cut))
                self._scan = len(h) - keep
                return False
            pos, marker = m.start(), m.group()
            if pos >= HEADER_CAP:
                return self._abandon(out, max(HEADER_CAP, self._min_cut))
            if marker == CONSTRAIN or (marker == CHANNEL and not self._has_channel):
                self._has_channel = self._has_channel or marker == CHANNEL
                self._scan = self._min_cut = m.end()
                continue
            if marker == MESSAGE:
                self._open_body(out, h[:pos], h[: m.end()])
                self._pending = h[m.end() :]
                return True
            if marker in (START, CHANNEL):  # a new header begins: this one broke off
                self._broken(out, h[:pos], h[:pos])
                self._open_header(marker)
                self._pending = h[m.end() :]
                return True
            self._broken(out, h[:pos], h[: m.end()])  # ended before its message began
            self._mode = _Mode.LOOSE
            self._pending = h[m.end() :]
            return True

    def _broken(self, out: list[Event], header: str, raw: str) -> None:
        """A header without a message: pure header words are stray markup (dropped, never a
        call, as llama.cpp and vLLM #58825 treat them); anything else is text the model wrote."""
        if classify(header) is None:
            self._text(out, raw)

    def _abandon(self, out: list[Event], cut: int) -> bool:
        self._text(out, self._header[:cut])
        self._pending = self._header[cut:]
        self._header = ""
        self._mode = _Mode.LOOSE
        return True

    def _open_body(self, out: list[Event], header: str, raw: str) -> None:
        self._header = ""
        parsed = classify(header)
        if parsed is None:
            self._text(out, raw)  # not a header: its text is content, and so is its body
            self._mode = _Mode.CONTENT
            return
        channel, recipient = parsed
        if recipient is None:
            self._mode = _Mode.REASONING if channel == "analysis" else _Mode.CONTENT
        elif recipient.startswith(FUNCTIONS) and len(recipient) > len(FUNCTIONS):
            self._open_call(recipient[len(FUNCTIONS) :], raw, offered=True)
        elif recipient == FUNCTIONS.rstrip("."):
            self._text(out, raw)  # `to=functions` without a name: malformed, shown as is
            self._mode = _Mode.CONTENT
        elif recipient in self.ctx.tools:  # a bare recipient the request offers: its call
            self._open_call(recipient, raw, offered=True)
        elif recipient.startswith(BUILT_IN_TOOLS):
            self._mode = _Mode.SKIP
        else:  # a bare recipient nobody offered: nothing runs it, and nothing is lost
            self._open_call(recipient, raw, offered=False)

    def _open_call(self, name: str, raw: str, *, offered: bool) -> None:
        """A message to function `name`: the call when `offered`, else its text is content."""
        self._mode = _Mode.CALL
        self._name = name
        self._offered = offered
        self._head = raw
        self._body = []
        self._body_chars = 0
        self._tracker = JsonStringTracker(MARKERS)

    # -- call bodies -----------------------------------------------------------------------

    def _read_call(self, out: list[Event]) -> bool:
        text = self._pending
        if not text:
            return False
        self._pending = ""
        hit = self._tracker.find(text)
        self._body.append(text)
        if hit is None:
            self._body_chars += len(text)
            limit = self.ctx.max_call_chars
            if limit is not None and self._body_chars > limit:  # let it go (`OversizedCall`)
                out.append(OversizedCall(self._body_chars))
                self._mode, self._body = _Mode.SPENT, []
            return False
        end, marker = hit
        full = "".join(self._body)
        self._body = []
        body = full[: len(full) - len(text) + end - len(marker)]
        if marker in SKIP_ENDS:
            self._pending = text[end:]
        else:  # a header marker after the JSON: the model left out `<|call|>`
            self._pending = marker + text[end:]
            marker = ""
        obj = load_object(body) if self._offered else None
        if obj is not None:
            out.extend(call_events(self.ctx, Call(self._name, dump_arguments(obj))))
        else:
            self._text(out, self._head + body + marker)
        self._mode = _Mode.LOOSE
        return True

    @staticmethod
    def _text(out: list[Event], text: str) -> None:
        if text:
            out.append(TextDelta(text))


# -- request side: the chat template's text --------------------------------------------------------


def _harmony_calls(calls: Sequence[CallToRender]) -> str:
    # The prompt ends with `<|start|>assistant`: the first message continues that header.
    return "<|start|>assistant".join(
        f"<|channel|>commentary to=functions.{c.name} <|constrain|>json<|message|>{dumps(dict(c.arguments))}<|call|>"
        for c in calls
    )


def _harmony_turn(content: str, calls: str) -> str:
    if not content:
        return calls
    preamble = f"<|channel|>commentary<|message|>{content}<|end|>"
    return preamble + ("<|start|>assistant" + calls if calls else "")


def _harmony_tools(tools: Sequence[ToolSpec], parallel: bool) -> str:
    out = ["Calls to these tools must go to the commentary channel: 'functions'.\n\n# Tools\n\n"]
    out.append("## functions\n\nnamespace functions {\n\n")
    for tool in tools:
        if tool.description:
            out.append(f"// {tool.description}\n")
        schema = tool.schema()
        props = schema.get("properties")
        if not isinstance(props, JSON_OBJECT) or not props:
            out.append(f"type {tool.name} = () => any;\n\n")
            continue
        required = schema.get("required") or []
        out.append(f"type {tool.name} = (_: {{\n")
        for name, spec in props.items():
            spec = spec if isinstance(spec, JSON_OBJECT) else {}
            if spec.get("description"):
                out.append(f"// {spec['description']}\n")
            line = f"{name}{'' if name in required else '?'}: {ts_type(spec)}"
            if "default" in spec:
                default = spec["default"] if spec.get("enum") else dumps(spec["default"])
                line += f", // default: {default}"
            out.append(line + ",\n")
        out.append("}) => any;\n\n")
    out.append("} // namespace functions")
    return "".join(out)


def _harmony_reasoning(text: str) -> str:
    # Reasoning is a message on the analysis channel; the next message continues the header.
    return f"<|channel|>analysis<|message|>{text}<|end|><|start|>assistant"


GPT_OSS = Renderer(calls=_harmony_calls, tools=_harmony_tools, assistant=_harmony_turn, reasoning=_harmony_reasoning)


# What `_harmony_calls` writes, as a grammar: the analysis channel is its reasoning block.
GPT_OSS_GRAMMAR = CallGrammar(
    call=(Lit(f"{CHANNEL}commentary to={FUNCTIONS}"), Name(), Lit(f" {CONSTRAIN}json{MESSAGE}"), Args(), Lit(CALL)),
    separator=START + "assistant",
    special_tokens=MARKERS,
    reasoning=(CHANNEL + "analysis" + MESSAGE, END + START + "assistant"),
)


DIALECTS = [
    Dialect(
        name="gpt_oss",
        markers=(CHANNEL, "<|start|>assistant"),
        description="harmony: <|channel|>commentary to=functions.f <|constrain|>json<|message|>{json}: gpt-oss",
        machine=HarmonyParser,
        renderer=GPT_OSS,
        grammar=GPT_OSS_GRAMMAR,
        models=(r"gpt-?oss", r"gpt_oss"),
        reasoning=None,
    )
]


__all__ = [
    "CALL",
    "CHANNEL",
    "CONSTRAIN",
    "DIALECTS",
    "END",
    "FUNCTIONS",
    "GPT_OSS",
    "HEADER_CAP",
    "MARKERS",
    "MESSAGE",
    "RETURN",
    "ROLE_RECIPIENT",
    "SKIP_ENDS",
    "START",
    "TEXT_ENDS",
    "HarmonyParser",
    "classify",
    "ts_type",
]
