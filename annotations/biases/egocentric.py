"""Self-preference (CoBBLEr's egocentric bias): how often a judge chose its own model's answer,
read off the order run (nothing named) and, as ``egocentric_comp``, off the compassion run (the
order run with real model names, where the judge can see which answer is its own). Its own
answers may simply be better, so the raw rates are descriptive; a claim compares the judge with
a reference on the same pairs."""

from __future__ import annotations

from annotations.biases.base import Words
from annotations.biases.swap import CONFOUNDED, SwapBias
from annotations.vocabulary import Condition

# Egocentric: the own response in prompt 1 (1/2) times prompt 2 not the same slot (1/2).
_COIN = 0.25
_NULL = "no self-preference: the judge's own response is as likely as the other one to get the row's outcome"

EGOCENTRIC = SwapBias(
    row="egocentric",
    run=Condition.ORDER,
    short="self-preference",
    board="self",
    knob="self",
    null=_NULL,
    random=_COIN,
    role=CONFOUNDED,
    words=Words(
        name="self-preference (egocentric)",
        toward="its own answers",
        against="other models' answers",
        hits="own answer",
        mirror="the other answer",
        judge_toward="prefers its own answers",
        judge_against="",
        people_toward="",
        people_against="",
    ),
    counted_by="_egocentric",
    target="its own answer",
    targets="its own answers",
    described="chose its own answer",
)

EGOCENTRIC_COMP = SwapBias(
    row="egocentric_comp",
    run=Condition.COMPASSION,
    short="self-preference",
    board="self (named)",
    knob="self",
    null=_NULL,
    random=_COIN,  # own in prompt 1, then own again or not: 1/2 x 1/2 either way
    role=CONFOUNDED,
    words=Words(
        name="self-preference in the compassion run",
        toward="its own named answers",
        against="other models' named answers",
        hits="own answer",
        mirror="the other answer",
        judge_toward="prefers its own named answers",
        judge_against="",
        people_toward="",
        people_against="",
    ),
    counted_by="_egocentric_comp",
    target="its own answer",
    targets="its own answers",
    described="chose its own named answer",
)
