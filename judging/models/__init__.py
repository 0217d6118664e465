"""Machine judges, their jobs and every single judgment they produced."""
from __future__ import annotations

from judging.models.judges import Judge
from judging.models.jobs import AggregateJudgment, JudgeJob, Judgment

__all__ = ("AggregateJudgment", "Judge", "JudgeJob", "Judgment")
