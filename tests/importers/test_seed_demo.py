"""seed_demo: an idempotent demo study, and a local login only with DEBUG on."""
from __future__ import annotations

import io
from statistics import mean

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotations.importers.demo import seed_demo_study
from annotations.models import Batch, Pair, Response, Study
from judging.models import JudgeJob, Judgment
from tests.importers.conftest import table_counts

pytestmark = pytest.mark.django_db


def _seed(*args: str) -> str:
    out = io.StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


@pytest.mark.smoke
def test_it_seeds_the_demo_study_once(settings):
    settings.DEBUG = True
    output = _seed()
    assert "12 instructions, 5 systems, 120 pairs" in output
    before = table_counts()
    _seed()
    assert table_counts() == before
    study = Study.objects.get(slug="demo")
    assert (study.is_public_demo, study.source) == (True, "demo")
    assert Response.objects.filter(instruction__study=study).count() == 60
    assert Pair.objects.filter(instruction__study=study).count() == 120


def test_the_demo_is_ready_to_explore_crowd_batches_judges_and_jobs(settings):
    settings.DEBUG = True
    output = _seed()
    study = Study.objects.get(slug="demo")
    # 12 instructions: ranking in batches of 4, pair conditions one batch per instruction.
    assert {c: Batch.objects.filter(study=study, condition=c).count()
            for c in ("ranking", "order", "bandwagon", "attentional")} == {
        "ranking": 3, "order": 12, "bandwagon": 12, "attentional": 12}
    jobs = {job.judge.name: job for job in JudgeJob.objects.filter(study=study).select_related("judge")}
    assert set(jobs) == {"simulated-judge", "longer"}
    # 120 pairs x 2 presentations per condition.
    assert jobs["simulated-judge"].total == 120 * 2 * 3
    assert jobs["longer"].total == 120 * 2
    assert Judgment.objects.filter(job__study=study).count() == 120 * 2 * 4
    assert "queued judge job" in output
    assert "queued judge job" not in _seed()  # a second run queues nothing new
    assert JudgeJob.objects.filter(study=study).count() == 2


def test_no_jobs_leaves_the_judge_side_idle():
    _seed("--no-jobs")
    assert not JudgeJob.objects.exists()


def test_the_systems_differ_clearly_in_length():
    study = seed_demo_study()
    lengths = {key: mean(len(text) for text in Response.objects.filter(
        candidate__study=study, candidate__key=key).values_list("text", flat=True))
        for key in ("thorough", "concise", "rambling", "wrong", "terse")}
    assert lengths["rambling"] > lengths["thorough"] > lengths["wrong"] > lengths["concise"] > lengths["terse"]
    assert lengths["terse"] < 20
    assert all(i.reference for i in study.instructions.all())


def test_it_creates_the_local_researcher_only_with_debug(settings):
    settings.DEBUG = False
    assert "local demo account" not in _seed()
    assert not get_user_model().objects.filter(username="researcher").exists()
    settings.DEBUG = True
    assert "local demo account" in _seed()
    user = get_user_model().objects.get(username="researcher")
    assert user.is_staff and user.is_superuser and user.check_password("researcher")
    _seed()  # left as it is
    assert get_user_model().objects.filter(username="researcher").count() == 1


def test_if_empty_does_nothing_when_a_study_exists():
    Study.objects.create(slug="other", name="Other")
    assert "nothing to do" in _seed("--if-empty")
    assert not Study.objects.filter(slug="demo").exists()
    _seed()
    assert Study.objects.filter(slug="demo").exists()
