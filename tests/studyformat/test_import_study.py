"""`manage.py import_study`: what lands where, re-runs, replacing, and one-line errors that change nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.core.management import CommandError
from django.db import connection

from annotations.importers.generic import FILES as SCHEMA_FILES
from annotations.importers.generic import read_study, schema, schema_problems
from annotations.importers.generic_settings import EXTRA_FILES
from annotations.importers.study_extensions import extension_files
from annotations.models import Assignment, Batch, Candidate, Participant, Response, Study, Submission, Task
from annotations.pseudonyms import pseudonymise
from tests.importers.conftest import table_counts
from tests.studyformat.conftest import SAMPLE, content, copy_sample, rows, run_import, write_rows

pytestmark = pytest.mark.django_db
RAW_ANNOTATORS = ("W-PROLIFIC-5f3a9c", "W-PROLIFIC-77b2e1", "mturk:A1B2C3D4", "R-only-annotator-9")


def test_the_sample_lands_where_reports_read_human_work():
    out = run_import(SAMPLE, "gen", "--name", "Sample study")
    study = Study.objects.get(slug="gen")
    assert (study.name, study.source) == ("Sample study", Study.Source.MANUAL)
    votes, rankings = rows(SAMPLE / "votes.jsonl"), rows(SAMPLE / "rankings.jsonl")
    assert study.instructions.count() == len(rows(SAMPLE / "instructions.jsonl"))
    models = {r["model"] for r in rows(SAMPLE / "responses.jsonl")}
    assert study.candidates.count() == len(models)
    # All pairs of the models that answered each instruction.
    n = len(models)
    assert sum(i.pairs.count() for i in study.instructions.all()) == study.instructions.count() * n * (n - 1) // 2
    subs = Submission.objects.filter(assignment__batch__study=study)
    assert subs.filter(task__kind="pairwise").count() == len(votes)
    assert subs.filter(task__kind="ranking").count() == len(rankings)
    assert set(subs.values_list("source", flat=True)) == {Submission.Source.IMPORT}
    assert set(Assignment.objects.filter(batch__study=study).values_list("status", "review")) == {
        (Assignment.Status.SUBMITTED, Assignment.Review.APPROVED)
    }
    assert set(Batch.objects.filter(study=study).values_list("overlap", flat=True)) == {1}
    assert f"submissions: {len(votes) + len(rankings)} (+{len(votes) + len(rankings)} new)" in out
    # Ties stay ties; the cue slot follows the presentation.
    assert subs.filter(choice="T").count() == sum(v["winner"] == "tie" for v in votes)
    cued = Task.objects.filter(batch__study=study, condition="bandwagon")
    assert {t.cue["cue_slot"] for t in cued} == {"A", "B"}
    first = votes[0]
    task = Task.objects.get(
        batch__study=study, batch__condition="order", position=0, batch__assignments__participant__label="annotator-1"
    )
    slot_a = task.pair.response_a if task.arrangement == "ab" else task.pair.response_b
    assert slot_a.candidate.key == first[first["presented_first"]]
    assert study.source_files == {
        name: hashlib.sha256((SAMPLE / name).read_bytes()).hexdigest()
        for name in ("instructions.jsonl", "responses.jsonl", "votes.jsonl", "rankings.jsonl")
    }


def test_annotators_are_pseudonymised_and_the_raw_ids_are_stored_nowhere():
    run_import(SAMPLE, "gen")
    study = Study.objects.get(slug="gen")
    people = dict(Participant.objects.filter(study=study).values_list("external_hash", "label"))
    assert people == {
        pseudonymise(Participant.Platform.CODE, raw): f"annotator-{n}" for n, raw in enumerate(RAW_ANNOTATORS, 1)
    }
    with connection.cursor() as cursor:
        for table in (
            "annotations_participant",
            "annotations_batch",
            "annotations_task",
            "annotations_submission",
            "annotations_assignment",
            "annotations_study",
        ):
            cursor.execute(f"SELECT * FROM {table}")  # our own table names
            dump = json.dumps(cursor.fetchall(), default=str)
            for raw in RAW_ANNOTATORS:
                assert raw not in dump, (table, raw)


def test_a_second_run_changes_nothing():
    run_import(SAMPLE, "gen")
    before, dump = table_counts(), content(Study.objects.get(slug="gen"))
    instruction_pks = sorted(Study.objects.get(slug="gen").instructions.values_list("pk", flat=True))
    out = run_import(SAMPLE, "gen")
    assert table_counts() == before
    assert content(Study.objects.get(slug="gen")) == dump
    assert sorted(Study.objects.get(slug="gen").instructions.values_list("pk", flat=True)) == instruction_pks
    assert "(+1" not in out and "(-" not in out


def test_changed_files_replace_the_previous_import_cleanly(tmp_path):
    run_import(SAMPLE, "gen")
    root = copy_sample(tmp_path / "v2")
    keep = [r for r in rows(root / "instructions.jsonl") if r["id"] != "q1"]
    write_rows(root / "instructions.jsonl", list(reversed(keep)))  # q3 now comes first
    for name in ("responses.jsonl", "votes.jsonl", "rankings.jsonl"):
        write_rows(
            root / name,
            [
                r
                for r in rows(root / name)
                if r["instruction_id"] != "q1"
                and r.get("model") != "wren-3b"
                and "wren-3b" not in (r.get("model_a"), r.get("model_b"))
                and "wren-3b" not in r.get("ranking", [])
            ],
        )
    (root / "rankings.jsonl").unlink()
    run_import(root, "gen")
    study = Study.objects.get(slug="gen")
    assert list(study.instructions.values_list("external_id", "index")) == [("q3", 0), ("q2", 1)]
    assert sorted(study.candidates.values_list("key", flat=True)) == ["heron-13b", "kite-70b", "owl-7b"]
    assert sum(i.pairs.count() for i in study.instructions.all()) == 2 * 3
    assert not Submission.objects.filter(assignment__batch__study=study, task__kind="ranking").exists()
    assert not Participant.objects.filter(study=study, label="annotator-4").exists()
    # The replacement is exactly what importing the new files into an empty study gives.
    run_import(root, "fresh")
    assert content(study) == content(Study.objects.get(slug="fresh"))


def _break(tmp_path: Path, name: str, line: int, value: object) -> Path:
    """A copy of the sample with line ``line`` (1-based) of ``name`` replaced (a dict or raw text)."""
    root = copy_sample(tmp_path / "bad")
    lines = (root / name).read_text(encoding="utf-8").splitlines()
    lines[line - 1] = value if isinstance(value, str) else json.dumps(value)
    (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


VOTE = {"instruction_id": "q1", "model_a": "owl-7b", "model_b": "heron-13b", "winner": "model_a", "annotator": "x"}
BAD = [
    (
        "votes.jsonl",
        17,
        VOTE | {"winner": "both"},
        "votes.jsonl:17: winner must be model_a, model_b or tie, not 'both'",
    ),
    ("votes.jsonl", 3, VOTE | {"instruction_id": "q9"}, "votes.jsonl:3: unknown instruction_id 'q9'"),
    ("votes.jsonl", 4, VOTE | {"model_b": "eagle"}, "votes.jsonl:4: model 'eagle' has no response to instruction 'q1'"),
    ("votes.jsonl", 5, VOTE | {"model_b": "owl-7b"}, "votes.jsonl:5: model_a and model_b are the same model"),
    ("votes.jsonl", 6, VOTE | {"condition": "bandwagon"}, "votes.jsonl:6: condition bandwagon needs cued"),
    ("votes.jsonl", 7, VOTE | {"cued": "model_a"}, "votes.jsonl:7: cued is only allowed with condition bandwagon"),
    ("votes.jsonl", 8, VOTE | {"condition": "ranking"}, "votes.jsonl:8: condition must be plain, order,"),
    (
        "votes.jsonl",
        9,
        VOTE | {"annotator": "W-PROLIFIC-5f3a9c", "condition": "order"},
        "votes.jsonl:9: duplicate vote: this annotator already voted on 'owl-7b' shown before 'heron-13b' in condition order (first at votes.jsonl:1)",
    ),
    ("votes.jsonl", 10, VOTE | {"colour": "red"}, "votes.jsonl:10: unknown field colour"),
    ("votes.jsonl", 11, "{not json", "votes.jsonl:11: invalid JSON"),
    ("votes.jsonl", 12, "[1, 2]", "votes.jsonl:12: a line must be a JSON object"),
    (
        "instructions.jsonl",
        2,
        {"id": "q1", "instruction": "again"},
        "instructions.jsonl:2: duplicate id 'q1' (first at instructions.jsonl:1)",
    ),
    ("instructions.jsonl", 3, {"id": "q3"}, "instructions.jsonl:3: missing field instruction"),
    ("instructions.jsonl", 1, {"id": " q1", "instruction": "x"}, "instructions.jsonl:1: id must be a non-empty string"),
    (
        "responses.jsonl",
        2,
        {"instruction_id": "q1", "model": "owl-7b", "text": "again"},
        "responses.jsonl:2: duplicate response of model 'owl-7b' to instruction 'q1' (first at responses.jsonl:1)",
    ),
    (
        "responses.jsonl",
        5,
        {"instruction_id": "q1", "model": "m", "text": 5},
        "responses.jsonl:5: text must be of type string",
    ),
    (
        "rankings.jsonl",
        2,
        {"instruction_id": "q2", "annotator": "y", "ranking": ["owl-7b", "heron-13b"]},
        "rankings.jsonl:2: ranking must list all 4 models with a response to instruction 'q2'; missing 'wren-3b', 'kite-70b'",
    ),
    (
        "rankings.jsonl",
        3,
        {"instruction_id": "q3", "annotator": "y", "ranking": ["owl-7b", "owl-7b"]},
        "rankings.jsonl:3: ranking lists a model twice",
    ),
    (
        "rankings.jsonl",
        4,
        {
            "instruction_id": "q1",
            "annotator": "W-PROLIFIC-5f3a9c",
            "ranking": ["owl-7b", "heron-13b", "wren-3b", "kite-70b"],
        },
        "rankings.jsonl:4: duplicate ranking of instruction 'q1' by this annotator (first at rankings.jsonl:1)",
    ),
    (
        "rankings.jsonl",
        5,
        {
            "instruction_id": "q2",
            "annotator": "z",
            "ranking": ["owl-7b", "heron-13b", "wren-3b", "kite-70b"],
            "acceptable_count": 5,
        },
        "rankings.jsonl:5: acceptable_count 5 is more than the 4 ranked models",
    ),
]


@pytest.mark.parametrize(
    ("name", "line", "value", "message"), BAD, ids=[b[3].split(":")[0] + ":" + str(b[1]) for b in BAD]
)
def test_bad_input_is_one_line_naming_file_and_line_and_changes_nothing(tmp_path, name, line, value, message):
    run_import(SAMPLE, "gen")
    before, dump = table_counts(), content(Study.objects.get(slug="gen"))
    root = _break(tmp_path, name, line, value)
    for slug in ("gen", "new-one"):
        with pytest.raises(CommandError) as caught:
            run_import(root, slug)
        text = str(caught.value)
        assert text.startswith(message), text
        assert "\n" not in text
    assert table_counts() == before
    assert content(Study.objects.get(slug="gen")) == dump
    assert not Study.objects.filter(slug="new-one").exists()


def test_missing_files_and_too_long_lines(tmp_path, settings):
    root = copy_sample(tmp_path / "x")
    (root / "responses.jsonl").unlink()
    with pytest.raises(CommandError, match=r"^responses.jsonl: file not found"):
        run_import(root, "gen")
    copy_sample(root)
    settings.IMPORT_MAX_LINE_BYTES = 300
    lines = (root / "responses.jsonl").read_text().splitlines()
    lines[2] = json.dumps({"instruction_id": "q1", "model": "wren-3b", "text": "x" * 400})
    (root / "responses.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(CommandError, match=r"^responses.jsonl:3: line longer than 300 bytes"):
        run_import(root, "gen")
    assert not Study.objects.exists()


def test_the_command_counts_other_problems_and_the_plan_lists_them(tmp_path):
    root = _break(tmp_path, "votes.jsonl", 2, VOTE | {"winner": "?"})
    lines = (root / "votes.jsonl").read_text().splitlines()
    lines[4] = json.dumps(VOTE | {"model_a": "nobody"})
    (root / "votes.jsonl").write_text("\n".join(lines) + "\n")
    plan = read_study(root)
    assert [str(p).split(": ")[0] for p in plan.problems] == ["votes.jsonl:2", "votes.jsonl:5"]
    with pytest.raises(CommandError, match=r"\(and 1 more problem\(s\)\)$"):
        run_import(root, "gen")


def test_studies_of_other_sources_are_never_replaced():
    Study.objects.create(slug="cob", name="CoBBLEr", source=Study.Source.COBBLER)
    with pytest.raises(CommandError, match="^--study cob: study exists with source 'cobbler'"):
        run_import(SAMPLE, "cob")
    with pytest.raises(CommandError, match="must be a slug"):
        run_import(SAMPLE, "not a slug")


def test_the_schema_and_the_validator_agree():
    """Every sample line is valid; each documented rule the schema states rejects what it should."""
    whole = schema()
    # The extras: test_settings_and_gold.py; the judge outputs (judging's): test_judge_outputs.py.
    assert set(whole["files"]) == set(SCHEMA_FILES) | set(EXTRA_FILES) | set(extension_files())
    assert set(extension_files()) == {"judges.jsonl", "judgments.jsonl"}
    for name, (definition, _required) in SCHEMA_FILES.items():
        assert whole["files"][name]["$ref"] == f"#/$defs/{definition}"
        for value in rows(SAMPLE / name):
            assert schema_problems(definition, value) == []
    assert schema_problems("vote", VOTE) == []
    assert schema_problems("vote", VOTE | {"presented_first": "model_b", "condition": "order"}) == []
    assert schema_problems("vote", VOTE | {"condition": "attentional", "cued": "model_b"}) == []
    assert schema_problems("vote", {**VOTE, "winner": "model_c"})
    assert schema_problems("vote", {k: v for k, v in VOTE.items() if k != "annotator"})
    assert schema_problems("instruction", {"id": 3, "instruction": "x"}) == []
    assert schema_problems("instruction", {"id": -1, "instruction": "x"})
    assert schema_problems("instruction", {"id": "q", "instruction": "x", "category": "c" * 33})
    assert schema_problems("ranking", {"instruction_id": "q", "annotator": "a", "ranking": ["m"]})
    assert schema_problems("response", {"instruction_id": "q", "model": "m" * 65, "text": ""})


def test_a_re_import_keeps_answers_generated_on_the_platform():
    run_import(SAMPLE, "gen")
    study = Study.objects.get(slug="gen")
    new = Candidate.objects.create(study=study, key="my-new-model", position=9)
    instruction = study.instructions.get(external_id="q2")
    Response.objects.create(instruction=instruction, candidate=new, text="generated", provenance={"model": "m"})
    run_import(SAMPLE, "gen")
    assert Response.objects.get(candidate__study=study, candidate__key="my-new-model").text == "generated"
    assert list(study.candidates.values_list("key", flat=True))[-1] == "my-new-model"
