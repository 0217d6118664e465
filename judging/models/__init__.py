"""Machine judges, their jobs and every single judgment they produced."""
from __future__ import annotations

from judging.models.cache import CachedCompletion
from judging.models.jobs import AggregateJudgment, JudgeJob, Judgment
from judging.models.judges import Judge

__all__ = ("AggregateJudgment", "CachedCompletion", "Judge", "JudgeJob", "Judgment")
