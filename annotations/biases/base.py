"""The interface every cue bias plugin fills in (``annotations.biases`` lists them).

A cue bias shows the same pair twice with the same arrangement and moves one perturbation from
the first answer to the second: a sentence in the prompt (bandwagon, attentional, refinement,
identity) or a change to the cued answer's own text (authority, verbosity; sentiment, whose change
a registered model wrote beforehand: ``rewrite_kind``, ``CueContext.rewrite``). An unbiased judge, or
person, chooses on the answers alone, so choosing the cued answer both times is as likely as
choosing the other one both times (``hits`` vs ``mirror``, tested at the cluster level by
``analysis.metrics.bias_rows``). Humans and judges see the same perturbation, drawn from the
same seeded generator and stored with the task or judgment (``cue``), so a pair's perturbed text
is reproducible and shown again in review.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

PROMPT = "prompt"  # a sentence in the prompt's {cue} insertion point (or above the pair, for people)
ANSWER = "answer"  # the cued answer's own text is changed


@dataclass(frozen=True)
class Rewritten:
    """A model's stored rewrite of the answer a cue falls on (``annotations.ResponseRewrite``)."""

    id: int
    text: str


@dataclass(frozen=True)
class CueContext:
    """What a draw or a sentence needs from where it is shown.

    ``label`` / ``other``: the cued and the uncued answer's labels ("System Star", "Assistant A",
    "System A" on the worker page). ``sentences``: the host's own wording of this bias (a prompt
    version's or template's insertion; empty means the plugin's default). ``percent``: the
    bandwagon statistic the job or study asks for. ``rewrite``: the cued answer's rewrite, for a
    bias whose perturbation a model made (None elsewhere, and where the answer has none).
    """

    label: str
    other: str
    sentences: Sequence[str] = ()
    percent: int = 85
    rewrite: Rewritten | None = None


@dataclass(frozen=True)
class Words:
    """How a claim names the bias (``analysis.summary.claims.BiasWords``) and what it means."""

    name: str  # "no evidence of <name> bias"
    toward: str  # "biased toward <toward>" when hits > mirror
    against: str
    hits: str  # what hits / n is, in words
    mirror: str
    judge_toward: str  # a judge's headline: "follows bandwagon cues"
    judge_against: str
    people_toward: str  # the same finding said of people, a description
    people_against: str


@dataclass(frozen=True)
class CueBias:
    condition: str  # the Condition value humans and judges share
    short: str  # plot label and headline word
    perturbs: str  # PROMPT or ANSWER
    knob: str  # the simulator knob: P(choose the cued answer)
    null: str  # the null hypothesis its test compares, in words
    words: Words
    draw: Callable[[random.Random, CueContext], dict[str, Any]]  # seeded details stored in the cue
    sentence: Callable[[Mapping[str, Any], CueContext], str] | None = None  # PROMPT biases
    perturb: Callable[[str, Mapping[str, Any]], str] | None = None  # ANSWER biases: the text as shown
    unperturb: Callable[[str], str | None] | None = None  # ANSWER biases: the original, or None
    default_sentences: tuple[str, ...] = field(default=())
    judge_only: bool = False  # no crowd condition (selective)
    # A model-made perturbation (RewriteKind value): a pair shows it only when both answers have a
    # stored rewrite of this kind, made beforehand by a rewrite job. "" for a seeded one.
    rewrite_kind: str = ""

    def cue(self, rng: random.Random, slot: str, ctx: CueContext) -> dict[str, Any]:
        """The stored cue of one showing: the cued slot and the seeded details."""
        return {"cue_slot": slot, **self.draw(rng, ctx)}

    def prompt_sentence(self, cue: Mapping[str, Any], ctx: CueContext) -> str:
        """The sentence this showing puts in the prompt ("" for an answer perturbation)."""
        if self.sentence is None or not cue.get("cue_slot"):
            return ""
        return self.sentence(cue, ctx)

    def shown_texts(self, cue: Mapping[str, Any], first: str, second: str, *, first_slot: str) -> tuple[str, str]:
        """The two answers as shown: an answer perturbation changes the cued one.

        ``first_slot`` is how the cue names the first answer ("first" for judges, "A" for people).
        """
        slot = cue.get("cue_slot")
        if self.perturb is None or not slot:
            return first, second
        if slot == first_slot:
            return self.perturb(first, cue), second
        return first, self.perturb(second, cue)

    def echoes(self, cue: Mapping[str, Any], labels: Sequence[str], sentences: Sequence[str] = ()) -> list[str]:
        """This showing's sentence with the cue on either label (for the parser's echo list: a
        judge that copies a cue back casts no vote with the label inside it)."""
        if self.sentence is None or len(labels) != 2:
            return []
        out = []
        for i, slot in enumerate(("first", "second")):
            ctx = CueContext(label=labels[i], other=labels[1 - i], sentences=sentences)
            out.append(self.sentence({**cue, "cue_slot": slot}, ctx))
        return out
