"""Quality flags computed when a worker's assignment closes (annotations.quality.flags)."""

from __future__ import annotations

import logging
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotations import services
from annotations.models import Assignment, Submission, Task
from annotations.quality import flag_assignment, flags, reflag_batch, reflag_study
from annotations.services.answering import close_if_complete
from tests.annotations.conftest import build_study, current_task_url
from tests.annotations.helpers import form_fields
from tests.annotations.quality_kit import always_a, careful, codes, contrarian, new_worker, set_gold, work

pytestmark = pytest.mark.django_db


@pytest.fixture
def order_study():
    """One order batch of 10 tasks (5 pairs, both presentations), three workers a batch."""
    study = build_study("q-order", instructions=1, overlap=3)
    services.generate_batches(study=study, condition="order", seed=12, pairs_per_batch=5)
    return study


@pytest.fixture
def checked_study():
    """Like order_study, with 3 attention checks and 1 gold item among the 10 items."""
    study = build_study("q-checked", instructions=1, overlap=3, attention_check_rate=0.3, gold_rate=0.1)
    set_gold(study, "alpha", "delta", "delta")
    services.generate_batches(study=study, condition="order", seed=12, pairs_per_batch=5)
    return study


def flag_of(assignment: Assignment, code: str) -> dict:
    [flag] = [f for f in assignment.flags if f["code"] == code]
    return flag


def test_a_worker_choosing_a_ten_times_in_no_time_is_flagged_too_fast_and_straight_line(order_study):
    sloppy = work(new_worker(order_study, "sloppy"), always_a, seconds=0)
    assert sloppy.status == Assignment.Status.SUBMITTED and sloppy.flags_computed_at is not None
    assert codes(sloppy) == {"too_fast", "straight_line"}
    fast = flag_of(sloppy, "too_fast")
    assert fast["value"] < 1 and fast["threshold"] == 4.0 and "below 4 s" in fast["label"]
    line = flag_of(sloppy, "straight_line")
    assert line["value"] == "10 of 10" and line["label"] == "Chose A in 10 of 10 pairs" and line["threshold"] == 6
    # Stored, not just returned.
    assert Assignment.objects.get(pk=sloppy.pk).flags == sloppy.flags


def test_a_careful_worker_is_not_flagged(order_study):
    steady = work(new_worker(order_study, "steady"), careful, seconds=20)
    assert steady.flags == [] and steady.flags_computed_at is not None
    times = list(steady.submissions.values_list("time_on_task_ms", flat=True))
    assert min(times) >= 20_000  # the tokens really were rendered 20 s before the answer


def test_always_the_first_answer_shown_is_straight_lining_too(order_study):
    # The order condition shows slot A first; a worker who always picks the first shown always picks A.
    assignment = work(new_worker(order_study, "first"), always_a, seconds=20)
    assert codes(assignment) == {"straight_line"}
    # Mixed slots but always the response displayed first (as a shuffled display would record it).
    subs = list(assignment.submissions.select_related("task__pair").order_by("task__position"))
    for i, sub in enumerate(subs):
        other = [pk for pk in sub.task.slot_response_ids() if pk != sub.chosen_response_id][0]
        choice = "A" if i % 2 else "B"
        Submission.objects.filter(pk=sub.pk).update(choice=choice, display_order=[sub.chosen_response_id, other])
    [flag] = flag_assignment(assignment)
    assert flag["label"] == "Chose the first answer shown in 10 of 10 pairs"


def test_too_few_answers_are_not_straight_lining(order_study):
    order_study.quality_rules = {"straight_line_min_tasks": 11}
    order_study.save()
    assignment = work(new_worker(order_study, "short"), always_a, seconds=20)
    assert assignment.flags == []


def test_failed_attention_checks_are_flagged_with_how_many(checked_study):
    roles = list(Task.objects.filter(batch__study=checked_study).values_list("role", flat=True))
    assert (roles.count("instructed"), roles.count("catch"), roles.count("gold")) == (2, 1, 1)

    def ignores_checks(task: Task) -> str:
        return contrarian(task) if task.role in (Task.Role.INSTRUCTED, Task.Role.CATCH) else careful(task)

    assignment = work(new_worker(checked_study, "ignores"), ignores_checks, seconds=20)
    assert codes(assignment) == {"attention_failed"}
    assert flag_of(assignment, "attention_failed")["value"] == "3 of 3"
    assert flag_of(assignment, "attention_failed")["label"] == "Failed 3 of 3 attention checks"


