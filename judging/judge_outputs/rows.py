"""``judges.jsonl`` and ``judgments.jsonl`` checked into rows (docs/study-format.md "Judge outputs").

Schema-valid lines come in from ``annotations.importers.generic.read_study``; the rules a schema
cannot say are checked here, and every ``output`` is read with its judge's verdict format now,
so the preview can say how many outputs held no verdict before anything is written.

Presentations: a judge's calls on one pair in one condition are numbered as the platform numbers
its own (``judging.models.Judgment``): ``plain`` has one; ``order`` two, the second with the
other answer first; ``bandwagon`` / ``attentional`` two at most, presentation 1 cueing the first
slot and 2 the second.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from annotations.importers.generic_plan import checked_pair
from annotations.vocabulary import Condition, JudgeSlot
from judging import verdicts
from judging.prompts import load_template
from judging.verdicts import Verdict, VerdictSpecError
from judging.vocabulary import TIE, VerdictFormat

if TYPE_CHECKING:
    from annotations.importers.generic_plan import StudyPlan

KEY = "judge_outputs"  # this extension's entry in StudyPlan.extensions
CUED = (Condition.BANDWAGON, Condition.ATTENTIONAL)
# The CoBBLEr prompt's answer labels ("System Star", "System Square"): what a cobbler-format
# output names; the label formats (arena-hard, mt-bench, regex) carry their own.
COBBLER_LABELS = tuple(f"System {label}" for label in load_template("v1")["labels"])


@dataclass(frozen=True)
class JudgeRow:
    where: str
    name: str
    model: str
    verdict_format: str
    verdict_spec: dict
    self_model: str


@dataclass(frozen=True)
class JudgmentRow:
    where: str
    judge: str
    instruction_id: str
    first_model: str  # the model whose answer was shown first
    second_model: str
    condition: str
    presentation: int
    cue_slot: str  # "first" | "second" | "" (not cued)
    output: str | None  # the raw text, or None for a line that gave its winner
    verdict: Verdict
    prompt: str
    tokens_in: int
    tokens_out: int
    cost: Decimal
    latency_ms: int | None


@dataclass
class JudgeOutputs:
    judges: list[JudgeRow]
    judgments: list[JudgmentRow]


def check(rows: dict[str, list[tuple[str, dict]]], plan: StudyPlan) -> None:
    judges = _judges(rows.get("judges.jsonl", []), plan)
    lines = rows.get("judgments.jsonl", [])
    if lines and "judges.jsonl" not in plan.digests:
        plan.problem("judgments.jsonl", "needs judges.jsonl, which names each judge and its verdict format")
        return
    judgments = _judgments(lines, plan, {j.name: j for j in judges})
    used = {j.judge for j in judgments}
    for judge in judges:
        if judge.name not in used and plan.ok:
            plan.problem(judge.where, f"judge {judge.name!r} has no line in judgments.jsonl")
    if judges:
        plan.extensions[KEY] = JudgeOutputs(judges, judgments)


def _judges(lines: list[tuple[str, dict]], plan: StudyPlan) -> list[JudgeRow]:
    out: list[JudgeRow] = []
    first: dict[str, str] = {}
    models = set(plan.models())
    for where, value in lines:
        name = value["name"]
        if name in first:
            plan.problem(where, f"duplicate judge {name!r} (first at {first[name]})")
            continue
        first[name] = where
        fmt = value.get("verdict_format", VerdictFormat.COBBLER)
        spec = value.get("verdict_spec", {})
        if fmt == VerdictFormat.REGEX:
            try:
                verdicts.get_format(fmt, spec)
            except (VerdictSpecError, ValueError) as exc:
                plan.problem(where, f"verdict_spec: {exc}")
                continue
        self_model = value.get("self_model", "")
        if self_model and self_model not in models:
            plan.problem(where, f"self_model {self_model!r} has no response in responses.jsonl")
            continue
        out.append(JudgeRow(where, name, value.get("model", ""), fmt, spec, self_model))
    return out


def _judgments(lines: list[tuple[str, dict]], plan: StudyPlan, judges: dict[str, JudgeRow]) -> list[JudgmentRow]:
    answered = plan.models_of()
    texts = {(r.instruction_id, r.model): r.text for r in plan.responses}
    instructions = {r.id: r for r in plan.instructions}
    judges_broken = any(p.where.startswith("judges.jsonl") for p in plan.problems)
    seen: dict[tuple, list[tuple[str, str, str]]] = {}  # (judge, instruction, pair, condition) -> (where, first, cue)
    out = []
    for where, value in lines:
        judge = judges.get(value["judge"])
        if judge is None:
            if not judges_broken:  # else the judge's own line already says what is wrong
                plan.problem(where, f"unknown judge {value['judge']!r} (not in judges.jsonl)")
            continue
        problem = _line_problem(value)
        if problem:
            plan.problem(where, problem)
            continue
        pair = checked_pair(plan, answered, where, value)
        if pair is None:
            continue
        instruction, model_a, model_b = pair
        first, second = (
            (model_a, model_b) if value.get("presented_first", "model_a") == "model_a" else (model_b, model_a)
        )
        condition = value.get("condition", Condition.PLAIN)
        cue_slot = ""
        if condition in CUED:
            cue_slot = JudgeSlot.FIRST if value[value["cued"]] == first else JudgeSlot.SECOND
        key = (judge.name, instruction, frozenset((model_a, model_b)), condition)
        earlier = seen.setdefault(key, [])
        clash = _presentation_clash(condition, earlier, first, cue_slot)
        if clash:
            plan.problem(where, clash)
            continue
        earlier.append((where, first, cue_slot))
        presentation = (2 if cue_slot == JudgeSlot.SECOND else 1) if cue_slot else len(earlier)
        row = instructions[instruction]
        shown = (texts[(instruction, first)], texts[(instruction, second)])
        out.append(
            JudgmentRow(
                where=where,
                judge=judge.name,
                instruction_id=instruction,
                first_model=first,
                second_model=second,
                condition=condition,
                presentation=presentation,
                cue_slot=cue_slot,
                output=value.get("output"),
                verdict=_verdict(value, judge, first, echo=[row.text, row.reference, *shown]),
                prompt=value.get("prompt", ""),
                tokens_in=value.get("tokens", {}).get("input", 0),
                tokens_out=value.get("tokens", {}).get("output", 0),
                cost=Decimal(str(value.get("cost", 0))),
                latency_ms=value.get("latency_ms"),
            )
        )
    return out


def preview(outputs: JudgeOutputs, instruction_id: str, *, limit: int) -> list[str]:
    """The upload preview's lines: each judge, then its calls on one instruction as read."""
    lines = [
        f"judge {j.name}"
        + (f" (model {j.model})" if j.model else "")
        + f": verdict format {j.verdict_format}"
        + (f", its own model {j.self_model}" if j.self_model else "")
        for j in outputs.judges[:limit]
    ]
    if len(outputs.judges) > limit:
        lines.append(f"and {len(outputs.judges) - limit} more judge(s)")
    calls = [j for j in outputs.judgments if j.instruction_id == instruction_id]
    for call in calls[:limit]:
        shown = f"{call.first_model} shown first, {call.second_model} second"
        if call.cue_slot:
            cued = call.first_model if call.cue_slot == JudgeSlot.FIRST else call.second_model
            shown += f", cue on {cued}"
        lines.append(f"{call.judge} ({call.condition}; {shown}): {_read_as(call)}")
    if len(calls) > limit:
        lines.append(f"and {len(calls) - limit} more judge call(s) on this instruction")
    return lines


