"""Bradley-Terry (Davidson ties) scores, their clustered bootstrap, and ranking agreement (issue 21, item 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.stats import kendalltau

from analysis.metrics import bradley_terry as bt
from analysis.metrics.rbo import rbo


def frame(rows: list[tuple]) -> pd.DataFrame:
    """Rows (instruction, winner, loser, tie[, x]) as a comparisons frame."""
    full = [(*r, 0.0) if len(r) == 4 else r for r in rows]
    return pd.DataFrame(full, columns=bt.COLUMNS)


def draws(comparisons: pd.DataFrame, replicates: int = 200, seed: int = 3) -> bt.Resampling:
    return bt.Resampling.draw(comparisons["instruction"], replicates=replicates, seed=seed)


def simulate(
    theta: np.ndarray, *, instructions: int, per_instruction: int, nu: float, beta: float, seed: int
) -> pd.DataFrame:
    """Davidson outcomes for random pairs; x ~ N(0, 1) is the first system's covariate advantage."""
    rng = np.random.default_rng(seed)
    rows = []
    for inst in range(instructions):
        for _ in range(per_instruction):
            i, j = rng.choice(len(theta), 2, replace=False)
            x = rng.normal()
            d = theta[i] - theta[j] + beta * x
            p = np.array([np.exp(d / 2), np.exp(-d / 2), nu])
            outcome = rng.choice(3, p=p / p.sum())
            if outcome == 1:
                rows.append((inst, f"s{j}", f"s{i}", False, -x))
            else:
                rows.append((inst, f"s{i}", f"s{j}", outcome == 2, x))
    return pd.DataFrame(rows, columns=bt.COLUMNS)


def test_hand_worked_example_with_ties():
    # A vs B: A wins 2, B wins 1, 1 tie. B vs C: B wins 2, C wins 1, 1 tie. A and C never meet.
    # Each pair is a saturated 3-outcome multinomial, so at the MLE the fitted shares equal the
    # observed ones: e^{d/2}/Z = 1/2, e^{-d/2}/Z = 1/4, nu/Z = 1/4 on both pairs, hence
    # e^d = 2 (d = ln 2 for A-B and for B-C) and nu = e^{-d/2} = 1/sqrt(2). With mean 0:
    # theta = (ln 2, 0, -ln 2); Elo-like = 1000 + 400 log10(2) * (1, 0, -1) = (1120.4, 1000, 879.6).
    rows = [(1, "A", "B", False), (2, "A", "B", False), (3, "B", "A", False), (4, "A", "B", True)]
    rows += [(5, "B", "C", False), (6, "B", "C", False), (7, "C", "B", False), (8, "B", "C", True)]
    comparisons = frame(rows)
    systems, exact = bt.point_fit(comparisons, ridge=0.0)
    assert systems == ["A", "B", "C"] and exact.converged.all()
    assert exact.theta[0] == pytest.approx([np.log(2), 0.0, -np.log(2)], abs=1e-9)
    assert np.exp(exact.log_nu[0]) == pytest.approx(2**-0.5, abs=1e-9)
    assert [bt.elo(t) for t in exact.theta[0]] == pytest.approx([1120.41, 1000.0, 879.59], abs=0.01)
    # The reported fit (default ridge) shrinks them towards 0 by about ridge / information:
    # 1.4% (1.7 Elo points) with these 8 comparisons, under 0.1% with 100 per system.
    ridged = bt.scores(comparisons, draws(comparisons))
    assert ridged is not None and ridged.systems == systems
    assert ridged.theta[[0, 2]] / exact.theta[0][[0, 2]] == pytest.approx([0.986, 0.986], abs=0.002)
    assert ridged.theta[1] == pytest.approx(0.0, abs=1e-12)
    assert (ridged.n_comparisons, ridged.n_ties, ridged.n_instructions) == (8, 2, 8)
    assert ridged.appearances.tolist() == [4.0, 8.0, 4.0]
    assert ridged.mle_exists and ridged.never_lost == ridged.never_won == ridged.held == []


def test_hand_worked_example_without_ties_is_plain_bradley_terry():
    # The same counts without the ties: each edge's MLE is its log odds, ln(2/1); nu is fixed at 0.
    comparisons = frame([(1, "A", "B", False), (2, "A", "B", False), (3, "B", "A", False)])
    comparisons = pd.concat([comparisons, frame([(4, "B", "C", False), (5, "B", "C", False), (6, "C", "B", False)])])
    _, exact = bt.point_fit(comparisons, ridge=0.0)
    assert exact.theta[0] == pytest.approx([np.log(2), 0.0, -np.log(2)], abs=1e-9)
    assert exact.log_nu[0] == -np.inf  # nu = 0


