"""seed_demo: an idempotent demo study with a simulated crowd, and a local login only with DEBUG on."""

from __future__ import annotations

import io
from statistics import mean

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotations.importers.demo import seed_demo_study
from annotations.models import Assignment, Batch, Participant, Response, Study
from judging.models import JudgeJob

pytestmark = pytest.mark.django_db


def _seed(*args: str) -> str:
    out = io.StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def test_no_jobs_leaves_the_judge_side_idle():
    _seed("--no-jobs", "--no-crowd")
    assert not JudgeJob.objects.exists()


def test_no_crowd_leaves_the_batches_open():
    _seed("--no-jobs", "--no-crowd")
    assert Batch.objects.filter(study__slug="demo").exists()
    assert not Participant.objects.exists() and not Assignment.objects.exists()


def test_the_systems_differ_clearly_in_length():
    study = seed_demo_study()
    lengths = {
        key: mean(
            len(text)
            for text in Response.objects.filter(candidate__study=study, candidate__key=key).values_list(
                "text", flat=True
            )
        )
        for key in ("thorough", "concise", "rambling", "wrong", "terse")
    }
    assert lengths["rambling"] > lengths["thorough"] > lengths["wrong"] > lengths["concise"] > lengths["terse"]
    assert lengths["terse"] < 20
    assert all(i.reference for i in study.instructions.all())


def test_it_creates_the_local_researcher_only_with_debug(settings):
    settings.DEBUG = False
    assert "local demo account" not in _seed("--no-crowd")
    assert not get_user_model().objects.filter(username="researcher").exists()
    settings.DEBUG = True
    assert "local demo account" in _seed("--no-crowd")
    user = get_user_model().objects.get(username="researcher")
    assert user.is_staff and user.is_superuser and user.check_password("researcher")
    _seed("--no-crowd")  # left as it is
    assert get_user_model().objects.filter(username="researcher").count() == 1


def test_if_empty_does_nothing_when_a_study_exists():
    Study.objects.create(slug="other", name="Other")
    assert "nothing to do" in _seed("--if-empty")
    assert not Study.objects.filter(slug="demo").exists()
    _seed("--no-crowd")
    assert Study.objects.filter(slug="demo").exists()


def test_no_report_leaves_the_report_to_the_researcher():
    from analysis.models import ReportRun

    assert "demo report" not in _seed("--no-jobs", "--no-crowd", "--no-report")
    assert not ReportRun.objects.exists()
