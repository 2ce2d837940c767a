"""Streaming parse throughput per dialect, on deterministic synthetic outputs.

Each output is fed to a `StreamParser` in deltas of 1-6 characters (seeded), the way a server
streams tokens. Cases: 20 KB of plain text, one call with 50 KB and with 200 KB of arguments,
and 8 parallel calls. The 200 KB / 50 KB time ratio shows whether the cost is linear (4.0 is
exactly linear; the budget is 4.4). A last table compares with the strategy most engines use,
re-parsing the whole text on every delta, on the same dialect and the same parser.

    python benchmarks/parse_throughput.py [--repeat N] [--dialect NAME ...]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable

from toolcall_middleware import StreamParser, list_dialects, parse

Args = dict[str, str]


def _json(args: Args) -> str:
    return json.dumps(args, ensure_ascii=False)


def _array(calls: list[tuple[str, Args]]) -> str:
    return json.dumps([{"name": n, "arguments": a} for n, a in calls], ensure_ascii=False)


def _python_call(name: str, args: Args) -> str:
    return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"


M3 = "]<]minimax[>["  # MiniMax-M3's namespace token, before every tag


def _xml_params(args: Args, fmt: str) -> str:
    return "".join(fmt.format(k=k, v=v) for k, v in args.items())


DS_BEGIN, DS_CALL, DS_SEP, DS_END, DS_CALLS_END = (
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
)


def _dsml(outer: str) -> Callable[[list[tuple[str, Args]]], str]:
    def render(calls: list[tuple[str, Args]]) -> str:
        body = "".join(
            f'<｜DSML｜invoke name="{n}">\n'
            + _xml_params(a, '<｜DSML｜parameter name="{k}" string="true">{v}</｜DSML｜parameter>\n')
            + "</｜DSML｜invoke>\n"
            for n, a in calls
        )
        return f"<｜DSML｜{outer}>\n{body}</｜DSML｜{outer}>"

    return render


# How each dialect writes a list of calls: (name, {key: string value}).
RENDER: dict[str, Callable[[list[tuple[str, Args]]], str]] = {
    "hermes": lambda calls: "".join(
        f'<tool_call>\n{{"name": "{n}", "arguments": {_json(a)}}}\n</tool_call>\n' for n, a in calls
    ),
    "qwen3_coder": lambda calls: "".join(
        f"<tool_call>\n<function={n}>\n"
        + _xml_params(a, "<parameter={k}>\n{v}\n</parameter>\n")
        + "</function>\n</tool_call>\n"
        for n, a in calls
    ),
    "kimi_k2": lambda calls: (
        "<|tool_calls_section_begin|>"
        + "".join(
            f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{_json(a)}<|tool_call_end|>"
            for i, (n, a) in enumerate(calls)
        )
        + "<|tool_calls_section_end|>"
    ),
    "kimi_k3": lambda calls: (
        "<|open|>tools<|sep|>"
        + "".join(
            f'<|open|>call tool="{n}" index="{i + 1}"<|sep|>'
            + _xml_params(a, '<|open|>argument key="{k}" type="string"<|sep|>{v}<|close|>argument<|sep|>')
            + "<|close|>call<|sep|>"
            for i, (n, a) in enumerate(calls)
        )
        + "<|close|>tools<|sep|>"
    ),
    "deepseek_v3": lambda calls: (
        DS_BEGIN
        + "".join(f"{DS_CALL}function{DS_SEP}{n}\n```json\n{_json(a)}\n```{DS_END}" for n, a in calls)
        + DS_CALLS_END
    ),
    "deepseek_v31": lambda calls: (
        DS_BEGIN + "".join(f"{DS_CALL}{n}{DS_SEP}{_json(a)}{DS_END}" for n, a in calls) + DS_CALLS_END
    ),
    "deepseek_v32": _dsml("function_calls"),
    "deepseek_v4": _dsml("tool_calls"),
    "glm45": lambda calls: "".join(
        f"<tool_call>{n}\n" + _xml_params(a, "<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n") + "</tool_call>\n"
        for n, a in calls
    ),
    "glm47": lambda calls: "".join(
        f"<tool_call>{n}" + _xml_params(a, "<arg_key>{k}</arg_key><arg_value>{v}</arg_value>") + "</tool_call>"
        for n, a in calls
    ),
    "mistral": lambda calls: "".join(f"[TOOL_CALLS]{n}[ARGS]{_json(a)}" for n, a in calls),
    "gpt_oss": lambda calls: "".join(
        f"<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{_json(a)}<|call|>"
        for n, a in calls
    ),
    "gemma4": lambda calls: "".join(
        f"<|tool_call>call:{n}{{" + ",".join(f'{k}:<|"|>{v}<|"|>' for k, v in a.items()) + "}<tool_call|>"
        for n, a in calls
    ),
    "llama3_json": lambda calls: (
        "<|python_tag|>" + "; ".join(json.dumps({"name": n, "parameters": a}, ensure_ascii=False) for n, a in calls)
    ),
    "pythonic": lambda calls: (
        "[" + ", ".join(f"{n}(" + ", ".join(f"{k}={v!r}" for k, v in a.items()) + ")" for n, a in calls) + "]"
    ),
    "minimax_m2": lambda calls: (
        "<minimax:tool_call>\n"
        + "".join(
            f'<invoke name="{n}">\n' + _xml_params(a, '<parameter name="{k}">{v}</parameter>\n') + "</invoke>\n"
            for n, a in calls
        )
        + "</minimax:tool_call>"
    ),
    "minimax_m3": lambda calls: (
        f"{M3}<tool_call>\n"
        + "".join(
            f'{M3}<invoke name="{n}">' + _xml_params(a, M3 + "<{k}>{v}" + M3 + "</{k}>") + f"{M3}</invoke>\n"
            for n, a in calls
        )
        + f"{M3}</tool_call>"
    ),
    "seed_oss": lambda calls: "".join(
        f"<seed:tool_call>\n<function={n}>\n"
        + _xml_params(a, "<parameter={k}>\n{v}\n</parameter>\n")
        + "</function>\n</seed:tool_call>\n"
        for n, a in calls
    ),
    "llama_function": lambda calls: "".join(f"<function={n}>{_json(a)}</function>" for n, a in calls),
    "generic_json": lambda calls: json.dumps(
        {"tool_calls": [{"name": n, "arguments": a} for n, a in calls]}, ensure_ascii=False
    ),
    "granite": lambda calls: "<|tool_call|>" + _array(calls),
    "granite_20b_fc": lambda calls: "".join(
        f'<function_call> {{"name": "{n}", "arguments": {_json(a)}}}\n' for n, a in calls
    ),
    "inkling": lambda calls: "".join(
        f"<|message_model|>{n}<|content_invoke_tool_json|>"
        + json.dumps({"name": n, "args": a}, ensure_ascii=False)
        + "<|end_message|>"
        for n, a in calls
    ),
    "minicpm5": lambda calls: "".join(
        f'<function name="{n}">' + _xml_params(a, '<param name="{k}">{v}</param>') + "</function>\n" for n, a in calls
    ),
    "poolside_v1": lambda calls: RENDER["glm45"](calls),
    # `auto` reads the calls of the format its markers pick (here Hermes'): its own cost is the
    # scan of the text for every detected format's markers.
    "auto": lambda calls: RENDER["hermes"](calls),
    "hunyuan_v3": lambda calls: (
        "<tool_calls>\n"
        + "".join(
            f"<tool_call>{n}<tool_sep>\n"
            + _xml_params(a, "<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n")
            + "</tool_call>\n"
            for n, a in calls
        )
        + "</tool_calls>"
    ),
    "gigachat3": lambda calls: "".join(
        f'<|message_sep|>\n\nfunction call<|role_sep|>\n{{"name": "{n}", "arguments": {_json(a)}}}' for n, a in calls
    ),
    "jamba": lambda calls: f"<tool_calls>{_array(calls)}</tool_calls>",
    "nemotron": lambda calls: f"<TOOLCALL>{_array(calls)}</TOOLCALL>",
    "hunyuan_a13b": lambda calls: f"<answer>\n<tool_calls>{_array(calls)}</tool_calls>\n</answer>",
    "phi4_mini": lambda calls: "functools" + _array(calls),
    "firefunction_v2": lambda calls: " functools" + _array(calls),
    "minimax_m1": lambda calls: (
        "<tool_calls>\n" + "".join(f'{{"name": "{n}", "arguments": {_json(a)}}}\n' for n, a in calls) + "</tool_calls>"
    ),
    "cohere_command": lambda calls: (
        "<|START_ACTION|>"
        + json.dumps(
            [{"tool_call_id": str(i), "tool_name": n, "parameters": a} for i, (n, a) in enumerate(calls)],
            ensure_ascii=False,
        )
        + "<|END_ACTION|>"
    ),
    "apertus": lambda calls: (
        "<|tools_prefix|>" + json.dumps([{n: a} for n, a in calls], ensure_ascii=False) + "<|tools_suffix|>"
    ),
    "longcat": lambda calls: "".join(
        f'<longcat_tool_call>{{"name": "{n}", "arguments": {_json(a)}}}</longcat_tool_call>\n' for n, a in calls
    ),
    "xlam": lambda calls: _array(calls),
    "olmo3": lambda calls: (
        "<function_calls>\n" + "".join(f"{_python_call(n, a)}\n" for n, a in calls) + "</function_calls>"
    ),
    "lfm2": lambda calls: (
        "<|tool_call_start|>[" + ", ".join(_python_call(n, a) for n, a in calls) + "]<|tool_call_end|>"
    ),
    "functiongemma": lambda calls: "".join(
        f"<start_function_call>call:{n}{{" + ",".join(f"{k}:<escape>{v}<escape>" for k, v in a.items()) + "}"
        "<end_function_call>"
        for n, a in calls
    ),
    "step3": lambda calls: (
        "<｜tool_calls_begin｜>\n"
        + "".join(
            f'<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{n}">\n'
            + _xml_params(a, '<steptml:parameter name="{k}">{v}</steptml:parameter>\n')
            + "</steptml:invoke><｜tool_call_end｜>\n"
            for n, a in calls
        )
        + "<｜tool_calls_end｜>"
    ),
    "functionary_v3_2": lambda calls: "".join(f">>>{n}\n{_json(a)}" for n, a in calls),
    "internlm2": lambda calls: "".join(
        f'<|action_start|><|plugin|>\n{{"name": "{n}", "parameters": {_json(a)}}}<|action_end|>' for n, a in calls
    ),
}


def prose(size: int, seed: int) -> str:
    rng = random.Random(seed)
    words = ["the", "model", "writes", "text", "and", "calls", "tools", "while", "streaming", "tokens", "café"]
    out: list[str] = []
    n = 0
    while n < size:
        w = rng.choice(words) + (".\n" if rng.random() < 0.08 else " ")
        out.append(w)
        n += len(w)
    return "".join(out)[:size]


def code(size: int, seed: int) -> str:
    """A long argument value: source code with quotes, braces, backslashes and non-ASCII."""
    rng = random.Random(seed)
    lines: list[str] = []
    n = 0
    while n < size:
        i = rng.randint(0, 9999)
        line = f'def step_{i}(x):\n    return {{"k{i}": x + {i}, "s": "a\\\\b é"}}\n'
        lines.append(line)
        n += len(line)
    return "".join(lines)[:size]


# How a dialect writes plain text (before its calls); generic_json's output is the JSON alone.
TEXT: dict[str, Callable[[str], str]] = {
    "gpt_oss": lambda t: f"<|channel|>final<|message|>{t}<|end|>",
}
NO_PROSE_BEFORE_CALLS = {"generic_json", "xlam"}

# (case, number of calls the parse must find)
CALLS = {"text 20KB": 0, "call 50KB": 1, "call 200KB": 1, "8 calls": 8}


def cases(dialect: str) -> dict[str, str]:
    render = RENDER[dialect]
    plain = TEXT.get(dialect, lambda t: t)
    text = (lambda t: "") if dialect in NO_PROSE_BEFORE_CALLS else plain
    return {
        "text 20KB": plain(prose(20_000, 1)),
        "call 50KB": text("I'll write the file.\n")
        + render([("write_file", {"path": "a.py", "content": code(50_000, 2)})]),
        "call 200KB": text("I'll write the file.\n")
        + render([("write_file", {"path": "a.py", "content": code(200_000, 2)})]),
        "8 calls": text("Checking all of them.\n")
        + render([("get_weather", {"city": f"City {i}", "unit": "celsius"}) for i in range(8)]),
    }


def check(dialect: str, case: str, text: str) -> None:
    """The benchmark measures real parsing: each case must give its calls and no truncation."""
    result = parse(text, dialect)
    found = len(result.tool_calls)
    if found != CALLS[case] or result.truncated is not None:
        raise SystemExit(f"{dialect} / {case}: parsed {found} calls (truncated={result.truncated is not None})")


def deltas(text: str, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    i = 0
    while i < len(text):
        n = rng.randint(1, 6)
        out.append(text[i : i + n])
        i += n
    return out


def stream_once(dialect: str, pieces: list[str]) -> float:
    start = time.perf_counter()
    parser = StreamParser(dialect)
    for piece in pieces:
        parser.feed(piece)
    parser.close()
    return time.perf_counter() - start


def reparse_once(dialect: str, pieces: list[str]) -> float:
    """The engines' strategy: parse the whole text so far on every delta."""
    start = time.perf_counter()
    text = ""
    for piece in pieces:
        text += piece
        parse(text, dialect)
    return time.perf_counter() - start


