"""Registered models, their judge and generation jobs, and every single call they made."""

from __future__ import annotations

from judging.models.batch import BatchRun
from judging.models.cache import CachedCompletion
from judging.models.generation import Generation, GenerationJob
from judging.models.grants import KeyGrant, KeyNotGranted, check_key_use
from judging.models.jobs import AggregateJudgment, JudgeJob, Judgment
from judging.models.judges import RegisteredModel
from judging.models.templates import PromptTemplate
from judging.models.work import LLMJob, WorkRow

__all__ = (
    "AggregateJudgment",
    "BatchRun",
    "CachedCompletion",
    "Generation",
    "GenerationJob",
    "JudgeJob",
    "Judgment",
    "KeyGrant",
    "KeyNotGranted",
    "LLMJob",
    "PromptTemplate",
    "RegisteredModel",
    "WorkRow",
    "check_key_use",
)
