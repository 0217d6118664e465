"""The CoBBLEr human ranking study (the MTurk exports in human/batches/AMT): 6 annotators x 50 rankings.

Each MTurk row is one worker's sitting for one round; ``Answer.taskAnswers`` holds a
JSON string whose ``amt_output_toy`` is another JSON string: the final top-to-bottom
list of 15 system letters plus the "black-bar". Letters map back to models through
human_annotation_gt_formatted.json. Which workers count is not written anywhere, so
it is derived: annotator k is the worker whose decoded rankings equal
AMT/model_annot{k}.csv on all 50 instructions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from annotations.importers.base import BadInput, csv_where, parse_mturk_time, read_csv, read_json, stable_key
from annotations.importers.cobbler_content import CANONICAL_KEYS, CobblerContent
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
from cobbler_site.foundation import text_safety

AMT = Path("human/batches/AMT")
LETTERS_FILE = Path("human/batches/model_annotations/human_annotation_gt_formatted.json")
BAR = "black-bar"
N_ANNOTATORS = 6
# (label, first instruction, number of instructions): the rounds are contiguous slices of the 50.
ROUNDS = (("pilot", 0, 5), ("mid_1", 5, 10), ("mid_2", 15, 10), ("final_1", 25, 13), ("final_2", 38, 12))
MTURK_COLUMNS = (
    "WorkerId",
    "AssignmentId",
    "AssignmentStatus",
    "WorkTimeInSeconds",
    "SubmitTime",
    "Answer.taskAnswers",
)


@dataclass
class Sitting:
    """One CSV row: a worker's answers to one round."""

    worker: str
    round_index: int
    second_wave: bool  # from a `_2nd` file (replacement candidates)
    assignment_id: str
    work_seconds: int | None
    submitted_at: datetime | None
    methods: dict[int, list[str]]  # instruction index -> 16 entries, top to bottom


@dataclass
class RankingData:
    sittings: list[Sitting] = field(default_factory=list)
    annotators: list[str] = field(default_factory=list)  # raw worker id of annotator k


def _load_letters(content: CobblerContent) -> list[dict[str, str]]:
    """Per instruction: system letter -> model key."""
    data = read_json(content.root / LETTERS_FILE, content.root)
    if not isinstance(data, list) or len(data) != len(content.instruction_ids):
        raise BadInput(str(LETTERS_FILE), f"expected {len(content.instruction_ids)} dicts")
    letters = []
    for number, item in enumerate(data):
        if not isinstance(item, dict) or set(item) != set(CANONICAL_KEYS) or len(set(item.values())) != 15:
            raise BadInput(f"{LETTERS_FILE}: element {number}", "needs 15 models with distinct letters")
        letters.append({letter: key for key, letter in item.items()})
    return letters


def _decode_answer(raw: str, start: int, size: int, where: str) -> dict[int, list[str]]:
    try:
        outer = text_safety.loads(raw)
        inner = text_safety.loads(outer[0]["amt_output_toy"])
    except (json.JSONDecodeError, text_safety.JSONProblem, RecursionError, TypeError, KeyError, IndexError):
        raise BadInput(where, "Answer.taskAnswers is not [{amt_output_toy: <JSON list>}]") from None
    if not isinstance(inner, list):
        raise BadInput(where, "amt_output_toy is not a JSON list")
    methods: dict[int, list[str]] = {}
    for item in inner:
        example = item.get("exampleIndex") if isinstance(item, dict) else None
        order = item.get("methods") if isinstance(item, dict) else None
        if not isinstance(example, int) or not 0 <= example < size or example + start in methods:
            raise BadInput(where, f"bad or repeated exampleIndex {example!r} (round has {size} items)")
        if not isinstance(order, list) or len(order) != 16 or order.count(BAR) != 1:
            raise BadInput(where, f"exampleIndex {example}: methods must be 15 systems plus '{BAR}'")
        methods[start + example] = order
    return methods


def _read_sittings(content: CobblerContent) -> list[Sitting]:
    sittings = []
    for round_index, (label, start, size) in enumerate(ROUNDS):
        for second_wave, name in ((False, f"batch_{label}.csv"), (True, f"batch_{label}_2nd.csv")):
            path = content.root / AMT / name
            seen: set[str] = set()
            for number, row in enumerate(read_csv(path, content.root, required=MTURK_COLUMNS), 1):
                where = csv_where(path, content.root, number)
                worker = (row["WorkerId"] or "").strip()
                if not worker or worker in seen:
                    raise BadInput(where, "empty or repeated WorkerId")
                seen.add(worker)
                seconds = (row["WorkTimeInSeconds"] or "").strip()
                if seconds and not seconds.isdigit():
                    raise BadInput(where, f"WorkTimeInSeconds is not a number: {seconds!r}")
                sittings.append(
                    Sitting(
                        worker=worker,
                        round_index=round_index,
                        second_wave=second_wave,
                        assignment_id=row["AssignmentId"] or "",
                        work_seconds=int(seconds) if seconds else None,
                        submitted_at=parse_mturk_time(row["SubmitTime"]),
                        methods=_decode_answer(row["Answer.taskAnswers"] or "", start, size, where),
                    )
                )
    return sittings


