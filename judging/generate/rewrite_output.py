"""What a completed rewrite job leaves in its study: each usable answer becomes the
``ResponseRewrite`` of the response it rewrites (``finish_rewrite_job``), and what makes an
answer usable (``read_rewrite``).

Below the runner, like ``judging.generate.finish``, which hands a rewrite job over to this module.
"""

from __future__ import annotations

import logging
import re
from typing import NamedTuple

from django.db import transaction
from django.db.models import F

from annotations.models import ResponseRewrite
from judging.generate.provenance import provenance
from judging.models import Generation, GenerationJob

logger = logging.getLogger(__name__)

_TAGGED = re.compile(r"<rewrite>\s*(.*?)\s*(</rewrite>|\Z)", re.DOTALL | re.IGNORECASE)
# "Sure! Here is the answer in a more confident tone:" - a short first line ending in a colon.
_PREFACE = re.compile(r"\A[^\n]{0,160}:[ \t]*\n+")
# A rewrite of a very different length is a different answer (a refusal, a summary, an essay),
# not the same content in another tone. The slack lets a one-line answer gain a cheerful sentence.
MIN_LENGTH_RATIO, MAX_LENGTH_RATIO, LENGTH_SLACK = 0.5, 2.5, 200


class ReadRewrite(NamedTuple):
    text: str  # the rewrite, or "" when there is none
    problem: str  # why there is none ("" when there is)


def read_rewrite(raw: str, original: str) -> ReadRewrite:
    """The rewrite in a model's answer: the text between ``<rewrite>`` tags, else the answer
    without a preface line. None usable (``problem`` says why) when it is empty, cut off
    inside its tags, the original unchanged, or much shorter or longer than the original
    (``MIN_LENGTH_RATIO`` x its length, up to ``MAX_LENGTH_RATIO`` x plus ``LENGTH_SLACK`` characters)."""
    m = _TAGGED.search(raw)
    if m:
        if not m.group(2):
            return ReadRewrite("", "the answer stops before </rewrite> (raise max_tokens)")
        text = m.group(1).strip()
    else:
        text = _PREFACE.sub("", raw.strip(), count=1).strip()
    if not text:
        return ReadRewrite("", "the answer holds no rewrite")
    if " ".join(text.split()) == " ".join(original.split()):
        return ReadRewrite("", "the rewrite is the original unchanged")
    if not MIN_LENGTH_RATIO * len(original) <= len(text) <= MAX_LENGTH_RATIO * len(original) + LENGTH_SLACK:
        return ReadRewrite(
            "",
            f"the rewrite has {len(text):,} characters against the original's {len(original):,} (allowed "
            f"{MIN_LENGTH_RATIO}x to {MAX_LENGTH_RATIO}x + {LENGTH_SLACK}): a refusal, a summary or new content, "
            "not the same answer in another tone",
        )
    return ReadRewrite(text, "")


def finish_rewrite_job(job: GenerationJob) -> GenerationJob:
    """Turn the job's stored answers into ResponseRewrites; idempotent and transactional.

    Only DONE rows not yet read are read (no rewrite linked, no problem noted), so a second call,
    or one after a resume, adds only what is new. A response that got a rewrite of this kind
    meanwhile (another job) keeps it: judgments may already have shown it.
    """
    with transaction.atomic():
        job = GenerationJob.objects.select_for_update().select_related("generator").get(pk=job.pk)
        fresh = list(
            job.generations.filter(status=Generation.Status.DONE, rewrite__isnull=True, error="")
            .select_related("source")
            .order_by("pk")
        )
        made = rejected = 0
        for row in fresh:
            source = row.source
            if source is None:  # the response was deleted since
                continue
            read = read_rewrite(row.raw_text, source.text)
            if read.problem:
                Generation.objects.filter(pk=row.pk).update(error=read.problem)
                rejected += 1
                continue
            rewrite, created = ResponseRewrite.objects.get_or_create(
                response=source,
                kind=job.rewrite_kind,
                defaults={"text": read.text, "provenance": provenance(job, row)},
            )
            Generation.objects.filter(pk=row.pk).update(rewrite=rewrite)
            made += int(created)
        if made or rejected:
            GenerationJob.objects.filter(pk=job.pk).update(
                rewrites_created=F("rewrites_created") + made, rewrites_rejected=F("rewrites_rejected") + rejected
            )
    job.refresh_from_db()
    logger.info("rewrite job %s: %d rewrites, %d answers unusable", job.pk, made, rejected)
    return job


def is_read(job: GenerationJob) -> bool:
    """Completed and every stored answer read (a rewrite made or its problem noted)."""
    return (
        job.status == GenerationJob.Status.COMPLETED
        and not job.generations.filter(status=Generation.Status.DONE, rewrite__isnull=True, error="").exists()
    )
