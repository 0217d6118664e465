"""Per-submission quality flags, computed when an assignment closes (docs/methods.md "Crowd quality").

A flag is a signal for the reviewer, never a verdict: it is stored on the assignment
(``Assignment.flags``) as ``{"code", "label", "value", "threshold"}``, shown in review, and a
report profile with ``flagged_work="exclude"`` leaves flagged work out.
"""

from __future__ import annotations

import logging
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from annotations.models import Assignment, Batch, Study, Submission, Task
from annotations.quality.rules import rules_for
from annotations.vocabulary import CrowdChoice

logger = logging.getLogger(__name__)

ATTENTION_ROLES = (Task.Role.INSTRUCTED, Task.Role.CATCH)

_FIELDS = (
    "task_id",
    "task__kind",
    "task__role",
    "task__expects",
    "task__pair_id",
    "task__arrangement",
    "task__condition",
    "task__cue",
    "choice",
    "chosen_response_id",
    "display_order",
    "ranking",
    "time_on_task_ms",
    "untouched",
)


@dataclass(frozen=True)
class Answered:
    """One submission with what the flags need of its task."""

    task: int
    kind: str
    role: str
    expects: dict
    pair: int | None
    arrangement: str
    condition: str
    cue: dict
    choice: str
    chosen: int | None
    display_order: list
    ranking: list | None
    ms: int | None
    untouched: bool

    @property
    def screen(self) -> tuple:
        """What makes two tasks the same screen for a majority: pair, slot order, condition, cued slot."""
        return (self.pair, self.arrangement, self.condition, (self.cue or {}).get("cue_slot"))


def _answers(assignment: Assignment) -> list[Answered]:
    rows = Submission.objects.filter(assignment=assignment).order_by("task__position").values_list(*_FIELDS)
    return [Answered(*row) for row in rows]


def _flag(code: str, label: str, value: object, threshold: object) -> dict:
    return {"code": code, "label": label, "value": value, "threshold": threshold}


def _too_fast(answers: list[Answered], rules: dict) -> dict | None:
    times = [a.ms for a in answers if a.ms is not None]
    if not times:
        return None
    median = statistics.median(times) / 1000
    limit = rules["min_median_seconds"]
    if median >= limit:
        return None
    return _flag("too_fast", f"Median {median:.1f} s per task, below {limit:g} s", round(median, 2), limit)


def _straight_line(answers: list[Answered], rules: dict) -> dict | None:
    least = rules["straight_line_min_tasks"]
    pairwise = [a for a in answers if a.kind == Task.Kind.PAIRWISE and a.choice]
    if len(pairwise) >= least:
        n = len(pairwise)
        same = Counter(a.choice for a in pairwise).most_common(1)[0]
        if same[1] == n:
            chosen = "no preference" if same[0] == CrowdChoice.TIE else same[0]
            return _flag("straight_line", f"Chose {chosen} in {n} of {n} pairs", f"{n} of {n}", least)
        first = sum(1 for a in pairwise if a.display_order and a.chosen == a.display_order[0])
        if first == n:
            return _flag("straight_line", f"Chose the first answer shown in {n} of {n} pairs", f"{n} of {n}", least)
    rankings = [a for a in answers if a.kind == Task.Kind.RANKING and a.ranking]
    if len(rankings) >= least and all(list(a.ranking or ()) == list(a.display_order) for a in rankings):
        n = len(rankings)
        return _flag("straight_line", f"Left {n} of {n} rankings in the order shown", f"{n} of {n}", least)
    return None


def _failed_checks(answers: list[Answered], roles: tuple[str, ...], most: float, code: str, what: str) -> dict | None:
    checked = [a for a in answers if a.role in roles and (a.expects or {}).get("slot")]
    failed = sum(1 for a in checked if a.choice != a.expects["slot"])
    if failed <= most:
        return None
    return _flag(code, f"Failed {failed} of {len(checked)} {what}", f"{failed} of {len(checked)}", most)


def _qualification(assignment: Assignment, rules: dict) -> dict | None:
    attempts = assignment.participant.qualification_attempts
    most = rules["qualification_attempts_max"]
    if attempts <= most:
        return None
    return _flag(
        "qualification_attempts", f"Needed {attempts} qualification attempts (more than {most})", attempts, most
    )


