"""The demo as ``seed_demo`` leaves it (DEBUG on, as under ``make run``), seeded once for the module.

Seeding (the study, 120 simulated workers through the real worker services, the judge jobs and
the first report) takes some ten seconds; each check used to seed it again. The module fixture
commits one seeded demo and removes it afterwards, leaving every table as it found it. Each
test still runs in its own transaction, so one that seeds again or deletes changes nothing for
the next.
"""

from __future__ import annotations

from collections.abc import Iterator
from statistics import median

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from analysis.loaders import human_pairwise_frame, human_rankings_frame
from analysis.models import ReportRun
from annotations.models import Assignment, Batch, Pair, Participant, Response, Study, Submission
from judging.models import JudgeJob, Judgment, RegisteredModel
from tests.importers.conftest import table_counts
from tests.importers.test_seed_demo import _seed

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker) -> Iterator[str]:
    """The output of one ``seed_demo``, its rows committed for the module."""
    with django_db_blocker.unblock():
        before, judges = table_counts(), set(RegisteredModel.objects.values_list("pk", flat=True))
        users = set(get_user_model().objects.values_list("pk", flat=True))
        try:
            with override_settings(DEBUG=True):
                output = _seed()
            yield output
        finally:
            ReportRun.objects.filter(study__slug="demo").delete()
            Study.objects.filter(slug="demo").delete()
            RegisteredModel.objects.exclude(pk__in=judges).delete()  # the demo's models, registered by the seed
            get_user_model().objects.exclude(pk__in=users).delete()  # the local demo login
            assert table_counts() == before, "the shared demo left rows behind"


@pytest.mark.smoke
def test_it_seeds_the_demo_study_once(demo):
    output = demo
    assert "12 instructions, 5 systems, 120 pairs" in output
    before = table_counts()
    _seed()
    assert table_counts() == before
    study = Study.objects.get(slug="demo")
    assert (study.is_public_demo, study.source) == (True, "demo")
    assert Response.objects.filter(instruction__study=study).count() == 60
    assert Pair.objects.filter(instruction__study=study).count() == 120


def test_the_demo_is_ready_to_explore_crowd_batches_judges_and_jobs(demo):
    output = demo
    study = Study.objects.get(slug="demo")
    # 12 instructions: ranking in batches of 4, pair conditions one batch per instruction (CALM's and
    # cot's too).
    crowd = ("ranking", *PAIR_CONDITIONS, "cot")
    assert {c: Batch.objects.filter(study=study, condition=c).count() for c in crowd} == {
        "ranking": 3,
        **dict.fromkeys((*PAIR_CONDITIONS, "cot"), 12),
    }
    jobs = {job.judge.name: job for job in JudgeJob.objects.filter(study=study).select_related("judge")}
    assert set(jobs) == {"simulated-judge", "longer"}
    # 120 pairs x 2 presentations per condition: order, bandwagon, attentional, CALM's five and cot.
    assert jobs["simulated-judge"].total == 120 * 2 * 9
    assert jobs["simulated-judge"].conditions == [*PAIR_CONDITIONS, "cot"]
    assert jobs["longer"].total == 120 * 2
    assert Judgment.objects.filter(job__study=study).count() == 120 * 2 * 10
    assert "queued judge job" in output
    assert "queued judge job" not in _seed()  # a second run queues nothing new
    assert JudgeJob.objects.filter(study=study).count() == 2


CARELESS_LABELS = {"sim-worker-117", "sim-worker-118", "sim-worker-119", "sim-worker-120"}
# The demo's pair conditions, the crowd's and the simulated judge's alike.
PAIR_CONDITIONS = (
    "order", "bandwagon", "attentional", "authority", "verbosity", "refinement", "identity", "sentiment",
)  # fmt: skip


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
def test_every_demo_batch_gets_its_overlap_of_simulated_workers(demo):
    output = demo
    study = Study.objects.get(slug="demo")
    # 111 batches (3 ranking, 12 for each of 9 pair conditions, cot's included) x overlap 3.
    assert "simulated crowd: 120 workers (119 qualified), 333 batches answered" in output
    participants = Participant.objects.filter(study=study)
    assert participants.count() == participants.filter(simulated=True, platform="code").count() == 120
    assert set(participants.values_list("label", flat=True)) == {f"sim-worker-{i:02d}" for i in range(1, 121)}
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
        == 3 * 4 * 3 + 108 * 10 * 3  # ranking: 3 batches of 4; pairs: 108 batches of 5 pairs shown twice
    )


def test_careless_work_waits_for_review_and_the_rest_is_approved(demo):
    work = Assignment.objects.filter(batch__study__slug="demo")
    pending = work.filter(review=Assignment.Review.PENDING)
    assert set(pending.values_list("participant__label", flat=True)) == CARELESS_LABELS
    assert pending.count() == 4  # careless workers drop out after one batch
    assert work.filter(review=Assignment.Review.APPROVED).count() == work.count() - 4
    assert not work.filter(review=Assignment.Review.APPROVED, participant__label__in=CARELESS_LABELS).exists()
    assert not work.filter(review=Assignment.Review.APPROVED, reviewed_at__isnull=True).exists()


def test_simulated_work_takes_human_time(demo):
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


def test_quality_flags_are_computed_on_the_realistic_times(demo):
    pytest.importorskip("annotations.quality.flags")
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


def test_the_crowd_is_seeded_and_a_second_run_adds_nothing(demo):
    study = Study.objects.get(slug="demo")
    first = _answers_by_worker(study)
    before = table_counts()
    assert "every batch already has its raters (120 simulated workers); nothing added" in _seed("--no-jobs")
    assert table_counts() == before
    Study.objects.filter(slug="demo").delete()
    _seed("--no-jobs")
    assert _answers_by_worker(Study.objects.get(slug="demo")) == first


def test_the_first_report_has_human_votes_and_rankings_to_compare(demo):
    study = Study.objects.get(slug="demo")
    votes = human_pairwise_frame(study)
    # Only approved work counts: all but the four careless batches of ten pairwise tasks.
    approved_pairwise = Submission.objects.filter(
        assignment__review=Assignment.Review.APPROVED, task__kind="pairwise"
    ).count()
    assert len(votes) == approved_pairwise > 0
    assert set(votes["condition"]) == {*PAIR_CONDITIONS, "cot"}
    # cot's answers carry the reasoning the page required, written before the choice.
    reasons = Submission.objects.filter(task__condition="cot", task__batch__study=study).values_list(
        "rationale", flat=True
    )
    assert reasons and all(len(r) >= 40 for r in reasons)
    rankings = human_rankings_frame(study)
    per_instruction = rankings.groupby("instruction")["rater"].nunique()
    assert len(per_instruction) == 12 and per_instruction.min() >= 2
    # People agree on the best answers (thorough, concise) far more often than chance (2 in 5).
    tops = [ranking[0] for ranking in rankings["ranking"]]
    assert sum(top in ("thorough", "concise") for top in tops) > 0.7 * len(tops)
    assert len({tuple(r) for r in rankings["ranking"]}) > len(rankings) / 3  # but not in lockstep


# --- the first report ------------------------------------------------------------------------


def test_the_demo_opens_on_a_finished_report_computed_once(demo, researcher_client):
    from analysis.data_version import data_version
    from analysis.models import ReportRun

    output = demo
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
