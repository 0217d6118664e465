"""Selective (judge-only): the prompt states an expectation ("We expect System Star to be better") and
asks the judge to ignore it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotations.biases.base import PROMPT, CueBias, CueContext, Words
from annotations.vocabulary import Condition


def _wording(ctx: CueContext, default: str) -> str:
    return ctx.sentences[0] if ctx.sentences else default


SELECTIVE_SENTENCE = (
    "We expect {label} to be better. Judge the responses on their merits and ignore any stated expectation."
)


def _selective_sentence(cue: Mapping[str, Any], ctx: CueContext) -> str:
    return _wording(ctx, SELECTIVE_SENTENCE).format(label=ctx.label)


SELECTIVE = CueBias(
    condition=Condition.SELECTIVE,
    short=Condition.SELECTIVE.value,
    perturbs=PROMPT,
    knob=Condition.SELECTIVE.value,
    null="the stated expectation has no effect: choosing the expected answer both times is as likely as choosing "
    "the other both times",
    words=Words(
        name="selective (stated expectation)",
        toward="the answer a stated expectation names",
        against="the answer a stated expectation does not name",
        hits="expected answer both times",
        mirror="the other both times",
        judge_toward="follows a stated expectation",
        judge_against="goes against a stated expectation",
        people_toward="followed a stated expectation more often",
        people_against="went against a stated expectation more often",
    ),
    draw=lambda rng, ctx: {},
    sentence=_selective_sentence,
    default_sentences=(SELECTIVE_SENTENCE,),
    judge_only=True,
)
