"""How many more workers a study can take: free places in the batches workers are offered.

A place is one worker's sitting of one batch: every offered batch has ``target_overlap``
places (the batch's overlap, else the study's K), and a place is taken by live work
(``AssignmentQuerySet.live``: an open lease or submitted, non-rejected work). Expired and
returned leases free their place, as rejected work does. Imported human work (the generic
format's ``import: ...`` batches) is data, never offered to workers, so it holds no places.
With ``CROWD_MAX_BATCHES_PER_WORKER`` at 1 (the default) one free place is one more worker.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from annotations.importers.generic_write import IMPORT_LABEL
from annotations.models import Assignment, Batch, Participant, Study, Submission


def offered_batches(study: Study) -> QuerySet[Batch]:
    """The batches a worker may be given (``claim_order``), and whose places capacity counts."""
    return Batch.objects.filter(study=study).exclude(label__startswith=IMPORT_LABEL)


def with_live_places(batches: QuerySet[Batch], study: Study) -> QuerySet[Any]:
    """``batches`` annotated with ``live`` (places taken) and ``target`` (places in all).

    Typed ``Any``: the type checker's Django plugin cannot follow annotations across a function.
    """
    live = (
        Assignment.objects.live()
        .filter(batch=OuterRef("pk"))
        .order_by()
        .values("batch")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return batches.annotate(live=Coalesce(Subquery(live), Value(0)), target=Coalesce("overlap", Value(study.overlap)))


def free_expired_leases(study: Study) -> int:
    """Expire the study's stale leases so that their places count as free again."""
    return Assignment.objects.filter(batch__study=study).expire_stale()


def has_free_place(study: Study) -> bool:
    """Whether one more worker can be given a batch right now (stale leases freed first)."""
    free_expired_leases(study)
    places = with_live_places(offered_batches(study), study).values_list("live", "target")
    return any(live < target for live, target in places)


@dataclass(frozen=True)
class ConditionCapacity:
    condition: str
    batches: int
    places: int
    taken: int

    @property
    def free(self) -> int:
        return max(0, self.places - self.taken)


@dataclass(frozen=True)
class Capacity:
    """The hub's capacity box: places per condition, who has come, and the planned recruitment."""

    conditions: list[ConditionCapacity]
    imported_batches: int  # data only: never offered, no places
    entered: int  # workers who opened the study link (imported annotators and simulated ones excluded)
    waiting: int  # qualified workers who hold no batch: they met "no task is free"
    planned: int | None  # places the researcher opens on the platform, if given
    round_places: int  # what one more round of a pairwise condition adds: a batch per instruction x K

    @property
    def places(self) -> int:
        return sum(c.places for c in self.conditions)

    @property
    def taken(self) -> int:
        return sum(c.taken for c in self.conditions)

    @property
    def free(self) -> int:
        return sum(c.free for c in self.conditions)

    @property
    def shortfall(self) -> int:
        """Recruited workers with no place: planned places beyond the free ones, else those waiting."""
        if self.planned is not None:
            return max(0, self.planned - self.free)
        return self.waiting if not self.free else 0

    @property
    def rounds_needed(self) -> int:
        """Pairwise rounds that would give every missing worker a place."""
        return -(-self.shortfall // self.round_places) if self.round_places else 0


def study_capacity(study: Study, *, planned: int | None = None) -> Capacity:
    free_expired_leases(study)
    per_condition: dict[str, list[int]] = {}
    for condition, live, target in with_live_places(offered_batches(study), study).values_list(
        "condition", "live", "target"
    ):
        row = per_condition.setdefault(condition, [0, 0, 0])
        row[0] += 1
        row[1] += target
        row[2] += min(live, target)
    # People who came through the link: not the annotators an importer stored, nor the demo's simulated crowd.
    arrivals = Participant.objects.filter(study=study, simulated=False).exclude(
        assignments__submissions__source=Submission.Source.IMPORT
    )
    counts = arrivals.aggregate(
        entered=Count("pk", distinct=True),
        waiting=Count("pk", distinct=True, filter=Q(qualified=True, assignments__isnull=True)),
    )
    return Capacity(
        conditions=[ConditionCapacity(c, *per_condition[c]) for c in sorted(per_condition)],
        imported_batches=Batch.objects.filter(study=study, label__startswith=IMPORT_LABEL).count(),
        entered=counts["entered"],
        waiting=counts["waiting"],
        planned=planned,
        round_places=study.instructions.count() * study.overlap,
    )


def no_work_code(study: Study) -> str:
    """The code a worker turned away for lack of work is given, stable per study.

    Derived, not stored (no migration): an HMAC under PSEUDONYM_KEY (which must stay fixed
    anyway, or returning workers would not be recognised) of the study and its completion
    code, so it cannot be guessed from the link and reveals nothing about the paid codes.
    """
    message = f"no-work:{study.pk}:{study.code_completed}".encode()
    return hmac.new(settings.PSEUDONYM_KEY.encode(), message, hashlib.sha256).hexdigest()[:8].upper()