def _rankings(sittings: list[Sitting], letters: list[dict[str, str]]) -> dict[str, dict[int, list[str]]]:
    """worker -> instruction index -> model keys best first (the bar removed)."""
    out: dict[str, dict[int, list[str]]] = {}
    for sitting in sittings:
        for index, order in sitting.methods.items():
            try:
                keys = [letters[index][entry] for entry in order if entry != BAR]
            except KeyError as exc:
                raise BadInput(f"{AMT}: worker row for instruction {index}", f"unknown system {exc}") from None
            if len(set(keys)) != 15:
                raise BadInput(f"{AMT}: instruction {index}", "a ranking repeats a system")
            out.setdefault(sitting.worker, {})[index] = keys
    return out


def _match_annotators(content: CobblerContent, rankings: dict[str, dict[int, list[str]]]) -> list[str]:
    """Raw worker id of annotator 0..5: the one worker whose rankings equal model_annot{k}.csv."""
    n = len(content.instruction_ids)
    annotators = []
    for k in range(N_ANNOTATORS):
        path = content.root / AMT / f"model_annot{k}.csv"
        columns = [f"rank_{i}" for i in range(1, 16)]
        rows = read_csv(path, content.root, required=columns)
        if len(rows) != n:
            raise BadInput(content.where(path), f"expected {n} rows, found {len(rows)}")
        expected = {index: [row[c] for c in columns] for index, row in enumerate(rows)}
        matches = [w for w, by_index in rankings.items() if by_index == expected]
        if len(matches) != 1:
            raise BadInput(content.where(path), f"{len(matches)} workers' decoded rankings match it, need 1")
        annotators.append(matches[0])
    return annotators


def _review(data: RankingData, sitting: Sitting) -> tuple[str, str]:
    if sitting.worker in data.annotators:
        return Assignment.Review.APPROVED, ""
    if not sitting.second_wave:
        return Assignment.Review.REJECTED, "dropped by the authors: not among the 6 counted annotators"
    return Assignment.Review.REJECTED, "replacement candidate not selected: not among the 6 counted annotators"


def import_ranking_study(*, content: CobblerContent) -> None:
    """Upsert the ranking batches, tasks, participants, assignments and submissions.

    Idempotent (natural keys and deterministic idempotency keys); raises BadInput.
    """
    study = content.study
    letters = _load_letters(content)
    data = RankingData(sittings=_read_sittings(content))
    data.annotators = _match_annotators(content, _rankings(data.sittings, letters))

    work = HumanWork(platform=Participant.Platform.MTURK)
    work.batches = [BatchRow(Condition.RANKING, i, label) for i, (label, _s, _n) in enumerate(ROUNDS)]
    canonical = {i: [content.response_ids[(i, key)] for key in CANONICAL_KEYS] for i in content.instruction_ids}
    work.tasks = [
        TaskRow(
            (Condition.RANKING, r),
            index - start,
            Task.Kind.RANKING,
            content.instruction_ids[index],
            response_ids=canonical[index],
            show_threshold_bar=True,
        )
        for r, (_label, start, size) in enumerate(ROUNDS)
        for index in range(start, start + size)
    ]

    labels = {worker: f"annotator-{k}" for k, worker in enumerate(data.annotators)}
    others = [w for w in dict.fromkeys(s.worker for s in data.sittings) if w not in labels]
    labels.update({worker: f"ranking-w{n}" for n, worker in enumerate(others, 1)})
    # A participant keeps the label of the study that first imported them (OnConflict leaves participants be).
    work.workers = [WorkerRow(worker, label) for worker, label in labels.items()]
    hashes = {worker: worker_hash(work.platform, worker) for worker in labels}

    for s in data.sittings:
        batch = (Condition.RANKING, s.round_index)
        review, note = _review(data, s)
        work.assignments.append(
            AssignmentRow(
                batch,
                s.worker,
                review=review,
                review_note=note,
                session=s.assignment_id,
                submitted_at=s.submitted_at,
                work_seconds=s.work_seconds,
            )
        )
        start = ROUNDS[s.round_index][1]
        for index, order in sorted(s.methods.items()):
            work.submissions.append(
                SubmissionRow(
                    batch,
                    s.worker,
                    index - start,
                    stable_key("cobbler", study.slug, "ranking", hashes[s.worker], s.round_index, index - start),
                    display_order=canonical[index],
                    ranking=[content.response_ids[(index, letters[index][e])] for e in order if e != BAR],
                    bar_position=order.index(BAR),
                )
            )
    write_human_work(study=study, work=work, on_conflict=OnConflict.UPDATE)
