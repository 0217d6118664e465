"""What the rewrites page of a study shows and downloads: its ``ResponseRewrite`` rows, and the
answers of its rewrite jobs that were no usable rewrite (``read_rewrite``'s problem).

Rewrites belong to the study, so whoever manages the study sees them all; the unusable answers
are rows of jobs, so only those of the jobs the user manages (as the job pages are).
"""

from __future__ import annotations

import csv
import io
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from annotations.models import ResponseRewrite, Study
from cobbler_site.foundation.csv_safety import safe_cell
from judging.models import Generation, GenerationJob

CSV_FIELDS = (
    "instruction_index",
    "candidate_key",
    "response_id",
    "kind",
    "prompt_version",
    "model",
    "job",
    "original",
    "rewrite",
)


def study_rewrites(study: Study) -> QuerySet[ResponseRewrite]:
    """Every rewrite of the study's answers, in instruction and candidate order."""
    return (
        ResponseRewrite.objects.filter(response__instruction__study=study)
        .select_related("response__instruction", "response__candidate")
        .order_by("response__instruction__index", "response__candidate__position", "response__candidate__key", "kind")
    )


def rewrite_jobs(study: Study, user: Any) -> QuerySet[GenerationJob]:
    return GenerationJob.objects.manageable_by(user).filter(study=study).exclude(rewrite_kind="")


def unusable_answers(study: Study, user: Any) -> QuerySet[Generation]:
    """The stored answers of the study's rewrite jobs that were read and found no rewrite, each
    with ``rewritten_since`` (a later job rewrote the same answer). Failed calls are not here:
    they made no answer, and the job page lists them with Resume."""
    rewritten = ResponseRewrite.objects.filter(response=OuterRef("source"), kind=OuterRef("job__rewrite_kind"))
    return (
        Generation.objects.filter(job__in=rewrite_jobs(study, user), source__isnull=False)
        .filter(status=Generation.Status.DONE)
        .exclude(error="")
        .select_related("job", "source__instruction", "source__candidate")
        .annotate(rewritten_since=Exists(rewritten))
        .order_by("source__instruction__index", "source__candidate__position", "source__candidate__key", "pk")
    )


def csv_row(rewrite: ResponseRewrite) -> dict[str, object]:
    response, made = rewrite.response, rewrite.provenance or {}
    return {
        "instruction_index": response.instruction.index,
        "candidate_key": response.candidate.key,
        "response_id": response.pk,
        "kind": rewrite.kind,
        "prompt_version": made.get("prompt_version", ""),
        "model": made.get("model", ""),
        "job": made.get("job", ""),
        "original": response.text,
        "rewrite": rewrite.text,
    }


def rewrites_csv(study: Study) -> str:
    """The study's rewrites as CSV. The texts are a model's (and the original answers are
    imported), so a cell a spreadsheet would run as a formula gets a leading "'"
    (cobbler_site.foundation.csv_safety)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS)
    writer.writeheader()
    for rewrite in study_rewrites(study).iterator(chunk_size=500):
        writer.writerow({k: safe_cell(v) for k, v in csv_row(rewrite).items()})
    return out.getvalue()
