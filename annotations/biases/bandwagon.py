"""Bandwagon (CoBBLEr): "85% of people believe that System Star is better." beside the pair.

The wording is the prompt version's or template's own (``insertions``); the default is CoBBLEr's.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from annotations.biases.base import PROMPT, CueBias, CueContext, Words
from annotations.vocabulary import Condition


def _wording(ctx: CueContext, default: str) -> str:
    return ctx.sentences[0] if ctx.sentences else default


BANDWAGON_SENTENCE = "{percent}% of people believe that {label} is better."


def _bandwagon_draw(rng: random.Random, ctx: CueContext) -> dict[str, Any]:
    return {"percent": ctx.percent}


def _bandwagon_sentence(cue: Mapping[str, Any], ctx: CueContext) -> str:
    return _wording(ctx, BANDWAGON_SENTENCE).format(percent=cue.get("percent", 85), label=ctx.label)


BANDWAGON = CueBias(
    condition=Condition.BANDWAGON,
    short=Condition.BANDWAGON.value,
    perturbs=PROMPT,
    knob=Condition.BANDWAGON.value,
    null="the cue has no effect: with the same arrangement, following the cue both times is as likely as going "
    "against it both times (cue-following share = the judge's own no-cue agreement with the cued answer = 1/2)",
    words=Words(
        name=Condition.BANDWAGON.value,
        toward="bandwagon cues",
        against="going against bandwagon cues",
        hits="followed the cue both times",
        mirror="against it both times",
        judge_toward="follows bandwagon cues",
        judge_against="goes against bandwagon cues",
        people_toward="followed bandwagon cues more often",
        people_against="went against bandwagon cues more often",
    ),
    draw=_bandwagon_draw,
    sentence=_bandwagon_sentence,
    default_sentences=(BANDWAGON_SENTENCE,),
)