def davidson_by_scipy(comparisons: pd.DataFrame, systems: list[str], *, ties: bool, covariate: bool) -> np.ndarray:
    """A second implementation: BFGS on the Davidson negative log-likelihood, theta_0 fixed at 0 (then centred)."""
    index = {s: k for k, s in enumerate(systems)}
    w = comparisons["winner"].map(index).to_numpy()
    lo = comparisons["loser"].map(index).to_numpy()
    tie = comparisons["tie"].to_numpy(dtype=bool)
    x = comparisons["x"].to_numpy(dtype=float) if covariate else np.zeros(len(comparisons))
    k = len(systems)

    def nll(params: np.ndarray) -> float:
        theta = np.r_[0.0, params[: k - 1]]
        eta = params[k - 1] if ties else -np.inf
        beta = params[-1] if covariate else 0.0
        d = theta[w] - theta[lo] + beta * x
        log_z = np.logaddexp(np.logaddexp(d / 2, -d / 2), eta)
        return float(-np.sum(np.where(tie, eta, d / 2) - log_z))

    size = k - 1 + int(ties) + int(covariate)
    found = minimize(nll, np.zeros(size), method="BFGS", options={"gtol": 1e-9})
    theta = np.r_[0.0, found.x[: k - 1]]
    return np.r_[theta - theta.mean(), found.x[k - 1 :]]


@pytest.mark.parametrize(("ties", "covariate"), [(True, False), (True, True), (False, False), (False, True)])
def test_matches_an_independent_scipy_fit_on_random_data(ties, covariate):
    theta = np.array([0.8, 0.3, 0.0, -0.2, -0.9])
    comparisons = simulate(
        theta, instructions=40, per_instruction=10, nu=0.5 if ties else 0.0, beta=0.4, seed=11 + covariate
    )
    systems, fit = bt.point_fit(comparisons, covariate=covariate, ridge=0.0)
    want = davidson_by_scipy(comparisons, systems, ties=ties, covariate=covariate)
    assert fit.theta[0] == pytest.approx(want[:5], abs=1e-5)
    if ties:
        assert fit.log_nu[0] == pytest.approx(want[5], abs=1e-5)
    else:
        assert fit.log_nu[0] == -np.inf
    if covariate:
        assert fit.beta[0] == pytest.approx(want[-1], abs=1e-5)


def test_recovers_known_strengths_tie_rate_and_length_effect():
    theta = np.array([1.0, 0.5, 0.0, -0.5, -1.0])
    comparisons = simulate(theta, instructions=400, per_instruction=10, nu=0.6, beta=0.5, seed=5)
    result = bt.scores(comparisons, draws(comparisons, 50), covariate=True)
    assert result is not None and result.systems == [f"s{k}" for k in range(5)]
    assert np.abs(result.theta - theta).max() < 0.12
    assert result.nu == pytest.approx(0.6, abs=0.08)
    assert result.beta == pytest.approx(0.5, abs=0.08)
    plain = bt.scores(comparisons, draws(comparisons, 50))
    assert plain is not None and plain.beta is None


def test_clustered_bootstrap_interval_covers_the_truth_at_about_the_nominal_rate():
    # 100 simulated studies x 5 systems (30 instructions x 8 comparisons each): every system's 95%
    # interval is checked against its true log-strength. Measured: 0.918 (459 of 500 here; 916 of
    # 1000 over 200 studies). The percentile bootstrap runs a little short with 30 clusters; with
    # 120 instructions it measured 0.956. A broken interval (a wrong centre, no resampling) lands
    # far outside 0.88-0.99.
    theta = np.array([0.6, 0.2, 0.0, -0.3, -0.5])
    hits = total = 0
    for study in range(100):
        comparisons = simulate(theta, instructions=30, per_instruction=8, nu=0.3, beta=0.0, seed=1000 + study)
        result = bt.scores(comparisons, draws(comparisons, 200, seed=study))
        assert result is not None
        for system in result.systems:
            low, high = result.interval(system) or (np.nan, np.nan)
            hits += low <= theta[int(system[1:])] <= high
            total += 1
    assert total == 500
    assert 0.88 <= hits / total <= 0.99


