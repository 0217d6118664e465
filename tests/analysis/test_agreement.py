"""Krippendorff's alpha, Fleiss' kappa and Cohen's kappa against hand-computed values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.metrics.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha


def _tidy(ratings: dict[str, list], group_of=lambda unit: unit) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"group": group_of(u), "unit": u, "rater": r, "value": v}
            for r, values in ratings.items()
            for u, v in enumerate(values)
            if v is not None
        ]
    )


def test_alpha_ordinal_matches_the_peers_example():
    # 3 workers rank 4 answers, a small worked example: alpha-ordinal 0.694 (= 25/36).
    frame = _tidy({"w1": [1, 2, 3, 4], "w2": [2, 1, 3, 4], "w3": [1, 3, 2, 4]})
    result = krippendorff_alpha(frame, level="ordinal", replicates=0)
    assert result.value == pytest.approx(25 / 36)
    assert round(result.value, 3) == 0.694
    assert result.n == 4


def test_alpha_nominal_matches_krippendorffs_worked_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", 4 coders x 12 units
    # with missing values: nominal alpha = 0.743.
    frame = _tidy(
        {
            "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
            "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
            "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
            "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
        }
    )
    result = krippendorff_alpha(frame, level="nominal", replicates=0)
    assert result.value == pytest.approx(0.743, abs=5e-4)
    assert result.n == 11  # unit 12 has a single rating and is not pairable


def test_alpha_is_undefined_when_everybody_gives_the_same_value():
    frame = _tidy({"a": [1, 1, 1], "b": [1, 1, 1]})
    assert np.isnan(krippendorff_alpha(frame, level="nominal", replicates=0).value)


def test_fleiss_kappa_matches_the_textbook_example():
    # Fleiss (1971) / Wikipedia: 10 subjects, 14 raters, 5 categories -> kappa = 0.210.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    rows = [
        {"group": u, "unit": u, "rater": f"r{k}", "value": cat}
        for u, counts in enumerate(table)
        for k, cat in enumerate(c for c, n in enumerate(counts) for _ in range(n))
    ]
    result = fleiss_kappa(pd.DataFrame(rows), replicates=300, seed=1)
    assert result.value == pytest.approx(0.2099, abs=1e-4)
    lo, hi = result.ci95
    assert lo < result.value < hi
    # Seeded: the same interval twice.
    assert fleiss_kappa(pd.DataFrame(rows), replicates=300, seed=1).ci95 == result.ci95


def test_alpha_nominal_and_fleiss_nearly_agree_on_pairwise_choices():
    rng = np.random.default_rng(0)
    truth = rng.random(300) < 0.5
    ratings = {f"r{k}": np.where(rng.random(300) < 0.8, truth, ~truth).astype(int).tolist() for k in range(3)}
    frame = _tidy(ratings, group_of=lambda u: u // 30)
    alpha = krippendorff_alpha(frame, level="nominal", seed=2)
    kappa = fleiss_kappa(frame, seed=2)
    # With complete data both estimate (0.8^2 + 0.2^2 - 0.5) / 0.5 = 0.36.
    assert alpha.value == pytest.approx(kappa.value, abs=0.01)
    assert alpha.ci95[0] < 0.36 < alpha.ci95[1]


def test_cohen_kappa_hand_value():
    # 2x2 table [[20, 5], [10, 15]]: po = 0.7, pe = 0.5*0.6 + 0.5*0.4 = 0.5, kappa = 0.4.
    a = np.array([1] * 25 + [0] * 25)
    b = np.array([1] * 20 + [0] * 5 + [1] * 10 + [0] * 15)
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert np.isnan(cohen_kappa(np.ones(4), np.ones(4)))
