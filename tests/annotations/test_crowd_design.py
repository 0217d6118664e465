"""Crowd assignment: seeded, balanced randomisation across conditions; one batch per worker identity."""

from __future__ import annotations

from collections import Counter

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotations import services
from annotations.models import Assignment, Participant
from tests.annotations.conftest import build_study, current_task_url, enter, prolific_id, qualify

CONDITIONS = ("attentional", "bandwagon", "order", "plain")


def _arrive(study, name: str, session: str = "") -> Assignment | None:
    """One worker arriving through the real services: entry, consent, qualification, claim."""
    entry = services.parse_entry({"PROLIFIC_PID": prolific_id(name), "SESSION_ID": session or f"{name}-s"})
    participant, session_hash = services.enter_study(study=study, entry=entry)
    services.give_consent(participant=participant)
    Participant.objects.filter(pk=participant.pk).update(qualified=True)
    participant.refresh_from_db()
    return services.next_step(participant=participant, session_hash=session_hash).assignment


def _four_condition_study(slug: str, *, overlap: int = 3):
    # 5 instructions -> 5 batches per condition, 3 places each: 60 places, 15 per condition.
    study = build_study(slug, instructions=5, overlap=overlap)
    for seed, condition in enumerate(CONDITIONS):
        services.generate_batches(study=study, condition=condition, seed=seed, pairs_per_batch=1)
    return study


def test_sixty_arrivals_are_balanced_in_every_quarter(db):
    study = _four_condition_study("balance")
    got = [_arrive(study, f"worker{i:02d}") for i in range(60)]
    assert all(a is not None for a in got)
    conditions = [a.batch.condition for a in got]
    # +-10%: in each quarter of 15 arrivals, every condition's share is within 1/4 +- 0.10.
    for q in range(4):
        shares = Counter(conditions[15 * q : 15 * (q + 1)])
        assert set(shares) == set(CONDITIONS)
        for condition in CONDITIONS:
            assert abs(shares[condition] / 15 - 0.25) <= 0.10, (q, shares)
    # Minimisation keeps the running counts within one of each other after every arrival.
    for n in range(1, 61):
        counts = Counter(conditions[:n])
        assert max(counts[c] for c in CONDITIONS) - min(counts[c] for c in CONDITIONS) <= 1
    # Not alphabetical: the first cycle is not attentional, bandwagon, order, plain.
    assert conditions[:4] != sorted(conditions[:4]) or conditions[4:8] != sorted(conditions[4:8])
    # Every place is taken exactly once; the 61st worker finds no work.
    assert Counter(a.batch_id for a in got) == Counter({b.pk: 3 for b in study.batches.all()})
    assert _arrive(study, "worker60") is None


def test_the_draw_is_seeded_by_study_and_worker(db):
    first = _four_condition_study("seeded-1")
    picks = [_arrive(first, f"w{i}").batch for i in range(8)]
    Assignment.objects.all().delete()
    again = [_arrive(first, f"w{i}").batch for i in range(8)]
    assert [b.pk for b in picks] == [b.pk for b in again]
    other = [
        services.claim_order(study=first, participant=p)[0]
        for p in Participant.objects.filter(study=first).order_by("pk")[:8]
    ]
    assert len(set(other)) > 1  # different workers draw different batches from the same state


def test_one_batch_per_worker_identity_whatever_the_session(db):
    study = _four_condition_study("identity")
    first = _arrive(study, "same-pid", session="session-1")
    assert first is not None
    # A new SESSION_ID while the lease is open resumes the same batch (and moves the lease there).
    resumed = _arrive(study, "same-pid", session="session-2")
    assert resumed.pk == first.pk
    assert Assignment.objects.count() == 1
    # Finished: a third session gets no second batch.
    Assignment.objects.filter(pk=first.pk).update(status=Assignment.Status.SUBMITTED)
    assert _arrive(study, "same-pid", session="session-3") is None
    assert Assignment.objects.count() == 1
    # An expired lease gives the allowance back, as it gives the batch place back.
    Assignment.objects.filter(pk=first.pk).update(status=Assignment.Status.EXPIRED)
    assert _arrive(study, "same-pid", session="session-4") is not None


def test_the_maximum_is_a_setting(db, settings):
    settings.CROWD_MAX_BATCHES_PER_WORKER = 2
    study = _four_condition_study("two")
    participant = Participant.objects.create(
        study=study, platform="code", external_hash="h", qualified=True, consented_at=timezone.now()
    )
    a = services.claim_batch(participant=participant, session_hash="s1")
    b = services.claim_batch(participant=participant, session_hash="s2")
    assert a is not None and b is not None and a.batch_id != b.batch_id
    assert services.claim_batch(participant=participant, session_hash="s3") is None


def test_a_new_session_through_the_views_resumes_the_open_batch(db):
    study = build_study("views", overlap=2)
    services.generate_batches(study=study, condition="bandwagon", seed=7, pairs_per_batch=3)
    first = Client()
    enter(first, study, PROLIFIC_PID="60a1b2c3d4e5f6a7b8c9d001", STUDY_ID="s", SESSION_ID="one")
    qualify(first, study)
    url = current_task_url(first, study)
    second = Client()
    enter(second, study, PROLIFIC_PID="60a1b2c3d4e5f6a7b8c9d001", STUDY_ID="s", SESSION_ID="two")
    assert second.get(reverse("annotations:work", args=[study.slug]))["Location"] == url
    assert Assignment.objects.count() == 1
