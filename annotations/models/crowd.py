"""The human side: batches of tasks, pseudonymous participants, leases and submissions."""
from __future__ import annotations

from django.db import models
from django.utils import timezone

from annotations.models.content import Condition, Instruction, Pair, Response, Study


class Batch(models.Model):
    """What one worker does in one sitting (CoBBLEr: 30 pairwise tasks of one instruction)."""

    study = models.ForeignKey(Study, models.CASCADE, related_name="batches")
    condition = models.CharField(max_length=16, choices=Condition)
    index = models.PositiveIntegerField()
    label = models.CharField(max_length=100, blank=True)
    # The seed that generated (or shuffled) this batch; null for imported batches.
    seed = models.BigIntegerField(null=True, blank=True)
    # Overrides the study's overlap for this batch.
    overlap = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("study", "condition", "index")
        verbose_name_plural = "batches"
        constraints = [
            models.UniqueConstraint(
                fields=["study", "condition", "index"], name="one_batch_per_index"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.condition}/{self.index}"

    @property
    def target_overlap(self) -> int:
        return self.overlap or self.study.overlap


class Task(models.Model):
    """One screen: a ranking of N answers, or a pair under a condition."""

    class Kind(models.TextChoices):
        RANKING = "ranking"
        PAIRWISE = "pairwise"

    class Presentation(models.TextChoices):
        # Which canonical response sits in slot A ("System A").
        AB = "ab", "response_a in slot A"
        BA = "ba", "response_b in slot A"

    batch = models.ForeignKey(Batch, models.CASCADE, related_name="tasks")
    position = models.PositiveIntegerField()  # 0-based order within the batch
    kind = models.CharField(max_length=16, choices=Kind)
    condition = models.CharField(max_length=16, choices=Condition)
    instruction = models.ForeignKey(Instruction, models.CASCADE, related_name="tasks")
    pair = models.ForeignKey(Pair, models.CASCADE, null=True, blank=True, related_name="tasks")
    presentation = models.CharField(max_length=2, choices=Presentation, blank=True)
    # Condition details, e.g. {"cue_slot": "A", "percent": 85} or
    # {"cue_slot": "B", "distractor": "System B plays a lot of soccer and basketball."}.
    cue = models.JSONField(default=dict, blank=True)
    # The source's pair index (CoBBLEr pair_idx 0-14); twin tasks share it.
    pair_index = models.PositiveIntegerField(null=True, blank=True)
    # Ranking tasks: the response ids to order (all of the instruction's if empty).
    response_ids = models.JSONField(default=list, blank=True)
    show_threshold_bar = models.BooleanField(default=False)

    class Meta:
        ordering = ("batch", "position")
        constraints = [
            models.UniqueConstraint(fields=["batch", "position"], name="one_task_per_position"),
        ]

    def __str__(self) -> str:
        return f"{self.batch} task {self.position}"

    def slot_responses(self) -> tuple[Response, Response]:
        """The responses shown in slots A and B, in that order."""
        assert self.pair is not None
        a, b = self.pair.response_a, self.pair.response_b
        return (a, b) if self.presentation == self.Presentation.AB else (b, a)


class Participant(models.Model):
    """A crowd worker, known only by a keyed hash of the platform's id."""

    class Platform(models.TextChoices):
        PROLIFIC = "prolific"
        MTURK = "mturk"
        CODE = "code"  # a plain participant code from a link

    study = models.ForeignKey(Study, models.CASCADE, related_name="participants")
    platform = models.CharField(max_length=16, choices=Platform)
    external_hash = models.CharField(max_length=64)  # HMAC-SHA256 hex, see annotations.pseudonyms
    # A stable, human-readable handle for reports ("annotator-0"), never the platform id.
    label = models.CharField(max_length=64, blank=True)
    qualified = models.BooleanField(default=False)
    qualification_attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "platform", "external_hash"], name="one_participant_per_id"
            ),
        ]

    def __str__(self) -> str:
        return self.label or self.external_hash[:12]


class AssignmentQuerySet(models.QuerySet):
    def expire_stale(self) -> int:
        """Return abandoned leases to the pool; returns how many expired.

        A conditional UPDATE, so a worker submitting at the same moment either
        wins (status is no longer ACTIVE) or finds the lease expired.
        """
        return self.filter(
            status=Assignment.Status.ACTIVE, leased_until__lt=timezone.now()
        ).update(status=Assignment.Status.EXPIRED)


class Assignment(models.Model):
    """A lease of one batch to one participant."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        SUBMITTED = "submitted"
        EXPIRED = "expired"  # the lease ran out; the batch went back to the pool
        RETURNED = "returned"

    class Review(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"

    batch = models.ForeignKey(Batch, models.CASCADE, related_name="assignments")
    participant = models.ForeignKey(Participant, models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=16, choices=Status, default=Status.ACTIVE)
    review = models.CharField(max_length=16, choices=Review, default=Review.PENDING)
    review_note = models.CharField(max_length=300, blank=True)
    leased_until = models.DateTimeField(null=True, blank=True)
    # Hashed crowd-platform ids of this sitting (MTurk assignmentId, Prolific SESSION_ID).
    external_session_hash = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    work_seconds = models.PositiveIntegerField(null=True, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["batch", "participant"], name="one_assignment_per_batch_and_participant"
            ),
        ]
        indexes = [models.Index(fields=["batch", "status"])]

    def __str__(self) -> str:
        return f"{self.participant} on {self.batch}"


class Submission(models.Model):
    """One answered task. Unique per (assignment, task): a retry can never store two."""

    class Source(models.TextChoices):
        WEB = "web"
        IMPORT = "import"

    assignment = models.ForeignKey(Assignment, models.CASCADE, related_name="submissions")
    task = models.ForeignKey(Task, models.CASCADE, related_name="submissions")
    # Ranking tasks: response ids, best first.
    ranking = models.JSONField(null=True, blank=True)
    # Ranking tasks: how many answers sat above the "acceptable" bar (null: no bar).
    bar_position = models.PositiveSmallIntegerField(null=True, blank=True)
    # Pairwise tasks: the slot chosen ("A", "B", or "T" for a tie where the source allows
    # one, as MT-Bench votes do) and the response behind it (null for a tie).
    choice = models.CharField(max_length=1, blank=True)
    chosen_response = models.ForeignKey(
        Response, models.CASCADE, null=True, blank=True, related_name="+"
    )
    # Response ids in the order they were displayed (randomised per participant and task).
    display_order = models.JSONField(default=list, blank=True)
    time_on_task_ms = models.PositiveIntegerField(null=True, blank=True)
    idempotency_key = models.CharField(max_length=64, unique=True)
    source = models.CharField(max_length=8, choices=Source, default=Source.WEB)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "task"], name="one_submission_per_assignment_and_task"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.assignment} / task {self.task_id}"