def test_a_failed_gold_item_is_flagged(checked_study):
    def misses_gold(task: Task) -> str:
        return contrarian(task) if task.role == Task.Role.GOLD else careful(task)

    assignment = work(new_worker(checked_study, "gold"), misses_gold, seconds=20)
    assert codes(assignment) == {"gold_failed"}
    assert flag_of(assignment, "gold_failed")["value"] == "1 of 1"


def test_passing_every_check_raises_nothing(checked_study):
    assert work(new_worker(checked_study, "passes"), careful, seconds=20).flags == []


def test_a_looser_rule_lets_one_failed_check_pass(checked_study):
    checked_study.quality_rules = {"attention_fail_max": 1}
    checked_study.save()

    def fails_one(task: Task) -> str:
        return contrarian(task) if task.role == Task.Role.CATCH else careful(task)

    assert work(new_worker(checked_study, "one-off"), fails_one, seconds=20).flags == []


def test_qualification_attempts_above_the_maximum_are_flagged(order_study):
    assignment = work(new_worker(order_study, "retrier", attempts=2), careful, seconds=20)
    assert codes(assignment) == {"qualification_attempts"}
    assert (
        flag_of(assignment, "qualification_attempts")["value"],
        flag_of(assignment, "qualification_attempts")["threshold"],
    ) == (2, 1)


def test_disagreeing_with_the_majority_of_three_raters_is_flagged_once_the_others_submit(order_study):
    odd = work(new_worker(order_study, "odd"), contrarian, seconds=20)
    assert odd.flags == []  # alone: no majority to disagree with
    first = work(new_worker(order_study, "first-careful"), careful, seconds=20)
    odd.refresh_from_db()
    assert odd.flags == [] and first.flags == []  # two raters are fewer than min_raters_for_majority
    second = work(new_worker(order_study, "second-careful"), careful, seconds=20)
    odd.refresh_from_db()
    first.refresh_from_db()
    # The third submit recomputed the whole batch: odd is against the other two on all 10 tasks.
    assert codes(odd) == {"majority_disagreement"}
    flag = flag_of(odd, "majority_disagreement")
    assert (flag["value"], flag["threshold"]) == (1.0, 0.5) and "10 of 10" in flag["label"]
    # The careful raters' other two are split (one agrees, one does not): no majority, no flag.
    assert first.flags == [] and second.flags == []


def test_rejected_work_is_not_part_of_the_majority(order_study):
    odd = work(new_worker(order_study, "odd"), contrarian, seconds=20)
    first = work(new_worker(order_study, "c1"), careful, seconds=20)
    Assignment.objects.filter(pk=first.pk).update(review=Assignment.Review.REJECTED)
    second = work(new_worker(order_study, "c2"), careful, seconds=20)
    reflag_batch(odd.batch)
    odd.refresh_from_db()
    assert odd.flags == [] and Assignment.objects.get(pk=second.pk).flags == []


def test_an_untouched_ranking_is_flagged():
    study = build_study("q-rank", instructions=2)
    [batch] = services.generate_batches(study=study, condition="ranking", seed=1, rankings_per_batch=2)
    participant = new_worker(study, "ranker")
    assignment = services.claim_batch(participant=participant, session_hash="")
    for n, task in enumerate(batch.tasks.order_by("position")):
        ids = task.expected_response_ids()
        Submission.objects.create(
            assignment=assignment,
            task=task,
            ranking=ids,
            display_order=ids[::-1],
            bar_position=1,
            untouched=n == 0,
            time_on_task_ms=30_000,
            idempotency_key=f"k{n}",
        )
    assert close_if_complete(assignment=assignment)
    assignment.refresh_from_db()
    assert codes(assignment) == {"untouched_ranking"} and flag_of(assignment, "untouched_ranking")["value"] == "1 of 2"


