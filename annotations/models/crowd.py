"""The human side: batches of tasks, pseudonymous participants, leases and submissions."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from annotations import vocabulary
from annotations.models.content import Instruction, Pair, Response, Study
from annotations.vocabulary import Condition

if TYPE_CHECKING:
    from annotations.answers import Answer


class LeaseLost(Exception):
    """The assignment is no longer the worker's to answer (expired, returned or done)."""


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
            models.UniqueConstraint(fields=["study", "condition", "index"], name="one_batch_per_index"),
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

    class Role(models.TextChoices):
        ITEM = "item", "Study item"
        INSTRUCTED = "instructed", "Attention check: instructed response"
        CATCH = "catch", "Attention check: catch pair (one answer visibly broken)"
        GOLD = "gold", "Gold item (expected answer)"

    Arrangement = vocabulary.Arrangement  # which canonical response sits in slot A ("System A")

    batch = models.ForeignKey(Batch, models.CASCADE, related_name="tasks")
    position = models.PositiveIntegerField()  # 0-based order within the batch
    kind = models.CharField(max_length=16, choices=Kind)
    condition = models.CharField(max_length=16, choices=Condition)
    instruction = models.ForeignKey(Instruction, models.CASCADE, related_name="tasks")
    pair = models.ForeignKey(Pair, models.CASCADE, null=True, blank=True, related_name="tasks")
    arrangement = models.CharField(max_length=2, choices=Arrangement, blank=True)
    # Condition details, e.g. {"cue_slot": "A", "percent": 85} or
    # {"cue_slot": "B", "distractor": "System B plays a lot of soccer and basketball."}.
    cue = models.JSONField(default=dict, blank=True)
    # The source's pair index (CoBBLEr pair_idx 0-14); twin tasks share it.
    pair_index = models.PositiveIntegerField(null=True, blank=True)
    # Ranking tasks: the response ids to order (all of the instruction's if empty).
    response_ids = models.JSONField(default=list, blank=True)
    show_threshold_bar = models.BooleanField(default=False)
    # Quality-control tasks are never analysed as data (analysis.loaders counts ITEM only).
    role = models.CharField(max_length=12, choices=Role, default=Role.ITEM)
    # What a check expects: {"slot": "A"|"B"} (the slot a careful worker picks); an
    # instructed-response item also has {"text": "..."} shown with the task; a catch pair
    # {"broken_slot": "A"|"B", "broken_text": "..."} (the text shown instead of that slot's answer).
    expects = models.JSONField(default=dict, blank=True)

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
        return (a, b) if self.arrangement == self.Arrangement.AB else (b, a)

    def slot_response_ids(self) -> tuple[int, int]:
        """Like slot_responses(), without loading the responses."""
        assert self.pair is not None
        a, b = self.pair.response_a_id, self.pair.response_b_id
        return (a, b) if self.arrangement == self.Arrangement.AB else (b, a)

    def expected_response_ids(self) -> list[int]:
        """The ids a complete answer must cover: the ranked set, or the two slots."""
        if self.kind == self.Kind.PAIRWISE:
            return list(self.slot_response_ids())
        if self.response_ids:
            return [int(pk) for pk in self.response_ids]
        return list(
            Response.objects.filter(instruction_id=self.instruction_id)
            .order_by("candidate__position", "pk")
            .values_list("pk", flat=True)
        )


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
    consented_at = models.DateTimeField(null=True, blank=True)
    # A demo participant played by annotations.simulated_crowd, never a person.
    simulated = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "platform", "external_hash"], name="one_participant_per_id"),
        ]

    def __str__(self) -> str:
        return self.label or self.external_hash[:12]


class AssignmentQuerySet(models.QuerySet):
    def live(self) -> AssignmentQuerySet:
        """Assignments that hold one of a batch's K places.

        Active leases and submitted work count; expired, returned and rejected
        work gives its place back (CoBBLEr replaced rejected raters until every
        batch had 3 valid ones).
        """
        return self.filter(status__in=(Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED)).exclude(
            review=Assignment.Review.REJECTED
        )

    def expire_stale(self) -> int:
        """Return abandoned leases to the pool; returns how many expired.

        A conditional UPDATE, so a worker submitting at the same moment either
        wins (status is no longer ACTIVE) or finds the lease expired.
        """
        now = timezone.now()
        unopened_before = now - timedelta(minutes=unopened_lease_minutes())
        never_opened = models.Q(opened_at__isnull=True, started_at__lt=unopened_before) & ~models.Exists(
            Submission.objects.filter(assignment=models.OuterRef("pk"))
        )
        return self.filter(models.Q(leased_until__lt=now) | never_opened, status=Assignment.Status.ACTIVE).update(
            status=Assignment.Status.EXPIRED
        )


