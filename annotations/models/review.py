"""Review decisions as records: every approve or reject of submitted work, who made it, when,
from which state to which, and why. Payment disputes are settled from these rows, so they are
only ever added (``ReviewDecision.objects.record``), never edited."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.utils import timezone

from annotations.models.crowd import Assignment, RejectReason

CHANGE_REASON_MAX = 500
# The assignment's fields a decision writes (re-read into the caller's instance afterwards).
REVIEW_FIELDS = ["review", "review_reason", "review_note", "reviewed_at", "review_version"]


class DecisionChangeNeedsReason(ValidationError):
    """The work is already decided and the new decision differs: the caller must confirm with a
    reason (the page asks for one, the API answers 409). Nothing was changed."""

    def __init__(self, assignment: Assignment, decision: str) -> None:
        self.current = assignment.review
        self.decision = decision
        super().__init__(
            f"This submission is already {assignment.review}; changing the decision needs a reason "
            "(it is kept in the review history)."
        )


class DecisionRaced(ValidationError):
    """Another reviewer's decision landed between reading and writing; nothing was changed."""


class ReviewDecisionManager(models.Manager["ReviewDecision"]):
    def record(
        self,
        *,
        assignment: Assignment,
        decision: str,
        reason: str = "",
        note: str = "",
        change_reason: str = "",
        reviewer: Any = None,
    ) -> ReviewDecision | None:
        """Decide ``assignment`` and append the decision to its history, in one transaction.

        Returns the new row, or None when the decision repeats the current one (same decision
        and reason, no new note: a double click or a retried request). Raises ValidationError,
        changing nothing, for unsubmitted work or an unknown decision, and
        DecisionChangeNeedsReason when a decided submission would change without a reason.
        Which rejection reasons are acceptable is the service's rule (review_assignment).
        """
        if decision not in (Assignment.Review.APPROVED, Assignment.Review.REJECTED):
            raise ValidationError("Decision must be 'approved' or 'rejected'.")
        note, change_reason = note.strip()[:300], change_reason.strip()[:CHANGE_REASON_MAX]
        with transaction.atomic():
            # The row lock queues a second reviewer on PostgreSQL, so the state read here is the
            # state this decision replaces (SQLite serialises writers with IMMEDIATE transactions).
            current = Assignment.objects.select_for_update().get(pk=assignment.pk)
            if current.status != Assignment.Status.SUBMITTED:
                raise ValidationError("Only submitted work can be reviewed.")
            decided = current.review != Assignment.Review.PENDING
            repeated = decision == current.review and reason == current.review_reason
            if decided and repeated and note in ("", current.review_note):
                assignment.refresh_from_db(fields=REVIEW_FIELDS)
                return None
            if decided and not change_reason:
                raise DecisionChangeNeedsReason(current, decision)
            now = timezone.now()
            # Conditional on the version read above: if anything decided meanwhile (a caller
            # outside a lock-honouring transaction), no history row is written against a stale state.
            won = Assignment.objects.filter(pk=current.pk, review_version=current.review_version).update(
                review=decision,
                review_reason=reason if decision == Assignment.Review.REJECTED else "",
                # The note belongs to this decision: an approval never keeps a rejection's note.
                review_note=note,
                reviewed_at=now,
                review_version=models.F("review_version") + 1,
            )
            if not won:
                raise DecisionRaced(
                    "Another reviewer decided this submission at the same moment; reload and decide again."
                )
            row = self.create(
                assignment=current,
                sequence=current.review_version + 1,
                from_review=current.review,
                to_review=decision,
                reject_reason=reason if decision == Assignment.Review.REJECTED else "",
                note=note,
                change_reason=change_reason if decided else "",
                reviewer=reviewer if getattr(reviewer, "pk", None) else None,
                reviewer_name=reviewer_name(reviewer),
                decided_at=now,
            )
        assignment.refresh_from_db(fields=REVIEW_FIELDS)
        return row


def reviewer_name(user: Any) -> str:
    """How the history names a reviewer, kept as it was: a deleted account keeps its name here."""
    if not getattr(user, "pk", None):
        return ""
    return (user.get_full_name() or user.get_username())[:150]


class ReviewDecision(models.Model):
    """One decision on one submitted assignment. The assignment's review fields say where it
    stands now; these rows say how it got there. Append-only."""

    Review = Assignment.Review

    assignment = models.ForeignKey(Assignment, models.CASCADE, related_name="decisions")
    # 1 for the first decision, then 2, 3...: unique per assignment, so two decisions racing
    # can never both claim to follow the same state.
    sequence = models.PositiveIntegerField()
    from_review = models.CharField(max_length=16, choices=Assignment.Review)
    to_review = models.CharField(max_length=16, choices=Assignment.Review)
    reject_reason = models.CharField(max_length=24, choices=RejectReason, blank=True)
    note = models.CharField(max_length=300, blank=True)
    # Why an already decided submission was changed; empty for a first decision.
    change_reason = models.CharField(max_length=CHANGE_REASON_MAX, blank=True)
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    # Empty when no person decided (seed_demo's simulated crowd, a command).
    reviewer_name = models.CharField(max_length=150, blank=True)
    decided_at = models.DateTimeField()

    objects = ReviewDecisionManager()

    class Meta:
        ordering = ("assignment", "sequence")
        constraints = [
            models.UniqueConstraint(fields=["assignment", "sequence"], name="one_review_decision_per_sequence"),
        ]

    def __str__(self) -> str:
        return f"{self.assignment} #{self.sequence}: {self.from_review} -> {self.to_review}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ValidationError("Review decisions are records: add a new one instead of editing.")
        super().save(*args, **kwargs)

    @property
    def is_change(self) -> bool:
        return self.from_review != self.Review.PENDING
