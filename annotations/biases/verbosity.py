"""Verbosity (CALM): one answer is padded with redundant sentences that add no content.

Three distinct sentences are drawn per showing from ``PADDING`` (seeded, stored in the cue as
``padding``) and appended as a last paragraph, so the padded answer is longer and says nothing more.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from annotations.biases.base import ANSWER, CueBias, CueContext, Words
from annotations.vocabulary import Condition

PADDING = (
    "To restate the main point, the answer above addresses the question as it was asked.",
    "In other words, what is written above is the response to the request.",
    "It is worth noting once more that the points above are the answer.",
    "To summarise, the response above covers what was asked.",
    "As already mentioned, the explanation given above responds to the question.",
    "Put simply, the answer is as stated above.",
    "Overall, the answer above is the response to this question.",
    "Once again, the text above is the answer to the question that was asked.",
)
SENTENCES = 3


def _draw(rng: random.Random, ctx: CueContext) -> dict[str, Any]:
    return {"padding": rng.sample(PADDING, SENTENCES)}


def _perturb(text: str, cue: Mapping[str, Any]) -> str:
    return f"{text}\n\n{' '.join(cue.get('padding', ()))}"


def _unperturb(text: str) -> str | None:
    head, sep, last = text.rpartition("\n\n")
    if not sep or not last:
        return None
    # The last paragraph is padding only if it is exactly some of the padding sentences.
    rest = last
    for sentence in sorted(PADDING, key=len, reverse=True):
        rest = rest.replace(sentence, "")
    return head if not rest.strip() else None


VERBOSITY = CueBias(
    condition=Condition.VERBOSITY,
    short=Condition.VERBOSITY.value,
    perturbs=ANSWER,
    knob=Condition.VERBOSITY.value,
    null="the padding has no effect: with the same arrangement, choosing the padded answer both times is as "
    "likely as choosing the other both times",
    words=Words(
        name="verbosity (content-free padding)",
        toward="answers padded with content-free sentences",
        against="answers without padding",
        hits="padded answer both times",
        mirror="the other both times",
        judge_toward="favours answers padded with content-free sentences",
        judge_against="avoids answers padded with content-free sentences",
        people_toward="chose the padded answer more often",
        people_against="chose the unpadded answer more often",
    ),
    draw=_draw,
    perturb=_perturb,
    unperturb=_unperturb,
)