def _others_by_screen(assignment: Assignment, items: list[Answered]) -> dict[tuple, list[str]]:
    """Choices of the other counted raters (submitted, not rejected, another participant), one per rater and screen."""
    rows = (
        Submission.objects.filter(
            task__role=Task.Role.ITEM,
            task__kind=Task.Kind.PAIRWISE,
            task__pair_id__in={a.pair for a in items},
            assignment__status=Assignment.Status.SUBMITTED,
            assignment__batch__study_id=assignment.batch.study_id,
        )
        .exclude(assignment__review=Assignment.Review.REJECTED)
        .exclude(assignment__participant_id=assignment.participant_id)
        .exclude(choice="")
        .order_by("pk")
        .values_list(
            "assignment__participant_id",
            "task__pair_id",
            "task__arrangement",
            "task__condition",
            "task__cue",
            "choice",
        )
    )
    seen: set[tuple] = set()
    out: dict[tuple, list[str]] = defaultdict(list)
    for rater, pair, arrangement, condition, cue, choice in rows:
        screen = (pair, arrangement, condition, (cue or {}).get("cue_slot"))
        if (rater, screen) not in seen:  # a rater's first answer to a screen speaks for them
            seen.add((rater, screen))
            out[screen].append(choice)
    return out


def _majority(assignment: Assignment, answers: list[Answered], rules: dict) -> dict | None:
    items = [a for a in answers if a.role == Task.Role.ITEM and a.kind == Task.Kind.PAIRWISE and a.choice and a.pair]
    if not items:
        return None
    others = _others_by_screen(assignment, items)
    compared = differ = 0
    for answer in items:
        choices = others.get(answer.screen, [])
        if len(choices) + 1 < rules["min_raters_for_majority"]:
            continue
        top, count = Counter(choices).most_common(1)[0]
        if count * 2 <= len(choices):
            continue  # the others are split: there is no majority to disagree with
        compared += 1
        differ += answer.choice != top
    if compared < rules["majority_min_tasks"]:
        return None
    share = differ / compared
    most = rules["majority_disagreement_max"]
    if share <= most:
        return None
    return _flag(
        "majority_disagreement",
        f"Against the other raters' majority in {differ} of {compared} tasks ({share:.0%}, above {most:.0%})",
        round(share, 3),
        most,
    )


def _untouched(answers: list[Answered]) -> dict | None:
    rankings = [a for a in answers if a.kind == Task.Kind.RANKING]
    untouched = sum(1 for a in rankings if a.untouched)
    if not untouched:
        return None
    return _flag(
        "untouched_ranking",
        f"Submitted {untouched} of {len(rankings)} rankings untouched",
        f"{untouched} of {len(rankings)}",
        0,
    )


def compute_flags(assignment: Assignment) -> list[dict]:
    """The flags of an assignment's work under its study's rules (rules.rules_for), without saving them."""
    rules = rules_for(assignment.batch.study)
    answers = _answers(assignment)
    found = [
        _too_fast(answers, rules),
        _straight_line(answers, rules),
        _failed_checks(answers, ATTENTION_ROLES, rules["attention_fail_max"], "attention_failed", "attention checks"),
        _failed_checks(answers, (Task.Role.GOLD,), rules["gold_fail_max"], "gold_failed", "gold items"),
        _qualification(assignment, rules),
        _majority(assignment, answers, rules),
        _untouched(answers),
    ]
    return [flag for flag in found if flag is not None]


def flag_assignment(assignment: Assignment) -> list[dict]:
    """Compute and store the assignment's flags (and when); returns them."""
    flags = compute_flags(assignment)
    now = timezone.now()
    Assignment.objects.filter(pk=assignment.pk).update(flags=flags, flags_computed_at=now)
    assignment.flags, assignment.flags_computed_at = flags, now
    return flags


def reflag_batch(batch: Batch) -> int:
    """Recompute the flags of every submitted assignment of a batch (a new rater moves the majority).

    Returns how many were flagged (computed), not how many raised a flag.
    """
    assignments = Assignment.objects.filter(batch=batch, status=Assignment.Status.SUBMITTED).select_related(
        "participant", "batch__study"
    )
    count = 0
    for assignment in assignments:
        flag_assignment(assignment)
        count += 1
    return count


def reflag_study(study: Study) -> int:
    """Recompute the flags of every submitted assignment of a study (after its quality rules changed)."""
    return sum(reflag_batch(batch) for batch in Batch.objects.filter(study=study).order_by("pk"))


def flag_closed_assignment(assignment: Assignment) -> None:
    """Flag a just-closed assignment and its batch-mates. Never raises: flags must not fail a worker's submit.

    A savepoint keeps a failed query from breaking the caller's transaction.
    """
    try:
        with transaction.atomic():
            reflag_batch(assignment.batch)
    except Exception:
        logger.exception("quality flags failed for assignment %s", assignment.pk)
