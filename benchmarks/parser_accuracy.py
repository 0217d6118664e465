"""Per-style accuracy of both parsers on the hand-labelled corpus of judge outputs (issue 9).

Run as ``.venv/bin/python -m benchmarks.parser_accuracy``. No database, no network. The corpus,
``tests/judging/parser_corpus.jsonl``, holds outputs written by hand in the habits of real chat
models (GPT-4o's markdown and bold verdicts, Claude's hedges, Llama's "Sure! ... Here's why",
Mistral's terse lines), one JSON object a line: ``style``, ``text``, ``labels``, ``expected``
("first" / "second" / null = invalid), and the ``condition`` and ``cue`` of the prompt it
answers. Each row is parsed as the runner parses a judgment: the prompt of that condition and
cue is rendered (prompt version v1) and its ``answer_labels`` and ``echo_strings`` are passed
to ``judging.parsers.parse``. A row counts as correct when the parser returns ``expected``
exactly (None for an invalid answer). The ``paper`` parser is the authors' (a label in the
first 30 characters); its poor accuracy on chat styles is the expected, documented behaviour.
Also times the robust parser per call.

The verdict formats of ``judging.verdicts`` (issue 20) are scored the same way on their own
hand-labelled corpora, ``tests/judging/verdict_corpora/<format>.jsonl`` (``arena-hard``,
``mt-bench``, ``regex``; the regex rows name a spec of ``regex-specs.json``): a row's ``expected``
is ``{"slot", "strength"}`` or null (invalid), and a row is correct when the format's verdict is
exactly that, strength included. They are reported under the key ``verdict_formats`` (per format
and style, and the microseconds per call); the keys above are unchanged.
Writes ``benchmarks/results/parser_accuracy.json``.
"""

from __future__ import annotations

import json
import platform
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from judging import parsers, prompts, verdicts
from judging.vocabulary import VerdictFormat

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "judging" / "parser_corpus.jsonl"
VERDICT_CORPORA = ROOT / "tests" / "judging" / "verdict_corpora"
VERDICT_FORMATS = (VerdictFormat.ARENA_HARD, VerdictFormat.MT_BENCH, VerdictFormat.REGEX)
RESULTS = ROOT / "benchmarks" / "results" / "parser_accuracy.json"
# The pair every corpus row is read against (the texts only matter as echo strings).
INSTRUCTION = "Explain the water cycle in two sentences."
REFERENCE = "Water evaporates, condenses into clouds and falls back as precipitation."
TEXTS = (
    "Water goes up into the sky and comes back down as rain.",
    "Evaporation, condensation and precipitation together form the water cycle.",
)


