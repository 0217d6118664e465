"""import_mtbench: the sample file, Parquet, edge cases, duplicates and bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core import serializers
from django.core.management import CommandError, call_command

from annotations.models import Instruction, Participant, Response, Study, Submission, Task
from judging.models import JudgeJob, Judgment, RegisteredModel
from tests.conftest import SAMPLES_DIR
from tests.importers.conftest import table_counts

pytestmark = pytest.mark.django_db
SAMPLE = SAMPLES_DIR / "mtbench_sample.jsonl"
SAMPLE_COUNTS = {
    "instructions": 5,
    "candidates": 3,
    "responses": 11,
    "pairs": 7,
    "batches": 4,
    "tasks": 8,
    "participants": 4,
    "assignments": 4,
    "submissions": 8,
    "judge jobs": 1,
    "judgments": 6,
}


def _import(*paths: Path, slug: str = "mt") -> dict[str, int]:
    out = io.StringIO()
    call_command("import_mtbench", *map(str, paths), "--study", slug, stdout=out)
    counts = {}
    for line in out.getvalue().splitlines():
        if "(+" in line:
            table, rest = line.split(": ", 1)
            counts[table] = int(rest.split()[0])
    return counts


def _rows() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]


def _conv(question: str, answer: str) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": question},
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "And again?"},
        {"role": "assistant", "content": answer + " Again."},
    ]


def _row(**overrides) -> dict:
    row = {
        "question_id": 7,
        "model_a": "m1",
        "model_b": "m2",
        "winner": "model_a",
        "judge": "expert_9",
        "turn": 1,
        "conversation_a": _conv("Q?", "long answer here"),
        "conversation_b": _conv("Q?", ""),
    }
    return row | overrides


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_it_imports_the_sample_with_exact_counts_and_is_rerunnable():
    assert _import(SAMPLE) == SAMPLE_COUNTS
    before = table_counts()
    assert _import(SAMPLE) == SAMPLE_COUNTS
    assert table_counts() == before
    study = Study.objects.get(slug="mt")
    assert study.source == "mtbench"
    assert list(study.candidates.values_list("key", "position")) == [("model-x", 0), ("model-y", 1), ("model-z", 2)]


def test_it_stores_the_judged_turn_and_the_whole_conversation():
    _import(SAMPLE)
    rows = _rows()
    first = rows[0]
    turn2 = Instruction.objects.get(study__slug="mt", external_id="901", turn=2)
    assert (turn2.kind, turn2.text) == ("mtbench", first["conversation_a"][2]["content"])
    response = Response.objects.get(instruction=turn2, candidate__key="model-x")
    assert response.text == first["conversation_a"][3]["content"]
    assert response.conversation == first["conversation_a"]
    empty = Response.objects.get(instruction__external_id="902", instruction__turn=1, candidate__key="model-z")
    assert empty.text == ""


def test_human_votes_keep_orientation_and_ties():
    _import(SAMPLE)
    subs = Submission.objects.filter(
        assignment__batch__study__slug="mt", task__instruction__external_id="901", task__instruction__turn=1
    ).select_related("task", "assignment__participant")
    by_judge = {s.assignment.participant.label: s for s in subs}
    # expert_1 voted (x, y) model_a; expert_2 voted (y, x) model_b: both chose model-x.
    assert (by_judge["expert_1"].task.arrangement, by_judge["expert_1"].choice) == ("ab", "A")
    assert (by_judge["expert_2"].task.arrangement, by_judge["expert_2"].choice) == ("ba", "B")
    assert by_judge["expert_1"].chosen_response_id == by_judge["expert_2"].chosen_response_id
    assert by_judge["expert_1"].chosen_response.candidate.key == "model-x"
    assert (by_judge["author_1"].choice, by_judge["author_1"].chosen_response) == ("T", None)
    task = by_judge["expert_2"].task
    assert [r.candidate.key for r in task.slot_responses()] == ["model-y", "model-x"]
    assert all(t.condition == "plain" and t.kind == "pairwise" for t in Task.objects.filter(batch__study__slug="mt"))


def test_gpt4_pair_rows_become_judgments_of_an_imported_judge():
    _import(SAMPLE)
    judge = RegisteredModel.objects.get(name="gpt-4")
    assert judge.kind == "imported"
    job = JudgeJob.objects.get(study__slug="mt", judge=judge)
    assert (job.status, job.conditions, job.parser, job.total, job.done, job.invalid) == (
        "completed",
        ["plain"],
        "imported",
        6,
        6,
        2,
    )
    verdicts = {j.raw_text: j for j in Judgment.objects.filter(job=job).select_related("slot1_response__candidate")}
    assert set(verdicts) == {"model_a", "tie", "tie (inconsistent)"}
    inconsistent = verdicts["tie (inconsistent)"]
    assert (inconsistent.valid, inconsistent.choice, inconsistent.chosen_response) == (False, "", None)
    decisive = Judgment.objects.filter(job=job, valid=True)
    assert decisive.count() == 4
    for judgment in decisive:
        assert judgment.choice == "first" and judgment.chosen_response_id == judgment.slot1_response_id
        assert (judgment.presentation, judgment.condition, judgment.status) == (1, "plain", "done")


def test_parquet_gives_the_same_rows(tmp_path):
    path = tmp_path / "sample.parquet"
    pq.write_table(pa.Table.from_pylist(_rows()), path)
    assert _import(path, slug="mt-parquet") == SAMPLE_COUNTS
    assert _import(SAMPLE, slug="mt-parquet") == SAMPLE_COUNTS  # same natural keys either way


def test_every_winner_value_and_both_orders(tmp_path):
    rows = [
        _row(judge="expert_1"),
        _row(
            judge="expert_2",
            model_a="m2",
            model_b="m1",
            winner="model_b",
            conversation_a=_conv("Q?", ""),
            conversation_b=_conv("Q?", "long answer here"),
        ),
        _row(judge="expert_3", winner="tie"),
        _row(judge="gpt4_pair", winner="model_b"),
        _row(judge="gpt4_pair", turn=2, winner="tie (inconsistent)"),
    ]
    _import(_write_jsonl(tmp_path / "e.jsonl", rows), slug="edge")
    choices = dict(
        Submission.objects.filter(assignment__batch__study__slug="edge").values_list(
            "assignment__participant__label", "choice"
        )
    )
    assert choices == {"expert_1": "A", "expert_2": "B", "expert_3": "T"}
    judgments = Judgment.objects.filter(job__study__slug="edge").order_by("pair__instruction__turn")
    assert [(j.choice, j.valid, j.raw_text) for j in judgments] == [
        ("second", True, "model_b"),
        ("", False, "tie (inconsistent)"),
    ]
    assert judgments[0].chosen_response.text == ""  # m2's empty answer won


def test_duplicates_keep_the_first_vote_and_are_counted(tmp_path):
    rows = [
        _row(),
        _row(winner="model_b"),
        _row(judge="gpt4_pair"),
        _row(
            judge="gpt4_pair",
            model_a="m2",
            model_b="m1",
            winner="model_a",
            conversation_a=_conv("Q?", ""),
            conversation_b=_conv("Q?", "long answer here"),
        ),
    ]
    out = io.StringIO()
    call_command("import_mtbench", str(_write_jsonl(tmp_path / "d.jsonl", rows)), "--study", "dup", stdout=out)
    assert "skipped 1 repeated human vote row(s) (1 with another winner)" in out.getvalue()
    assert "skipped 1 repeated gpt-4 verdict row(s)" in out.getvalue()
    assert list(Submission.objects.filter(assignment__batch__study__slug="dup").values_list("choice", flat=True)) == [
        "A"
    ]
    assert list(Judgment.objects.filter(job__study__slug="dup").values_list("choice", flat=True)) == ["first"]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "invalid JSON"),
        (json.dumps(_row(winner="model_c")), "winner must be one of"),
        (json.dumps(_row(winner="tie (inconsistent)")), "is a gpt4_pair verdict"),
        (json.dumps(_row(turn=3)), "at least 6 messages"),
        (json.dumps(_row(model_b="m1")), "the same model"),
        (json.dumps(_row(question_id="7")), "question_id must be"),
    ],
)
def test_a_malformed_line_names_file_and_line_and_changes_nothing(tmp_path, line, problem):
    _import(SAMPLE)
    before = table_counts()
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_row()) + "\n\n" + line + "\n")
    with pytest.raises(CommandError) as caught:
        _import(SAMPLE, path)
    message = str(caught.value)
    assert f"{path}:3:" in message and problem in message and "\n" not in message
    assert table_counts() == before


def test_judge_names_are_hashed_in_the_participant_id():
    _import(SAMPLE)
    participants = Participant.objects.filter(study__slug="mt")
    assert sorted(participants.values_list("label", flat=True)) == ["author_1", "expert_1", "expert_2", "expert_3"]
    dump = serializers.serialize("json", participants, fields=("external_hash",))
    assert "expert_" not in dump and "author_" not in dump


def test_it_will_not_attach_imported_verdicts_to_a_live_judge():
    RegisteredModel.objects.create(name="gpt-4", kind=RegisteredModel.Kind.OPENAI, model="gpt-4")
    before = table_counts()
    with pytest.raises(CommandError, match="judge gpt-4: a 'openai' judge has this name"):
        _import(SAMPLE)
    assert table_counts() == before


def test_the_study_records_the_source_file_hashes_for_the_report_manifest():
    import hashlib

    from analysis.services import compose_report

    _import(SAMPLE)
    study = Study.objects.get(slug="mt")
    expected = {"mtbench_sample.jsonl": hashlib.sha256(SAMPLE.read_bytes()).hexdigest()}
    assert study.source_files == expected
    assert compose_report(study=study, profile="default")["manifest"]["data_files"] == expected