def test_an_undefeated_system_stays_finite_and_is_named():
    # A beats B and C every time: its MLE is +infinity; the ridge holds it finite (and on top).
    rows = [(1, "A", "B", False), (2, "A", "C", False), (3, "B", "C", False), (4, "C", "B", False)]
    comparisons = frame(rows * 3)
    result = bt.scores(comparisons, draws(comparisons))
    assert result is not None
    assert result.never_lost == ["A"] and result.never_won == [] and not result.mle_exists
    assert result.held == ["A"]  # B and C upset each other: their gap is estimable
    assert np.isfinite(result.theta).all() and result.theta.argmax() == 0
    assert 3 < result.theta[0] < 15  # about ln(n / ridge): large, not infinite
    assert result.replicates_converged == 1.0


def test_an_order_without_a_single_upset_holds_every_score_on_the_ridge():
    # A > B > C every time (a length-only judge does this): every gap is infinite.
    comparisons = frame([(1, "A", "B", False), (2, "B", "C", False), (3, "A", "C", False)] * 2)
    result = bt.scores(comparisons, draws(comparisons))
    assert result is not None and not result.mle_exists
    assert result.held == ["A", "B", "C"] and result.never_lost == ["A"] and result.never_won == ["C"]
    assert list(np.argsort(-result.theta)) == [0, 1, 2]


def test_beta_is_flagged_when_the_longer_answer_always_wins():
    rows = [(1, "A", "B", False, 0.5), (2, "B", "A", False, 0.2), (3, "A", "B", False, 1.0), (4, "B", "A", True, -0.3)]
    comparisons = frame(rows)
    result = bt.scores(comparisons, draws(comparisons), covariate=True)
    assert result is not None and result.beta_separated and result.beta is not None and result.beta > 2
    flipped = frame([*rows, (5, "A", "B", False, -0.4)])
    mixed = bt.scores(flipped, draws(flipped), covariate=True)
    assert mixed is not None and not mixed.beta_separated


def test_a_system_never_compared_is_excluded_and_named():
    comparisons = frame([(1, "A", "B", False), (2, "B", "A", False), (3, "A", "B", True)])
    result = bt.scores(comparisons, draws(comparisons), systems=["A", "B", "Z"])
    assert result is not None and result.systems == ["A", "B"] and result.excluded == ["Z"]
    assert result.theta == pytest.approx([0.0, 0.0], abs=1e-9)


def test_a_system_missing_from_a_replicate_has_no_score_there():
    # C meets B on one instruction only: replicates that leave instruction 3 out have no C.
    rows = [(1, "A", "B", False), (2, "B", "A", False), (3, "B", "C", False), (4, "A", "B", True)]
    comparisons = frame(rows)
    result = bt.scores(comparisons, draws(comparisons, 100))
    assert result is not None
    missing = np.isnan(result.theta_reps[:, 2])
    assert 0 < missing.mean() < 1
    assert np.nanmean(result.theta_reps[~missing], axis=1) == pytest.approx(0.0, abs=1e-9)


def test_kendall_tau_b_matches_scipy_with_ties():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 4, size=(20, 7)).astype(float)
    y = rng.integers(0, 4, size=(20, 7)).astype(float)
    got = bt.kendall_tau_b(x, y)
    want = [kendalltau(a, b).statistic for a, b in zip(x, y, strict=True)]
    assert got == pytest.approx(want, abs=1e-12, nan_ok=True)


def test_agreement_of_a_subject_with_itself_and_with_its_mirror():
    theta = np.array([0.8, 0.3, 0.0, -0.2, -0.9])
    humans = simulate(theta, instructions=60, per_instruction=6, nu=0.3, beta=0.0, seed=8)
    mirror = humans.rename(columns={"winner": "loser", "loser": "winner"})
    resampling = draws(humans, 100)
    a, b, c = (bt.scores(f, resampling) for f in (humans, humans, mirror))
    assert a is not None and b is not None and c is not None
    same = bt.agreement(a, b, p=0.8, variant="ext")
    assert same is not None
    assert (same["kendall_tau"], same["rbo"], same["kendall_tau_ci95"], same["rbo_ci95"]) == (1.0, 1.0, [1, 1], [1, 1])
    flipped = bt.agreement(a, c, p=0.8, variant="ext")
    assert flipped is not None and flipped["kendall_tau"] == pytest.approx(-1.0)
    assert flipped["kendall_tau_ci95"] == pytest.approx([-1.0, -1.0])  # paired: every replicate mirrors too
    best_first = bt.ranking(a.systems, a.theta)
    assert flipped["rbo"] == pytest.approx(rbo(best_first, best_first[::-1], 0.8)["ext"])
    assert flipped["rbo"] < 0.6 and flipped["n_systems"] == 5


