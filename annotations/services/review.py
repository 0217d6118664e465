"""Reviewing crowd work as Prolific reviewers do: the answers beside the pair, quality flags,
filters, bulk decisions and a lookup by the platform id the worker typed into Prolific."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Prefetch

from annotations.models import Assignment, Participant, Response, ReviewDecision, Study, Submission, Task
from annotations.pseudonyms import pseudonymise
from annotations.services.studies import check_decision, review_assignment
from annotations.shown import answer_letter, check_texts, shown_pair
from annotations.vocabulary import CrowdChoice

STATES = ("all", "pending", "approved", "rejected")
SORTS = {
    "flags": "Most flags first",
    "newest": "Newest first",
    "fastest": "Fastest first",
}
NO_FLAG = "none"
ANY_FLAG = "any"


@dataclass(frozen=True)
class Flag:
    code: str
    label: str
    value: object
    threshold: object


@dataclass(frozen=True)
class ShownAnswer:
    """One answer as the worker saw it: its label on screen, its text, and whose it is."""

    label: str
    text: str
    candidate: str
    chosen: bool = False
    above_bar: bool | None = None


@dataclass(frozen=True)
class ReviewedTask:
    position: int
    kind: str
    condition: str
    role: str
    role_label: str
    instruction: str
    reference: str
    note: str  # the banner or instructed-response text shown with the task
    answers: list[ShownAnswer]
    choice: str
    seconds: float | None
    rationale: str
    untouched: bool


@dataclass
class ReviewEntry:
    assignment: Assignment
    flags: list[Flag]
    tasks: list[ReviewedTask] = field(default_factory=list)

    @property
    def decisions(self) -> list[ReviewDecision]:
        """Its review history, oldest first (prefetched by review_entries)."""
        return list(self.assignment.decisions.all())

    @property
    def last_decision(self) -> ReviewDecision | None:
        decisions = self.decisions
        return decisions[-1] if decisions else None

    @property
    def survey(self) -> list[tuple[str, str, object]]:
        answers = self.assignment.survey if isinstance(self.assignment.survey, dict) else {}
        return [
            (phase, str(question), answer)
            for phase in ("pre", "post")
            if isinstance(answers.get(phase), dict)
            for question, answer in answers[phase].items()
        ]


# How review shows a worker's choice.
CHOICE_SHOWN: dict[str, str] = {
    CrowdChoice.A: "System A",
    CrowdChoice.B: "System B",
    CrowdChoice.TIE: "No preference (tie)",
}


def flags_of(raw: object) -> list[Flag]:
    """Assignment.flags as Flag rows; the list is written by annotations.quality, so read it as data."""
    if not isinstance(raw, list):
        return []
    return [
        Flag(
            code=str(f.get("code", "")),
            label=str(f.get("label") or f.get("code", "")),
            value=f.get("value"),
            threshold=f.get("threshold"),
        )
        for f in raw
        if isinstance(f, dict) and f.get("code")
    ]


def flag_choices(*, study: Study) -> list[tuple[str, str]]:
    """The flag codes raised anywhere in the study, for the filter menu (label of first sight)."""
    seen: dict[str, str] = {}
    for raw in Assignment.objects.filter(batch__study=study, status=Assignment.Status.SUBMITTED).values_list(
        "flags", flat=True
    ):
        for f in flags_of(raw):
            seen.setdefault(f.code, f.label)
    return sorted(seen.items(), key=lambda kv: kv[1])


def review_queue(
    *,
    study: Study,
    state: str = "all",
    flag: str = "",
    sort: str = "flags",
    participant_ids: Iterable[int] | None = None,
) -> list[int]:
    """Ids of the study's submitted assignments, filtered by review state and flag, in review order.

    Filtering and sorting by flag happens here rather than in SQL: Assignment.flags is a JSON
    list, and SQLite (the embedded mode) has no JSON containment lookup.
    """
    qs = Assignment.objects.filter(batch__study=study, status=Assignment.Status.SUBMITTED)
    if state in ("pending", "approved", "rejected"):
        qs = qs.filter(review=state)
    if participant_ids is not None:
        qs = qs.filter(participant_id__in=list(participant_ids))
    rows = [
        (pk, {f.code for f in flags_of(raw)}, submitted_at, seconds)
        for pk, raw, submitted_at, seconds in qs.values_list("pk", "flags", "submitted_at", "work_seconds")
    ]
    if flag == ANY_FLAG:
        rows = [r for r in rows if r[1]]
    elif flag == NO_FLAG:
        rows = [r for r in rows if not r[1]]
    elif flag:
        rows = [r for r in rows if flag in r[1]]
    # Newest first is the tie-break of every order (timestamps as floats, so None sorts last).
    rows.sort(key=lambda r: -(r[2].timestamp() if r[2] else 0))
    if sort == "flags":
        rows.sort(key=lambda r: -len(r[1]))
    elif sort == "fastest":
        rows.sort(key=lambda r: r[3] if r[3] is not None else float("inf"))
    return [r[0] for r in rows]


def matching_participants(*, study: Study, typed_id: str) -> list[Participant]:
    """The study's participants whose platform id is ``typed_id`` (a Prolific PID, an MTurk
    worker id or a participant code), found by hashing it the way entry and import do.

    The typed id itself is neither stored nor logged: only its keyed hashes are compared.
    """
    typed = typed_id.strip()
    if not typed:
        return []
    hashes = {platform: pseudonymise(platform, typed) for platform in Participant.Platform.values}
    return [
        p
        for p in Participant.objects.filter(study=study, external_hash__in=hashes.values())
        if hashes.get(p.platform) == p.external_hash
    ]


def review_entries(*, study: Study, assignment_ids: list[int]) -> list[ReviewEntry]:
    """The assignments with every answer laid out as it was shown and their review history, in the
    order of ``assignment_ids`` (5 queries whatever the number of assignments and tasks)."""
    submissions = Submission.objects.select_related(
        "task__instruction",
        "task__pair__response_a__candidate",
        "task__pair__response_b__candidate",
    ).order_by("task__position")
    by_id = (
        Assignment.objects.filter(batch__study=study, pk__in=assignment_ids)
        .select_related("participant", "batch")
        .prefetch_related(Prefetch("submissions", queryset=submissions), "decisions")
        .in_bulk()
    )
    assignments = [by_id[pk] for pk in assignment_ids if pk in by_id]
    ranked_ids = {
        int(pk)
        for a in assignments
        for s in a.submissions.all()
        if s.task.kind == Task.Kind.RANKING
        for pk in (s.display_order or s.ranking or [])
    }
    ranked = Response.objects.select_related("candidate").in_bulk(ranked_ids)
    return [
        ReviewEntry(
            assignment=a, flags=flags_of(a.flags), tasks=[_reviewed_task(study, s, ranked) for s in a.submissions.all()]
        )
        for a in assignments
    ]


def _reviewed_task(study: Study, s: Submission, ranked: dict[int, Response]) -> ReviewedTask:
    task = s.task
    if task.kind == Task.Kind.RANKING:
        note, answers = check_texts(task, "", "")[0], _ranking_answers(s, ranked)
    else:
        note, answers = _pair_answers(study, s)
    return ReviewedTask(
        position=task.position,
        kind=task.kind,
        condition=task.condition,
        role=task.role,
        role_label=Task.Role(task.role).label if task.role in Task.Role.values else task.role,
        instruction=task.instruction.text,
        reference=task.instruction.reference,
        note=note,
        answers=answers,
        choice=CHOICE_SHOWN.get(s.choice, s.choice),
        seconds=s.time_on_task_ms / 1000 if s.time_on_task_ms is not None else None,
        rationale=s.rationale,
        untouched=s.untouched,
    )


def _pair_answers(study: Study, s: Submission) -> tuple[str, list[ShownAnswer]]:
    """(the line the worker read beside the pair, the two answers) as on the worker page:
    annotations.shown, so the cue's citation, padding or sentence is shown again here."""
    task = s.task
    responses = task.slot_responses()
    pair = shown_pair(study, task, responses[0].text, responses[1].text)
    answers = [
        ShownAnswer(label=f"System {slot}", text=text, candidate=response.candidate.key, chosen=s.choice == slot)
        for slot, response, text in zip("AB", responses, (pair.text_a, pair.text_b), strict=True)
    ]
    return pair.note or pair.banner, answers


