"""A judge asked with the Arena-Hard prompt, run by the platform against the simulator over HTTP,
then exported (judges.jsonl, judgments.jsonl) and re-imported as an imported judge: the same bias
rows and the same accuracy on gold, and an export of the re-import byte-identical (issue 20)."""

from __future__ import annotations

import pytest
from django.db.models import F

from analysis.report import build_report
from annotations.exporters import export_study
from annotations.importers.generic_write import import_study
from annotations.models import Pair, Study
from judging import services
from judging.models import JudgeJob
from tests.judging.test_runner import run_all
from tests.studyformat.conftest import rows, write_rows


@pytest.mark.parametrize("fmt", ["arena-hard"])
def test_a_run_judge_and_its_exported_outputs_reimported_give_identical_rows(study, make_sim_judge, tmp_path, fmt):
    # Gold on every pair: the earlier candidate's answer (arbitrary, the same for both studies).
    Pair.objects.filter(instruction__study=study).update(gold_response_id=F("response_a_id"))
    judge = make_sim_judge(
        name="arena-sim",
        knobs=f"format={fmt},order_first=0.2,bandwagon=0.5,tie=0.2,invalid=0.1,seed=11",
        prompt_template="arena-hard-v1",
        self_candidate_key="alpha",
    )
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order", "bandwagon", "attentional"])
    run_all(job)
    assert job.status == "completed" and job.ties > 0 and job.invalid > 0
    export_study(study=study, out=tmp_path / "out")

    # Re-imported under its own name (a registered model keeps "arena-sim").
    for name in ("judges.jsonl", "judgments.jsonl"):
        values = rows(tmp_path / "out" / name)
        for value in values:
            for key in ("name", "judge"):
                if value.get(key) == "arena-sim":
                    value[key] = "arena-imported"
        write_rows(tmp_path / "out" / name, values)
    import_study(root=tmp_path / "out", slug="again")
    again = Study.objects.get(slug="again")
    imported = JudgeJob.objects.get(study=again)
    assert (imported.total, imported.ties, imported.invalid) == (job.total, job.ties, job.invalid)

    def judge_rows(report: dict, key: str, subject: str) -> list[dict]:
        return [{**r, "subject": "judge"} for r in report[key] if r["subject"] == subject]

    run, reimported = build_report(study=study, profile="default"), build_report(study=again, profile="default")
    for key in ("bias", "gold_accuracy"):
        assert judge_rows(run, key, "arena-sim") == judge_rows(reimported, key, "arena-imported") != []
    biases = {r["bias"] for r in judge_rows(run, "bias", "arena-sim")}
    assert {"order_first", "position_preference", "position_consistency", "bandwagon", "attentional"} <= biases

    # The round trip: export the re-import, and the files are the same bytes.
    export_study(study=again, out=tmp_path / "out2")
    for name in sorted(p.name for p in (tmp_path / "out").iterdir()):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes(), name
