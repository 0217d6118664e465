"""``import_cobbler``: the CoBBLEr repository's data layout, all or nothing.

The study content and the human ranking and bias studies come from
``annotations.importers``; this adds what the evaluators produced and wraps the whole
import in one transaction, so bad input leaves the database unchanged. CoBBLEr
published no per-pair judge logs, only per-instruction win counts: they become
``AggregateJudgment`` rows of ``RegisteredModel(kind="imported")``, never Judgments.
"""

from __future__ import annotations

import re
from pathlib import Path

from django.db import transaction

from annotations.importers.base import (
    BadInput,
    ImportReport,
    RowCounter,
    content_counters,
    read_json,
    record_source_files,
    rel,
    sync_rows,
)
from annotations.importers.cobbler_bias import import_bias_studies
from annotations.importers.cobbler_content import CobblerContent, import_cobbler_content
from annotations.importers.cobbler_ranking import import_ranking_study
from annotations.models import Assignment, Condition, Submission
from cobbler_site.wiring.imported_judges import imported_judges
from judging.models import AggregateJudgment, RegisteredModel

MODEL_ANNOTATIONS = Path("human/batches/model_annotations")
MODEL_BIAS = Path("human/batches/model_bias")
PREFIX = "nC2_preferences_"
SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")


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
    """Upsert every evaluator's stored win counts (model_annotations/ and model_bias/) as AggregateJudgment rows."""
    study, root = content.study, content.root
    sources = _aggregate_sources(root)
    names = sorted({path.stem.removeprefix(PREFIX) for _c, _r, path in sources})
    judge_ids = imported_judges(names, self_keys=set(content.candidate_ids))
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
            "judges": RegisteredModel.objects.filter(aggregates__study__slug=slug).distinct(),
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
