"""Salience (CoBBLEr's length bias), read off the order run: among pairs judged the same way in
both showings, how often the longer answer won. Longer answers may simply be better, so the raw
rate is descriptive; a claim compares the judge with a reference on the same pairs."""

from __future__ import annotations

from annotations.biases.base import Words
from annotations.biases.swap import CONFOUNDED, SwapBias
from annotations.vocabulary import Condition

SALIENCE = SwapBias(
    row="salience_longer",
    run=Condition.ORDER,
    short="length",
    board="length",
    knob="length",
    null="no length preference: among kept pairs the longer response is chosen half the time",
    random=0.5,
    role=CONFOUNDED,
    words=Words(
        name="length (salience)",
        toward="longer answers",
        against="shorter answers",
        hits="longer chosen",
        mirror="shorter chosen",
        judge_toward="prefers longer answers at equal quality",
        judge_against="",
        people_toward="",
        people_against="",
    ),
    counted_by="_salience",
    target="the longer answer",
    targets="longer answers",
    described="chose the longer answer",
)