def median_time(fn: Callable[[], float], repeat: int) -> float:
    return statistics.median(fn() for _ in range(repeat))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dialect", action="append")
    args = ap.parse_args()
    dialects = args.dialect or [d for d in list_dialects() if d in RENDER]

    header = f"| {'dialect':14} | {'case':10} | {'size':>8} | {'deltas':>7} | {'MB/s':>6} | {'µs/delta':>8} |"
    print(header)
    print("|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|")
    ratios: dict[str, float] = {}
    for dialect in dialects:
        times: dict[str, float] = {}
        for case, text in cases(dialect).items():
            check(dialect, case, text)
            pieces = deltas(text)
            t = median_time(lambda d=dialect, p=pieces: stream_once(d, p), args.repeat)
            times[case] = t
            size = len(text.encode())
            print(
                f"| {dialect:14} | {case:10} | {size:>8} | {len(pieces):>7} | {size / t / 1e6:>6.1f} | "
                f"{t / len(pieces) * 1e6:>8.2f} |"
            )
        ratios[dialect] = times["call 200KB"] / times["call 50KB"]

    print("\n200 KB / 50 KB time (4.0 is linear; budget 4.4):")
    print("| dialect | ratio |\n|---|---|")
    for dialect, ratio in ratios.items():
        print(f"| {dialect} | {ratio:.2f} |")

    print("\nStreaming vs re-parsing the whole text on every delta (hermes, one call, median):")
    print("| arguments | streaming | re-parse per delta | speed-up |\n|---|---|---|---|")
    for kb in (10, 50):
        text = RENDER["hermes"]([("write_file", {"path": "a.py", "content": code(kb * 1000, 2)})])
        pieces = deltas(text)
        fast = median_time(lambda p=pieces: stream_once("hermes", p), args.repeat)
        slow = median_time(lambda p=pieces: reparse_once("hermes", p), 1)
        print(f"| {kb} KB | {fast * 1e3:.1f} ms | {slow * 1e3:.0f} ms | {slow / fast:.0f}x |")


if __name__ == "__main__":
    main()
