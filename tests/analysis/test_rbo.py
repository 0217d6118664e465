"""RBO against Urbano's 10,000 reference rows, the rbo package, and brute-force tie breaking."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import rbo as rbo_package

from analysis.metrics.rbo import (
    TIES,
    parse_ranking,
    rbo,
    rbo_ext_batch,
    rbo_many,
    rbo_renamed,
    rbo_score,
    rbo_trunc_batch,
)
from tests.conftest import RBO_REFERENCE

SCORES = ("ext", "min", "max", "res")


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    if not RBO_REFERENCE.exists():
        pytest.skip("the RBO reference file is not available")
    return pd.read_csv(RBO_REFERENCE)


@pytest.mark.slow
@pytest.mark.parametrize("ties", ["w", "a", "b"])
def test_it_matches_every_reference_row_to_1e9(reference, ties):
    worst = dict.fromkeys(SCORES, 0.0)
    for row in reference.to_dict("records"):
        got = rbo(parse_ranking(row["x"]), parse_ranking(row["y"]), row["p"], ties=ties, scores=SCORES)
        for s in SCORES:
            worst[s] = max(worst[s], abs(got[s] - row[f"{ties}.{s}"]))
    assert len(reference) == 10_000
    assert max(worst.values()) < 1e-9, worst


def _count_breakings(ranking) -> int:
    return int(np.prod([math.factorial(len(g)) if isinstance(g, frozenset) else 1 for g in ranking]))


def _breakings(ranking):
    groups = [sorted(g) if isinstance(g, frozenset) else [g] for g in ranking]
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [item for group in combo for item in group]


def test_untied_scores_agree_with_the_reference_and_the_rbo_package(reference):
    # The reference has ties in every row. Its "a" min is the expectation over random tie
    # breaking (linear in the agreements; max and ext are not), so the mean of our untied scores over all
    # breakings must equal them; each untied pair also checks the rbo package.
    checked = 0
    for row in reference.head(400).to_dict("records"):
        x, y = parse_ranking(row["x"]), parse_ranking(row["y"])
        if _count_breakings(x) * _count_breakings(y) > 150:
            continue
        bx, by = list(_breakings(x)), list(_breakings(y))
        mins = []
        for a, b in itertools.product(bx, by):
            mine = rbo(a, b, row["p"], ties="w", scores=("min", "ext", "trunc"))
            mins.append(mine["min"])
            similarity = rbo_package.RankingSimilarity(a, b)
            assert mine["ext"] == pytest.approx(similarity.rbo_ext(p=row["p"]), abs=1e-9)
            assert mine["trunc"] == pytest.approx(similarity.rbo(p=row["p"]), abs=1e-9)
        assert np.mean(mins) == pytest.approx(row["a.min"], abs=1e-9)
        checked += 1
    assert checked >= 50


def test_it_reproduces_the_documented_small_cases():
    got = rbo(list("abcd"), list("bacd"), 0.9, scores=("min", "res", "ext"))
    assert got["min"] == pytest.approx(0.506371, abs=1e-6)
    assert got["res"] == pytest.approx(0.393629, abs=1e-6)
    assert got["ext"] == pytest.approx(0.9, abs=1e-12)
    # Identical 15-item lists: truncated RBO has the ceiling 1 - p^15, ext is exactly 1.
    items = [f"m{i}" for i in range(15)]
    assert rbo_score(items, items, p=0.8, variant="trunc") == pytest.approx(1 - 0.8**15)
    assert rbo_score(items, items, p=0.8, variant="ext") == pytest.approx(1.0)
    # A tie group compared with itself scores 1 only under the b treatment.
    tied = ["a", frozenset({"b", "c"}), "d"]
    assert rbo_score(tied, tied, p=0.9, variant="ext", ties="b") == pytest.approx(1.0)
    assert rbo_score(tied, tied, p=0.9, variant="ext", ties="a") < 1.0


def test_batch_functions_equal_the_general_implementation():
    rng = np.random.default_rng(3)
    xs = np.array([rng.permutation(15) for _ in range(100)])
    ys = np.array([rng.permutation(15) for _ in range(100)])
    trunc, ext = rbo_trunc_batch(xs, ys, 0.8), rbo_ext_batch(xs, ys, 0.8)
    for i in range(100):
        mine = rbo(list(xs[i]), list(ys[i]), 0.8, scores=("trunc", "ext"))
        assert trunc[i] == pytest.approx(mine["trunc"], abs=1e-12)
        assert ext[i] == pytest.approx(mine["ext"], abs=1e-12)


@pytest.mark.parametrize(
    ("x", "y", "kwargs", "message"),
    [
        (["a"], ["a"], {"p": 1.0}, "p must be"),
        (["a"], ["a"], {"p": 0.5, "ties": "z"}, "ties must be"),
        (["a", "a"], ["a"], {"p": 0.5}, "twice"),
        ([], ["a"], {"p": 0.5}, "empty"),
        (["a"], ["a"], {"p": 0.5, "scores": ("best",)}, "unknown"),
    ],
)
def test_it_rejects_bad_input_with_one_clear_error(x, y, kwargs, message):
    with pytest.raises(ValueError, match=message):
        rbo(x, y, **kwargs)


def test_it_parses_urbano_text_form():
    assert parse_ranking("a (b c) d") == ["a", frozenset({"b", "c"}), "d"]
    with pytest.raises(ValueError):
        parse_ranking("a (b c")


def _random_tied_ranking(rng: np.random.Generator, items: list[str]) -> list:
    """``items`` shuffled and cut into runs; a run of two or more is a tie group."""
    shuffled = [items[i] for i in rng.permutation(len(items))]
    out: list = []
    while shuffled:
        size = int(rng.integers(1, 4))
        run, shuffled = shuffled[:size], shuffled[size:]
        out.append(run[0] if len(run) == 1 else frozenset(run))
    return out


@pytest.mark.parametrize("ties", ["a", "w", "b"])
@pytest.mark.parametrize("variant", ["ext", "trunc"])
def test_renamed_batches_are_bit_identical_to_renaming_one_ranking_at_a_time(variant, ties):
    rng = np.random.default_rng(11)
    cases, expected = [], []
    for size in [7] * 15 + [5] * 5:  # two lengths: cases of one shape share a batch
        items = [f"m{i}" for i in range(size)]
        x, y = _random_tied_ranking(rng, items), _random_tied_ranking(rng, items)
        perms = np.array([rng.permutation(size) for _ in range(30)])
        names = sorted(items)
        renamed = []
        for perm in perms:
            new = dict(zip(names, (names[i] for i in perm), strict=True))
            renamed.append([frozenset(new[k] for k in e) if isinstance(e, frozenset) else new[e] for e in x])
        cases.append((x, y, perms))
        expected.append([rbo_score(r, y, p=0.8, variant=variant, ties=ties) for r in renamed])
    scores = rbo_renamed(cases, 0.8, variant=variant, ties=ties)
    assert [s.tolist() for s in scores] == expected


def test_renamed_batches_leave_lists_of_different_items_to_the_general_path():
    perms = np.array([[1, 0, 2]])
    same = (["a", "b", "c"], ["a", "b", "c"], perms)
    assert rbo_renamed([(["a", "b", "c"], ["a", "b", "d"], perms), same], 0.8, variant="ext")[0] is None
    assert rbo_renamed([same], 0.8, variant="min") == [None]


def test_rankings_flattened_once_score_as_rankings_flattened_every_time():
    # Names and frozen tie groups are flattened once and reused; list groups (unhashable) are
    # flattened per call. Both must give the same bits, uneven lists included.
    rng = np.random.default_rng(5)
    items = [f"m{i}" for i in range(12)]
    xs = [_random_tied_ranking(rng, items) for _ in range(40)]
    ys = [_random_tied_ranking(rng, items[: int(rng.integers(6, 13))]) for _ in range(40)]
    as_lists = [[sorted(e) if isinstance(e, frozenset) else e for e in x] for x in xs]
    for ties in TIES:
        for variant in ("ext", "trunc", "min"):
            memoised = rbo_many(xs + xs, ys + ys, 0.8, variant=variant, ties=ties)
            assert memoised[:40].tolist() == memoised[40:].tolist()
            assert memoised.tolist() == rbo_many(as_lists * 2, ys * 2, 0.8, variant=variant, ties=ties).tolist()
    for _ in range(2):  # a refused ranking is refused every time, never remembered as valid
        with pytest.raises(ValueError, match="twice"):
            rbo(["a", frozenset({"a", "b"})], ["a", "b"], 0.8)
