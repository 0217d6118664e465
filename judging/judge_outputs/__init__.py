"""Judge outputs in the generic study format: ``judges.jsonl`` and ``judgments.jsonl``.

Registered with ``annotations.importers.study_extensions`` from ``JudgingConfig.ready``, so
``import_study``, the upload page and ``export_study`` read and write them with the study's
other files, in the same transaction. An imported judge is a subject like any run one: its calls
are ``Judgment`` rows of a completed job, read by every report section.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from annotations.exporters import write_lines
from annotations.importers.generic_plan import StudyPlan
from annotations.models import Study
from judging.judge_outputs import export, rows, write


class JudgeOutputsExtension:
    files = {"judges.jsonl": "judge", "judgments.jsonl": "judgment"}

    def check(self, lines: dict[str, list[tuple[str, dict]]], plan: StudyPlan) -> None:
        rows.check(lines, plan)

    def counts(self, plan: StudyPlan) -> dict[str, int]:
        outputs = plan.extensions.get(rows.KEY)
        if outputs is None:
            return {}
        return {
            "judges": len(outputs.judges),
            "judge calls": len(outputs.judgments),
            "judge calls without a verdict": sum(not j.verdict.valid for j in outputs.judgments),
        }

    def preview(self, plan: StudyPlan, instruction_id: str, *, limit: int) -> list[str]:
        outputs = plan.extensions.get(rows.KEY)
        return rows.preview(outputs, instruction_id, limit=limit) if outputs is not None else []

    def apply(
        self, plan: StudyPlan, study: Study, *, response_ids: dict[tuple[str, str], int], created_by: Any
    ) -> None:
        write.write(plan.extensions.get(rows.KEY), study, response_ids=response_ids, created_by=created_by)

    def export(self, study: Study, out: Path, *, instruction_ids: dict[int, str]) -> dict[str, int]:
        return export.export(study, out, instruction_ids=instruction_ids, write=write_lines)
