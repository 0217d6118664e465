"""Importers for machine judgments, and the two whole-file import workflows.

The human side and the study content live in ``annotations.importers`` (that app
must not import this one); this module adds what judges produced and wraps each
import in one transaction, so bad input leaves the database unchanged.

- CoBBLEr published no per-pair judge logs, only per-instruction win counts; they
  become ``AggregateJudgment`` rows of ``Judge(kind="imported")``, never Judgments.
- MT-Bench's ``gpt4_pair`` rows are single verdicts and become real Judgments of an
  imported judge named ``gpt-4`` in one completed JudgeJob.
"""

from __future__ import annotations

import re
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from annotations.importers.base import (
    BadInput,
    ImportReport,
    RowCounter,
    content_counters,
    read_json,
    record_source_files,
    rel,
    sync_rows,
    upsert,
)
from annotations.importers.cobbler_bias import import_bias_studies
from annotations.importers.cobbler_content import CobblerContent, import_cobbler_content
from annotations.importers.cobbler_ranking import import_ranking_study
from annotations.importers.mtbench import (
    MtContent,
    MtRow,
    import_mtbench_content,
    import_mtbench_votes,
    read_mtbench,
)
from annotations.models import (
    Assignment,
    Condition,
    Submission,
)
from judging.models import AggregateJudgment, Judge, JudgeJob, Judgment

MODEL_ANNOTATIONS = Path("human/batches/model_annotations")
MODEL_BIAS = Path("human/batches/model_bias")
PREFIX = "nC2_preferences_"
MTBENCH_JUDGE = "gpt-4"
SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")


def _imported_judges(names: list[str], *, self_keys: set[str]) -> dict[str, int]:
    """Get or create ``Judge(kind="imported")`` rows; a same-named live judge is an error."""
    clash = Judge.objects.filter(name__in=names).exclude(kind=Judge.Kind.IMPORTED).first()
    if clash is not None:
        raise BadInput(f"judge {clash.name}", f"a '{clash.kind}' judge has this name; imported results need their own")
    upsert(
        Judge,
        (
            Judge(name=name, kind=Judge.Kind.IMPORTED, self_candidate_key=name if name in self_keys else "")
            for name in names
        ),
        unique_fields=("name",),
    )
    return dict(Judge.objects.filter(name__in=names).values_list("name", "pk"))


def _aggregate_sources(root: Path) -> list[tuple[str, str, Path]]:
    """(collection, run, file) for every stored ranking file, in a stable order."""
    sources = [("v1", "order", p) for p in sorted((root / MODEL_ANNOTATIONS).glob(f"{PREFIX}*.json"))]
    sources += [("acl", "order", p) for p in sorted((root / MODEL_ANNOTATIONS / "new").glob(f"{PREFIX}*.json"))]
    for folder in sorted(p for p in (root / MODEL_BIAS).glob("*") if p.is_dir()):
        sources += [("bias", folder.name, p) for p in sorted(folder.glob(f"{PREFIX}*.json"))]
    if not sources:
        raise BadInput(str(MODEL_ANNOTATIONS), f"no {PREFIX}<model>.json files found")
    for _collection, run, path in sources:
        name = path.stem.removeprefix(PREFIX)
        # Both become database keys (run: 16 characters, judge name: a 64-character slug).
        if not (len(run) <= 16 and SLUG.fullmatch(name)):
            raise BadInput(rel(path, root), "the run folder or evaluator name is too long or not a slug")
    return sources


def import_cobbler_aggregates(*, content: CobblerContent) -> None:
    """Upsert every evaluator's stored win counts (sections 2.8-2.9) as AggregateJudgment rows."""
    study, root = content.study, content.root
    sources = _aggregate_sources(root)
    names = sorted({path.stem.removeprefix(PREFIX) for _c, _r, path in sources})
    judge_ids = _imported_judges(names, self_keys=set(content.candidate_ids))
    rows = []
    for collection, run, path in sources:
        shown = content.where(path)
        data = read_json(path, root)
        if not isinstance(data, list) or not 0 < len(data) <= len(content.instruction_ids):
            raise BadInput(shown, f"expected a JSON array of 1..{len(content.instruction_ids)} dicts")
        judge_id = judge_ids[path.stem.removeprefix(PREFIX)]
        for index, wins in enumerate(data):
            if not isinstance(wins, dict):
                raise BadInput(f"{shown}: element {index}", "expected {candidate_key: wins}")
            for key, value in wins.items():
                if key not in content.candidate_ids:
                    raise BadInput(f"{shown}: element {index}", f"unknown candidate {key!r}")
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise BadInput(f"{shown}: element {index}", f"wins of {key} must be a count, not {value!r}")
                rows.append(
                    (
                        judge_id,
                        run,
                        collection,
                        content.instruction_ids[index],
                        content.candidate_ids[key],
                        value,
                        shown,
                    )
                )
    # ~78,000 rows: write only new or changed cells, so a re-import is one SELECT.
    sync_rows(
        AggregateJudgment.objects.filter(study=study),
        rows,
        key_fields=("judge_id", "run", "collection", "instruction_id", "candidate_id"),
        value_fields=("wins", "source_file"),
        constants={"study_id": study.pk},
    )


def import_cobbler(*, root: Path, slug: str) -> ImportReport:
    """Import the CoBBLEr data layout into study ``slug``, all or nothing.

    Re-runnable: a second run adds no rows. Raises BadInput (a CommandError with a
    one-line message naming the file and element/row) and rolls everything back.
    """
    if not root.is_dir():
        raise BadInput(str(root), "not a directory")
    counter = RowCounter(
        {
            **content_counters(slug),
            "judges": Judge.objects.filter(aggregates__study__slug=slug).distinct(),
            "aggregate judgments": AggregateJudgment.objects.filter(study__slug=slug),
        }
    )
    with transaction.atomic():
        content = import_cobbler_content(root=root, slug=slug)
        import_ranking_study(content=content)
        import_bias_studies(content=content)
        import_cobbler_aggregates(content=content)
        # The whole layout minus old_batch/ (an earlier design the importer skips).
        record_source_files(
            study=content.study,
            root=root,
            paths=[p for p in root.rglob("*") if p.is_file() and "old_batch" not in p.parts],
        )
    report = counter.report()
    for condition in (Condition.RANKING, Condition.ORDER, Condition.BANDWAGON, Condition.ATTENTIONAL):
        subs = Submission.objects.filter(assignment__batch__study__slug=slug, task__condition=condition)
        approved = subs.filter(assignment__review=Assignment.Review.APPROVED).count()
        report.details.append(f"submissions ({condition}): {approved} approved, {subs.count() - approved} rejected")
    return report


def _import_gpt4_verdicts(*, content: MtContent, rows: list[MtRow]) -> None:
    machine = [row for row in rows if row.is_machine]
    if not machine:
        return
    judge_id = _imported_judges([MTBENCH_JUDGE], self_keys=set())[MTBENCH_JUDGE]
    job = JudgeJob.objects.filter(study=content.study, judge_id=judge_id, parser="imported").first()
    if job is None:
        job = JudgeJob.objects.create(
            study=content.study,
            judge_id=judge_id,
            parser="imported",
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
