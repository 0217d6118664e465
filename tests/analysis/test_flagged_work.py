"""Check tasks are never data, and a profile may leave flagged work out (analysis.loaders.counted_work)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from analysis import loaders
from analysis.exporters.methods import methods_paragraphs
from analysis.loaders.length import load_votes, response_lengths
from analysis.profiles import DEFAULT, PROFILES, get_profile
from analysis.sections import bias
from analysis.services import compose_report, study_counts
from annotations import services
from annotations.models import Assignment, ReviewDecision, Submission, Task
from tests.annotations.conftest import build_study
from tests.annotations.quality_kit import always_a, careful, new_worker, set_gold, work

pytestmark = pytest.mark.django_db

UNFLAGGED = get_profile("default-unflagged")


@pytest.fixture
def study():
    """An order batch with 3 attention checks and a gold item; two careful workers and one sloppy, all approved."""
    study = build_study("flagged", instructions=1, overlap=3, attention_check_rate=0.3, gold_rate=0.1)
    set_gold(study, "alpha", "delta", "delta")
    services.generate_batches(study=study, condition="order", seed=12, pairs_per_batch=5)
    for code, strategy, seconds in (("careful-1", careful, 20), ("careful-2", careful, 20), ("sloppy", always_a, 0)):
        assignment = work(new_worker(study, code), strategy, seconds=seconds)
        ReviewDecision.objects.record(assignment=assignment, decision=Assignment.Review.APPROVED)
    return study


def raters(frame, study) -> dict[str, int]:
    labels = dict(Assignment.objects.filter(batch__study=study).values_list("participant__label", "participant__label"))
    return {label: int((frame["rater_label"] == label).sum()) for label in labels}


def test_the_profile_states_its_rule():
    assert DEFAULT.flagged_work == "keep" and UNFLAGGED.flagged_work == "exclude"
    assert replace(DEFAULT, name="default-unflagged", flagged_work="exclude") == UNFLAGGED
    # Every shipped profile but the new one keeps flagged work, so their numbers do not move.
    assert {name for name, p in PROFILES.items() if p.flagged_work != "keep"} == {"default-unflagged"}
    assert UNFLAGGED.choices()["flagged_work"] == "exclude"
    with pytest.raises(ValueError, match="unknown flagged_work 'drop'"):
        loaders.counted_work(replace(DEFAULT, flagged_work="drop"))


def test_check_tasks_are_never_human_rows(study):
    n_items = Task.objects.filter(batch__study=study, role=Task.Role.ITEM).count()
    n_checks = Task.objects.filter(batch__study=study).exclude(role=Task.Role.ITEM).count()
    assert (n_items, n_checks) == (10, 4)
    frame = loaders.human_pairwise_frame(study)
    assert len(frame) == 3 * n_items  # every worker answered the checks too: 3 x 14 submissions
    assert Submission.objects.filter(assignment__batch__study=study).count() == 3 * (n_items + n_checks)
    check_positions = set(
        Task.objects.filter(batch__study=study).exclude(role=Task.Role.ITEM).values_list("position", flat=True)
    )
    assert not set(frame["position"]) & check_positions
    assert frame["pair_index"].ge(0).all()  # no check (pair_index None) slipped in as a pair of its own
    votes = load_votes(study=study, responses=response_lengths(study=study, profile=DEFAULT))
    assert len(votes) == 3 * n_items
    assert study_counts(study=study)["human_submissions"] == 3 * n_items


def test_check_rankings_are_not_rankings_data():
    study = build_study("flag-rank", instructions=1)
    [batch] = services.generate_batches(study=study, condition="ranking", seed=1, rankings_per_batch=1)
    participant = new_worker(study, "r")
    assignment = services.claim_batch(participant=participant, session_hash="")
    task = batch.tasks.get()
    ids = task.expected_response_ids()
    Submission.objects.create(assignment=assignment, task=task, ranking=ids, display_order=ids, idempotency_key="r1")
    Assignment.objects.filter(pk=assignment.pk).update(status="submitted", review="approved")
    assert len(loaders.human_rankings_frame(study)) == 1
    Task.objects.filter(pk=task.pk).update(role=Task.Role.GOLD)
    assert loaders.human_rankings_frame(study).empty


def test_default_unflagged_leaves_flagged_work_out_and_default_keeps_it(study):
    flagged = {
        a.participant.label
        for a in Assignment.objects.filter(batch__study=study).select_related("participant")
        if a.flags
    }
    [sloppy] = flagged
    assert sloppy.startswith("p-")
    kept = raters(loaders.human_pairwise_frame(study, profile=DEFAULT), study)
    left = raters(loaders.human_pairwise_frame(study, profile=UNFLAGGED), study)
    assert kept[sloppy] == 10 and left[sloppy] == 0
    assert {k: v for k, v in kept.items() if k != sloppy} == {k: v for k, v in left.items() if k != sloppy}
    assert sum(left.values()) == 20
    responses = response_lengths(study=study, profile=DEFAULT)
    assert (
        len(load_votes(study=study, responses=responses, profile=DEFAULT)),
        len(load_votes(study=study, responses=responses, profile=UNFLAGGED)),
    ) == (30, 20)
    reviews = loaders.assignment_reviews(study, profile=UNFLAGGED)
    assert reviews["counts"].sum() == 2 and len(reviews) == 3
    rows = [
        r for r in bias.build(study=study, profile=UNFLAGGED) if r["subject"] == "humans" and r["bias"] == "order_first"
    ]
    assert rows and {round(r["valid_rate"], 6) for r in rows} == {round(2 / 3, 6)}


def test_the_report_runs_under_the_new_profile_and_states_the_rule(study):
    report = compose_report(study=study, profile="default-unflagged")  # schema-checked
    assert report["profile"] == "default-unflagged" and report["profile_choices"]["flagged_work"] == "exclude"
    text = " ".join(methods_paragraphs(report))
    assert "Work with a quality flag does not count (profile setting flagged_work 'exclude')" in text
    default_text = " ".join(methods_paragraphs(compose_report(study=study, profile="default")))
    assert "Work with a quality flag counts like any other (profile setting flagged_work 'keep')" in default_text
