from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils import timezone

from annotations.models import Candidate, Condition, Instruction, Pair, Response, Study
from cobbler_site.access import owned_by
from judging.models.judges import Judge


class JudgeJobQuerySet(models.QuerySet):
    def manageable_by(self, user) -> JudgeJobQuerySet:  # noqa: ANN001 - a user or AnonymousUser
        """Jobs ``user`` may watch, pause, resume and cancel: their own (or unowned) jobs on a
        study they manage (cobbler_site.access). Another researcher's job on a shared study
        still counts in that study's reports, but only its creator controls it."""
        return self.filter(owned_by(user), study__in=Study.objects.manageable_by(user))


class JudgeJob(models.Model):
    """study x judge x conditions x pair set, fanned out through Celery."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        PAUSED = "paused"
        CANCELLED = "cancelled"
        COMPLETED = "completed"
        BUDGET_EXHAUSTED = "budget_exhausted"
        FAILED = "failed"

    class PairSet(models.TextChoices):
        ALL = "all", "All pairs per instruction (as in the paper)"
        HUMAN = "human", "Exactly the pairs the humans saw"

    study = models.ForeignKey(Study, models.CASCADE, related_name="judge_jobs")
    judge = models.ForeignKey(Judge, models.PROTECT, related_name="jobs")
    conditions = models.JSONField(default=list)
    pair_set = models.CharField(max_length=8, choices=PairSet, default=PairSet.ALL)
    prompt_version = models.CharField(max_length=32, blank=True)
    parser = models.CharField(max_length=16, default="robust")  # robust | paper
    bandwagon_percent = models.PositiveSmallIntegerField(default=85)
    seed = models.BigIntegerField(default=0)
    status = models.CharField(max_length=20, choices=Status, default=Status.QUEUED)
    budget_usd = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    # Counters are updated with F() expressions by many worker processes at once.
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    invalid = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal("0"))
    cached = models.PositiveIntegerField(default=0)  # judgments answered from the cache
    calls = models.PositiveIntegerField(default=0)  # HTTP requests sent, retries included
    error = models.TextField(blank=True)
    # Last time a worker stored results; the sweeper re-enqueues work of silent jobs.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = JudgeJobQuerySet.as_manager()

    ACTIVE = (Status.QUEUED, Status.RUNNING)
    FINISHED = (Status.COMPLETED, Status.CANCELLED, Status.BUDGET_EXHAUSTED, Status.FAILED)

    def __str__(self) -> str:
        return f"job {self.pk}: {self.judge} on {self.study}"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    def transition(self, from_states: tuple[str, ...], to: str, **extra: object) -> bool:
        # Conditional UPDATE: of a pause and a completion racing, exactly one wins.
        changed = JudgeJob.objects.filter(pk=self.pk, status__in=from_states).update(
            status=to, **extra
        )
        self.refresh_from_db()
        return bool(changed)

    def pause(self) -> bool:
        """RUNNING/QUEUED -> PAUSED. Idempotent; in-flight calls finish and are stored."""
        return self.transition(self.ACTIVE, self.Status.PAUSED)

    def cancel(self) -> bool:
        """Stop for good (resume is still allowed). Idempotent."""
        return self.transition(
            (*self.ACTIVE, self.Status.PAUSED), self.Status.CANCELLED, finished_at=timezone.now()
        )

    def mark_running(self) -> bool:
        """PAUSED/CANCELLED/BUDGET_EXHAUSTED/FAILED/QUEUED -> RUNNING (the caller enqueues)."""
        return self.transition(
            (self.Status.QUEUED, self.Status.PAUSED, self.Status.CANCELLED,
             self.Status.BUDGET_EXHAUSTED, self.Status.FAILED),
            self.Status.RUNNING,
            finished_at=None,
            started_at=self.started_at or timezone.now(),
            heartbeat_at=timezone.now(),
        )

    def budget_left(self) -> Decimal | None:
        return None if self.budget_usd is None else self.budget_usd - self.cost_usd

    def progress(self) -> dict[str, object]:
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
            "finished": finished, "percent": round(percent, 1), "rate": rate, "eta": eta,
            "pending": self.total - finished,
        }


class Judgment(models.Model):
    """One judge call: a pair, under a condition, in one presentation.

    Semantics shared by the judging and analysis apps (cobbler-method.md 3.2-3.8):
    - ``presentation`` 1 is the prompt that feeds rankings, 2 its switched twin.
    - order / compassion: presentation 1 puts a seeded, balanced choice of the two
      responses in the first slot (half the pairs ``pair.response_a``, half
      ``response_b``; ``judging.conditions.a_first_plan``), or always ``pair.response_a``
      (the candidate earlier in the study's order, "m1") under a paper prompt version;
      presentation 2 swaps the responses and keeps the slot labels.
    - bandwagon / attentional / selective: one seeded random arrangement, the same in
      both presentations; presentation 1 cues the first slot, 2 the second
      (``cue = {"cue_slot": "first"|"second", "percent": 85}`` or ``{..., "distractor": s}``).
    - plain: presentation 1 only, with a seeded random arrangement.
    - ``choice`` is the *slot* chosen ("first" = System Star, "second" = System Square),
      ``chosen_response`` the response behind it; both empty when ``valid`` is False.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        FAILED = "failed"

    job = models.ForeignKey(JudgeJob, models.CASCADE, related_name="judgments")
    pair = models.ForeignKey(Pair, models.CASCADE, related_name="judgments")
    condition = models.CharField(max_length=16, choices=Condition)
    # 1 = the prompt that feeds rankings, 2 = its switched twin (CoBBLEr's "validation").
    presentation = models.PositiveSmallIntegerField()
    # The response shown in the first slot ("System Star").
    slot1_response = models.ForeignKey(Response, models.CASCADE, related_name="+")
    # Condition details: cue slot, percent, distractor sentence, frequency layout...
    cue = models.JSONField(default=dict, blank=True)
    prompt_hash = models.CharField(max_length=64, blank=True)
    raw_text = models.TextField(blank=True)
    # The slot chosen: "first" / "second" ("" when invalid or not yet judged).
    choice = models.CharField(max_length=8, blank=True)
    chosen_response = models.ForeignKey(
        Response, models.CASCADE, null=True, blank=True, related_name="+"
    )
    valid = models.BooleanField(default=False)
    status = models.CharField(max_length=8, choices=Status, default=Status.PENDING)
    cached = models.BooleanField(default=False)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    # The claim of one chunk run: only the holder of the token may store the result,
    # and only until the lease runs out (renewed while the holder is alive).
    claim_token = models.CharField(max_length=32, blank=True, db_index=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["job", "pair", "condition", "presentation"], name="one_judgment_per_call"
            ),
        ]
        indexes = [models.Index(fields=["job", "status"])]

    def __str__(self) -> str:
        return f"{self.job_id}/{self.pair_id}/{self.condition}/{self.presentation}"


class AggregateJudgment(models.Model):
    """Imported per-instruction win counts (CoBBLEr published no per-pair logs).

    ``wins`` = pairs the candidate won in prompt 1 of ``run``. Kept apart from
    Judgment so nobody mistakes them for single calls.
    """

    judge = models.ForeignKey(Judge, models.CASCADE, related_name="aggregates")
    study = models.ForeignKey(Study, models.CASCADE, related_name="aggregate_judgments")
    run = models.CharField(max_length=16)  # order, compassion, bandwagon, distraction, ...
    # v1 = model_annotations/, acl = model_annotations/new/, bias = model_bias/<run>/
    collection = models.CharField(max_length=8)
    instruction = models.ForeignKey(Instruction, models.CASCADE, related_name="+")
    candidate = models.ForeignKey(Candidate, models.CASCADE, related_name="+")
    wins = models.PositiveIntegerField()
    source_file = models.CharField(max_length=300, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "study", "run", "collection", "instruction", "candidate"],
                name="one_aggregate_per_cell",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge}/{self.run}/{self.collection}/{self.instruction_id}/{self.candidate}"
