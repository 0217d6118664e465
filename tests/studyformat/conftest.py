"""Helpers for the generic study format tests: the sample dataset, copies to break, a content dump."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from django.core.management import call_command

from annotations.models import Instruction, Pair, Response, Study, Submission

SAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "generic_study"
FILES = ("instructions.jsonl", "responses.jsonl", "votes.jsonl", "rankings.jsonl")


def copy_sample(target: Path) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        shutil.copy(SAMPLE / name, target / name)
    return target


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_rows(path: Path, values: list[dict]) -> None:
    path.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values), encoding="utf-8")


def run_import(root: Path, slug: str, *extra: str) -> str:
    out = io.StringIO()
    call_command("import_study", str(root), "--study", slug, *extra, stdout=out)
    return out.getvalue()


def content(study: Study) -> dict:
    """The study's imported content by natural keys only (no pks): equal dumps = identical content."""
    key_of = dict(Response.objects.filter(instruction__study=study).values_list("pk", "candidate__key"))
    ins_of = dict(Instruction.objects.filter(study=study).values_list("pk", "external_id"))
    answers = []
    for sub in (
        Submission.objects.filter(assignment__batch__study=study)
        .select_related("task", "assignment__participant", "task__batch", "task__pair")
        .order_by("task__batch_id", "task__position")
    ):
        task = sub.task
        answers.append(
            (
                sub.assignment.participant.label,
                task.batch.condition,
                task.batch.label,
                task.position,
                task.kind,
                ins_of[task.instruction_id],
                (key_of[task.pair.response_a_id], key_of[task.pair.response_b_id]) if task.pair else None,
                task.arrangement,
                task.cue,
                [key_of[int(r)] for r in task.response_ids],
                sub.choice,
                key_of.get(sub.chosen_response_id),
                [key_of[int(r)] for r in sub.ranking or []],
                sub.bar_position,
                [key_of[int(r)] for r in sub.display_order],
                sub.assignment.status,
                sub.assignment.review,
                sub.source,
            )
        )
    return {
        "instructions": list(
            study.instructions.order_by("index").values_list("index", "external_id", "text", "reference", "kind")
        ),
        "candidates": list(study.candidates.order_by("position").values_list("key", "position")),
        "responses": sorted(
            Response.objects.filter(instruction__study=study).values_list(
                "instruction__external_id", "candidate__key", "text"
            )
        ),
        "pairs": sorted(
            (ins_of[p.instruction_id], key_of[p.response_a_id], key_of[p.response_b_id])
            for p in Pair.objects.filter(instruction__study=study)
        ),
        "answers": answers,
    }
