"""``import_mtbench``: MT-Bench human judgments (JSONL or Parquet), all or nothing.

Human rows become crowd submissions through ``annotations.importers.mtbench``; the
``gpt4_pair`` rows are single verdicts and become real Judgments of an imported judge
named ``gpt-4`` in one completed JudgeJob. One transaction around both.
"""

from __future__ import annotations

from pathlib import Path

from django.db import transaction
from django.utils import timezone

from annotations.importers.base import ImportReport, RowCounter, content_counters, record_source_files, upsert
from annotations.importers.mtbench import (
    MtContent,
    MtRow,
    import_mtbench_content,
    import_mtbench_votes,
    read_mtbench,
)
from annotations.models import Condition
from cobbler_site.wiring.imported_judges import imported_judges
from judging.models import JudgeJob, Judgment
from judging.vocabulary import Parser

MTBENCH_JUDGE = "gpt-4"


def _import_gpt4_verdicts(*, content: MtContent, rows: list[MtRow]) -> None:
    machine = [row for row in rows if row.is_machine]
    if not machine:
        return
    judge_id = imported_judges([MTBENCH_JUDGE], self_keys=set())[MTBENCH_JUDGE]
    job = JudgeJob.objects.filter(study=content.study, judge_id=judge_id, parser=Parser.IMPORTED).first()
    if job is None:
        job = JudgeJob.objects.create(
            study=content.study,
            judge_id=judge_id,
            parser=Parser.IMPORTED,
            conditions=[Condition.PLAIN],
            status=JudgeJob.Status.COMPLETED,
        )
    now = timezone.now()
    judgments: dict[int, Judgment] = {}
    duplicates = 0
    for row in machine:
        pair_id, _a_first = content.pair_of(row)
        if pair_id in judgments:  # the same key again (either order): the first verdict wins
            duplicates += 1
            continue
        ids = {m: content.response_ids[(row.question_id, row.turn, m)] for m in (row.model_a, row.model_b)}
        decisive = row.winner in ("model_a", "model_b")
        judgments[pair_id] = Judgment(
            job=job,
            pair_id=pair_id,
            condition=Condition.PLAIN,
            presentation=1,
            slot1_response_id=ids[row.model_a],
            raw_text=row.winner,  # tells "tie" from "tie (inconsistent)"
            choice={"model_a": "first", "model_b": "second"}.get(row.winner, ""),
            chosen_response_id=ids[getattr(row, row.winner)] if decisive else None,
            valid=decisive,
            status=Judgment.Status.DONE,
            completed_at=now,
        )
    if duplicates:
        content.notes.append(f"skipped {duplicates} repeated {MTBENCH_JUDGE} verdict row(s) for an already seen pair")
    upsert(Judgment, judgments.values(), unique_fields=("job", "pair", "condition", "presentation"))
    stored = job.judgments.all()
    JudgeJob.objects.filter(pk=job.pk).update(
        status=JudgeJob.Status.COMPLETED,
        total=stored.count(),
        done=stored.count(),
        invalid=stored.filter(valid=False).count(),
        finished_at=job.finished_at or now,
    )


def import_mtbench(*, paths: list[Path], slug: str) -> ImportReport:
    """Import MT-Bench human-judgment files (JSONL or Parquet) into study ``slug``, all or nothing.

    Human rows become crowd submissions, ``gpt4_pair`` rows Judgments of judge ``gpt-4``.
    Re-runnable; a repeated vote keeps the first stored one (see annotations.importers.mtbench).
    Raises BadInput naming file and line.
    """
    rows = read_mtbench(paths)
    counter = RowCounter(
        {
            **content_counters(slug),
            "judge jobs": JudgeJob.objects.filter(study__slug=slug),
            "judgments": Judgment.objects.filter(job__study__slug=slug),
        }
    )
    with transaction.atomic():
        content = import_mtbench_content(rows=rows, slug=slug)
        import_mtbench_votes(content=content, rows=rows)
        _import_gpt4_verdicts(content=content, rows=rows)
        record_source_files(study=content.study, root=None, paths=[p.resolve() for p in paths])
    report = counter.report()
    report.notes.extend(content.notes)
    return report
