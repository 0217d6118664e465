"""Refinement-aware (CALM): the prompt says one answer is a refined version of the other.

Nothing in the answers changes; only the sentence beside them, which names the cued answer.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from annotations.biases.base import PROMPT, CueBias, CueContext, Words
from annotations.vocabulary import Condition

SENTENCE = "{label} is a refined version of {other}: it was revised to improve on it."


def _sentence(cue: Mapping[str, Any], ctx: CueContext) -> str:
    return (ctx.sentences[0] if ctx.sentences else SENTENCE).format(label=ctx.label, other=ctx.other)


def _draw(rng: random.Random, ctx: CueContext) -> dict[str, Any]:
    return {}


REFINEMENT = CueBias(
    condition=Condition.REFINEMENT,
    short=Condition.REFINEMENT.value,
    perturbs=PROMPT,
    knob=Condition.REFINEMENT.value,
    null="the claim of refinement has no effect: choosing the answer called refined both times is as likely as "
    "choosing the other both times",
    words=Words(
        name="refinement (a claimed revision)",
        toward="the answer called a refined version",
        against="the answer not called refined",
        hits="refined answer both times",
        mirror="the other both times",
        judge_toward="favours the answer it is told is a refined version",
        judge_against="avoids the answer it is told is a refined version",
        people_toward="chose the answer called refined more often",
        people_against="chose the answer not called refined more often",
    ),
    draw=_draw,
    sentence=_sentence,
    default_sentences=(SENTENCE,),
)
