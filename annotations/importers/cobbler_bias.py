"""The three CoBBLEr human bias studies (human/batches/human_bias): order, bandwagon, attentional.

Batch k (1..25) holds the 30 pairwise tasks of random_sampled_examples_<bias>_<k>.json
in JSON order (task_n on the page is element n-1) and <k>.csv the MTurk rows that
answered it. Rows MTurk rejected are kept with review="rejected" so the raw data
stays complete; the analysis counts approved assignments only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from annotations.importers.base import BadInput, csv_where, parse_mturk_time, read_csv, read_json, stable_key
from annotations.importers.cobbler_content import RESPONDING_KEYS, CobblerContent
from annotations.importers.human_work import (
    AssignmentRow,
    BatchRow,
    HumanWork,
    OnConflict,
    SubmissionRow,
    TaskRow,
    WorkerRow,
    worker_hash,
    write_human_work,
)
from annotations.models import Assignment, Condition, Participant, Task
from annotations.vocabulary import CrowdChoice
from cobbler_site.foundation import text_safety

HUMAN_BIAS = Path("human/batches/human_bias")
# condition -> the folder the authors used ("distraction" is our "attentional").
STUDIES = ((Condition.ORDER, "order"), (Condition.BANDWAGON, "bandwagon"), (Condition.ATTENTIONAL, "distraction"))
N_BATCHES = 25
TASKS_PER_BATCH = 30
TASK_KEYS = ("instruction", "pair_idx", "System A", "System B", "Model A", "Model B")
CUE_KEY: dict[str, str] = {
    Condition.ORDER: "order",
    Condition.BANDWAGON: "bandwagon_order",
    Condition.ATTENTIONAL: "distractor",
}
CSV_COLUMNS = ("WorkerId", "AssignmentId", "AssignmentStatus", "WorkTimeInSeconds", "SubmitTime", "Answer.taskAnswers")


@dataclass
class TaskSpec:
    instruction_index: int
    pair_id: int
    a_is_canonical: bool  # Model A's response is the pair's response_a
    pair_index: int
    cue: dict[str, Any]
    slot_keys: tuple[str, str]  # model keys in slots A and B


@dataclass
class Row:
    worker: str
    approved: bool
    status: str
    assignment_id: str
    work_seconds: int | None
    submitted_at: datetime | None
    answers: dict[int, str]  # task position -> "A"/"B" (only tasks with exactly one box ticked)


def _cue(condition: str, item: dict[str, Any], percent: int, where: str) -> dict[str, Any]:
    value = item.get(CUE_KEY[condition])
    if condition == Condition.ORDER:
        if value not in ("first", "last"):
            raise BadInput(where, f"'order' must be first or last, not {value!r}")
        return {"order": value}
    if condition == Condition.BANDWAGON:
        if value not in (CrowdChoice.A, CrowdChoice.B):
            raise BadInput(where, f"'bandwagon_order' must be A or B, not {value!r}")
        # The banner the page showed (the human study used a fixed 85%).
        return {
            "cue_slot": value,
            "percent": percent,
            "text": f"Note: {percent}% of people believe that System {value} is better.",
        }
    slots = [slot for slot in (CrowdChoice.A, CrowdChoice.B) if isinstance(value, str) and f"System {slot}" in value]
    if len(slots) != 1:
        raise BadInput(where, f"'distractor' must name exactly one of System A / System B: {value!r}")
    return {"cue_slot": slots[0], "distractor": value}


def _read_tasks(content: CobblerContent, condition: str, folder: str, k: int) -> list[TaskSpec]:
    path = content.root / HUMAN_BIAS / folder / "real" / f"random_sampled_examples_{folder}_{k}.json"
    shown = content.where(path)
    data = read_json(path, content.root)
    if not isinstance(data, list) or len(data) != TASKS_PER_BATCH:
        raise BadInput(shown, f"expected a JSON array of {TASKS_PER_BATCH} tasks")
    specs = []
    for number, item in enumerate(data):
        where = f"{shown}: element {number}"
        if not isinstance(item, dict) or any(key not in item for key in TASK_KEYS):
            raise BadInput(where, f"needs the keys {', '.join(TASK_KEYS)}")
        index = content.index_by_text.get(item["instruction"])
        if index is None:
            raise BadInput(where, "instruction text is not one of the eval-set instructions")
        model_a, model_b = item["Model A"], item["Model B"]
        if model_a not in RESPONDING_KEYS or model_b not in RESPONDING_KEYS or model_a == model_b:
            raise BadInput(where, f"unknown or equal models {model_a!r}, {model_b!r}")
        for slot, key in ((CrowdChoice.A, model_a), (CrowdChoice.B, model_b)):
            if item[f"System {slot}"] != content.response_texts[(index, key)]:
                raise BadInput(where, f"System {slot} text differs from {key}'s response to instruction {index}")
        if not isinstance(item["pair_idx"], int) or item["pair_idx"] < 0:
            raise BadInput(where, f"bad pair_idx {item['pair_idx']!r}")
        pair_id, a_is_canonical = content.canonical_pair(index, model_a, model_b)
        specs.append(
            TaskSpec(
                index,
                pair_id,
                a_is_canonical,
                item["pair_idx"],
                _cue(condition, item, content.study.bandwagon_percent, where),
                (model_a, model_b),
            )
        )
    if len({spec.instruction_index for spec in specs}) != 1:
        raise BadInput(shown, "a batch must hold tasks of one instruction")
    return specs


def _decode_answers(raw: str, where: str) -> dict[int, str]:
    try:
        decoded = text_safety.loads(raw)
    except (json.JSONDecodeError, text_safety.JSONProblem, RecursionError):
        raise BadInput(where, "Answer.taskAnswers is not JSON") from None
    if not (isinstance(decoded, list) and len(decoded) == 1 and isinstance(decoded[0], dict)):
        raise BadInput(where, "Answer.taskAnswers must be a one-element list of {task_n: {A, B}}")
    answers: dict[int, str] = {}
    for name, ticked in decoded[0].items():
        number = name.removeprefix("task_")
        if not (name.startswith("task_") and number.isdigit() and 1 <= int(number) <= TASKS_PER_BATCH):
            raise BadInput(where, f"unknown task key {name!r}")
        if not isinstance(ticked, dict) or not all(isinstance(ticked.get(s, False), bool) for s in "AB"):
            raise BadInput(where, f"{name} must be {{A: bool, B: bool}}")
        a, b = ticked.get(CrowdChoice.A, False), ticked.get(CrowdChoice.B, False)
        if a != b:  # exactly one ticked; empty and both-ticked tasks store nothing
            answers[int(number) - 1] = CrowdChoice.A if a else CrowdChoice.B
    return answers


def _read_rows(content: CobblerContent, folder: str, k: int) -> list[Row]:
    path = content.root / HUMAN_BIAS / folder / "real" / f"{k}.csv"
    rows, seen = [], set()
    for number, raw in enumerate(read_csv(path, content.root, required=CSV_COLUMNS), 1):
        where = csv_where(path, content.root, number)
        worker = (raw["WorkerId"] or "").strip()
        if not worker or worker in seen:
            raise BadInput(where, "empty or repeated WorkerId")
        seen.add(worker)
        status = (raw["AssignmentStatus"] or "").strip()
        if status not in ("Submitted", "Approved", "Rejected"):
            raise BadInput(where, f"unknown AssignmentStatus {status!r}")
        seconds = (raw["WorkTimeInSeconds"] or "").strip()
        if seconds and not seconds.isdigit():
            raise BadInput(where, f"WorkTimeInSeconds is not a number: {seconds!r}")
        rows.append(
            Row(
                worker,
                status != "Rejected",
                status,
                raw["AssignmentId"] or "",
                int(seconds) if seconds else None,
                parse_mturk_time(raw["SubmitTime"]),
                _decode_answers(raw["Answer.taskAnswers"] or "", where),
            )
        )
    return rows


def _write_study(content: CobblerContent, condition: str, batches: list[tuple[list[TaskSpec], list[Row]]]) -> None:
    study = content.study
    work = HumanWork(platform=Participant.Platform.MTURK)
    # A worker seen in an earlier study keeps that study's label (OnConflict leaves participants be).
    workers = list(dict.fromkeys(row.worker for _specs, rows in batches for row in rows))
    work.workers = [WorkerRow(worker, f"{condition}-w{n}") for n, worker in enumerate(workers, 1)]
    hashes = {worker: worker_hash(work.platform, worker) for worker in workers}
    for k, (specs, rows) in enumerate(batches):
        batch = (condition, k)
        work.batches.append(BatchRow(condition, k, f"{condition} {k + 1}: instruction {specs[0].instruction_index}"))
        work.tasks += [
            TaskRow(
                batch,
                pos,
                Task.Kind.PAIRWISE,
                content.instruction_ids[spec.instruction_index],
                pair_id=spec.pair_id,
                arrangement=Task.Arrangement.AB if spec.a_is_canonical else Task.Arrangement.BA,
                cue=spec.cue,
                pair_index=spec.pair_index,
            )
            for pos, spec in enumerate(specs)
        ]
        for row in rows:
            work.assignments.append(
                AssignmentRow(
                    batch,
                    row.worker,
                    review=Assignment.Review.APPROVED if row.approved else Assignment.Review.REJECTED,
                    review_note="" if row.approved else "rejected on MTurk: empty or incomplete submission",
                    session=row.assignment_id,
                    submitted_at=row.submitted_at,
                    work_seconds=row.work_seconds,
                )
            )
            for pos, slot in sorted(row.answers.items()):
                spec = specs[pos]
                chosen_key = spec.slot_keys[0 if slot == CrowdChoice.A else 1]
                work.submissions.append(
                    SubmissionRow(
                        batch,
                        row.worker,
                        pos,
                        stable_key("cobbler", study.slug, condition, hashes[row.worker], k, pos),
                        display_order=[content.response_ids[(spec.instruction_index, key)] for key in spec.slot_keys],
                        choice=slot,
                        chosen_response_id=content.response_ids[(spec.instruction_index, chosen_key)],
                    )
                )
    write_human_work(study=study, work=work, on_conflict=OnConflict.UPDATE)


def import_bias_studies(*, content: CobblerContent) -> None:
    """Upsert the order, bandwagon and attentional studies (25 batches x 30 tasks each).

    Idempotent; raises BadInput on a malformed task file or CSV row.
    """
    for condition, folder in STUDIES:
        batches = [
            (_read_tasks(content, condition, folder, k), _read_rows(content, folder, k))
            for k in range(1, N_BATCHES + 1)
        ]
        _write_study(content, condition, batches)