def test_rankings_left_in_the_shown_order_are_straight_lining():
    study = build_study("q-rank-line", instructions=3, quality_rules={"straight_line_min_tasks": 3})
    [batch] = services.generate_batches(study=study, condition="ranking", seed=1, rankings_per_batch=3)
    assignment = services.claim_batch(participant=new_worker(study, "lazy"), session_hash="")
    for n, task in enumerate(batch.tasks.order_by("position")):
        ids = task.expected_response_ids()
        Submission.objects.create(
            assignment=assignment,
            task=task,
            ranking=ids,
            display_order=ids,
            time_on_task_ms=30_000,
            idempotency_key=f"r{n}",
        )
    assert close_if_complete(assignment=assignment)
    assignment.refresh_from_db()
    assert assignment.flags[0]["label"] == "Left 3 of 3 rankings in the order shown"


def test_an_error_in_the_flags_never_fails_the_submit(order_study, monkeypatch, caplog):
    def broken(assignment):
        raise RuntimeError("boom")

    monkeypatch.setattr(flags, "compute_flags", broken)
    with caplog.at_level(logging.ERROR, logger="annotations.quality.flags"):
        assignment = work(new_worker(order_study, "unlucky"), always_a, seconds=0)
    assert assignment.status == Assignment.Status.SUBMITTED and assignment.submissions.count() == 10
    assert assignment.flags == [] and assignment.flags_computed_at is None
    assert "quality flags failed" in caplog.text and "boom" in caplog.text


def test_flags_are_computed_once_per_close_not_per_answer(order_study, django_assert_num_queries):
    participant = new_worker(order_study, "counted")
    assignment = work(participant, careful, seconds=20)
    stamp = assignment.flags_computed_at
    assert not close_if_complete(assignment=assignment)  # already closed: nothing recomputed
    assignment.refresh_from_db()
    assert assignment.flags_computed_at == stamp
    # Loading it, its answers, the other raters' answers, the update: no query per task or rater.
    with django_assert_num_queries(4):
        flag_assignment(Assignment.objects.select_related("participant", "batch__study").get(pk=assignment.pk))
    work(new_worker(order_study, "second"), careful, seconds=20)
    batch = assignment.batch
    with django_assert_num_queries(1 + 2 * 3):  # the batch's assignments, then three queries each
        assert reflag_batch(batch) == 2


def test_changed_rules_take_effect_when_the_study_is_reflagged(order_study):
    assignment = work(new_worker(order_study, "medium"), careful, seconds=5)
    assert assignment.flags == []
    order_study.quality_rules = {"min_median_seconds": 10}
    order_study.save()
    assert reflag_study(order_study) == 1
    assignment.refresh_from_db()
    assert [f["code"] for f in assignment.flags] == ["too_fast"] and assignment.flags[0]["threshold"] == 10.0


def test_the_worker_pages_flag_the_work_on_the_last_submit(worker, pilot):
    while not (url := current_task_url(worker, pilot)).endswith("/done"):
        assert Assignment.objects.get().flags_computed_at is None  # not before the batch is done
        token, _ = form_fields(worker, url)
        worker.post(url, {"token": token, "choice": "B"})
    assignment = Assignment.objects.get()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert codes(assignment) == {"too_fast", "straight_line"}
    assert flag_of(assignment, "straight_line")["label"] == "Chose B in 6 of 6 pairs"


def test_the_flag_work_command_recomputes_and_counts(order_study):
    work(new_worker(order_study, "quick"), always_a, seconds=0)
    work(new_worker(order_study, "slow"), careful, seconds=20)
    Assignment.objects.update(flags=[], flags_computed_at=None)  # as if submitted before flags existed
    out = StringIO()
    call_command("flag_work", "--study", order_study.slug, stdout=out)
    assert out.getvalue().splitlines() == [
        "2 submitted assignment(s) flagged again; 1 with at least one flag",
        "  straight_line: 1",
        "  too_fast: 1",
    ]
    assert not Assignment.objects.filter(flags_computed_at__isnull=True).exists()


def test_the_flag_work_command_refuses_bad_rules_and_unknown_studies(order_study):
    order_study.quality_rules = {"fastest": 1}
    order_study.save()
    with pytest.raises(CommandError, match="quality rules are invalid: Unknown quality rule 'fastest'"):
        call_command("flag_work", "--study", order_study.slug)
    with pytest.raises(CommandError, match="unknown study"):
        call_command("flag_work", "--study", "nope")
