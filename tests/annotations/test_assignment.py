from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from annotations import services
from annotations.models import Assignment, Participant, ReviewDecision
from annotations.tasks import expire_stale_leases
from tests.annotations.conftest import build_study


def _participants(study, n, start=0):
    return [
        Participant.objects.create(
            study=study, platform="code", external_hash=f"h{i}", qualified=True, consented_at=timezone.now()
        )
        for i in range(start, start + n)
    ]


def test_a_batch_goes_to_k_distinct_workers(db):
    study = build_study("k", instructions=2, overlap=2)
    services.generate_batches(study=study, condition="order", seed=1, pairs_per_batch=2)
    got = [services.claim_batch(participant=p, session_hash="") for p in _participants(study, 5)]
    assert [a is not None for a in got] == [True, True, True, True, False]
    per_batch = sorted(Assignment.objects.values_list("batch_id", flat=True))
    assert len(set(per_batch)) == 2 and per_batch.count(per_batch[0]) == 2


def test_a_worker_never_gets_the_same_batch_twice(db, settings):
    settings.CROWD_MAX_BATCHES_PER_WORKER = 3  # the default (1) is tested in test_crowd_design.py
    study = build_study("twice", instructions=2, overlap=3)
    services.generate_batches(study=study, condition="order", seed=1, pairs_per_batch=2)
    [worker] = _participants(study, 1)
    first = services.claim_batch(participant=worker, session_hash="s1")
    second = services.claim_batch(participant=worker, session_hash="s2")
    assert first.batch_id != second.batch_id
    assert services.claim_batch(participant=worker, session_hash="s3") is None


def test_an_expired_lease_returns_the_place_to_the_pool(db):
    study = build_study("lease", instructions=1, overlap=1, lease_minutes=5)
    services.generate_batches(study=study, condition="order", seed=1, pairs_per_batch=2)
    first, second = _participants(study, 2)
    held = services.claim_batch(participant=first, session_hash="")
    assert services.claim_batch(participant=second, session_hash="") is None
    Assignment.objects.filter(pk=held.pk).update(leased_until=timezone.now() - timedelta(seconds=1))
    assert expire_stale_leases.apply().get() == 1
    assert services.claim_batch(participant=second, session_hash="") is not None


def test_a_rejected_worker_frees_the_place(db):
    study = build_study("rej", instructions=1, overlap=1)
    services.generate_batches(study=study, condition="order", seed=1, pairs_per_batch=1)
    first, second = _participants(study, 2)
    held = services.claim_batch(participant=first, session_hash="")
    Assignment.objects.filter(pk=held.pk).update(status=Assignment.Status.SUBMITTED)
    assert services.claim_batch(participant=second, session_hash="") is None
    held.refresh_from_db()
    ReviewDecision.objects.record(assignment=held, decision="rejected", note="empty answers")
    assert services.claim_batch(participant=second, session_hash="") is not None


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_concurrent_workers_never_push_a_batch_over_k():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises writers; the row-lock race only exists on PostgreSQL")
    study = build_study("race", instructions=3, overlap=3)
    services.generate_batches(study=study, condition="order", seed=1, pairs_per_batch=2)
    workers = _participants(study, 24)
    barrier = threading.Barrier(len(workers))
    results, errors = [], []

    def run(participant):
        try:
            barrier.wait()
            results.append(services.claim_batch(participant=participant, session_hash=""))
        except Exception as e:  # reported below
            errors.append(e)
        finally:
            connections.close_all()  # each thread had its own connection

    threads = [threading.Thread(target=run, args=(p,)) for p in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    counts = {}
    for batch_id in Assignment.objects.values_list("batch_id", flat=True):
        counts[batch_id] = counts.get(batch_id, 0) + 1
    assert max(counts.values()) <= 3
    assert sum(counts.values()) == 9  # every place taken, none twice
    assert sum(r is not None for r in results) == 9