def unopened_lease_minutes() -> int:
    """How long a lease lasts while its worker has not opened a task page (CROWD_UNOPENED_LEASE_MINUTES)."""
    return max(1, int(getattr(settings, "CROWD_UNOPENED_LEASE_MINUTES", 10)))


class RejectReason(models.TextChoices):
    """Why work was rejected, from the list Prolific asks reviewers to choose from."""

    FAILED_CHECKS = "failed_checks", "Failed attention checks"
    TOO_FAST = "too_fast", "Too fast to have read the answers"
    STRAIGHT_LINING = "straight_lining", "Same answer throughout (straight-lining)"
    LOW_EFFORT = "low_effort", "Low effort or nonsensical answers"
    INCOMPLETE = "incomplete", "Incomplete or not following instructions"
    OTHER = "other", "Other (see note)"


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
    review_reason = models.CharField(max_length=24, choices=RejectReason, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    # How many decisions annotations.models.review.ReviewDecision holds for this work; each
    # decision is a conditional UPDATE on it, so none is recorded against a stale state.
    review_version = models.PositiveIntegerField(default=0)
    # Quality flags computed on submit (annotations.quality.flag_assignment):
    # [{"code", "label", "value", "threshold"}]; empty when the work raised none.
    flags = models.JSONField(default=list, blank=True)
    flags_computed_at = models.DateTimeField(null=True, blank=True)
    # Answers to the study's surveys: {"pre": {question id: answer}, "post": {...}}.
    survey = models.JSONField(default=dict, blank=True)
    leased_until = models.DateTimeField(null=True, blank=True)
    # Hashed crowd-platform ids of this sitting (MTurk assignmentId, Prolific SESSION_ID).
    external_session_hash = models.CharField(max_length=64, blank=True)
    # Keyed hashes of the claiming client's address and of its /24 or /64, never the address:
    # they count live leases per network (annotations.services.lease_caps). Empty without a client.
    client_ip_hash = models.CharField(max_length=64, blank=True)
    client_net_hash = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    # When the worker first saw a task page of this batch; a lease never opened expires after
    # CROWD_UNOPENED_LEASE_MINUTES instead of the study's lease_minutes.
    opened_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    work_seconds = models.PositiveIntegerField(null=True, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["batch", "participant"], name="one_assignment_per_batch_and_participant"),
        ]
        indexes = [models.Index(fields=["batch", "status"])]

    def __str__(self) -> str:
        return f"{self.participant} on {self.batch}"

    def expire_if_stale(self) -> bool:
        """Expire this lease if its time ran out; True if it is (now) expired."""
        if self.status == self.Status.ACTIVE and (
            (self.leased_until and self.leased_until < timezone.now()) or self.opened_at is None
        ):
            Assignment.objects.filter(pk=self.pk).expire_stale()
            self.refresh_from_db(fields=["status"])
        return self.status == self.Status.EXPIRED

    def mark_opened(self) -> None:
        """Record the first time a task page of this lease was shown. Idempotent."""
        if self.opened_at is None:
            now = timezone.now()
            Assignment.objects.filter(pk=self.pk, opened_at__isnull=True).update(opened_at=now)
            self.opened_at = now

    def record_answer(
        self, *, task: Task, answer: Answer, idempotency_key: str, server_ms: int, client_ms: int | None
    ) -> tuple[Submission, bool]:
        """Store the answer to one task of this assignment: the stored row, and whether this
        call stored it (the service then closes the assignment if that was its last task).

        Idempotent: the (assignment, task) unique constraint is the claim, so a double
        click, a retried POST or a second tab stores one row; the later calls get the
        first row back (first answer wins). Raises LeaseLost if the lease expired or the
        assignment is closed, ValidationError if the task is not in this batch.
        """
        if task.batch_id != self.batch_id:
            raise ValidationError("This task is not part of your assignment.")
        if self.expire_if_stale() or self.status != self.Status.ACTIVE:
            existing = Submission.objects.filter(assignment=self, task=task).first()
            if existing is not None:  # answered before the lease ended: that answer stands
                return existing, False
            raise LeaseLost(self.status)
        # The client's clock can be paused or forged; the server's span bounds it.
        shown_ms = server_ms if client_ms is None else max(0, min(client_ms, server_ms))
        try:
            with transaction.atomic():
                submission = Submission.objects.create(
                    assignment=self,
                    task=task,
                    ranking=answer.ranking,
                    bar_position=answer.bar_position,
                    choice=answer.choice,
                    chosen_response_id=answer.chosen_response_id,
                    display_order=answer.display_order,
                    rationale=answer.rationale,
                    untouched=answer.untouched,
                    time_on_task_ms=shown_ms,
                    server_time_ms=server_ms,
                    idempotency_key=idempotency_key,
                )
        except IntegrityError:
            # Stored before: a double click, a retried POST or a second tab (first answer wins).
            # Inserting first spares every other submit the lookup.
            return Submission.objects.get(assignment=self, task=task), False
        return submission, True

    def progress(self) -> tuple[int, int]:
        """(tasks answered, tasks in the batch), in one round trip: every submit asks."""
        answered, total, _ = self._progress_row(task=None)
        return answered, total

    def progress_at(self, task: Task) -> tuple[int, int, bool]:
        """``progress()`` and whether ``task`` has an answer, in the same round trip: every task
        page asks both."""
        return self._progress_row(task=task)

    def _progress_row(self, *, task: Task | None) -> tuple[int, int, bool]:
        # Plain SQL: the ORM's subquery form cost more to compile (2 ms) than separate
        # queries (1 ms); this costs a few tenths of a millisecond.
        q = connection.ops.quote_name
        answers, tasks = Submission._meta, Task._meta
        by_assignment = f"{q(answers.db_table)} WHERE {q(answers.get_field('assignment').column)} = %s"
        sql = (
            f"SELECT (SELECT COUNT(*) FROM {by_assignment}),"
            f" (SELECT COUNT(*) FROM {q(tasks.db_table)} WHERE {q(tasks.get_field('batch').column)} = %s)"
        )
        params: list[int] = [self.pk, self.batch_id]
        if task is not None:
            sql += f", EXISTS (SELECT 1 FROM {by_assignment} AND {q(answers.get_field('task').column)} = %s)"
            params += [self.pk, task.pk]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
        return int(row[0]), int(row[1]), bool(row[2]) if task is not None else False

    def finish_if_complete(self) -> bool:
        """Close the assignment once every task has an answer; True if this call closed it (the
        service then flags the work: annotations.services.answering.close_if_complete). Idempotent."""
        answered, total = self.progress()
        if answered < total:
            return False
        finished = timezone.now()
        # Conditional UPDATE: an expiry racing with the last answer wins or loses cleanly.
        closed = Assignment.objects.filter(pk=self.pk, status=self.Status.ACTIVE).update(
            status=self.Status.SUBMITTED,
            submitted_at=finished,
            work_seconds=int((finished - self.started_at).total_seconds()),
        )
        self.refresh_from_db(fields=["status", "submitted_at", "work_seconds"])
        return bool(closed)


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
    choice = models.CharField(max_length=1, choices=vocabulary.CrowdChoice, blank=True)
    chosen_response = models.ForeignKey(Response, models.CASCADE, null=True, blank=True, related_name="+")
    # Response ids in the order they were displayed (randomised per participant and task).
    display_order = models.JSONField(default=list, blank=True)
    time_on_task_ms = models.PositiveIntegerField(null=True, blank=True)
    # Milliseconds between the server rendering the task and receiving the answer; the
    # client's own measure (time_on_task_ms) is clamped to it so it cannot be inflated.
    server_time_ms = models.PositiveIntegerField(null=True, blank=True)
    # The worker's free-text reason, where the study asks for one (Study.rationale).
    rationale = models.TextField(blank=True)
    # A ranking submitted exactly as it was first shown (confirmed by the worker).
    untouched = models.BooleanField(default=False)
    idempotency_key = models.CharField(max_length=64, unique=True)
    source = models.CharField(max_length=8, choices=Source, default=Source.WEB)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "task"], name="one_submission_per_assignment_and_task"),
        ]

    def __str__(self) -> str:
        return f"{self.assignment} / task {self.task_id}"
