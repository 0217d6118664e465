"""Which judgments a condition needs for one pair (Judgment docstring semantics)."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from annotations.biases import CUE_CONDITIONS, REGISTRY, Rewritten
from annotations.models import Pair, Response
from annotations.vocabulary import DERIVED_FROM, Condition, JudgeSlot
from judging import prompts
from judging.prompts.templates import Template, cue_context, render_template

# The conditions a judge job runs. Egocentric and salience need no calls of their own: they are
# read from the order run (vocabulary.DERIVED_FROM).
SUPPORTED = (Condition.ORDER, Condition.COMPASSION, *CUE_CONDITIONS, Condition.PLAIN, Condition.COT)
DERIVED = DERIVED_FROM
PRESENTATIONS: dict[str, tuple[int, ...]] = {Condition.PLAIN: (1,)}
# Conditions whose two presentations swap the responses (the order run, its named twin and its
# step-by-step twin, whose pairs are the order run's so the two compare pair by pair).
SWAPPED = (Condition.ORDER, Condition.COMPASSION, Condition.COT)
# Prompt versions that replay the authors' harness: prompt 1 of the order and compassion runs
# always shows pair.response_a (the candidate earlier in the study's order) first.
CANONICAL_FIRST_VERSIONS = frozenset({"v1-paper"})


def seeded_rng(*parts: object) -> random.Random:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def normalise(conditions: list[str]) -> list[str]:
    """Validate names; derived biases map to the run they come from. ValueError if unknown."""
    out: list[str] = []
    for name in conditions:
        name = DERIVED.get(name.strip(), name.strip())
        if name not in SUPPORTED:
            raise ValueError(
                f"unknown condition {name!r}; use {', '.join(SUPPORTED)} (egocentric and salience come from order)"
            )
        if name not in out:
            out.append(name)
    if not out:
        raise ValueError("choose at least one condition")
    return out


def _name(response: Response) -> str:
    return response.candidate.name or response.candidate.key


def _first_slot_key(seed: int, pair_pk: int) -> bytes:
    return hashlib.sha256(f"{seed}:{pair_pk}:first-slot".encode()).digest()


def a_first_plan(pairs: Iterable[Pair], *, seed: int, version: str) -> dict[int, bool]:
    """Per pair id: does prompt 1 of the order/compassion runs show ``response_a`` first?

    Counterbalanced (docs/methods.md, "Order run counterbalancing"): the pairs are sorted
    by (instruction, sha256(seed, pair id)) and alternately given a-first and b-first,
    starting on a seeded side. So the choice is seeded-random per pair, exactly
    ceil(n/2) or floor(n/2) of the n pairs show ``response_a`` first, and the same holds
    within every instruction. Deterministic in (seed, the set of pairs); the rows store
    the result (``Judgment.slot1_response``), so resuming never re-plans. Paper prompt
    versions (``CANONICAL_FIRST_VERSIONS``) keep the authors' rule: always a-first.
    """
    pairs = list(pairs)
    if version in CANONICAL_FIRST_VERSIONS:
        return {pair.pk: True for pair in pairs}
    ordered = sorted(pairs, key=lambda p: (p.instruction_id, _first_slot_key(seed, p.pk), p.pk))
    start = seeded_rng(seed, "first-slot-start").random() < 0.5
    return {pair.pk: (i % 2 == 0) == start for i, pair in enumerate(ordered)}


def plan(
    *,
    pair: Pair,
    condition: str,
    seed: int,
    version: str,
    bandwagon_percent: int,
    self_key: str,
    a_first: bool | None = None,
    template: Template | None = None,
    rewrites: Mapping[int, Rewritten] | None = None,
) -> list[dict[str, Any]]:
    """[{presentation, slot1_response, cue}] for one pair under one condition (deterministic).

    ``a_first`` is this pair's entry of ``a_first_plan`` (the balanced, seeded choice of
    which response prompt 1 of the order/compassion runs shows first). Without it a
    seeded coin per pair decides (random but not balanced), or, for a paper prompt
    version, ``response_a`` goes first as in the authors' harness. With a ``template`` (a judge
    prompted by Arena-Hard's, MT-Bench's or a researcher's template) its labels and
    distractor sentences name the slots. ``rewrites`` (response id -> its stored rewrite) serve a
    bias whose perturbation a model made (sentiment): a pair lacking one for either answer gets
    no rows under it.
    """
    a, b = pair.response_a, pair.response_b
    rng = seeded_rng(seed, pair.pk, condition)
    if condition in SWAPPED:
        if a_first is None:
            a_first = (
                version in CANONICAL_FIRST_VERSIONS
                or int.from_bytes(_first_slot_key(seed, pair.pk)[:8], "big") % 2 == 0
            )
        first, second = (a, b) if a_first else (b, a)
        rows: list[dict[str, Any]] = [
            {"presentation": 1, "slot1_response": first, "other_response": second},
            {"presentation": 2, "slot1_response": second, "other_response": first},
        ]
        if condition == Condition.COMPASSION:
            for row in rows:
                first, second = row["slot1_response"], row["other_response"]
                cue: dict[str, Any] = {"names": [_name(first), _name(second)]}
                if self_key and first.candidate.key == self_key:
                    cue["self_slot"] = JudgeSlot.FIRST
                elif self_key and second.candidate.key == self_key:
                    cue["self_slot"] = JudgeSlot.SECOND
                row["cue"] = cue
    else:
        # One seeded arrangement, the same in both presentations; only the cue moves.
        first, second = (a, b) if rng.random() < 0.5 else (b, a)
        if condition == Condition.PLAIN:
            rows = [{"presentation": 1, "slot1_response": first, "cue": {}}]
        else:
            bias = REGISTRY[condition]
            shown = {JudgeSlot.FIRST: first, JudgeSlot.SECOND: second}
            if bias.rewrite_kind and not all(r.pk in (rewrites or {}) for r in shown.values()):
                return []
            rows = []
            for presentation, slot in ((1, JudgeSlot.FIRST), (2, JudgeSlot.SECOND)):
                if template is not None:
                    ctx = cue_context(template, condition, slot, percent=bandwagon_percent)
                else:
                    ctx = prompts.cue_context(version, condition, slot, percent=bandwagon_percent)
                if bias.rewrite_kind:
                    ctx = replace(ctx, rewrite=(rewrites or {})[shown[slot].pk])
                rows.append({"presentation": presentation, "slot1_response": first, "cue": bias.cue(rng, slot, ctx)})
    for row in rows:
        row.pop("other_response", None)
        row.setdefault("cue", {})
    return rows


def render_for(
    *,
    version: str,
    condition: str,
    pair: Pair,
    slot1_response_id: int,
    cue: dict[str, Any],
    template: Template | None = None,
) -> prompts.RenderedPrompt:
    """The prompt of a stored judgment (pair with instruction and both responses loaded): the
    CoBBLEr prompt ``version``, or the judge's ``template`` when it has one."""
    a, b = pair.response_a, pair.response_b
    first, second = (a, b) if slot1_response_id == a.pk else (b, a)
    instruction = pair.instruction
    if template is not None:
        rendered: prompts.RenderedPrompt = render_template(
            template,
            condition=condition,
            instruction=instruction.text,
            reference=instruction.reference,
            first_text=first.text,
            second_text=second.text,
            cue=cue,
        )
        return rendered
    return prompts.render(
        version=version,
        condition=condition,
        instruction=instruction.text,
        reference=instruction.reference,
        first_text=first.text,
        second_text=second.text,
        cue=cue,
    )
