"""Write checked judge outputs into a study: one completed, imported job per judge.

Inside the generic import's transaction. A re-import replaces the study's earlier imported jobs
(their judgments go with them), as the human batches are replaced: the files are the truth.
Imported judges are ``RegisteredModel(kind="imported")`` rows: they are never called, and a name taken by a
model registered on the platform, or by another researcher's imported judge, is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from django.utils import timezone

from annotations.importers.base import BadInput
from annotations.models import Pair, Study
from annotations.vocabulary import JudgeSlot
from judging.judge_outputs.rows import JudgeOutputs, JudgeRow, JudgmentRow
from judging.models import JudgeJob, Judgment, RegisteredModel
from judging.vocabulary import Parser


def imported_jobs(study: Study):  # a JudgeJob queryset
    """The jobs an import made: imported verdicts of an imported judge."""
    return JudgeJob.objects.filter(study=study, parser=Parser.IMPORTED, judge__kind=RegisteredModel.Kind.IMPORTED)


def write(
    outputs: JudgeOutputs | None, study: Study, *, response_ids: dict[tuple[str, str], int], created_by: Any
) -> None:
    imported_jobs(study).delete()  # cascades to their judgments
    if outputs is None:
        return
    judges = _judges(outputs.judges, created_by)
    pairs = {
        frozenset((a, b)): pk
        for pk, a, b in Pair.objects.filter(instruction__study=study).values_list(
            "pk", "response_a_id", "response_b_id"
        )
    }
    now = timezone.now()
    by_judge: dict[str, list[JudgmentRow]] = {}
    for row in outputs.judgments:
        by_judge.setdefault(row.judge, []).append(row)
    for spec in outputs.judges:
        rows = by_judge.get(spec.name, [])
        job = JudgeJob.objects.create(
            study=study,
            judge=judges[spec.name],
            conditions=sorted({r.condition for r in rows}),
            parser=Parser.IMPORTED,
            verdict_format=spec.verdict_format,
            verdict_spec=spec.verdict_spec,
            self_candidate_key=spec.self_model,
            status=JudgeJob.Status.COMPLETED,
            total=len(rows),
            done=len(rows),
            invalid=sum(not r.verdict.valid for r in rows),
            ties=sum(r.verdict.is_tie for r in rows),
            tokens_in=sum(r.tokens_in for r in rows),
            tokens_out=sum(r.tokens_out for r in rows),
            cost_usd=sum((r.cost for r in rows), Decimal("0")),
            created_by=created_by if getattr(created_by, "pk", None) else None,
            started_at=now,
            finished_at=now,
            heartbeat_at=now,
        )
        Judgment.objects.bulk_create(_judgments(job, rows, response_ids, pairs, now))


def _judges(specs: list[JudgeRow], created_by: Any) -> dict[str, RegisteredModel]:
    owner = created_by if getattr(created_by, "pk", None) else None
    existing = {j.name: j for j in RegisteredModel.objects.filter(name__in=[s.name for s in specs])}
    out = {}
    for spec in specs:
        judge = existing.get(spec.name)
        if judge is not None and (judge.kind != RegisteredModel.Kind.IMPORTED or not _may_reuse(judge, owner)):
            raise BadInput(
                f"judges.jsonl judge {spec.name}",
                f"{RegisteredModel.NAME_NOT_AVAILABLE} (imported judges need a name no registered model or other researcher uses)",
            )
        if judge is None:
            judge = RegisteredModel.objects.create(
                name=spec.name, kind=RegisteredModel.Kind.IMPORTED, owner=owner, use_as_generator=False
            )
        judge.model, judge.verdict_format, judge.verdict_spec = spec.model, spec.verdict_format, spec.verdict_spec
        judge.save(update_fields=["model", "verdict_format", "verdict_spec"])
        out[spec.name] = judge
    return out


def _may_reuse(judge: RegisteredModel, owner: Any) -> bool:
    """An imported judge is reused by name by its owner (an unowned one by the command line, or
    by a superuser): another researcher's name is theirs."""
    if judge.owner_id is None:
        return owner is None or owner.is_superuser
    return owner is not None and (owner.pk == judge.owner_id or owner.is_superuser)


def _judgments(
    job: JudgeJob,
    rows: Iterable[JudgmentRow],
    response_ids: dict[tuple[str, str], int],
    pairs: dict[frozenset[int], int],
    now,
) -> Iterable[Judgment]:
    for row in rows:
        first = response_ids[(row.instruction_id, row.first_model)]
        second = response_ids[(row.instruction_id, row.second_model)]
        choice = row.verdict.choice
        yield Judgment(
            job=job,
            pair_id=pairs[frozenset((first, second))],
            condition=row.condition,
            presentation=row.presentation,
            slot1_response_id=first,
            cue={"cue_slot": row.cue_slot} if row.cue_slot else {},
            choice=choice or "",
            chosen_response_id=(first if choice == JudgeSlot.FIRST else second) if choice else None,
            valid=choice is not None,
            verdict=row.verdict.slot or "",
            strength=row.verdict.strength or "",
            raw_text=row.output if row.output is not None else "",
            imported_prompt=row.prompt,
            prompt_hash=hashlib.sha256(row.prompt.encode()).hexdigest() if row.prompt else "",
            tokens_in=row.tokens_in,
            tokens_out=row.tokens_out,
            cost_usd=row.cost,
            latency_ms=row.latency_ms,
            status=Judgment.Status.DONE,
            completed_at=now,
        )
