"""Position (CoBBLEr's order bias): the order run shows a pair twice with the answers swapped, so
a judge that reads the answers chooses the same answer, in different slots; one that chooses the
same slot twice is led by the position. First-first against last-last is the tested effect
(``position_preference``); ``order_first`` and ``order_last`` are its two descriptive halves."""

from __future__ import annotations

from annotations.biases.base import Words
from annotations.biases.swap import CLAIMED, SwapBias
from annotations.vocabulary import Condition

POSITION = SwapBias(
    row="position_preference",
    run=Condition.ORDER,
    short="position",
    board="position",
    knob="order_first / order_last",
    null="no position preference: a pair answered with the same slot twice is as likely to be first-first as last-last",
    random=0.0,  # order_first - order_last = 0.25 - 0.25
    role=CLAIMED,
    words=Words(
        name="position",
        toward="the first position",
        against="the last position",
        hits="first slot twice",
        mirror="last slot twice",
        judge_toward="prefers the first answer",
        judge_against="prefers the second answer",
        people_toward="chose the first answer more often",
        people_against="chose the second answer more often",
    ),
    counted_by="judge_bias_units",
)
