"""Study content (what is judged) and the human side (who judged it, and how)."""
from __future__ import annotations

from annotations.models.content import Candidate, Condition, Instruction, Pair, Response, Study
from annotations.models.crowd import Assignment, Batch, Participant, Submission, Task

__all__ = (
    "Assignment",
    "Batch",
    "Candidate",
    "Condition",
    "Instruction",
    "Pair",
    "Participant",
    "Response",
    "Study",
    "Submission",
    "Task",
)
