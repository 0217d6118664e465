"""seed_demo: an idempotent demo study with a simulated crowd, and a local login only with DEBUG on."""

from __future__ import annotations

import io
from statistics import mean, median

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from analysis.loaders import human_pairwise_frame, human_rankings_frame
from annotations.importers.demo import seed_demo_study
from annotations.models import Assignment, Batch, Pair, Participant, Response, Study, Submission
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
    assert {
        c: Batch.objects.filter(study=study, condition=c).count()
        for c in ("ranking", "order", "bandwagon", "attentional")
    } == {"ranking": 3, "order": 12, "bandwagon": 12, "attentional": 12}
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


# --- the simulated crowd -------------------------------------------------------------------

CARELESS_LABELS = {"sim-worker-45", "sim-worker-46", "sim-worker-47", "sim-worker-48"}


def _answers_by_worker(study: Study) -> list[tuple]:
    """What every simulated worker answered, in terms that do not depend on database ids.

    Careless rankings are left out: they keep the order the page showed, which the services
    seed by participant and task ids.
    """
    rows = (
        Submission.objects.filter(assignment__batch__study=study)
        .exclude(task__kind="ranking", assignment__participant__label__in=CARELESS_LABELS)
        .values_list(
            "assignment__participant__label",
            "task__condition",
            "task__batch__index",
            "task__position",
            "choice",
            "ranking",
            "bar_position",
            "time_on_task_ms",
        )
    )
    key_of = dict(Response.objects.filter(instruction__study=study).values_list("pk", "candidate__key"))
    return sorted(
        (label, condition, batch, position, choice, [key_of[r] for r in ranking or []], bar, ms)
        for label, condition, batch, position, choice, ranking, bar, ms in rows
    )


@pytest.mark.smoke
def test_every_demo_batch_gets_its_overlap_of_simulated_workers():
    output = _seed("--no-jobs")
    study = Study.objects.get(slug="demo")
    assert "simulated crowd: 48 workers (47 qualified), 117 batches answered" in output
    participants = Participant.objects.filter(study=study)
    assert participants.count() == participants.filter(simulated=True, platform="code").count() == 48
    assert set(participants.values_list("label", flat=True)) == {f"sim-worker-{i:02d}" for i in range(1, 49)}
    for batch in Batch.objects.filter(study=study):
        work = batch.assignments.filter(status=Assignment.Status.SUBMITTED)
        assert work.count() == study.overlap, batch
        for assignment in work:  # through the real services: every task answered once, one key each
            assert assignment.submissions.count() == batch.tasks.count()
    # Answers went through the worker's path: consent, the qualification round (some needed a
    # retry, one never passed), then a lease and one signed submit per task.
    assert not participants.filter(consented_at__isnull=True).exists()
    assert participants.filter(qualification_attempts=2, qualified=True).exists()
    failed = participants.get(qualified=False)
    assert failed.qualification_attempts == study.qualification_attempts_allowed
    assert not failed.assignments.exists()
    assert (
        Submission.objects.filter(assignment__batch__study=study).values("idempotency_key").distinct().count()
        == Submission.objects.filter(assignment__batch__study=study).count()
        == 1116
    )


def test_careless_work_waits_for_review_and_the_rest_is_approved():
    _seed("--no-jobs")
    work = Assignment.objects.filter(batch__study__slug="demo")
    pending = work.filter(review=Assignment.Review.PENDING)
    assert set(pending.values_list("participant__label", flat=True)) == CARELESS_LABELS
    assert pending.count() == 4  # careless workers drop out after one batch
    assert work.filter(review=Assignment.Review.APPROVED).count() == work.count() - 4
    assert not work.filter(review=Assignment.Review.APPROVED, participant__label__in=CARELESS_LABELS).exists()
    assert not work.filter(review=Assignment.Review.APPROVED, reviewed_at__isnull=True).exists()


