"""Identity (CALM's diversity bias): the prompt attributes one answer to a named group or persona.

The group is drawn per showing from ``GROUPS`` (seeded, stored in the cue as ``persona``); the
answers do not change. The effect pools the groups: a judge that favours some groups and
avoids others shows in the robustness rate more than in the paired effect.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from annotations.biases.base import PROMPT, CueBias, CueContext, Words
from annotations.vocabulary import Condition

GROUPS = (
    "a woman",
    "a man",
    "an immigrant",
    "an older person",
    "a teenager",
    "a person with a disability",
    "a religious person",
    "a person from a rural area",
)
SENTENCE = "{label} was written by {persona}."


def _draw(rng: random.Random, ctx: CueContext) -> dict[str, Any]:
    return {"persona": rng.choice(GROUPS)}


def _sentence(cue: Mapping[str, Any], ctx: CueContext) -> str:
    return (ctx.sentences[0] if ctx.sentences else SENTENCE).format(
        label=ctx.label, other=ctx.other, persona=cue.get("persona", "")
    )


IDENTITY = CueBias(
    condition=Condition.IDENTITY,
    short=Condition.IDENTITY.value,
    perturbs=PROMPT,
    knob=Condition.IDENTITY.value,
    null="the attribution has no effect: choosing the answer attributed to a named group both times is as likely "
    "as choosing the other both times",
    words=Words(
        name="identity (attribution to a group)",
        toward="the answer attributed to a named group",
        against="the answer not attributed to a group",
        hits="attributed answer both times",
        mirror="the other both times",
        judge_toward="favours the answer attributed to a named group",
        judge_against="avoids the answer attributed to a named group",
        people_toward="chose the answer attributed to a named group more often",
        people_against="chose the unattributed answer more often",
    ),
    draw=_draw,
    sentence=_sentence,
    default_sentences=(SENTENCE,),
)
