"""create_judge and run_judges: happy paths, baselines on demand, one-line errors, no changes."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from judging.models import JudgeJob, RegisteredModel
from judging.services import ensure_demo_judges
from tests.conftest import PROJECT_ROOT, _worker_env


def test_create_judge_for_an_endpoint_and_a_baseline(db, capsys):
    call_command(
        "create_judge",
        "gpt",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "gpt-4o",
        "--api-key-env",
        "JUDGE_KEY_OPENAI",
        "--price-in",
        "0.005",
        "--generation",
        '{"temperature": 0}',
    )
    call_command("create_judge", "len", "--baseline", "longer")
    gpt = RegisteredModel.objects.get(name="gpt")
    assert gpt.api_key_env == "JUDGE_KEY_OPENAI" and gpt.generation == {"temperature": 0}
    assert RegisteredModel.objects.get(name="len").baseline == "longer"
    with pytest.raises(CommandError, match="not available"):
        call_command("create_judge", "gpt", "--base-url", "http://x/v1", "--model", "m")
    with pytest.raises(CommandError, match="needs --base-url and --model"):
        call_command("create_judge", "half", "--model", "m")


def test_run_judges_creates_baselines_on_demand(study, capsys, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        call_command("run_judges", "--study", "tiny", "--judge", "last-slot", "--conditions", "order,attentional")
    assert "72 judgments queued" in capsys.readouterr().out
    job = JudgeJob.objects.get()
    assert job.judge.baseline == "last-slot" and job.conditions == ["order", "attentional"]
    assert len(callbacks) == 3  # two chunk messages and the end of queueing wait for the commit


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--study", "nope", "--judge", "random"], "no study with slug 'nope'"),
        (["--study", "tiny", "--judge", "random", "--conditions", "order,vibes"], "unknown condition 'vibes'"),
        (["--study", "tiny", "--judge", "ghost"], "no judge called 'ghost'"),
        (["--study", "tiny", "--judge", "random", "--budget", "lots"], "--budget must be a number"),
        (["--study", "tiny", "--judge", "random", "--pair-set", "human"], "no pairs in pair set 'human'"),
    ],
)
def test_run_judges_bad_input_changes_nothing(study, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("run_judges", *args)
    assert not JudgeJob.objects.exists() and not RegisteredModel.objects.exists()


def test_run_judges_exits_non_zero_with_one_line(transactional_db):
    proc = subprocess.run(
        [sys.executable, "manage.py", "run_judges", "--study", "missing", "--judge", "x"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=_worker_env(),
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == ["CommandError: no study with slug 'missing'"]


def test_ensure_demo_judges_points_at_the_simulator(db, settings):
    settings.SIMULATOR_BASE_URL = "http://127.0.0.1:8000/sim/v1"
    judges = ensure_demo_judges()
    assert [j.name for j in judges] == ["simulated-judge", "longer", "first-slot", "last-slot", "random"]
    assert judges[0].base_url == "http://127.0.0.1:8000/sim/v1" and judges[0].model.startswith("sim:")
    assert len(ensure_demo_judges()) == 5 and RegisteredModel.objects.count() == 5  # idempotent
