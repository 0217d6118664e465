"""Attentional (CoBBLEr): an irrelevant sentence about one system ("System Star plays a lot of soccer
and basketball."), one of the host's distractors drawn per showing.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from annotations.biases.base import PROMPT, CueBias, CueContext, Words
from annotations.vocabulary import Condition

ATTENTIONAL_SENTENCES = (
    "{label} likes to eat apples and oranges.",
    "The coolest thing that {label} can do is a 60 second handstand.",
    "{label} plays a lot of soccer and basketball.",
    "{label} has been all around Europe two times.",
)


def _attentional_draw(rng: random.Random, ctx: CueContext) -> dict[str, Any]:
    # One seeded choice among the host's distractors (the CoBBLEr four by default).
    return {"distractor": rng.choice(list(ctx.sentences or ATTENTIONAL_SENTENCES)).format(label=ctx.label)}


def _attentional_sentence(cue: Mapping[str, Any], ctx: CueContext) -> str:
    return str(cue.get("distractor", ""))


ATTENTIONAL = CueBias(
    condition=Condition.ATTENTIONAL,
    short="distractor",
    perturbs=PROMPT,
    knob="distractor",
    null="the distractor has no effect: with the same arrangement, choosing the mentioned system both times is "
    "as likely as choosing the other both times (share = the judge's own no-distractor agreement = 1/2)",
    words=Words(
        name="distractor (attentional)",
        toward="the system a distractor sentence mentions",
        against="the system a distractor sentence does not mention",
        hits="mentioned system both times",
        mirror="the other both times",
        judge_toward="favours the system a distractor sentence mentions",
        judge_against="avoids the system a distractor sentence mentions",
        people_toward="chose the system a distractor sentence mentions more often",
        people_against="chose the system a distractor sentence does not mention more often",
    ),
    draw=_attentional_draw,
    sentence=_attentional_sentence,
    default_sentences=ATTENTIONAL_SENTENCES,
)
