"""Claims on rows: who may call for a row and store its answer, and for how long.

A claim is a conditional UPDATE (pending, not in a batch, not deferred, nobody's live
lease), so of two chunks racing for a row exactly one gets it. A row whose lease lapsed
with an attempt in flight (``in_flight_usd`` set before the request went out) lost that
answer: its new claimant charges the job for it (lost_calls, lost_cost_usd).
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q, Sum
from django.utils import timezone

from judging.models import CachedCompletion
from judging.vocabulary import RowStatus

# The smallest amount the field holds: marks "a request is out" even for a free model.
IN_FLIGHT_MARK = Decimal("0.000001")


def lease() -> timedelta:
    return timedelta(seconds=settings.JUDGING_LEASE_SECONDS)


def claimable(rows: Any, now: Any) -> Any:
    """Rows a synchronous chunk may take now: never a batched row, never before not_before."""
    return (
        rows.filter(status=RowStatus.PENDING, batch__isnull=True)
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .filter(Q(not_before__isnull=True) | Q(not_before__lte=now))
    )


def claim(kind: Any, job: Any, row_ids: list[int], token: str) -> int:
    """One conditional UPDATE (atomic on PostgreSQL and SQLite alike); returns rows claimed."""
    now = timezone.now()
    with transaction.atomic():
        claimed = claimable(kind.rows(job).filter(pk__in=row_ids), now).update(
            claim_token=token, claimed_until=now + lease()
        )
        if not claimed:
            return 0
        # Only the rows just claimed: the same token may hold rows with calls out (a chunk
        # claims more while its calls are out), which are not lost.
        lost_rows = kind.rows(job).filter(pk__in=row_ids, claim_token=token, in_flight_usd__gt=0)
        lost = lost_rows.aggregate(n=Count("pk"), usd=Sum("in_flight_usd"))
        if lost["n"]:
            usd = lost["usd"] if job.called_model.price(1000, 1000) > 0 else Decimal(0)
            type(job).objects.filter(pk=job.pk).update(
                lost_calls=F("lost_calls") + lost["n"], lost_cost_usd=F("lost_cost_usd") + usd
            )
            lost_rows.update(in_flight_usd=0)
        return claimed


def renew(kind: Any, job: Any, token: str) -> None:
    kind.rows(job).filter(claim_token=token, status=RowStatus.PENDING).update(claimed_until=timezone.now() + lease())


def release(kind: Any, job: Any, token: str) -> None:
    """Whatever we did not store (pause, cancel, budget, crash) goes back to the pool.

    ``in_flight_usd`` stays: a row released with a request still out (a crashed chunk) is
    charged as lost by its next claimant.
    """
    kind.rows(job).filter(claim_token=token, status=RowStatus.PENDING).update(claim_token="", claimed_until=None)


def cached(keys: list[str]) -> dict[str, CachedCompletion]:
    return {c.key: c for c in CachedCompletion.objects.filter(key__in=keys)}
