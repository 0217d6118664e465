"""What judge jobs and generation jobs share: a job that fans calls out, and one row per call.

The runner (``judging.runner``) works on any pair of these: a job subclassing ``LLMJob``
and its rows subclassing ``WorkRow``. Judge jobs (``Judgment`` rows) and generation jobs
(``Generation`` rows) therefore get the same claims, retries, cache, budget, pause, resume,
cancel, batch mode and live progress.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, cast

from django.conf import settings
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from judging import vocabulary
from judging.models.judges import RegisteredModel


class LLMJob(models.Model):
    """A job: counters updated with F() expressions by many worker processes at once."""

    Status = vocabulary.JobStatus
    Mode = vocabulary.JobMode

    status = models.CharField(max_length=20, choices=Status, default=Status.QUEUED)
    mode = models.CharField(max_length=8, choices=Mode, default=Mode.SYNC)
    seed = models.BigIntegerField(default=0)
    budget_usd = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal("0"))
    cached = models.PositiveIntegerField(default=0)  # rows answered from the cache
    # HTTP requests sent, retries included; counted *before* each request is sent, so a
    # worker that dies mid-call still leaves its request counted.
    calls = models.PositiveIntegerField(default=0)
    # Estimated cost of requests sent whose answer was never stored (a worker died, a
    # lease ran out); part of what the budget gate counts as spent.
    lost_calls = models.PositiveIntegerField(default=0)
    lost_cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal("0"))
    error = models.TextField(blank=True)  # why the job as a whole stopped
    # The most recent call error (endpoint down, 401, 404, 429...), shown with a hint.
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    # Last time a worker stored results; the sweeper re-enqueues work of silent jobs.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    ACTIVE = (Status.QUEUED, Status.RUNNING)
    FINISHED = (Status.COMPLETED, Status.CANCELLED, Status.BUDGET_EXHAUSTED, Status.FAILED)

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def called_model(self) -> RegisteredModel:
        """The registered model this job calls: a judge job's ``judge``, a generation job's
        ``generator``.

        Each job names its model after the role it plays there (one registered model may be
        both), so the shared runtime (runner, batch driver, estimates) reaches it through this
        name and never asks a generation job for a judge.
        """
        raise NotImplementedError

    def transition(self, from_states: tuple[str, ...], to: str, *, where: Q | None = None, **extra: object) -> bool:
        # Conditional UPDATE: of a pause and a completion racing, exactly one wins. ``where``
        # adds a condition to the same statement (complete_if_done: nothing pending).
        # _default_manager: the concrete job's ``objects`` (an abstract model declares no manager).
        jobs = type(self)._default_manager.filter(pk=self.pk, status__in=from_states)
        if where is not None:
            jobs = jobs.filter(where)
        changed = jobs.update(status=to, **extra)
        self.refresh_from_db()
        return bool(changed)

    def complete_if_done(self) -> bool:
        """RUNNING/BUDGET_EXHAUSTED -> COMPLETED once none of the job's rows is pending (a budget
        stop that came with the very last call is a completion too). True for the one caller
        that made the transition.

        One conditional UPDATE (the pending check is in its WHERE): safe to call from every
        chunk at once, exactly one wins; a QUEUED job (its rows still being written), a paused,
        cancelled or failed one never completes here.
        """
        pending = self.row_model().objects.filter(job=OuterRef("pk"), status=WorkRow.Status.PENDING)
        return self.transition(
            (self.Status.RUNNING, self.Status.BUDGET_EXHAUSTED),
            self.Status.COMPLETED,
            where=Q(~Exists(pending)),
            finished_at=timezone.now(),
        )

    @classmethod
    def row_model(cls) -> type[Any]:
        """The WorkRow model whose ``job`` points at this job model (Judgment, Generation)."""
        # related_model is a model class here ("self" only for self-referencing fields); Any,
        # not WorkRow: callers filter on the concrete row's ``job``, which the base lacks.
        return next(
            cast(type[Any], rel.related_model)
            for rel in cls._meta.related_objects
            if rel.field.name == "job" and issubclass(cast(type, rel.related_model), WorkRow)
        )

    def pause(self) -> bool:
        """RUNNING/QUEUED -> PAUSED. Idempotent; in-flight calls finish and are stored."""
        return self.transition(self.ACTIVE, self.Status.PAUSED)

    def cancel(self) -> bool:
        """Stop for good (resume is still allowed). Idempotent."""
        return self.transition((*self.ACTIVE, self.Status.PAUSED), self.Status.CANCELLED, finished_at=timezone.now())

    def mark_running(self) -> bool:
        """PAUSED/CANCELLED/BUDGET_EXHAUSTED/FAILED/QUEUED -> RUNNING (the caller enqueues)."""
        return self.transition(
            (
                self.Status.QUEUED,
                self.Status.PAUSED,
                self.Status.CANCELLED,
                self.Status.BUDGET_EXHAUSTED,
                self.Status.FAILED,
            ),
            self.Status.RUNNING,
            finished_at=None,
            started_at=self.started_at or timezone.now(),
            heartbeat_at=timezone.now(),
        )

    def budget_left(self) -> Decimal | None:
        if self.budget_usd is None:
            return None
        return self.budget_usd - self.cost_usd - self.lost_cost_usd

    def progress(self) -> dict[str, Any]:
        """Figures for the progress bar: counts, rate (calls/s) and ETA in seconds."""
        finished = self.done + self.failed
        percent = 100.0 * finished / self.total if self.total else 100.0
        rate = eta = None
        if self.started_at and finished:
            end = self.finished_at or self.heartbeat_at or timezone.now()
            elapsed = max((end - self.started_at).total_seconds(), 1e-3)
            rate = finished / elapsed
            if not self.is_finished and rate > 0:
                eta = (self.total - finished) / rate
        return {
            "finished": finished,
            "percent": round(percent, 1),
            "rate": rate,
            "eta": eta,
            "pending": self.total - finished,
        }


class WorkRow(models.Model):
    """One call of a job: claimed by one chunk run at a time, stored once."""

    Status = vocabulary.RowStatus

    raw_text = models.TextField(blank=True)
    status = models.CharField(max_length=8, choices=Status, default=Status.PENDING)
    cached = models.BooleanField(default=False)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    # HTTP requests for this row, retries included, counted before each is sent.
    attempts = models.PositiveSmallIntegerField(default=0)
    # Estimated cost of the request in flight (set before sending, cleared when stored);
    # a row whose claim lapsed with this set lost its answer, and the estimate is charged.
    in_flight_usd = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    error = models.TextField(blank=True)
    # A transient error was answered with "retry after": no chunk claims the row before then,
    # so waiting never holds a worker slot.
    not_before = models.DateTimeField(null=True, blank=True)
    # The claim of one chunk run: only the holder of the token may store the result,
    # and only until the lease runs out (renewed while the holder is alive).
    claim_token = models.CharField(max_length=32, blank=True, db_index=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    # In batch mode: the BatchRun that carries this row's request, while it is out.
    batch = models.ForeignKey("judging.BatchRun", models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        abstract = True
