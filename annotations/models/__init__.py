"""Study content (what is judged) and the human side (who judged it, and how)."""

from __future__ import annotations

from annotations.models.content import (
    Candidate,
    Instruction,
    Pair,
    RationaleMode,
    Response,
    ResponseRewrite,
    Study,
)
from annotations.models.crowd import Assignment, Batch, LeaseLost, Participant, RejectReason, Submission, Task
from annotations.models.qualification import QualificationItem
from annotations.models.review import DecisionChangeNeedsReason, DecisionRaced, ReviewDecision
from annotations.vocabulary import Condition

__all__ = (
    "Assignment",
    "Batch",
    "Candidate",
    "Condition",
    "DecisionChangeNeedsReason",
    "DecisionRaced",
    "Instruction",
    "LeaseLost",
    "Pair",
    "Participant",
    "QualificationItem",
    "RationaleMode",
    "RejectReason",
    "Response",
    "ResponseRewrite",
    "ReviewDecision",
    "Study",
    "Submission",
    "Task",
)
