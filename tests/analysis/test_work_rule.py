"""One rule for which human work counts (analysis.loaders.counted_work), in every loader and section."""

from __future__ import annotations

from dataclasses import replace

import pytest

from analysis import loaders
from analysis.loaders.length import load_votes, response_lengths
from analysis.profiles import PROFILES, get_profile
from analysis.sections import agreement, bias, length_control
from annotations import services
from annotations.models import Assignment, Participant, Submission
from tests.annotations.conftest import build_study

pytestmark = pytest.mark.django_db

# Four workers on the same order batch and ranking batch: one approved, one submitted and not
# yet reviewed, one rejected, one still working (one answer of two, lease open).
WORKERS = (
    ("approved", "submitted", "approved"),
    ("pending", "submitted", "pending"),
    ("rejected", "submitted", "rejected"),
    ("working", "active", "pending"),
)


@pytest.fixture
def study():
    study = build_study("work-rule", instructions=1, overlap=4)
    [pairs] = services.generate_batches(study=study, condition="order", seed=1, pairs_per_batch=1)
    [ranks] = services.generate_batches(study=study, condition="ranking", seed=1, rankings_per_batch=1)
    for label, status, review in WORKERS:
        p = Participant.objects.create(study=study, platform="code", external_hash=label, label=label, qualified=True)
        for batch in (pairs, ranks):
            a = Assignment.objects.create(batch=batch, participant=p, status=status, review=review)
            tasks = list(batch.tasks.order_by("position"))
            for task in tasks[:1] if status == "active" else tasks:
                ids = task.expected_response_ids()
                fields = {"ranking": ids} if task.kind == "ranking" else {"choice": "A", "chosen_response_id": ids[0]}
                Submission.objects.create(assignment=a, task=task, idempotency_key=f"{label}-{task.pk}", **fields)
    return study


PENDING = replace(get_profile("default"), name="pending", human_work="approved+pending")


def test_every_profile_counts_approved_work_only_by_default():
    assert {p.human_work for p in PROFILES.values()} == {"approved"}


def test_the_rule_itself(study):
    assert set(
        Assignment.objects.filter(loaders.counted_work(prefix="")).values_list("participant__label", flat=True)
    ) == {"approved"}
    assert set(
        Assignment.objects.filter(loaders.counted_work(PENDING, prefix="")).values_list("participant__label", flat=True)
    ) == {"approved", "pending"}
    with pytest.raises(ValueError, match="human_work"):
        loaders.counted_work(replace(PENDING, human_work="everything"))


@pytest.mark.parametrize(("profile", "raters"), [(None, {"approved"}), (PENDING, {"approved", "pending"})])
def test_every_loader_uses_it(study, profile, raters):
    assert set(loaders.human_pairwise_frame(study, profile=profile)["rater_label"]) == raters
    assert set(loaders.human_rankings_frame(study, profile=profile)["rater"]) == raters
    reviews = loaders.assignment_reviews(study, profile=profile)
    # Submitted assignments only (two conditions x three submitted workers); counts = the rule.
    assert len(reviews) == 6 and reviews["counts"].sum() == 2 * len(raters)
    responses = response_lengths(study=study, profile=get_profile("default"))
    # Two order tasks per counted worker; the rejected and the unfinished worker never count.
    assert len(load_votes(study=study, responses=responses, profile=profile)) == 2 * len(raters)


def test_sections_follow_the_profile(study):
    for profile, n in ((get_profile("default"), 2), (PENDING, 4)):
        assert length_control.build(study=study, profile=profile)["counts"]["votes"] == n
        rows = agreement.build(study=study, profile=profile)
        [pct] = [r for r in rows if r["kind"] == "inter_annotator" and r["metric"] == "percent"]
        # The order twins are two units (each rater answered both presentations).
        assert pct["n"] == (0 if n == 2 else 2)


def test_the_bias_section_follows_the_profile(study):
    for profile, share in ((get_profile("default"), 1 / 3), (PENDING, 2 / 3)):
        rows = [r for r in bias.build(study=study, profile=profile) if r["subject"] == "humans"]
        assert rows, "no human bias rows"
        # valid_rate = the share of submitted order work that counts (approved / + pending of 3).
        assert {round(r["valid_rate"], 6) for r in rows if r["bias"] == "order_first"} == {round(share, 6)}
