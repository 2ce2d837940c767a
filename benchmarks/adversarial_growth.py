"""Parse cost on adversarial outputs: does 4x the input cost at most ~4.4x the time?

Each dialect meets families of hostile text, each a short unit repeated to the size asked: its
openers, openers cut one character short (a partial marker at every step), openers nested in an
open call, an unclosed string full of escaped quotes and end-marker look-alikes, unclosed
brackets, look-alikes of its markers, its inner markers and end marker repeated, and runs of
whitespace (before anything, in text, in reasoning, inside an open block). Each text is parsed
whole (`parse()`: a JSON answer, a large SSE event) and streamed (`StreamParser.feed` in
16-character pieces), at N and at 4N; the growth is the ratio of the two times (4.0 is linear).
The test suite bounds the same cost by counting work (`tests/core/test_linear_cost.py`); this
prints the times.

    python benchmarks/adversarial_growth.py [--size 65536] [--dialect NAME ...] [--family NAME ...]

`--answer-mb 8` measures instead the longest single synchronous step of the middleware on a
whole (non-streamed) chat completion whose content is 8 MB of text, calls or hostile markup.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from toolcall_middleware import StreamParser, ToolCallConfig, list_dialects, parse
from toolcall_middleware.core._exchange import Exchange, RouteMatch

# Per dialect: its openers, the text that starts a call's body after the first one, the end of a
# call, and inner markers (the parts of a call).
_JSON_HEAD = '{"name": "f", "arguments": {'
_XML_HEAD = "<function=f>\n<parameter=a>\n"
_DSML = "<｜DSML｜"
SHAPES: dict[str, tuple[tuple[str, ...], str, str, tuple[str, ...]]] = {
    "auto": (("<tool_call>", "<function=", "[TOOL_CALLS]", "<|channel|>"), _JSON_HEAD, "</tool_call>", ()),
    "hermes": (("<tool_call>",), _JSON_HEAD, "</tool_call>", ()),
    "qwen3_coder": (("<tool_call>", "<function="), _XML_HEAD, "</tool_call>", ("<parameter=", "</parameter>")),
    "seed_oss": (("<seed:tool_call>", "<function="), _XML_HEAD, "</seed:tool_call>", ("<parameter=",)),
    "minimax_m2": (
        ("<minimax:tool_call>",),
        '<invoke name="f">\n<parameter name="a">',
        "</minimax:tool_call>",
        ("<invoke name=", "<parameter name="),
    ),
    "minimax_m3": (
        ("]<]minimax[>[<tool_call>",),
        ']<]minimax[>[<invoke name="f">]<]minimax[>[<a>',
        "]<]minimax[>[</tool_call>",
        ("]<]minimax[>[<invoke name=", "]<]minimax[>[<a>", "]<]minimax[>[</a>"),
    ),
    "glm45": (("<tool_call>",), "f\n<arg_key>a</arg_key>\n<arg_value>", "</tool_call>", ("<arg_key>", "<arg_value>")),
    "glm47": (("<tool_call>",), "f<arg_key>a</arg_key><arg_value>", "</tool_call>", ("<arg_key>", "<arg_value>")),
    "inkling": (
        ("<|message_model|>", "<|content_invoke_tool_json|>"),
        '<|message_model|>f<|content_invoke_tool_json|>{"name": "f", "args": {',
        "<|end_message|>",
        ("<|content_text|>", "<|end_message|>"),
    ),
    "minicpm5": (('<function name="f">',), '<function name="f"><param name="a">', "</function>", ('<param name="a">',)),
    "poolside_v1": (
        ("<tool_call>",),
        "f\n<arg_key>a</arg_key>\n<arg_value>",
        "</tool_call>",
        ("<arg_key>", "<arg_value>"),
    ),
    "hunyuan_v3": (
        ("<tool_calls>",),
        "<tool_call>f<tool_sep>\n<arg_key>a</arg_key>\n<arg_value>",
        "</tool_calls>",
        ("<tool_call>", "<arg_key>", "<arg_value>"),
    ),
    "gigachat3": (
        ("function call<|role_sep|>", "<|function_call|>", "<|message_sep|>", "</s>"),
        _JSON_HEAD,
        "",
        (),
    ),
    "mistral": (("[TOOL_CALLS]",), 'f[ARGS]{"a": ', "", ("[ARGS]", "[CALL_ID]")),
    "gpt_oss": (
        ("<|channel|>", "<|start|>", "<|start|>assistant<|channel|>commentary to=functions.f"),
        "commentary to=functions.f <|constrain|>json<|message|>{",
        "<|call|>",
        ("<|message|>", "<|end|>", "commentary to=functions.f"),
    ),
    "kimi_k2": (
        ("<|tool_calls_section_begin|>", "<|tool_call_begin|>"),
        "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{",
        "<|tool_call_end|>",
        ("<|tool_call_begin|>", "<|tool_call_argument_begin|>"),
    ),
    "kimi_k3": (
        ("<|open|>tools<|sep|>", "<|open|>call"),
        "<|open|>call name=f<|sep|><|open|>json<|sep|>{",
        "<|close|>tools<|sep|>",
        ("<|open|>call", "<|open|>argument", "<|open|>json"),
    ),
    "deepseek_v3": (
        ("<｜tool▁calls▁begin｜>",),
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{",
        "<｜tool▁calls▁end｜>",
        ("<｜tool▁call▁begin｜>", "<｜tool▁sep｜>"),
    ),
    "deepseek_v31": (
        ("<｜tool▁calls▁begin｜>",),
        "<｜tool▁call▁begin｜>f<｜tool▁sep｜>{",
        "<｜tool▁calls▁end｜>",
        ("<｜tool▁call▁begin｜>", "<｜tool▁sep｜>"),
    ),
    "deepseek_v32": (
        (f"{_DSML}function_calls>",),
        f'{_DSML}invoke name="f">\n{_DSML}parameter name="a" string="true">',
        f"</{_DSML}function_calls>",
        (f"{_DSML}invoke", f"{_DSML}parameter"),
    ),
    "deepseek_v4": (
        (f"{_DSML}tool_calls>",),
        f'{_DSML}invoke name="f">\n{_DSML}parameter name="a" string="true">',
        f"</{_DSML}tool_calls>",
        (f"{_DSML}invoke", f"{_DSML}parameter"),
    ),
    "gemma4": (("<|tool_call>",), 'call:f{a:<|"|>', "<tool_call|>", ('<|"|>',)),
    "llama3_json": (("<|python_tag|>",), '{"name": "f", "parameters": {', "", ()),
    "llama_function": (("<function=",), "f>{", "</function>", ()),
    "pythonic": (("<|python_start|>", "["), "[f(a=", "<|python_end|>", ("f(", "(")),
    "generic_json": (("{",), '{"tool_calls": [{"name": "f", "arguments": {', "", ('"tool_calls"',)),
    "granite": (("<|tool_call|>", "<tool_call>", "[{"), '[{"name": "f", "arguments": {', "", ()),
    "granite_20b_fc": (("<function_call>",), _JSON_HEAD, "", ()),
    "jamba": (("<tool_calls>",), "[" + _JSON_HEAD, "</tool_calls>", ()),
    "nemotron": (("<TOOLCALL>",), "[" + _JSON_HEAD, "</TOOLCALL>", ()),
    "hunyuan_a13b": (("<tool_calls>", "<answer>"), "[" + _JSON_HEAD, "</tool_calls>", ("</answer>",)),
    "phi4_mini": (("functools[",), _JSON_HEAD, "", ()),
    "firefunction_v2": ((" functools[", "functools["), _JSON_HEAD, "", ()),
    "minimax_m1": (("<tool_calls>",), _JSON_HEAD, "</tool_calls>", ()),
    "cohere_command": (
        ("<|START_ACTION|>", "<|START_RESPONSE|>"),
        '[{"tool_call_id": "0", "tool_name": "f", "parameters": {',
        "<|END_ACTION|>",
        ("<|END_RESPONSE|>",),
    ),
    "apertus": (("<|tools_prefix|>",), '[{"f": {', "<|tools_suffix|>", ()),
    "longcat": (("<longcat_tool_call>",), _JSON_HEAD, "</longcat_tool_call>", ()),
    "internlm2": (
        ("<|action_start|><|plugin|>", "<|action_start|> <|plugin|>"),
        '{"name": "f", "parameters": {',
        "<|action_end|>",
        (),
    ),
    "olmo3": (("<function_calls>",), "\nf(a='", "</function_calls>", ("\n",)),
    "lfm2": (("<|tool_call_start|>",), "[f(a='", "<|tool_call_end|>", ()),
    "functiongemma": (("<start_function_call>",), "call:f{a:<escape>", "<end_function_call>", ("<escape>",)),
    "step3": (
        ("<｜tool_calls_begin｜>",),
        '<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="f">\n<steptml:parameter name="a">',
        "<｜tool_calls_end｜>",
        ("<steptml:parameter name=", "</steptml:parameter>", "<｜tool_call_begin｜>"),
    ),
    "xlam": (("[{", "```json", "[TOOL_CALLS]", "<tool_call>"), '"name": "f", "arguments": {', "]", ()),
    "functionary_v3_2": ((">>>",), "f\n{", "", (">>>all\n",)),
}


def families(dialect: str) -> dict[str, tuple[str, str]]:
    """Family name -> (prefix, unit): the text is the prefix, then the unit repeated."""
    openers, head, end, inner = SHAPES[dialect]
    first = openers[0]
    out = {f"opener:{o}": ("", o) for o in openers}
    out["partial"] = ("", first[:-1] + " ")
    out["partial-bare"] = ("", first[: max(1, len(first) // 2)])
    out["nested"] = ("", first + head)
    out["string"] = (first + head + '"', 'ab\\"' + (end or first)[:-1] + '\\\\"x"' + '"')
    out["unclosed-string"] = (first + head + '"', 'ab\\"' + (end or first) + "\\\\")
    out["brackets"] = (first + head, '{"a": [')
    out["lookalike"] = ("", first[:-1] + chr(ord(first[-1]) + 1))
    for marker in inner:
        out[f"inner:{marker}"] = (first + head, marker)
    if end:
        out["closer"] = ("", end)
    out["think"] = ("", "<think>")
    out["whitespace"] = ("", " \n")
    out["reasoning-whitespace"] = ("<think>x", " \n")
    out["text-whitespace"] = ("x", " \n")
    out["block-whitespace"] = (first, " \n")
    return out


def text_of(prefix: str, unit: str, size: int) -> str:
    return prefix + unit * max(1, (size - len(prefix)) // len(unit))


def run_whole(dialect: str, text: str) -> None:
    parse(text, dialect)


def run_streamed(dialect: str, text: str, piece: int = 16) -> None:
    p = StreamParser(dialect)
    for i in range(0, len(text), piece):
        p.feed(text[i : i + piece])
    p.close()


def _batch(fn: Callable[[str, str], None], dialect: str, text: str) -> float:
    """CPU seconds per run over a batch of at least 50 ms (a figure of a millisecond is then not
    one run's noise). CPU time, not wall time: on a shared machine another process's work
    stretches the wall clock, not this process's CPU time."""
    runs, t0 = 0, time.process_time()
    while True:
        fn(dialect, text)
        runs += 1
        elapsed = time.process_time() - t0
        if elapsed >= 0.05:
            return elapsed / runs


def growth_of(fn: Callable[[str, str], None], dialect: str, small: str, big: str, repeat: int) -> tuple[float, float]:
    """The best time of `small` and of `big`, measured in turns (a busy spell hits both)."""
    best_small = best_big = float("inf")
    for _ in range(repeat):
        best_small = min(best_small, _batch(fn, dialect, small))
        best_big = min(best_big, _batch(fn, dialect, big))
    return best_small, best_big


ANSWERS: dict[str, Callable[[int], str]] = {
    "plain text": lambda size: ("All work and no play. " * (size // 22 + 1))[:size],
    "calls": lambda size: '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>\n' * (size // 58),
    "one call": lambda size: '<tool_call>{"name": "f", "arguments": {"a": "' + "x" * size + '"}}</tool_call>',
    "repeated opener": lambda size: "<tool_call>" * (size // 11),
    "whitespace": lambda size: " \n" * (size // 2),
}


def longest_step(content: str, dialect: str = "hermes", read: int = 65536) -> tuple[float, str]:
    """The longest synchronous call (`Exchange.feed` of a read, or `end`) over a whole
    non-streamed chat completion whose content is `content`, as the middleware makes them."""
    exchange = Exchange(ToolCallConfig(dialect=dialect), RouteMatch("chat", "chat"))  # (the default limits)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    exchange.forward(json.dumps({"model": "m", "tools": tools, "messages": []}).encode())
    message = {"role": "assistant", "content": content}
    answer = {"id": "c", "object": "chat.completion", "created": 0, "model": "m"}
    answer["choices"] = [{"index": 0, "message": message, "finish_reason": "stop"}]
    body = json.dumps(answer).encode()
    exchange.start("POST", 200, [(b"content-type", b"application/json")])
    worst, where = 0.0, ""
    for i in range(0, len(body), read):
        t0 = time.perf_counter()
        exchange.feed(body[i : i + read])
        if time.perf_counter() - t0 > worst:
            worst, where = time.perf_counter() - t0, "feed"
    t0 = time.perf_counter()
    exchange.end()
    if time.perf_counter() - t0 > worst:
        worst, where = time.perf_counter() - t0, "end"
    return worst, where


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=64 * 1024, help="N in characters (the second run is 4N)")
    ap.add_argument("--dialect", action="append", help="only these dialects")
    ap.add_argument("--family", action="append", help="only families starting with these names")
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure (the best is kept)")
    ap.add_argument("--budget", type=float, default=4.4, help="growth flagged above this")
    ap.add_argument("--answer-mb", type=int, help="instead: the longest step on a whole answer of this size")
    args = ap.parse_args()
    if args.answer_mb:
        size = args.answer_mb << 20
        for name, make in ANSWERS.items():
            worst, where = longest_step(make(size))
            print(f"{args.answer_mb} MB answer, {name:<16} longest step {worst * 1000:8.1f} ms ({where})")
        return
    n = args.size
    print(f"{'dialect':<15} {'family':<40} {'mode':<8} {n // 1024:>6}K s {4 * n // 1024:>6}K s  growth")
    worst: list[tuple[float, str]] = []
    for dialect in args.dialect or list_dialects():
        for family, (prefix, unit) in families(dialect).items():
            if args.family and not any(family.startswith(f) for f in args.family):
                continue
            for mode, fn in (("whole", run_whole), ("streamed", run_streamed)):
                small, big = growth_of(fn, dialect, text_of(prefix, unit, n), text_of(prefix, unit, 4 * n), args.repeat)
                growth = big / small if small else float("inf")
                flag = "  <-- over budget" if growth > args.budget else ""
                print(f"{dialect:<15} {family[:40]:<40} {mode:<8} {small:>9.4f} {big:>9.4f} {growth:>6.2f}x{flag}")
                worst.append((growth, f"{dialect} {family} {mode}"))
    worst.sort(reverse=True)
    print("\nlargest growth per 4x:", ", ".join(f"{g:.2f}x {what}" for g, what in worst[:5]))


if __name__ == "__main__":
    main()
