"""Judge outputs in the generic study format: judges.jsonl and judgments.jsonl (issue 20, item 3).

- A hand-checked fixture of Arena-Hard outputs in both orders with gold labels;
- (the run judge exported and re-imported: tests/judging/test_exported_judge_outputs.py)
- bad lines name file and line and change nothing;
- the upload page previews and imports them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from analysis.report import build_report
from annotations.importers.base import BadInput
from annotations.importers.generic_write import import_study
from annotations.models import Study
from judging.models import JudgeJob, Judgment, RegisteredModel
from tests.importers.conftest import table_counts
from tests.studyformat.conftest import rows, write_rows

pytestmark = pytest.mark.django_db
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "judge_outputs"


def _copy(target: Path) -> Path:
    shutil.copytree(FIXTURE, target)
    return target


def _row(rows_: list[dict], subject: str, name: str, **where) -> dict:
    found = [r for r in rows_ if r["subject"] == subject and r.get("bias", r.get("category")) == name]
    found = [r for r in found if all(r.get(k) == v for k, v in where.items())]
    assert len(found) == 1, (subject, name, rows_)
    return found[0]


def test_hand_checked_arena_hard_outputs_give_accuracy_consistency_and_position_preference(tmp_path):
    """The fixture, read by hand ("A" is the answer shown first; a pair is shown both ways):

    | q  | gold  | owl first        | heron first             | slots       | gold score |
    |----|-------|------------------|-------------------------|-------------|------------|
    | q1 | owl   | [[A>B]] owl      | [[B>A]] owl             | first, second | +2 right |
    | q2 | heron | [[A>>B]] owl     | "could argue [[B>A]]", final [[A>B]] heron | first, first | 0 wrong |
    | q3 | owl   | [[A=B]] tie      | [[A=B]] tie             | -            | 0 wrong    |
    | q4 | heron | [[B>A]] heron    | [[A=B]] tie             | -            | +1 right   |
    | q5 | owl   | refusal, none    | [[B>A]] owl             | -            | +1 right   |
    | q6 | heron | [[B>>A]] heron   | [[B>A]] owl             | second, second | 0 wrong |
    | q7 | owl   | [[A>B]] owl      | [[A>B]] heron           | first, first | 0 wrong   |

    gold accuracy 3/7 (factual 3/6, translation 0/1). The pair rows count the 6 pairs with a
    verdict (a slot or a tie) both times, q5 out (a refusal): first twice 2 (q2, q7), last twice 1
    (q6), position_preference (2 - 1) / 6; position_consistency: q1 and q3 (a tie twice), 2/6.
    """
    import_study(root=_copy(tmp_path / "in"), slug="arena")
    job = JudgeJob.objects.get(study__slug="arena")
    assert (job.judge.name, job.judge.kind, job.verdict_format, job.status) == (
        "arena-gpt",
        RegisteredModel.Kind.IMPORTED,
        "arena-hard",
        "completed",
    )
    assert (job.total, job.invalid, job.ties) == (14, 1, 3)
    strong = Judgment.objects.filter(job=job, strength="strong").count()
    assert strong == 2  # q2 and q6, the owl-first outputs

    report = build_report(study=Study.objects.get(slug="arena"), profile="default")
    overall = _row(report["gold_accuracy"], "arena-gpt", None)
    assert (overall["n"], overall["value"]) == (7, pytest.approx(3 / 7))
    assert _row(report["gold_accuracy"], "arena-gpt", "factual")["value"] == pytest.approx(0.5)
    assert _row(report["gold_accuracy"], "arena-gpt", "translation")["value"] == 0
    bias = report["bias"]
    order_first = _row(bias, "arena-gpt", "order_first")
    assert (order_first["n"], order_first["value"]) == (6, pytest.approx(2 / 6))
    assert _row(bias, "arena-gpt", "order_last")["value"] == pytest.approx(1 / 6)
    assert _row(bias, "arena-gpt", "position_preference")["value"] == pytest.approx(1 / 6)
    consistency = _row(bias, "arena-gpt", "position_consistency")
    assert (consistency["n"], consistency["value"]) == (6, pytest.approx(1 / 3))


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda j, g: j[0].pop("output"), "judgments.jsonl:1: give exactly one of output"),
        (lambda j, g: j[0].update(winner="tie"), "judgments.jsonl:1: give exactly one of output"),
        (lambda j, g: j[1].update(presented_first="model_a"), "judgments.jsonl:2: this pair was already judged"),
        (lambda j, g: j[0].update(judge="nobody"), "judgments.jsonl:1: unknown judge 'nobody'"),
        (lambda j, g: j[0].update(model_b="owl-7b"), "judgments.jsonl:1: model_a and model_b are the same model"),
        (lambda j, g: j[0].update(instruction_id="q99"), "judgments.jsonl:1: unknown instruction_id 'q99'"),
        (lambda j, g: j[0].update(condition="bandwagon"), "judgments.jsonl:1: condition bandwagon needs cued"),
        (lambda j, g: j[0].update(condition="plain", cued="model_a"), "judgments.jsonl:1: cued is only allowed"),
        (lambda j, g: j[0].update(strength="strong"), "judgments.jsonl:1: strength goes with a winner"),
        (lambda j, g: g[0].update(verdict_format="regex"), "judges.jsonl:1: missing field verdict_spec"),
        (lambda j, g: g[0].update(self_model="ghost"), "judges.jsonl:1: self_model 'ghost' has no response"),
        (lambda j, g: g[0].update(name="has space"), "judges.jsonl:1: name"),
    ],
)
def test_a_bad_line_names_file_and_line_and_changes_nothing(tmp_path, edit, problem):
    root = _copy(tmp_path / "bad")
    judgments, judges = rows(root / "judgments.jsonl"), rows(root / "judges.jsonl")
    edit(judgments, judges)
    write_rows(root / "judgments.jsonl", judgments)
    write_rows(root / "judges.jsonl", judges)
    before = table_counts()
    with pytest.raises(BadInput) as caught:
        import_study(root=root, slug="bad")
    assert str(caught.value).startswith(problem), str(caught.value)
    assert table_counts() == before and not Study.objects.filter(slug="bad").exists()


def test_a_regex_judge_needs_a_usable_spec_and_reads_its_outputs(tmp_path):
    root = _copy(tmp_path / "regex")
    write_rows(root / "judges.jsonl", [{"name": "grader", "verdict_format": "regex", "verdict_spec": {"x": 1}}])
    write_rows(
        root / "judgments.jsonl",
        [
            {"judge": "grader", "instruction_id": "q1", "model_a": "owl-7b", "model_b": "heron-13b", "output": "x"},
        ],
    )
    with pytest.raises(BadInput, match=r"judges.jsonl:1: verdict_spec"):
        import_study(root=root, slug="regex")
    spec = {
        "pattern": r"WINNER: (first|second|none)",
        "labels": {"first": ["first", None], "second": ["second", None], "none": ["tie", None]},
    }
    write_rows(root / "judges.jsonl", [{"name": "grader", "verdict_format": "regex", "verdict_spec": spec}])
    write_rows(
        root / "judgments.jsonl",
        [
            {"judge": "grader", "instruction_id": "q1", "model_a": "owl-7b", "model_b": "heron-13b", "output": o}
            for o in ["Long review...\nWINNER: second"]
        ]
        + [
            {
                "judge": "grader",
                "instruction_id": "q2",
                "model_a": "owl-7b",
                "model_b": "heron-13b",
                "output": "WINNER: none",
            }
        ],
    )
    import_study(root=root, slug="regex")
    verdicts = dict(
        Judgment.objects.filter(job__study__slug="regex").values_list("pair__instruction__external_id", "verdict")
    )
    assert verdicts == {"q1": "second", "q2": "tie"}


def test_an_imported_judge_name_is_its_owners(tmp_path, researcher, other_researcher):
    import_study(root=_copy(tmp_path / "one"), slug="mine", created_by=researcher)
    judge = RegisteredModel.objects.get(name="arena-gpt")
    assert (judge.kind, judge.owner) == (RegisteredModel.Kind.IMPORTED, researcher)
    import_study(root=tmp_path / "one", slug="mine-too", created_by=researcher)  # the owner reuses it
    with pytest.raises(BadInput, match="not available"):
        import_study(root=tmp_path / "one", slug="theirs", created_by=other_researcher)
    RegisteredModel.objects.create(
        name="live-one", kind=RegisteredModel.Kind.OPENAI, base_url="http://127.0.0.1:9/v1", model="m"
    )
    values = rows(tmp_path / "one" / "judges.jsonl")
    values[0]["name"] = "live-one"
    write_rows(tmp_path / "one" / "judges.jsonl", values)
    values = [{**v, "judge": "live-one"} for v in rows(tmp_path / "one" / "judgments.jsonl")]
    write_rows(tmp_path / "one" / "judgments.jsonl", values)
    with pytest.raises(BadInput, match="not available"):
        import_study(root=tmp_path / "one", slug="clash", created_by=researcher)


def test_a_reimport_replaces_the_imported_judgments(tmp_path):
    root = _copy(tmp_path / "re")
    import_study(root=root, slug="re")
    first = table_counts()
    import_study(root=root, slug="re")
    assert table_counts() == first  # the same files: the same rows
    write_rows(root / "judgments.jsonl", rows(root / "judgments.jsonl")[:4])
    import_study(root=root, slug="re")
    assert Judgment.objects.filter(job__study__slug="re").count() == 4
    (root / "judgments.jsonl").unlink()
    (root / "judges.jsonl").unlink()
    import_study(root=root, slug="re")
    assert not JudgeJob.objects.filter(study__slug="re").exists()


def test_the_upload_page_previews_and_imports_judge_outputs(researcher_client, settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    files = {
        name: SimpleUploadedFile(f"{name}.jsonl", (FIXTURE / f"{name}.jsonl").read_bytes())
        for name in ("instructions", "responses", "judges", "judgments")
    }
    page = researcher_client.post(reverse("annotations:study_import"), {**files, "slug": "up-judges"})
    assert page.status_code == 200, page.content.decode()[:2000]
    body = page.content.decode()
    assert "judge calls 14" in body and "judge calls without a verdict 1" in body and "judgments.jsonl" in body
    upload = page.context["upload_id"]
    done = researcher_client.post(reverse("annotations:study_import_confirm"), {"upload": upload}, follow=True)
    assert "judge calls: 14" in done.content.decode()
    assert JudgeJob.objects.get(study__slug="up-judges").judgments.count() == 14


def test_judgments_without_judges_file_say_so(tmp_path):
    root = _copy(tmp_path / "nojudges")
    (root / "judges.jsonl").unlink()
    with pytest.raises(BadInput, match=r"^judgments.jsonl: needs judges.jsonl"):
        import_study(root=root, slug="nojudges")
    assert json.loads((FIXTURE / "judges.jsonl").read_text())["name"] == "arena-gpt"