def _ranking_answers(s: Submission, ranked: dict[int, Response]) -> list[ShownAnswer]:
    """Best first; each answer keeps the letter it had on the worker's screen."""
    letter_of = {int(pk): answer_letter(i) for i, pk in enumerate(s.display_order or [])}
    out = []
    for place, pk in enumerate(s.ranking or []):
        response = ranked.get(int(pk))
        out.append(
            ShownAnswer(
                label=f"Answer {letter_of.get(int(pk), '?')}",
                text=response.text if response else "(answer deleted)",
                candidate=response.candidate.key if response else "",
                above_bar=None if s.bar_position is None else place < s.bar_position,
            )
        )
    return out


@dataclass(frozen=True)
class BulkOutcome:
    """What a bulk decision did: how many pending submissions it decided, and how many of the
    selection it left alone because they were already decided."""

    decided: int
    left_alone: int


@transaction.atomic
def review_assignments(
    *,
    study: Study,
    assignment_ids: list[int],
    decision: str,
    reason: str = "",
    note: str = "",
    reviewer: Any = None,
) -> BulkOutcome:
    """Approve or reject the pending submissions among those selected; all or nothing.

    Already decided work is left alone and counted: a bulk action never overturns a decision
    (changing one takes a reason, one submission at a time). Raises ValidationError (nothing
    changed) when no work is selected, an id is not this study's submitted work, or a rejection
    has no reason.
    """
    ids = sorted(set(assignment_ids))
    if not ids:
        raise ValidationError("Select at least one submission.")
    check_decision(decision=decision, reason=reason, note=note)
    found = list(
        Assignment.objects.select_for_update()
        .filter(batch__study=study, pk__in=ids, status=Assignment.Status.SUBMITTED)
        .order_by("pk")
    )
    if len(found) != len(ids):
        raise ValidationError("Some selected work is not this study's submitted work; nothing was changed.")
    pending = [a for a in found if a.review == Assignment.Review.PENDING]
    for assignment in pending:
        review_assignment(assignment=assignment, decision=decision, reason=reason, note=note, reviewer=reviewer)
    return BulkOutcome(decided=len(pending), left_alone=len(found) - len(pending))
