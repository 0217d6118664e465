"""What a report read, as a short hash: the page warns when the study's data has moved on since.

A handful of aggregate queries (no row is loaded): counts, highest ids and latest times of
what every section reads. Any new answer, review, finished judgment or job state change,
and any new response or pair, changes the version. ``data_counts`` keeps the counts
behind it, so the page can say *what* is new, not just that something is.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date

from django.db.models import Count, Max, Q, Sum

from annotations.models import Assignment, Pair, Response, Study, Submission
from judging.models import AggregateJudgment, JudgeJob, Judgment

REVIEWED = ~Q(review=Assignment.Review.PENDING)


def data_counts(study: Study) -> dict[str, object]:
    """The aggregates the version hashes; JSON-ready (times as ISO text)."""
    answers = Submission.objects.filter(assignment__batch__study=study).aggregate(n=Count("id"), last=Max("id"))
    work = Assignment.objects.filter(batch__study=study).aggregate(
        submitted=Count("id", filter=Q(status=Assignment.Status.SUBMITTED)),
        reviewed=Count("id", filter=Q(status=Assignment.Status.SUBMITTED) & REVIEWED),
        # Which assignments are approved, not just how many: approving one and rejecting
        # another leaves every count the same, but not the sum of ids.
        approved_ids=Sum("id", filter=Q(review=Assignment.Review.APPROVED)),
        rejected_ids=Sum("id", filter=Q(review=Assignment.Review.REJECTED)),
        last_review=Max("reviewed_at"),
        last_submit=Max("submitted_at"),
        # Quality flags recomputed (manage.py flag_work after a rule change) move what the
        # default-unflagged profile counts.
        last_flags=Max("flags_computed_at"),
    )
    calls = Judgment.objects.filter(job__study=study, status=Judgment.Status.DONE).aggregate(
        n=Count("id"), last=Max("id"), last_done=Max("completed_at")
    )
    # A job completing (or being cancelled) changes which calls count (docs/methods.md "Re-runs").
    jobs = sorted(JudgeJob.objects.filter(study=study).values_list("id", "status"))
    content = {
        "responses": Response.objects.filter(instruction__study=study).aggregate(n=Count("id"), last=Max("id")),
        "pairs": Pair.objects.filter(instruction__study=study).aggregate(n=Count("id"), last=Max("id")),
        "aggregates": AggregateJudgment.objects.filter(study=study).count(),
        "gold": _gold(study),
    }
    return {
        "answers": answers["n"],
        "last_answer": answers["last"],
        "submitted_assignments": work["submitted"],
        "reviewed_assignments": work["reviewed"],
        # PostgreSQL sums bigints as numeric (a Decimal); JSON wants an int.
        "approved_ids": int(work["approved_ids"] or 0),
        "rejected_ids": int(work["rejected_ids"] or 0),
        "last_review": _iso(work["last_review"]),
        "last_submit": _iso(work["last_submit"]),
        "last_flags": _iso(work["last_flags"]),
        "judgments": calls["n"],
        "last_judgment": calls["last"],
        "last_judgment_done": _iso(calls["last_done"]),
        "jobs": [list(j) for j in jobs],
        "content": content,
    }


def _gold(study: Study) -> list[int]:
    """Which pairs are gold and which answer is: marking a pair or flipping its answer moves
    gold_accuracy (and the crowd's gold checks) without any new answer or call."""
    gold = Pair.objects.filter(instruction__study=study, gold_response__isnull=False).aggregate(
        n=Count("id"), pairs=Sum("id"), answers=Sum("gold_response_id")
    )
    # PostgreSQL sums bigints as numeric (a Decimal); JSON wants an int.
    return [int(gold["n"]), int(gold["pairs"] or 0), int(gold["answers"] or 0)]


def version_of(counts: dict[str, object]) -> str:
    text = json.dumps(counts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def data_version(study: Study) -> str:
    """A 16-hex-digit hash of ``data_counts(study)``."""
    return version_of(data_counts(study))


def changes_since(old: dict | None, new: dict) -> dict[str, int]:
    """How many answers, reviews, judgments and judge-job states are new in ``new`` compared with ``old``.

    Counts can also fall (work deleted, a job re-run): the absolute difference is what moved.
    A review that turns approved work into rejected work changes no count; it is counted
    once when nothing else explains the change of approved assignments.
    """
    old = old or {}

    def moved(key: str, last: str | None = None) -> int:
        count = abs(int(new.get(key) or 0) - int(old.get(key) or 0))
        # A replaced row (one deleted, one added) moves no count but does move the highest id.
        return count or int(last is not None and new.get(last) != old.get(last))

    reviews = moved("reviewed_assignments")
    if not reviews and (
        old.get("approved_ids") != new.get("approved_ids") or old.get("rejected_ids") != new.get("rejected_ids")
    ):
        reviews = 1
    jobs = {tuple(j) for j in new.get("jobs") or []} - {tuple(j) for j in old.get("jobs") or []}
    return {
        "answers": moved("answers", "last_answer"),
        "reviews": reviews,
        "judgments": moved("judgments", "last_judgment"),
        "jobs": len(jobs),
    }


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None