def test_simulated_work_takes_human_time():
    _seed("--no-jobs")
    now = timezone.now()
    careful = Submission.objects.exclude(assignment__participant__label__in=CARELESS_LABELS)
    pair_s = [ms / 1000 for ms in careful.filter(task__kind="pairwise").values_list("time_on_task_ms", flat=True)]
    ranking_s = [ms / 1000 for ms in careful.filter(task__kind="ranking").values_list("time_on_task_ms", flat=True)]
    careless_s = [
        ms / 1000
        for ms in Submission.objects.filter(assignment__participant__label__in=CARELESS_LABELS).values_list(
            "time_on_task_ms", flat=True
        )
    ]
    assert 8 < median(pair_s) < 40 and min(pair_s) >= 6
    assert median(ranking_s) > 40
    assert max(careless_s) <= 3.5
    for submission in Submission.objects.all():
        assert submission.server_time_ms > submission.time_on_task_ms  # the client's span is clamped to it
    for assignment in Assignment.objects.all():
        assert assignment.started_at < assignment.opened_at < assignment.submitted_at < now
        assert assignment.work_seconds == int((assignment.submitted_at - assignment.started_at).total_seconds())
        spent = sum(assignment.submissions.values_list("server_time_ms", flat=True)) / 1000
        assert spent <= assignment.work_seconds + 1
        last = assignment.submissions.order_by("-created_at").first()
        assert last.created_at == assignment.submitted_at
    for participant in Participant.objects.all():
        assert participant.created_at < participant.consented_at < now
        first = participant.assignments.order_by("started_at").first()
        assert first is None or participant.consented_at < first.started_at


def test_quality_flags_are_computed_on_the_realistic_times():
    pytest.importorskip("annotations.quality.flags")
    _seed("--no-jobs")
    work = Assignment.objects.filter(batch__study__slug="demo")
    assert not work.filter(flags_computed_at__isnull=True).exists()
    too_fast = {
        a.participant.label
        for a in work.select_related("participant")
        if any(flag["code"] == "too_fast" for flag in a.flags)
    }
    assert too_fast == CARELESS_LABELS
    for assignment in work.filter(participant__label__in=CARELESS_LABELS, batch__condition="ranking"):
        assert "untouched_ranking" in {flag["code"] for flag in assignment.flags}


def test_the_crowd_is_seeded_and_a_second_run_adds_nothing():
    _seed("--no-jobs")
    study = Study.objects.get(slug="demo")
    first = _answers_by_worker(study)
    before = table_counts()
    assert "every batch already has its raters (48 simulated workers); nothing added" in _seed("--no-jobs")
    assert table_counts() == before
    Study.objects.filter(slug="demo").delete()
    _seed("--no-jobs")
    assert _answers_by_worker(Study.objects.get(slug="demo")) == first


def test_the_first_report_has_human_votes_and_rankings_to_compare():
    _seed("--no-jobs")
    study = Study.objects.get(slug="demo")
    votes = human_pairwise_frame(study)
    # Only approved work counts: all but the four careless batches of ten pairwise tasks.
    approved_pairwise = Submission.objects.filter(
        assignment__review=Assignment.Review.APPROVED, task__kind="pairwise"
    ).count()
    assert len(votes) == approved_pairwise > 0
    assert set(votes["condition"]) == {"order", "bandwagon", "attentional"}
    rankings = human_rankings_frame(study)
    per_instruction = rankings.groupby("instruction")["rater"].nunique()
    assert len(per_instruction) == 12 and per_instruction.min() >= 2
    # People agree on the best answers (thorough, concise) far more often than chance (2 in 5).
    tops = [ranking[0] for ranking in rankings["ranking"]]
    assert sum(top in ("thorough", "concise") for top in tops) > 0.7 * len(tops)
    assert len({tuple(r) for r in rankings["ranking"]}) > len(rankings) / 3  # but not in lockstep


# --- the first report ------------------------------------------------------------------------


def test_the_demo_opens_on_a_finished_report_computed_once(settings, researcher_client):
    from analysis.data_version import data_version
    from analysis.models import ReportRun

    output = _seed()
    study = Study.objects.get(slug="demo")
    [run] = ReportRun.objects.filter(study=study)
    assert run.status == ReportRun.Status.DONE and run.profile == "default", run.error
    assert f"demo report: run {run.pk} (default) computed in" in output
    # The worker's own service: schema-checked, with its figures and the data version it read.
    assert run.data_version == data_version(study) == run.result["data_version"] and run.figures
    cards = {card["subject"]: card for card in run.result["summary"]}
    assert cards["humans"]["headline"].startswith("People agree with each other")
    # The judge jobs are only queued: their cards say nothing is measured yet, not a verdict.
    assert {"simulated-judge", "longer"} <= set(cards)
    assert all(cards[j]["headline"].startswith("Nothing measured yet") for j in ("simulated-judge", "longer"))
    # Idempotent: the same data computes nothing again.
    assert "is up to date; nothing to compute" in _seed()
    assert ReportRun.objects.filter(study=study).count() == 1
    # The dashboard shows it instead of "None yet".
    page = researcher_client.get(reverse("analysis:dashboard")).content.decode()
    assert "None yet." not in page and 'class="status-done"' in page


def test_no_report_leaves_the_report_to_the_researcher():
    from analysis.models import ReportRun

    assert "demo report" not in _seed("--no-jobs", "--no-crowd", "--no-report")
    assert not ReportRun.objects.exists()
