"""The real worker process runs tasks against the test database, in both run modes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotations.models import Assignment, Batch, Participant, Study
from annotations.tasks import expire_stale_leases
from tests.conftest import wait_until

pytestmark = [pytest.mark.smoke, pytest.mark.worker]


def test_a_real_worker_expires_abandoned_leases(celery_worker_process):
    study = Study.objects.create(slug="s", name="S")
    batch = Batch.objects.create(study=study, condition="order", index=0)
    stale = Assignment.objects.create(
        batch=batch,
        participant=Participant.objects.create(study=study, platform="code", external_hash="a"),
        leased_until=timezone.now() - timedelta(minutes=1),
    )
    fresh = Assignment.objects.create(
        batch=batch,
        participant=Participant.objects.create(study=study, platform="code", external_hash="b"),
        leased_until=timezone.now() + timedelta(minutes=30),
    )

    expire_stale_leases.delay()

    def expired() -> bool:
        stale.refresh_from_db()
        return stale.status == Assignment.Status.EXPIRED

    assert wait_until(expired, timeout=60), celery_worker_process.log()[-3000:]
    fresh.refresh_from_db()
    assert fresh.status == Assignment.Status.ACTIVE