def test_length_covariate_is_antisymmetric_and_scaled():
    x = bt.length_covariate(np.array([300, 100, 0]), np.array([100, 300, 0]), scale=0.5)
    assert x.tolist() == [1.0, -1.0, 0.0]


@pytest.mark.django_db
def test_report_section_on_a_small_study_is_schema_valid_and_paired():
    from analysis.exporters import export, validate
    from analysis.exporters.tidy_tables import tidy_tables
    from analysis.services import compose_report
    from tests.analysis.test_length_builders import WORKED_ANSWERS, WORKED_VERDICTS, WORKED_VOTES, mtbench_study

    study = mtbench_study(slug="bt", answers=WORKED_ANSWERS, votes=WORKED_VOTES, verdicts=WORKED_VERDICTS)
    report = compose_report(study=study, profile="default")
    validate(report)
    rows = report["bt_rankings"]
    assert [r["subject"] for r in rows][0] == "humans" and all(r["kind"] == "judge" for r in rows[1:])
    humans, judge = rows[0], rows[1]
    assert humans["vs_humans"] is None and judge["vs_humans"]["n_systems"] >= 2
    assert {s["system"] for s in humans["systems"]} <= {"x", "y", "z"}
    assert humans["n_ties"] >= 1 and humans["tie_nu"] is not None  # the "tie" vote
    assert "Davidson" in judge["method"] and "seed 21" in judge["method"]
    scores = [s["score"] for s in judge["systems"]]
    assert scores == sorted(scores, reverse=True)
    assert judge["length_controlled"] is not None and "beta_ci95" in judge["length_controlled"]
    tables = {t.name: t for t in tidy_tables(report)}
    systems, subjects = tables["bt_rankings"], tables["bt_rankings_subjects"]
    assert len(systems.rows) == sum(len(r["systems"]) + len(r["length_controlled"]["systems"]) for r in rows)
    assert systems.rows[0]["score"] == humans["systems"][0]["score"]
    assert [(r["subject"], r["variant"]) for r in subjects.rows[:2]] == [
        ("humans", "uncontrolled"),
        ("humans", "length-controlled"),
    ]
    assert subjects.rows[2]["vs_humans.kendall_tau"] == judge["vs_humans"]["kendall_tau"]
    assert b"bt_rankings" in export(report, "html")


def bt_row(subject: str, scores: dict[str, float], held: tuple[str, ...] = ()) -> dict:
    systems = [
        {
            "system": name,
            "score": score,
            "ci95": None if name in held else [score - 40, score + 40],
            "log_strength": (score - bt.ELO_CENTRE) / bt.ELO_PER_UNIT,
            "n": 30,
            "held_by_ridge": name in held,
        }
        for name, score in sorted(scores.items(), key=lambda kv: -kv[1])
    ]
    return {"subject": subject, "kind": "humans" if subject == "humans" else "judge", "systems": systems}


def test_the_plot_draws_every_subject_and_arrows_for_unbounded_scores():
    from analysis.plots import render_figures
    from analysis.plots.base import house_style
    from analysis.plots.bt import bt_plot
    from tests.analysis.test_plots_layout import layout_problems

    rows = [
        bt_row("humans", {"a": 1100, "b": 1000, "c": 900}),
        bt_row("judge-1", {"a": 1050, "b": 1010, "c": 940}),
        bt_row("longer", {"a": 2600, "b": 1000, "c": -500}, held=("a", "c")),
    ]
    report = {"profile": "default", "bt_rankings": rows}
    with house_style():
        plot = bt_plot(report)
        assert layout_problems(plot) == []
    ax = plot.figure.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    assert ax.get_xlim()[1] < 1300  # the ridge-held 2600 does not stretch the axis
    assert "2 score(s) unbounded" in plot.caption
    assert [f["name"] for f in render_figures(report)][-1] == "bt_rankings"
    with house_style():
        empty = bt_plot({"profile": "default", "bt_rankings": []})
        assert "no rows" in empty.caption and layout_problems(empty) == []
