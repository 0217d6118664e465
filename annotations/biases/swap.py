"""The interface of a bias read off a run whose two showings swap the answers (``SwapBias``).

CoBBLEr's order and compassion runs show a pair twice with the answers in swapped places (the
compassion run names the models). Four of the report's tested rows are read off them rather than
off a cue: position (the same slot chosen twice), and self-preference and length (salience), which
need no run of their own (``vocabulary.DERIVED_FROM``). What such a bias is lives in its module
here, as a cue bias's does in its own (``base.CueBias``): the run it is read from, the report row,
its null and a fair coin's value, whether its own test may claim (``CLAIMED``) or its raw rate
mixes the bias with quality (``CONFOUNDED``: claimed only against a reference on the same pairs,
``analysis.metrics.reference``), its words for claims and headlines, its plot and leaderboard
labels and its simulator knob. The counting stays with the report (``analysis.metrics.bias``,
``human_bias``: ``counted_by`` names it), as the cue biases' generic counting does.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotations.biases.base import Words

CLAIMED = "claimed"  # its null holds whatever the answers' quality: its own test claims
CONFOUNDED = "confounded"  # longer or own answers may simply be better: descriptive, or against a reference


@dataclass(frozen=True)
class SwapBias:
    row: str  # the report's bias row
    run: str  # the Condition value whose two showings it is read from
    short: str  # plot label and headline word
    board: str  # its leaderboard label
    knob: str  # the simulator knob(s) that inject it
    null: str  # the null hypothesis its test compares, in words
    random: float  # a fair coin per prompt: the row's expected value
    role: str  # CLAIMED or CONFOUNDED
    words: Words  # judge_against / people_* may be "" (no such headline phrase)
    counted_by: str  # the function of analysis.metrics.bias that counts a judge's hits and mirror
    target: str = ""  # CONFOUNDED: what the reference compares ("the longer answer")
    targets: str = ""  # CONFOUNDED: the same, plural, in the descriptive line ("longer answers")
    described: str = ""  # CONFOUNDED: what its raw rate counts, in words
