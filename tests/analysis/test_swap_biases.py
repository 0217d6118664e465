"""CoBBLEr's biases read off the swapped runs are plugins too (issue 24): each declares its run,
row, null, coin value, role, words, labels and knob in one module, and every layer reads them."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from analysis.exporters.json_export import SCHEMA_PATH
from analysis.metrics import bias as bias_counts
from analysis.metrics import bias_rows, reference
from analysis.sections import leaderboard
from analysis.summary import claims, headline
from annotations.biases import SWAP_CLAIMED, SWAP_CONFOUNDED, SWAP_REGISTRY
from annotations.biases.swap import CLAIMED, CONFOUNDED
from annotations.vocabulary import DERIVED_FROM, Condition
from judging.simulator.behaviour import Knobs

pytestmark = pytest.mark.smoke


@pytest.mark.parametrize("row", list(SWAP_REGISTRY))
def test_a_swap_bias_declares_what_every_layer_reads(row):
    bias = SWAP_REGISTRY[row]
    assert bias.row == row and bias.run in (Condition.ORDER, Condition.COMPASSION)
    assert callable(getattr(bias_counts, bias.counted_by)), "counted_by names the report's counting function"
    knobs = {f.name for f in fields(Knobs)}
    assert all(k.strip() in knobs for k in bias.knob.split("/")), bias.knob
    schema = json.loads(SCHEMA_PATH.read_text())
    assert row in json.dumps(schema["$defs"])  # a row the report contract knows
    assert bias_rows.NULLS[row] == bias.null and bias_rows.RANDOM_THRESHOLD[row] == bias.random
    assert claims.BIAS_WORDS[row].name == bias.words.name
    assert headline.SHORT[row] == bias.short and leaderboard.SHORT[row] == bias.board
    if bias.role == CLAIMED:
        assert row in bias_rows.CLAIMED and row in claims.CLAIMED and row not in reference.RUNS
    else:
        assert bias.role == CONFOUNDED and row in bias_rows.CONFOUNDED and row not in claims.CLAIMED
        assert reference.RUNS[row] == bias.run and reference.TARGETS[row] == bias.target
        assert claims.DESCRIBED[row] == bias.described and bias.targets


def test_the_swap_registry_covers_cobblers_other_biases():
    # Order's tested row, compassion's, and the two read off the order run with no calls of their own.
    assert set(SWAP_CLAIMED) == {"position_preference"}
    assert set(SWAP_CONFOUNDED) == {"egocentric", "egocentric_comp", "salience_longer"}
    assert {SWAP_REGISTRY[r].run for r in SWAP_REGISTRY} == {Condition.ORDER, Condition.COMPASSION}
    assert set(DERIVED_FROM.values()) == {Condition.ORDER}
