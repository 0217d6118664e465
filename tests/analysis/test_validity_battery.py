"""The validity harness's battery panels follow the bias registry (benchmarks/validity.py).

Every cue bias people and judges both answer (``annotations.biases.CROWD_CUED``) is simulated in
the battery panels, and each CALM cue, sentiment included, is injected at 10% and 20%; one small
replicate shows that an injected sentiment bias reaches the report as its own row, with the
true effect the simulation gives it and no other row touched.
"""

from __future__ import annotations

import pytest

from annotations.biases import CROWD_CUED, REWRITTEN
from benchmarks import validity as v


def test_battery_simulates_every_crowd_cued_bias():
    # Selective is judge-only (no crowd twin): it has no place in the harness's judge-and-people panels.
    assert set(v.ALL_CUES) == set(CROWD_CUED)
    assert set(REWRITTEN) <= set(v.CALM_CUES)
    for name in ("battery-null", "battery-injected"):
        panel = next(p for p in v.PANELS if p.name == name)
        assert set(panel.study.cues) == set(v.ALL_CUES)


def test_battery_injects_sentiment_like_the_other_calm_cues():
    panel = next(p for p in v.PANELS if p.name == "battery-injected")
    injected = {(j.bias, j.beta) for j in panel.judges}
    assert injected == {(cue, beta) for cue in v.CALM_CUES for beta in (0.10, 0.20)}
    assert v.INJECTED_ROW["sentiment"] == "sentiment"
    assert "sentiment" in v.TESTED and ("sentiment", "sentiment") in v.COLUMNS


def test_an_injected_sentiment_bias_reaches_its_own_row():
    panel = v.Panel(
        "sentiment-only",
        v.StudySpec(cues=v.ALL_CUES),
        (v.JudgeSpec("sentiment-20", bias="sentiment", beta=0.20), v.JudgeSpec("a-realistic")),
        power=True,
    )
    [task] = v.plan({120: v.Counts(1, 1, 0)}, panels=(panel,))
    records = {r["subject"]: r for r in v.run_replicate(task)}
    biased = records["sentiment-20"]
    # The cue follows slot 1 then slot 2: the expected effect is the injected share exactly.
    assert biased["truth"]["sentiment"] == pytest.approx(0.20, abs=1e-9)
    effect, low, high = biased["rows"]["sentiment"]
    assert low <= effect <= high
    assert records["a-realistic"]["truth"]["sentiment"] == pytest.approx(0.0, abs=1e-9)
    assert records["humans"]["truth"]["sentiment"] == 0.0
    assert "sentiment" in records["humans"]["rows"]
