"""What the study hub counts: its content and the review state of its submitted work.

The hub's view lays these out beside the batch progress (``batch_progress``) and capacity
(``study_capacity``); it runs no query of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from annotations.models import Assignment, Pair, Response, Study
from annotations.services.review import flags_of


@dataclass(frozen=True)
class ContentCounts:
    instructions: int
    candidates: int
    responses: int
    pairs: int
    gold_pairs: int  # pairs whose better response is known


@dataclass(frozen=True)
class ReviewCounts:
    total: int  # submitted work, decided or not
    pending: int
    approved: int
    rejected: int
    flagged: int  # submitted work with at least one quality flag


def content_counts(*, study: Study) -> ContentCounts:
    pairs = Pair.objects.filter(instruction__study=study)
    return ContentCounts(
        instructions=study.instructions.count(),
        candidates=study.candidates.count(),
        responses=Response.objects.filter(instruction__study=study).count(),
        pairs=pairs.count(),
        gold_pairs=pairs.filter(gold_response__isnull=False).count(),
    )


def review_counts(*, study: Study) -> ReviewCounts:
    submitted = Assignment.objects.filter(batch__study=study, status=Assignment.Status.SUBMITTED)
    counts = submitted.aggregate(
        total=Count("pk"),
        pending=Count("pk", filter=Q(review=Assignment.Review.PENDING)),
        approved=Count("pk", filter=Q(review=Assignment.Review.APPROVED)),
        rejected=Count("pk", filter=Q(review=Assignment.Review.REJECTED)),
    )
    flagged = sum(1 for raw in submitted.values_list("flags", flat=True) if flags_of(raw))
    return ReviewCounts(**counts, flagged=flagged)