def _read_as(call: JudgmentRow) -> str:
    verdict, source = call.verdict, "output read as" if call.output is not None else "winner"
    if not verdict.valid:
        return f"{source}: no verdict (kept, never guessed)"
    if verdict.is_tie:
        return f"{source}: tie"
    won, lost = (
        (call.first_model, call.second_model)
        if verdict.slot == JudgeSlot.FIRST
        else (call.second_model, call.first_model)
    )
    return f"{source}: {won} > {lost}" + (f" ({verdict.strength})" if verdict.strength else "")


def _line_problem(value: dict) -> str:
    if ("output" in value) == ("winner" in value):
        return "give exactly one of output (the judge's raw text) and winner (model_a, model_b or tie)"
    if "strength" in value and value.get("winner") not in ("model_a", "model_b"):
        return "strength goes with a winner model_a or model_b (an output's strength is read from the output)"
    return ""


def _presentation_clash(condition: str, earlier: list[tuple[str, str, str]], first: str, cue_slot: str) -> str:
    """Why this call cannot be another presentation of the pair in the condition ('' if it can)."""
    if not earlier:
        return ""
    where = earlier[0][0]
    if condition == Condition.PLAIN:
        return (
            f"a second plain judgment of this pair by this judge (first at {where}); "
            "a pair judged in both orders goes in condition order"
        )
    if len(earlier) >= 2:
        return (
            f"a third {condition} judgment of this pair by this judge (first at {where}); a pair has two presentations"
        )
    if condition == Condition.ORDER and earlier[0][1] == first:
        return f"this pair was already judged with {first!r} first in condition order (at {where}); the twin swaps them"
    if cue_slot and earlier[0][2] == cue_slot:
        return (
            f"this pair was already judged with the cue on the {cue_slot} answer in condition {condition} (at {where})"
        )
    return ""


def _verdict(value: dict, judge: JudgeRow, first: str, *, echo: list[str]) -> Verdict:
    winner = value.get("winner")
    if winner is not None:
        if winner == TIE:
            return Verdict(TIE)
        slot = JudgeSlot.FIRST if value[winner] == first else JudgeSlot.SECOND
        return Verdict(slot, value.get("strength"))
    return read_output(judge.verdict_format, judge.verdict_spec, value["output"], echo=[*echo, *_lines(value)])


def read_output(fmt: str, spec: dict, output: str, *, echo: list[str]) -> Verdict:
    """An imported output read as the platform reads its own judges' (judging.runner.work.read_verdict),
    with what the file holds of the prompt as the pieces a judge may have echoed."""
    labels = COBBLER_LABELS if fmt == VerdictFormat.COBBLER else ()
    pieces = sorted({p for p in echo if p}, key=len, reverse=True)
    return verdicts.parse(
        fmt, output, labels=labels, echo_strings=pieces, spec=spec if fmt == VerdictFormat.REGEX else None
    )


def _lines(value: dict) -> list[str]:
    return [line.strip() for line in value.get("prompt", "").splitlines() if line.strip()]
