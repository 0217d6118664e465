"""Study content (what is judged) and the human side (who judged it, and how)."""
from __future__ import annotations

from annotations.models.content import Candidate, Condition, Instruction, Pair, Response, Study
from annotations.models.crowd import Assignment, Batch, LeaseLost, Participant, Submission, Task
from annotations.models.qualification import QualificationItem

__all__ = (
    "Assignment",
    "Batch",
    "Candidate",
    "Condition",
    "Instruction",
    "LeaseLost",
    "Pair",
    "Participant",
    "QualificationItem",
    "Response",
    "Study",
    "Submission",
    "Task",
)
