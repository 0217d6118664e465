"""What the upload preview shows of a checked plan's content: its first instruction as the
platform will read it (docs/study-format.md "In the browser").

Only plain strings come out; the page escapes them (answer texts, model names and rater ids are
the uploader's, untrusted). Texts are cut to ``TEXT_LIMIT`` characters, lists to ``ROW_LIMIT``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annotations.importers.generic_plan import StudyPlan, VoteRow
from annotations.importers.generic_write import PSEUDONYM
from annotations.importers.study_extensions import extensions

TEXT_LIMIT = 600  # characters of an instruction or answer shown
RATER_LIMIT = 40  # characters of a raw rater id shown
ROW_LIMIT = 10  # votes, rankings and extension lines shown per instruction


@dataclass
class SampleResponse:
    model: str
    text: str
    cut: bool  # the text was longer than TEXT_LIMIT


@dataclass
class Sample:
    instruction_id: str
    instruction: str
    reference: str
    category: str
    responses: list[SampleResponse] = field(default_factory=list)
    votes: list[str] = field(default_factory=list)
    rankings: list[str] = field(default_factory=list)
    extension_lines: list[str] = field(default_factory=list)  # e.g. judges and their calls


def _cut(text: str, limit: int = TEXT_LIMIT) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit] + "…", True)


def _rater(raw: str, labels: dict[str, str]) -> str:
    shown, _cut_off = _cut(raw, RATER_LIMIT)
    return f"rater {shown} (pseudonymised: stored as {labels[raw]})"


def _vote(vote: VoteRow, labels: dict[str, str]) -> str:
    how = f"{vote.condition}; {vote.first_model} shown first, {vote.second_model} second"
    if vote.cued:
        how += f", cue on {getattr(vote, vote.cued)}"
    if vote.winner == "tie":
        verdict = f"{vote.model_a} = {vote.model_b} (a tie)"
    else:
        won = getattr(vote, vote.winner)
        lost = vote.model_b if vote.winner == "model_a" else vote.model_a
        verdict = f"{won} > {lost}"
    return f"{_rater(vote.annotator, labels)} voted: {verdict} ({how})"


def _more(lines: list[str], total: int, what: str) -> list[str]:
    return lines + ([f"and {total - len(lines)} more {what} on this instruction"] if total > len(lines) else [])


def first_instruction(plan: StudyPlan) -> Sample | None:
    """The plan's first instruction with its answers, votes, rankings and extension rows."""
    if not plan.instructions:
        return None
    first = plan.instructions[0]
    text, _ = _cut(first.text)
    reference, _ = _cut(first.reference)
    sample = Sample(first.id, text, reference, first.category)
    order = plan.models_of().get(first.id, [])
    texts = {r.model: r.text for r in plan.responses if r.instruction_id == first.id}
    for model in order:
        answer, cut = _cut(texts[model])
        sample.responses.append(SampleResponse(model, answer, cut))
    labels = {raw: f"{PSEUDONYM}{n}" for n, raw in enumerate(plan.annotators(), 1)}
    votes = [v for v in plan.votes if v.instruction_id == first.id]
    sample.votes = _more([_vote(v, labels) for v in votes[:ROW_LIMIT]], len(votes), "vote(s)")
    rankings = [r for r in plan.rankings if r.instruction_id == first.id]
    sample.rankings = _more(
        [
            f"{_rater(r.annotator, labels)} ranked: {' > '.join(r.ranking)}"
            + (f" ({r.acceptable_count} acceptable)" if r.acceptable_count is not None else "")
            for r in rankings[:ROW_LIMIT]
        ],
        len(rankings),
        "ranking(s)",
    )
    for extension in extensions():
        sample.extension_lines += extension.preview(plan, first.id, limit=ROW_LIMIT)
    return sample
