"""Write a study in the generic format (docs/study-format.md), the inverse of ``import_study``.

Deterministic: instructions in index order, responses by instruction then candidate
position, votes and rankings by batch (creation order) then task position, one JSON
object per line with a fixed key order. So export -> import -> export gives the same
bytes. Annotators are written as their pseudonyms (``Participant.label``), never a
platform id. A vote's ``model_a`` is the answer shown first, so ``presented_first`` is
always ``model_a``. Only human work that counts in reports by default is written:
submitted, approved assignments (``analysis.loaders.counted_work``). ``settings.jsonl`` (only when a
task or quality setting differs from the default) and ``gold.jsonl`` (only when pairs are gold)
carry the study's configuration (annotations.importers.generic_settings).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from annotations.biases import CROWD_CUED
from annotations.importers.base import BadInput
from annotations.importers.generic_settings import settings_row
from annotations.importers.study_extensions import extensions
from annotations.models import Assignment, Condition, Instruction, Pair, Response, Study, Submission
from annotations.vocabulary import Arrangement, CrowdChoice


def _line(row: dict) -> str:
    return json.dumps(row, ensure_ascii=False) + "\n"


def write_lines(path: Path, rows: Iterable[dict]) -> int:
    count = 0
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(_line(row))
            count += 1
    return count


def _counted(study: Study):  # a Submission queryset
    return Submission.objects.filter(
        assignment__batch__study=study,
        assignment__status=Assignment.Status.SUBMITTED,
        assignment__review=Assignment.Review.APPROVED,
    ).order_by("task__batch_id", "task__position", "pk")


def instruction_ids(study: Study) -> dict[int, str]:
    """Instruction pk -> the id written (external_id, else the index); unique or BadInput."""
    # MT-Bench keeps one instruction per (question, turn) under the question's id.
    out = {
        pk: (ext if turn == 1 else f"{ext}#turn{turn}") if ext else str(index)
        for pk, ext, index, turn in Instruction.objects.filter(study=study).values_list(
            "pk", "external_id", "index", "turn"
        )
    }
    if len(set(out.values())) != len(out):
        raise BadInput(f"study {study.slug}", "two instructions would get the same id in instructions.jsonl")
    return out


def export_study(*, study: Study, out: Path) -> dict[str, int]:
    """Write the files into directory ``out`` (created if needed); rows written per file."""
    out.mkdir(parents=True, exist_ok=True)
    ids = instruction_ids(study)
    counts = {
        "instructions.jsonl": write_lines(
            out / "instructions.jsonl",
            (
                {"id": ids[i.pk], "instruction": i.text}
                | ({"reference": i.reference} if i.reference else {})
                | ({"category": i.kind} if i.kind else {})
                for i in Instruction.objects.filter(study=study).order_by("index")
            ),
        )
    }
    responses = (
        Response.objects.filter(instruction__study=study)
        .order_by("instruction__index", "candidate__position", "candidate__key")
        .values_list("pk", "instruction_id", "candidate__key", "text")
    )
    key_of = {}
    rows = []
    for pk, instruction, key, text in responses:
        key_of[pk] = key
        rows.append({"instruction_id": ids[instruction], "model": key, "text": text})
    counts["responses.jsonl"] = write_lines(out / "responses.jsonl", rows)
    counted = _counted(study).values_list(
        "task__kind",
        "task__condition",
        "task__instruction_id",
        "task__pair__response_a_id",
        "task__pair__response_b_id",
        "task__arrangement",
        "task__cue",
        "choice",
        "ranking",
        "bar_position",
        "assignment__participant__label",
        "assignment__participant_id",
    )
    votes, rankings = [], []
    for kind, condition, instruction, resp_a, resp_b, arrangement, cue, choice, ranking, bar, label, who in counted:
        annotator = label or f"participant-{who}"
        if kind == "ranking":
            rankings.append(
                {
                    "instruction_id": ids[instruction],
                    "annotator": annotator,
                    "ranking": [key_of[int(r)] for r in ranking or []],
                }
                | ({"acceptable_count": bar} if bar is not None else {})
            )
            continue
        if condition == Condition.RANKING or choice not in (CrowdChoice.A, CrowdChoice.B, CrowdChoice.TIE):
            continue
        first, second = (resp_a, resp_b) if arrangement == Arrangement.AB else (resp_b, resp_a)
        vote = {
            "instruction_id": ids[instruction],
            "model_a": key_of[first],
            "model_b": key_of[second],
            "winner": {CrowdChoice.A: "model_a", CrowdChoice.B: "model_b", CrowdChoice.TIE: "tie"}[choice],
            "annotator": annotator,
            "condition": condition,
            "presented_first": "model_a",
        }
        if condition in CROWD_CUED and isinstance(cue, dict) and cue.get("cue_slot") in (CrowdChoice.A, CrowdChoice.B):
            vote["cued"] = "model_a" if cue["cue_slot"] == CrowdChoice.A else "model_b"
        votes.append(vote)
    settings = settings_row(study)
    for name, rows_ in (
        ("votes.jsonl", votes),
        ("rankings.jsonl", rankings),
        ("gold.jsonl", _gold_rows(study, ids)),
        ("settings.jsonl", [settings] if settings else []),
    ):
        path = out / name
        if rows_:
            counts[name] = write_lines(path, rows_)
        elif path.exists():
            path.unlink()  # a stale file from an earlier export would be read back in
    for extension in extensions():
        counts |= extension.export(study, out, instruction_ids=ids)
    return counts


def _gold_rows(study: Study, ids: dict[int, str]) -> list[dict]:
    """gold.jsonl: the study's gold pairs, by instruction then canonical pair order."""
    pairs = (
        Pair.objects.filter(instruction__study=study, gold_response__isnull=False)
        .order_by(
            "instruction__index",
            "response_a__candidate__position",
            "response_b__candidate__position",
            "pk",
        )
        .values_list(
            "instruction_id",
            "response_a__candidate__key",
            "response_b__candidate__key",
            "response_a_id",
            "gold_response_id",
        )
    )
    return [
        {"instruction_id": ids[ins], "model_a": a, "model_b": b, "gold": "model_a" if gold == resp_a else "model_b"}
        for ins, a, b, resp_a, gold in pairs
    ]
