"""The plan of a generic-study import (docs/study-format.md): the checked rows, in file order, and
the problems found, plus the cross-line rules that more than one file's reader applies.

``annotations.importers.generic.read_study`` fills a ``StudyPlan``; the checkers of the optional
files (``generic_settings``, registered ``study_extensions``) add to it with the rules below, and
``generic_write`` applies it. This module imports none of them, so they can all import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from annotations.importers.base import BadInput

MAX_ERRORS = 50


@dataclass(frozen=True)
class Problem:
    where: str  # "votes.jsonl:17", or a file name for file-level problems
    problem: str

    def __str__(self) -> str:
        return f"{self.where}: {self.problem}"


@dataclass(frozen=True)
class InstructionRow:
    where: str
    id: str
    text: str
    reference: str
    category: str


@dataclass(frozen=True)
class ResponseRow:
    where: str
    instruction_id: str
    model: str
    text: str


@dataclass(frozen=True)
class VoteRow:
    where: str
    instruction_id: str
    model_a: str
    model_b: str
    winner: str  # model_a | model_b | tie
    annotator: str
    condition: str
    presented_first: str  # model_a | model_b
    cued: str  # model_a | model_b, or "" outside bandwagon/attentional

    @property
    def first_model(self) -> str:
        """The model whose answer was shown first (slot A)."""
        return self.model_a if self.presented_first == "model_a" else self.model_b

    @property
    def second_model(self) -> str:
        return self.model_b if self.presented_first == "model_a" else self.model_a


@dataclass(frozen=True)
class RankingRow:
    where: str
    instruction_id: str
    annotator: str
    ranking: tuple[str, ...]
    acceptable_count: int | None


@dataclass(frozen=True)
class GoldRow:
    where: str
    instruction_id: str
    model_a: str
    model_b: str
    gold: str  # model_a | model_b

    @property
    def gold_model(self) -> str:
        return self.model_a if self.gold == "model_a" else self.model_b


@dataclass
class StudyPlan:
    """Everything an import would write, in file order, or the problems that stop it."""

    instructions: list[InstructionRow] = field(default_factory=list)
    responses: list[ResponseRow] = field(default_factory=list)
    votes: list[VoteRow] = field(default_factory=list)
    rankings: list[RankingRow] = field(default_factory=list)
    # settings.jsonl's line, checked and filled with defaults; None when the file is absent.
    settings: dict | None = None
    gold: list[GoldRow] = field(default_factory=list)
    # What registered extensions checked (annotations.importers.study_extensions), by their own key.
    extensions: dict[str, Any] = field(default_factory=dict)
    # The registered extensions' own counts ("judge calls": 240), filled in by read_study.
    extension_counts: dict[str, int] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)  # file name -> sha256
    lines: dict[str, int] = field(default_factory=dict)  # file name -> rows read
    problems: list[Problem] = field(default_factory=list)
    more_problems: int = 0  # problems found beyond MAX_ERRORS

    @property
    def ok(self) -> bool:
        return not self.problems

    def problem(self, where: str, text: str) -> None:
        if len(self.problems) < MAX_ERRORS:
            self.problems.append(Problem(where, " ".join(text.split())[:400]))
        else:
            self.more_problems += 1

    def raise_first(self) -> None:
        """The command's contract: one line, the first problem (and how many others)."""
        if self.problems:
            first = self.problems[0]
            others = len(self.problems) - 1 + self.more_problems
            raise BadInput(first.where, first.problem + (f" (and {others} more problem(s))" if others else ""))

    def models(self) -> list[str]:
        """Model names in canonical order: first appearance, instructions in file order."""
        order = {row.id: n for n, row in enumerate(self.instructions)}
        rows = sorted(self.responses, key=lambda r: order.get(r.instruction_id, len(order)))
        return list(dict.fromkeys(row.model for row in rows))

    def models_of(self) -> dict[str, list[str]]:
        """instruction id -> its models in canonical order."""
        rank = {m: n for n, m in enumerate(self.models())}
        out: dict[str, list[str]] = {row.id: [] for row in self.instructions}
        for row in self.responses:
            out.setdefault(row.instruction_id, []).append(row.model)
        return {key: sorted(models, key=rank.__getitem__) for key, models in out.items()}

    def annotators(self) -> list[str]:
        """Raw annotator ids in order of first appearance (votes, then rankings); never stored."""
        return list(dict.fromkeys([v.annotator for v in self.votes] + [r.annotator for r in self.rankings]))

    def counts(self) -> dict[str, int]:
        """What the import would create (the preview's table)."""
        pairs = sum(len(list(combinations(models, 2))) for models in self.models_of().values())
        return {
            "instructions": len(self.instructions),
            "models": len(self.models()),
            "responses": len(self.responses),
            "pairs": pairs,
            "votes": len(self.votes),
            "rankings": len(self.rankings),
            "annotators": len(self.annotators()),
        } | self.extension_counts

    def votes_by_condition(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for vote in self.votes:
            out[vote.condition] = out.get(vote.condition, 0) + 1
        return dict(sorted(out.items()))


def id_key(value: Any) -> str:
    """An id as the plan holds it: the schema allows a string or a non-negative integer."""
    return str(value)


def known_models(
    plan: StudyPlan, answered: dict[str, list[str]], where: str, instruction: str, models: list[str]
) -> bool:
    """Whether the instruction is known and each model answered it (a problem otherwise)."""
    if instruction not in answered:
        plan.problem(where, f"unknown instruction_id {instruction!r} (not in instructions.jsonl)")
        return False
    missing = [m for m in models if m not in answered[instruction]]
    if missing:
        plan.problem(where, f"model {missing[0]!r} has no response to instruction {instruction!r} in responses.jsonl")
        return False
    return True


def checked_pair(
    plan: StudyPlan, answered: dict[str, list[str]], where: str, value: dict
) -> tuple[str, str, str] | None:
    """(instruction id, model_a, model_b) of a line naming a pair (votes, gold, judgments), or None
    with a problem when the models are the same or did not both answer the instruction."""
    instruction, model_a, model_b = id_key(value["instruction_id"]), value["model_a"], value["model_b"]
    if model_a == model_b:
        plan.problem(where, "model_a and model_b are the same model")
        return None
    if not known_models(plan, answered, where, instruction, [model_a, model_b]):
        return None
    return instruction, model_a, model_b