def load_corpus(path: Path = CORPUS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def prompt_for(row: dict) -> prompts.RenderedPrompt:
    rendered = prompts.render(
        version="v1",
        condition=row["condition"],
        instruction=INSTRUCTION,
        reference=REFERENCE,
        first_text=TEXTS[0],
        second_text=TEXTS[1],
        cue=row.get("cue") or {},
    )
    assert list(rendered.answer_labels) == row["labels"], (row["id"], rendered.answer_labels)
    return rendered


def parse_row(parser: str, row: dict) -> str | None:
    rendered = prompt_for(row)
    return parsers.parse(parser, row["text"], labels=rendered.answer_labels, echo_strings=rendered.echo_strings)


def _tally(rows: list[dict], correct: Callable[[dict], bool]) -> dict[str, dict]:
    """style -> {n, correct, accuracy, wrong: [ids]} plus "ALL"."""
    table: dict[str, dict] = defaultdict(lambda: {"n": 0, "correct": 0, "wrong": []})
    for row in rows:
        ok = correct(row)
        for key in (row["style"], "ALL"):
            table[key]["n"] += 1
            table[key]["correct"] += ok
            if not ok:
                table[key]["wrong"].append(row["id"])
    for entry in table.values():
        entry["accuracy"] = round(entry["correct"] / entry["n"], 4)
    return dict(sorted(table.items(), key=lambda kv: (kv[0] == "ALL", kv[0])))


def per_style(parser: str, rows: list[dict]) -> dict[str, dict]:
    """style -> {n, correct, accuracy, wrong: [ids]} plus "ALL"."""
    return _tally(rows, lambda row: parse_row(parser, row) == row["expected"])


def load_verdict_corpus(name: str) -> list[dict]:
    return load_corpus(VERDICT_CORPORA / f"{name}.jsonl")


def regex_specs() -> dict[str, dict]:
    return json.loads((VERDICT_CORPORA / "regex-specs.json").read_text())


def verdict_row(name: str, row: dict, specs: dict[str, dict] | None = None) -> dict | None:
    """The format's verdict on one corpus row, as the corpus spells it (``expected``)."""
    spec = (specs or regex_specs())[row["spec"]] if name == VerdictFormat.REGEX else None
    return verdicts.get_format(name, spec).parse(row["text"]).as_json()


def verdict_accuracy(name: str, rows: list[dict]) -> dict[str, dict]:
    """style -> {n, correct, accuracy, wrong: [ids]} plus "ALL", for one verdict format."""
    specs = regex_specs()
    return _tally(rows, lambda row: verdict_row(name, row, specs) == row["expected"])


def verdict_formats_result() -> dict:
    """The ``verdict_formats`` key of the results file: per format, corpus size, accuracy, speed."""
    out: dict = {}
    specs = regex_specs()
    for name in VERDICT_FORMATS:
        rows = load_verdict_corpus(name)
        started, repeats = time.perf_counter(), 20
        for _ in range(repeats):
            for row in rows:
                verdict_row(name, row, specs)
        out[name] = {
            "corpus": str((VERDICT_CORPORA / f"{name}.jsonl").relative_to(ROOT)),
            "rows": len(rows),
            "invalid_rows": sum(r["expected"] is None for r in rows),
            "styles": len({r["style"] for r in rows}),
            "accuracy": verdict_accuracy(name, rows),
            "us_per_call": round((time.perf_counter() - started) / (repeats * len(rows)) * 1e6, 1),
        }
    return out


def format_verdict_table(result: dict) -> str:
    lines = [f"{'format':12} {'rows':>4}  {'accuracy':>8}  {'us/call':>8}"]
    for name, entry in result.items():
        lines.append(
            f"{name:12} {entry['rows']:4d}  {entry['accuracy']['ALL']['accuracy']:8.1%}  {entry['us_per_call']:8.1f}"
        )
    return "\n".join(lines)


def format_table(result: dict) -> str:
    robust, paper = result["parsers"]["robust"], result["parsers"]["paper"]
    lines = [f"{'style':28} {'n':>3}  {'robust':>7}  {'paper':>7}"]
    for style, entry in robust.items():
        lines.append(f"{style:28} {entry['n']:3d}  {entry['accuracy']:7.1%}  {paper[style]['accuracy']:7.1%}")
    return "\n".join(lines)


def main() -> int:
    rows = load_corpus()
    result: dict = {
        "benchmark": "parser_accuracy",
        "corpus": str(CORPUS.relative_to(ROOT)),
        "rows": len(rows),
        "styles": len({r["style"] for r in rows}),
        "prompt_version": "v1",
        "parsers": {name: per_style(name, rows) for name in ("robust", "paper")},
    }
    started, repeats = time.perf_counter(), 20
    for _ in range(repeats):
        for row in rows:
            parse_row("robust", row)
    result["robust_us_per_call_incl_render"] = round((time.perf_counter() - started) / (repeats * len(rows)) * 1e6, 1)
    result["verdict_formats"] = verdict_formats_result()
    result["machine"] = {"python": platform.python_version(), "platform": platform.platform()}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(format_table(result))
    print(f"robust parser: {result['robust_us_per_call_incl_render']} us per call (prompt render included)")
    print(format_verdict_table(result["verdict_formats"]))
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
