"""The review history of a study as rows for export: one row per decision, oldest first, with
who decided, when, from which state to which, and why (annotations.models.ReviewDecision)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from annotations.models import ReviewDecision, Study
from cobbler_site.foundation.csv_safety import safe_cell

HISTORY_FIELDS = (
    "study",
    "assignment",
    "participant",
    "platform",
    "condition",
    "batch",
    "sequence",
    "decided_at",
    "reviewer",
    "from_review",
    "to_review",
    "reject_reason",
    "note",
    "change_reason",
)


def history_rows(*, study: Study) -> Iterator[dict]:
    """Every decision on the study's work, with pseudonymous participant labels only."""
    qs = (
        ReviewDecision.objects.filter(assignment__batch__study=study)
        .select_related("assignment__batch", "assignment__participant")
        .order_by("decided_at", "assignment_id", "sequence")
    )
    for d in qs.iterator(chunk_size=2000):
        assignment = d.assignment
        yield {
            "study": study.slug,
            "assignment": assignment.pk,
            "participant": assignment.participant.label,
            "platform": assignment.participant.platform,
            "condition": assignment.batch.condition,
            "batch": assignment.batch.index,
            "sequence": d.sequence,
            "decided_at": d.decided_at.isoformat(),
            "reviewer": d.reviewer_name,
            "from_review": d.from_review,
            "to_review": d.to_review,
            "reject_reason": d.reject_reason,
            "note": d.note,
            "change_reason": d.change_reason,
        }


def history_csv(*, study: Study) -> str:
    """The same rows as CSV. Notes and reasons are typed by people, so a cell a spreadsheet
    would run as a formula gets a leading "'" (cobbler_site.foundation.csv_safety)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=HISTORY_FIELDS)
    writer.writeheader()
    for row in history_rows(study=study):
        writer.writerow({k: safe_cell(v) for k, v in row.items()})
    return out.getvalue()
