"""The words of the judging side, each spelled once: judge kinds, baselines, transports,
parsers, job and row statuses, job modes.

The models name these as ``RegisteredModel.Kind``, ``LLMJob.Status`` ... (aliases of the classes here),
and code elsewhere names the member, never the string: ``tests/foundation/test_vocabulary.py``
fails on a stray literal. Conditions, presentations and slots are shared with the crowd side
and live in ``annotations.vocabulary``.
"""

from __future__ import annotations

from django.db import models


class ModelKind(models.TextChoices):
    OPENAI = "openai", "OpenAI-compatible endpoint"
    BASELINE = "baseline", "Built-in baseline"
    IMPORTED = "imported", "Imported results (no endpoint)"


class Baseline(models.TextChoices):
    LONGER = "longer"  # the length-only null judge
    FIRST_SLOT = "first-slot"
    LAST_SLOT = "last-slot"
    RANDOM = "random"  # seeded


class Transport(models.TextChoices):
    OPENAI = "openai", "openai SDK"
    # The same POST /chat/completions without the SDK: about a fifth of its CPU per call,
    # for high-throughput local endpoints (vLLM, the simulator).
    HTTP = "http", "Lean HTTP (no SDK)"


class Parser(models.TextChoices):
    """How a judge's raw text becomes a slot (judging.parsers)."""

    ROBUST = "robust", "Robust (the judge's own verdict, wherever it is)"
    PAPER = "paper", "Paper (the authors' harness exactly: a label in the first 30 characters)"
    # Not a parser: the verdicts came parsed from an imported file (MT-Bench judgments).
    IMPORTED = "imported", "Imported verdicts (no parsing)"


# The parsers a job may run on raw text.
RUNNABLE_PARSERS = (Parser.ROBUST, Parser.PAPER)


class JobStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    PAUSED = "paused"
    CANCELLED = "cancelled"
    COMPLETED = "completed"
    BUDGET_EXHAUSTED = "budget_exhausted"
    FAILED = "failed"


class JobMode(models.TextChoices):
    SYNC = "sync", "One request per call"
    # OpenAI's Batch API: one uploaded JSONL, answered within 24 h at the batch price.
    BATCH = "batch", "Batch API (batch price, answered within 24 h)"


class RowStatus(models.TextChoices):
    """One call of a job (a judgment or a generated answer)."""

    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class OutputBasis(models.TextChoices):
    """Where an estimate before launch (judging.estimates) takes a call's tokens out from."""

    HISTORY = "history", "the mean of this model's finished calls"
    MAX_TOKENS = "max_tokens", "the request's max_tokens"
    DEFAULT = "default", "a default (no history, no max_tokens)"
    NO_CALLS = "no_calls", "no calls (a baseline answers locally)"


class VerdictFormat(models.TextChoices):
    """The label set a judge's prompt asks for, and so how its raw text is read (judging.verdicts)."""

    COBBLER = "cobbler", "CoBBLEr (System Star / System Square, the robust parser)"
    ARENA_HARD = "arena-hard", "Arena-Hard ([[A>>B]] ... [[B>>A]], [[A=B]] a tie)"
    MT_BENCH = "mt-bench", "MT-Bench pairwise ([[A]] / [[B]] / [[C]] a tie)"
    REGEX = "regex", "Your own: a regular expression and a label map"


class Strength(models.TextChoices):
    """How strongly a verdict prefers its slot, where the format says (Arena-Hard's >> and >)."""

    STRONG = "strong", "Strong preference"
    SLIGHT = "slight", "Slight preference"


class Presentation(models.IntegerChoices):
    """Which of a pair's two showings a judge call is; a crowd task's twin is the same idea.

    (Which answer stands first is the call's arrangement: ``Judgment.slot1_response``, as a crowd
    task's ``arrangement`` ab/ba.)
    """

    FIRST = 1, "The prompt that feeds rankings"
    SWITCHED = 2, "Its switched twin (CoBBLEr's validation prompt)"


class Verdict(models.TextChoices):
    """What a judge said: one of JudgeSlot's two slots (annotations.vocabulary), or neither answer."""

    FIRST = "first", "First slot"
    SECOND = "second", "Second slot"
    TIE = "tie", "Tie"


# A verdict's third outcome besides JudgeSlot's two: neither answer.
TIE = Verdict.TIE
