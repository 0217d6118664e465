from __future__ import annotations

import logging

from celery import shared_task

from annotations.models import Assignment

logger = logging.getLogger(__name__)


@shared_task
def expire_stale_leases() -> int:
    """Periodic: abandoned assignments go back to the pool. Idempotent."""
    expired = Assignment.objects.expire_stale()
    if expired:
        logger.info("expired %d stale assignment leases", expired)
    return expired
