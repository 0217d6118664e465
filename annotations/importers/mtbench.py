"""MT-Bench human judgments (``lmsys/mt_bench_human_judgments``): rows, study content and human votes.

One row is one vote on (question_id, model_a, model_b, turn). The study gets a
candidate per model (positions alphabetical, so the canonical pair order is the
alphabetical one), an instruction per (question_id, turn), a response per
(instruction, model) holding the judged turn's answer and the whole conversation,
and, for human judges, one batch per judge with one pairwise task per (pair,
orientation) they voted on. Machine rows (``judge == "gpt4_pair"``) are left to
``cobbler_site.wiring.mtbench_import``.

Duplicates: the first vote stored for (judge, key, orientation) wins. Later rows
for the same vote, in the same run or a later import, are skipped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from annotations.importers.base import BadInput, check_slug, read_json_lines, stable_key, upsert
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
from annotations.models import Candidate, Condition, Instruction, Pair, Participant, Response, Study, Task
from annotations.vocabulary import Arrangement, CrowdChoice
from cobbler_site.foundation import text_safety

MACHINE_JUDGE = "gpt4_pair"
WINNERS = ("model_a", "model_b", "tie", "tie (inconsistent)")
HUMAN_CHOICE = {"model_a": CrowdChoice.A, "model_b": CrowdChoice.B, "tie": CrowdChoice.TIE}


@dataclass(frozen=True)
class MtRow:
    where: str  # "file:line" (JSONL) or "file: row N" (Parquet)
    question_id: int
    turn: int
    model_a: str
    model_b: str
    winner: str
    judge: str
    conversation_a: list[dict[str, str]]
    conversation_b: list[dict[str, str]]

    @property
    def is_machine(self) -> bool:
        return self.judge == MACHINE_JUDGE

    def user_message(self) -> str:
        return self.conversation_a[2 * (self.turn - 1)]["content"]

    def answer(self, model: str) -> str:
        conversation = self.conversation_a if model == self.model_a else self.conversation_b
        return conversation[2 * self.turn - 1]["content"]

    def conversation(self, model: str) -> list[dict[str, str]]:
        return self.conversation_a if model == self.model_a else self.conversation_b


@dataclass
class MtContent:
    study: Study
    response_ids: dict[tuple[int, int, str], int] = field(default_factory=dict)  # (qid, turn, model)
    pair_ids: dict[tuple[int, int, str, str], int] = field(default_factory=dict)  # alphabetical models
    pair_instruction: dict[int, int] = field(default_factory=dict)  # pair pk -> instruction pk
    notes: list[str] = field(default_factory=list)

    def pair_of(self, row: MtRow) -> tuple[int, bool]:
        """(pair pk, whether model_a is the pair's canonical response_a)."""
        a_first = row.model_a < row.model_b
        low, high = sorted((row.model_a, row.model_b))
        return self.pair_ids[(row.question_id, row.turn, low, high)], a_first


def _conversation(value: Any, turn: int, where: str, name: str) -> list[dict[str, str]]:
    if not isinstance(value, list) or len(value) < 2 * turn:
        raise BadInput(where, f"{name} must be a list with at least {2 * turn} messages for turn {turn}")
    messages = []
    for number, message in enumerate(value):
        role = "user" if number % 2 == 0 else "assistant"
        if not (isinstance(message, dict) and message.get("role") == role and isinstance(message.get("content"), str)):
            raise BadInput(where, f"{name}[{number}] must be {{role: '{role}', content: str}}")
        messages.append({"role": role, "content": message["content"]})
    return messages


def _row(raw: Any, where: str) -> MtRow:
    if not isinstance(raw, dict):
        raise BadInput(where, "a row must be a JSON object")
    qid, turn = raw.get("question_id"), raw.get("turn")
    if not isinstance(qid, int) or isinstance(qid, bool) or qid < 0:
        raise BadInput(where, f"question_id must be a non-negative integer, not {qid!r}")
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
        raise BadInput(where, f"turn must be a positive integer, not {turn!r}")
    texts: dict[str, str] = {}
    for name in ("model_a", "model_b", "judge"):
        value = raw.get(name)
        if not isinstance(value, str) or not value.strip() or len(value) > 64:
            raise BadInput(where, f"{name} must be a non-empty string of at most 64 characters")
        texts[name] = value
    if texts["model_a"] == texts["model_b"]:
        raise BadInput(where, "model_a and model_b are the same model")
    winner = raw.get("winner")
    if winner not in WINNERS:
        raise BadInput(where, f"winner must be one of {', '.join(WINNERS)}, not {winner!r}")
    if winner == "tie (inconsistent)" and texts["judge"] != MACHINE_JUDGE:
        raise BadInput(where, f"'tie (inconsistent)' is a {MACHINE_JUDGE} verdict, not a human vote")
    conv_a = _conversation(raw.get("conversation_a"), turn, where, "conversation_a")
    conv_b = _conversation(raw.get("conversation_b"), turn, where, "conversation_b")
    return MtRow(where, qid, turn, texts["model_a"], texts["model_b"], winner, texts["judge"], conv_a, conv_b)


def read_mtbench(paths: list[Path]) -> list[MtRow]:
    """Parse and validate every row of every file (JSONL, or Parquet by extension)."""
    rows: list[MtRow] = []
    for path in paths:
        if not path.is_file():
            raise BadInput(str(path), "file not found")
        if path.suffix.lower() in (".parquet", ".pq"):
            rows.extend(_read_parquet(path))
            continue
        # Lines end at b"\n" only (U+2028 is valid inside JSON), each at most IMPORT_MAX_LINE_BYTES.
        rows.extend(_row(raw, where) for where, raw in read_json_lines(path))
    if not rows:
        raise BadInput(", ".join(str(p) for p in paths), "no rows to import")
    return rows


def _read_parquet(path: Path) -> list[MtRow]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        records = pq.read_table(path).to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise BadInput(str(path), f"cannot read Parquet: {exc}") from None
    rows = []
    for number, raw in enumerate(records, 1):
        where = f"{path}: row {number}"
        # JSONL lines are checked by their reader; Parquet strings only here (cobbler_site.foundation.text_safety).
        if problem := text_safety.find_text_problem(raw):
            raise BadInput(where, f"a string {problem}")
        rows.append(_row(raw, where))
    return rows


def _get_study(slug: str) -> Study:
    study = Study.objects.filter(slug=check_slug(slug)).first()
    if study is not None and study.source != Study.Source.MTBENCH:
        raise BadInput(f"--study {slug}", f"study exists with source '{study.source}', not mtbench")
    if study is None:
        study = Study.objects.create(slug=slug, name=f"MT-Bench human judgments ({slug})", source=Study.Source.MTBENCH)
    return study


def _upsert_instructions(study: Study, rows: list[MtRow]) -> dict[tuple[int, int], int]:
    """(question_id, turn) -> instruction pk; new keys get the next free indices, in key order."""
    existing = {
        (int(ext), turn): index for ext, turn, index in study.instructions.values_list("external_id", "turn", "index")
    }
    texts: dict[tuple[int, int], str] = {}
    for row in rows:
        texts.setdefault((row.question_id, row.turn), row.user_message())
    next_index = max(existing.values(), default=-1) + 1
    for key in sorted(texts):
        if key not in existing:
            existing[key], next_index = next_index, next_index + 1
    upsert(
        Instruction,
        (
            Instruction(
                study=study, index=existing[key], external_id=str(key[0]), turn=key[1], kind="mtbench", text=text
            )
            for key, text in texts.items()
        ),
        unique_fields=("study", "index"),
        update_fields=("text",),
    )
    pks = dict(study.instructions.values_list("index", "pk"))
    return {key: pks[index] for key, index in existing.items()}


def import_mtbench_content(*, rows: list[MtRow], slug: str) -> MtContent:
    """Upsert the study, candidates, instructions, responses and pairs; idempotent."""
    content = MtContent(study=_get_study(slug))
    study = content.study
    models = set(study.candidates.values_list("key", flat=True))
    models.update(m for row in rows for m in (row.model_a, row.model_b))
    upsert(
        Candidate,
        (Candidate(study=study, key=key, name=key, position=pos) for pos, key in enumerate(sorted(models))),
        unique_fields=("study", "key"),
        update_fields=("position",),
    )
    candidate_ids = dict(study.candidates.values_list("key", "pk"))
    instruction_ids = _upsert_instructions(study, rows)

    # First row wins for a response's text; a later row that disagrees is counted, not fatal.
    responses: dict[tuple[int, int, str], tuple[str, list]] = {}
    disagreements = 0
    for row in rows:
        for model in (row.model_a, row.model_b):
            key = (row.question_id, row.turn, model)
            first = responses.setdefault(key, (row.answer(model), row.conversation(model)))
            disagreements += first[0] != row.answer(model)
    if disagreements:
        content.notes.append(f"{disagreements} row(s) gave a different answer text than an earlier row; kept the first")
    upsert(
        Response,
        (
            Response(
                instruction_id=instruction_ids[(q, t)],
                candidate_id=candidate_ids[m],
                text=text,
                conversation=conversation,
            )
            for (q, t, m), (text, conversation) in responses.items()
        ),
        unique_fields=("instruction", "candidate"),
        update_fields=("text", "conversation"),
    )
    for pk, ext, turn, model in Response.objects.filter(instruction__study=study).values_list(
        "pk", "instruction__external_id", "instruction__turn", "candidate__key"
    ):
        content.response_ids[(int(ext), turn, model)] = pk

    by_instruction: dict[tuple[int, int], set[str]] = {}
    for q, t, m in content.response_ids:
        by_instruction.setdefault((q, t), set()).add(m)
    upsert(
        Pair,
        (
            Pair(
                instruction_id=instruction_ids[key],
                response_a_id=content.response_ids[(*key, a)],
                response_b_id=content.response_ids[(*key, b)],
            )
            for key, models_here in by_instruction.items()
            for a, b in combinations(sorted(models_here), 2)
        ),
        unique_fields=("instruction", "response_a", "response_b"),
    )
    key_of = {pk: key for key, pk in content.response_ids.items()}
    for pk, instruction_id, a_id, b_id in Pair.objects.filter(instruction__study=study).values_list(
        "pk", "instruction_id", "response_a_id", "response_b_id"
    ):
        q, t, model_a = key_of[a_id]
        content.pair_ids[(q, t, model_a, key_of[b_id][2])] = pk
        content.pair_instruction[pk] = instruction_id
    return content


def import_mtbench_votes(*, content: MtContent, rows: list[MtRow]) -> None:
    """Upsert one batch, participant and assignment per human judge and a submission per vote."""
    study = content.study
    humans = [row for row in rows if not row.is_machine]
    if not humans:
        return
    work = HumanWork(platform=Participant.Platform.CODE)
    judges = sorted({row.judge for row in humans})
    hashes = {judge: worker_hash(work.platform, judge) for judge in judges}
    # A judge's batch is found by its label; a new judge gets the next free index.
    index_of = dict(study.batches.filter(condition=Condition.PLAIN).values_list("label", "index"))
    next_index = max(index_of.values(), default=-1) + 1
    for judge in judges:
        if judge not in index_of:
            index_of[judge], next_index = next_index, next_index + 1
    work.workers = [WorkerRow(judge, judge) for judge in judges]
    work.batches = [BatchRow(Condition.PLAIN, index_of[judge], judge) for judge in judges]
    work.assignments = [AssignmentRow((Condition.PLAIN, index_of[judge]), judge) for judge in judges]
    position_of = _vote_tasks(content, humans, index_of, work)

    submitted: dict[str, str] = {}  # idempotency key -> choice
    duplicates = conflicting = 0
    for row in humans:
        pair_id, a_first = content.pair_of(row)
        key = stable_key("mtbench", study.slug, hashes[row.judge], row.question_id, row.turn, row.model_a, row.model_b)
        choice = HUMAN_CHOICE[row.winner]
        if key in submitted:
            duplicates += 1
            conflicting += submitted[key] != choice
            continue
        submitted[key] = choice
        batch = (Condition.PLAIN, index_of[row.judge])
        slots = [content.response_ids[(row.question_id, row.turn, m)] for m in (row.model_a, row.model_b)]
        work.submissions.append(
            SubmissionRow(
                batch,
                row.judge,
                position_of[(batch[1], pair_id, Arrangement.AB if a_first else Arrangement.BA)],
                key,
                display_order=slots,
                choice=choice,
                chosen_response_id={CrowdChoice.A: slots[0], CrowdChoice.B: slots[1]}.get(choice),
            )
        )
    if duplicates:
        content.notes.append(f"skipped {duplicates} repeated human vote row(s) ({conflicting} with another winner)")
    # KEEP: what is stored stays, so the first vote stored for a key wins across imports too.
    write_human_work(study=study, work=work, on_conflict=OnConflict.KEEP)


def _vote_tasks(
    content: MtContent, humans: list[MtRow], index_of: dict[str, int], work: HumanWork
) -> dict[tuple[int, int, str], int]:
    """(batch index, pair pk, arrangement) -> task position, over the judges' stored tasks and the
    new ones, which go into ``work`` after a batch's existing tasks."""
    position_of = {
        (index, pair, arrangement): position
        for index, pair, arrangement, position in Task.objects.filter(
            batch__study=content.study, batch__condition=Condition.PLAIN
        ).values_list("batch__index", "pair_id", "arrangement", "position")
    }
    next_position: dict[int, int] = {}
    for (index, _pair, _arrangement), position in position_of.items():
        next_position[index] = max(next_position.get(index, 0), position + 1)
    for row in humans:
        pair_id, a_first = content.pair_of(row)
        key = (index_of[row.judge], pair_id, Arrangement.AB if a_first else Arrangement.BA)
        if key not in position_of:
            position_of[key] = position = next_position.get(key[0], 0)
            next_position[key[0]] = position + 1
            work.tasks.append(
                TaskRow(
                    (Condition.PLAIN, key[0]),
                    position,
                    Task.Kind.PAIRWISE,
                    content.pair_instruction[pair_id],
                    pair_id=pair_id,
                    arrangement=key[2],
                )
            )
    return position_of
