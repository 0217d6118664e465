"""Bradley-Terry scores of candidate systems from pairwise outcomes, with Davidson ties and intervals.

Input: a comparisons frame, one row per judged pair (``COLUMNS``): ``instruction`` (the cluster),
``winner`` and ``loser`` (system keys), ``tie`` (then winner and loser are just the two systems)
and, for style control, ``x`` (the winner's standardised length advantage, ``length_covariate``).

Model (Davidson 1970), with log-strengths theta and nu = exp(eta) >= 0; for systems i, j with
d = theta_i - theta_j + beta * x_ij:
    P(i beats j) = e^{d/2} / Z,  P(j beats i) = e^{-d/2} / Z,  P(tie) = nu / Z,
    Z = e^{d/2} + e^{-d/2} + nu,
which is pi_i / (pi_i + pi_j + nu sqrt(pi_i pi_j)) with pi = e^theta. Without ties in the data
nu is fixed at 0 (plain Bradley-Terry, the logistic model P(i beats j) = 1 / (1 + e^{-d})).
beta is 0 unless the length covariate is asked for (LMArena's style control).

Fit: penalised maximum likelihood by damped Newton (numpy only: scipy.optimize costs half a
second to import on every report). The penalty is (RIDGE / 2) (|theta|^2 + eta^2 + beta^2),
a N(0, 10^2) prior on each log-strength: it shrinks a score towards 0 by about RIDGE / (its
Fisher information), under 0.1% of the score once a system has 100 comparisons, and it keeps
the scores finite when the MLE does not exist (e.g. a system that never lost: its score is then
about ln(n / RIDGE); ``separation`` names such systems and every score that rests on the ridge).
The shift of theta is fixed by mean(theta) = 0 over the systems compared (a second, exact term
(sum theta)^2 / 2 makes the Hessian definite without moving the maximum).

Intervals: percentile bootstrap clustered by instruction (instructions resampled with
replacement; every subject of one report gets the same draws, so human-vs-judge statistics are
paired). Every replicate is fitted at once, as one batch of Newton steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.metrics.rbo import rbo_ext_batch, rbo_many, rbo_trunc_batch
from analysis.metrics.stats import bootstrap_weights, percentile_interval

COLUMNS = ["instruction", "winner", "loser", "tie", "x"]
RIDGE = 0.01
ELO_PER_UNIT = 400 / np.log(10)  # 400 points = odds of 10 to 1 (no ties)
ELO_CENTRE = 1000.0  # the mean system of a subject sits here
MAX_STEPS = 60
STEP_TOLERANCE = 1e-9
BATCHED = {"ext": rbo_ext_batch, "trunc": rbo_trunc_batch}  # untied complete rankings, vectorised


def length_covariate(len_winner: np.ndarray, len_loser: np.ndarray, scale: float) -> np.ndarray:
    """The winner's relative length advantage (w - l) / (w + l), divided by ``scale``.

    Not centred: swapping winner and loser must flip its sign. ``scale`` is fixed by the caller
    (the root mean square over the study's pairs), so all subjects share one unit of beta.
    """
    w, lo = np.asarray(len_winner, dtype=float), np.asarray(len_loser, dtype=float)
    total = w + lo
    with np.errstate(invalid="ignore", divide="ignore"):
        relative = np.where(total > 0, (w - lo) / np.where(total > 0, total, 1.0), 0.0)
    return relative / scale


@dataclass(frozen=True)
class Design:
    """Comparisons collapsed to distinct cells (winner, loser, tie, x), counted per instruction."""

    systems: list[str]
    excluded: list[str]  # asked for but never compared
    first: np.ndarray  # winner index per cell
    second: np.ndarray  # loser index per cell
    tie: np.ndarray  # bool per cell
    x: np.ndarray  # covariate per cell (0 without it)
    # Sparse counts: ``count`` comparisons of instruction ``where`` fell in cell ``cell``, sorted by cell
    # (a dense instructions x cells matrix costs a billion flops per bootstrap at 1000 x 1000).
    cell: np.ndarray
    where: np.ndarray
    count: np.ndarray
    instructions: list  # labels ``where`` indexes

    @property
    def weights(self) -> np.ndarray:
        return np.bincount(self.cell, self.count, len(self.tie))


def design(comparisons: pd.DataFrame, systems: Sequence[str] | None = None, *, covariate: bool = False) -> Design:
    """``comparisons`` as cells; ``systems`` (default: those compared) fixes the order, unseen ones are excluded."""
    frame = comparisons[comparisons["winner"] != comparisons["loser"]].reset_index(drop=True)
    seen = set(frame["winner"]) | set(frame["loser"])
    wanted = list(systems) if systems is not None else sorted(seen)
    kept = [s for s in wanted if s in seen]
    frame = frame[frame["winner"].isin(kept) & frame["loser"].isin(kept)]
    index = {s: k for k, s in enumerate(kept)}
    x = frame["x"].fillna(0.0).to_numpy(dtype=float) if covariate else np.zeros(len(frame))
    keys = pd.DataFrame(
        {
            "first": frame["winner"].map(index).to_numpy(dtype=np.int64),
            "second": frame["loser"].map(index).to_numpy(dtype=np.int64),
            "tie": frame["tie"].to_numpy(dtype=bool),
            "x": x,
        }
    )
    grouped = keys.groupby(list(keys.columns), sort=True)
    cell = grouped.ngroup().to_numpy()
    table = grouped.size().reset_index()
    row, labels = pd.factorize(frame["instruction"], sort=True)
    triplets = pd.DataFrame({"cell": cell, "where": row}).value_counts().sort_index().reset_index()
    return Design(
        systems=kept,
        excluded=[s for s in wanted if s not in seen],
        first=table["first"].to_numpy(dtype=np.int64),
        second=table["second"].to_numpy(dtype=np.int64),
        tie=table["tie"].to_numpy(dtype=bool),
        x=table["x"].to_numpy(dtype=float),
        cell=triplets["cell"].to_numpy(dtype=np.int64),
        where=triplets["where"].to_numpy(dtype=np.int64),
        count=triplets["count"].to_numpy(dtype=float),
        instructions=list(labels),
    )


@dataclass(frozen=True)
class Params:
    """Fitted values for each of R weightings (R = 1 for the point fit): theta is (R, K)."""

    theta: np.ndarray  # mean 0 over the systems present; NaN for a system absent from a replicate
    log_nu: np.ndarray  # (R,); -inf when ties are not modelled
    beta: np.ndarray  # (R,); 0 without the covariate
    converged: np.ndarray  # (R,) bool
    solution: np.ndarray  # (R, parameters) as fitted, to start other fits from


class _Davidson:
    """The penalised log-likelihood of one design under R weightings, its value and Newton steps.

    Cells are sorted by (winner, loser) (``design`` groups them sorted), so per-pair sums are one
    ``reduceat``: the (R, cells) arrays are never multiplied by a (cells, K^2) indicator matrix.
    """

    def __init__(self, d: Design, weights: np.ndarray, *, ties: bool, covariate: bool, ridge: float) -> None:
        self.d, self.w, self.ties, self.covariate, self.ridge = d, weights, ties, covariate, ridge
        self.k = len(d.systems)
        self.size = self.k + int(ties) + int(covariate)
        self.eta_at, self.beta_at = self.k, self.k + int(ties)
        self.tie = d.tie.astype(float)
        self.decisive = 1 - self.tie
        slot = d.first * self.k + d.second
        self.starts = np.flatnonzero(np.r_[True, slot[1:] != slot[:-1]])
        self.slots = slot[self.starts]
        self.pair_signs = np.zeros((len(self.starts), self.k))  # +1 winner, -1 loser, per (winner, loser) pair
        self.pair_signs[np.arange(len(self.starts)), d.first[self.starts]] = 1.0
        self.pair_signs[np.arange(len(self.starts)), d.second[self.starts]] = -1.0

    def by_pair(self, values: np.ndarray) -> np.ndarray:
        return np.add.reduceat(values, self.starts, axis=1)

    def unpack(self, params: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        eta = params[:, self.eta_at] if self.ties else np.full(len(params), -np.inf)
        beta = params[:, self.beta_at] if self.covariate else np.zeros(len(params))
        return params[:, : self.k], eta, beta

    def state(self, params: np.ndarray) -> dict[str, np.ndarray]:
        theta, eta, beta = self.unpack(params)
        lin = theta[:, self.d.first] - theta[:, self.d.second] + beta[:, None] * self.d.x[None, :]
        # exp, not logaddexp (3x slower over a million cells); ridge-bounded scores never reach the clip.
        half = np.exp(np.clip(lin / 2, -300, 300))
        z = half + 1 / half + np.exp(eta)[:, None]
        return {"params": params, "theta": theta, "eta": eta, "beta": beta, "lin": lin, "half": half, "z": z}

    def objective(self, s: dict[str, np.ndarray]) -> np.ndarray:
        tie_term = self.tie * s["eta"][:, None] if self.ties else 0.0
        loglik = (self.w * (self.decisive * s["lin"] / 2 + tie_term - np.log(s["z"]))).sum(axis=1)
        penalty = (s["theta"] ** 2).sum(axis=1) + (s["eta"] ** 2 if self.ties else 0.0) + s["beta"] ** 2
        return loglik - self.ridge / 2 * penalty - s["theta"].sum(axis=1) ** 2 / 2

    def step(self, s: dict[str, np.ndarray]) -> np.ndarray:
        """The Newton step -H^-1 g of every replicate (H is negative definite: ridge and the sum term)."""
        k, w, x, theta = self.k, self.w, self.d.x, s["theta"]
        # Few passes over the (R, cells) arrays: they are the whole cost (2 million cells at 1000 replicates).
        inv_z = 1 / s["z"]
        diff = (s["half"] - 1 / s["half"]) * inv_z  # P(win) - P(lose)
        p_tie = np.exp(s["eta"])[:, None] * inv_z
        half_w = w / 2
        g_lin = half_w * (self.decisive - diff)  # d loglik / d lin
        h_lin = half_w * (diff * diff - (1 - p_tie)) / 2  # d2 loglik / d lin2 = -(P(w) + P(l) - diff^2) / 4
        reps = len(w)
        grad = np.zeros((reps, self.size))
        hess = np.zeros((reps, self.size, self.size))
        grad[:, :k] = self.by_pair(g_lin) @ self.pair_signs - self.ridge * theta - theta.sum(axis=1, keepdims=True)
        pairs = np.zeros((reps, k * k))
        pairs[:, self.slots] = self.by_pair(h_lin)
        pairs = pairs.reshape(reps, k, k)
        sym = pairs + pairs.transpose(0, 2, 1)
        hess[:, :k, :k] = -sym - self.ridge * np.eye(k) - 1.0
        hess[:, np.arange(k), np.arange(k)] += sym.sum(axis=2)
        if self.ties:
            at = self.eta_at
            h_cross = half_w * diff * p_tie  # d2 loglik / d lin d eta
            w_tie = w * p_tie
            grad[:, at] = w @ self.tie - w_tie.sum(axis=1) - self.ridge * s["eta"]
            hess[:, at, at] = (w_tie * p_tie).sum(axis=1) - w_tie.sum(axis=1) - self.ridge
            hess[:, :k, at] = hess[:, at, :k] = self.by_pair(h_cross) @ self.pair_signs
        if self.covariate:
            at = self.beta_at
            grad[:, at] = g_lin @ x - self.ridge * s["beta"]  # matrix-vector products: no (R, cells) temporaries
            hess[:, at, at] = h_lin @ (x * x) - self.ridge
            hess[:, :k, at] = hess[:, at, :k] = self.by_pair(h_lin * x) @ self.pair_signs
            if self.ties:
                hess[:, self.eta_at, at] = hess[:, at, self.eta_at] = h_cross @ x
        return solve_definite(-hess, grad)


def fit_weighted(
    d: Design,
    weights: np.ndarray,
    *,
    ties: bool,
    covariate: bool,
    ridge: float = RIDGE,
    start: np.ndarray | None = None,
) -> Params:
    """Penalised MLE of the Davidson model for every row of ``weights`` (R, cells), by batched damped Newton.

    ``start`` (1, parameters): where to begin, e.g. the point fit for the bootstrap replicates
    (about half the Newton steps of a start at 0).
    """
    weights = np.atleast_2d(np.asarray(weights, dtype=float))
    model = _Davidson(d, weights, ties=ties, covariate=covariate, ridge=ridge)
    params = np.zeros((len(weights), model.size))
    if start is not None:
        params[:] = start
    elif ties:
        # Start nu where P(tie) at equal strengths, nu / (2 + nu), matches the share of ties.
        share = np.clip((weights * model.tie).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0), 1e-6, 1 - 1e-6)
        params[:, model.eta_at] = np.log(2 * share / (1 - share))
    state = model.state(params)
    value = model.objective(state)
    converged = np.zeros(len(weights), dtype=bool)
    for _ in range(MAX_STEPS):
        step = model.step(state)
        converged = np.abs(step).max(axis=1) < STEP_TOLERANCE
        if converged.all():
            break
        # Halve a replicate's step until its objective does not fall (concave: rarely needed).
        scale = np.ones(len(weights))
        for _ in range(40):
            trial = model.state(state["params"] + scale[:, None] * step)
            new = model.objective(trial)
            worse = new < value - 1e-12 * np.abs(value)
            if not worse.any():
                break
            scale[worse] /= 2
        state, value = trial, new
    theta, eta, beta = model.unpack(state["params"])
    present = model.by_pair(weights) @ np.abs(model.pair_signs) > 0  # no comparison in a replicate: no score there
    count = present.sum(axis=1, keepdims=True)
    centre = np.where(present, theta, 0.0).sum(axis=1, keepdims=True) / np.maximum(count, 1)
    theta = np.where(present, theta - centre, np.nan)
    empty = count[:, 0] == 0  # a replicate that drew none of this subject's instructions
    eta, beta = np.where(empty, np.nan, eta), np.where(empty, np.nan, beta)
    return Params(theta=theta, log_nu=eta, beta=beta, converged=converged | empty, solution=state["params"])


def solve_definite(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve a[r] z[r] = b[r] for a batch of symmetric positive definite matrices, by Cholesky.

    Vectorised over the batch, looping over the (few) columns: np.linalg.solve on a thousand
    17 x 17 systems spends most of its time waking BLAS threads (60 ms against 4 ms here).
    """
    reps, size = b.shape
    low = np.zeros_like(a)
    for j in range(size):
        low[:, j, j] = np.sqrt(a[:, j, j] - (low[:, j, :j] ** 2).sum(axis=1))
        below = a[:, j + 1 :, j] - np.einsum("rik,rk->ri", low[:, j + 1 :, :j], low[:, j, :j])
        low[:, j + 1 :, j] = below / low[:, j, j][:, None]
    y = np.zeros_like(b)
    for j in range(size):
        y[:, j] = (b[:, j] - (low[:, j, :j] * y[:, :j]).sum(axis=1)) / low[:, j, j]
    z = np.zeros_like(b)
    for j in reversed(range(size)):
        z[:, j] = (y[:, j] - (low[:, j + 1 :, j] * z[:, j + 1 :]).sum(axis=1)) / low[:, j, j]
    return z


@dataclass(frozen=True)
class Separation:
    mle_exists: bool
    never_lost: list[str]
    never_won: list[str]
    held: list[str]  # systems whose score (against the others) only the ridge keeps finite


def separation(d: Design) -> Separation:
    """Whether the unpenalised MLE exists, who never lost / never won, and whose score rests on the ridge.

    The MLE exists when the comparison graph is strongly connected (Ford 1957): edges loser ->
    winner for every win, both ways for every tie (a tie bounds a score from both sides). Otherwise
    the gaps between its strongly connected components are infinite: the systems outside the
    largest component are held by the ridge (all of them when no component is the largest alone,
    e.g. a judge whose verdicts order the systems without a single upset).
    """
    k = len(d.systems)
    reach = np.eye(k, dtype=bool)
    reach[d.second, d.first] = True
    reach[d.first[d.tie], d.second[d.tie]] = True
    for _ in range(int(np.ceil(np.log2(max(k, 2)))) + 1):  # transitive closure by squaring
        reach = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
    lost = np.zeros(k, dtype=bool)
    won = np.zeros(k, dtype=bool)
    lost[d.second[~d.tie]] = won[d.first[~d.tie]] = True
    lost[d.first[d.tie]] = lost[d.second[d.tie]] = won[d.first[d.tie]] = won[d.second[d.tie]] = True
    connected = bool(reach.all())
    same = reach & reach.T  # same[i] = i's strongly connected component
    sizes = same.sum(axis=1)
    largest = np.flatnonzero(sizes == sizes.max()) if k else np.array([], dtype=np.int64)
    alone = len(largest) == sizes.max()  # exactly one component of the largest size
    held = np.zeros(k, dtype=bool) if connected else ~same[largest[0]] if alone else np.ones(k, dtype=bool)
    return Separation(
        mle_exists=connected and (not d.tie.any() or bool((~d.tie).any())),
        never_lost=[s for s, x in zip(d.systems, lost, strict=True) if not x],
        never_won=[s for s, x in zip(d.systems, won, strict=True) if not x],
        held=[s for s, x in zip(d.systems, held, strict=True) if x],
    )


@dataclass(frozen=True)
class Scores:
    """A subject's fit with its bootstrap replicates (log-strength scale; ``elo`` converts)."""

    systems: list[str]
    theta: np.ndarray  # (K,)
    theta_reps: np.ndarray  # (R, K)
    nu: float  # 0 without ties
    nu_reps: np.ndarray
    beta: float | None
    beta_reps: np.ndarray | None
    beta_separated: bool  # the winner was longer in every decisive comparison (or shorter in every one)
    appearances: np.ndarray  # comparisons per system
    n_comparisons: int
    n_ties: int
    n_instructions: int
    excluded: list[str]
    mle_exists: bool
    never_lost: list[str]
    never_won: list[str]
    held: list[str]  # scores set by the ridge (``Separation.held``): no interval
    replicates_converged: float  # share of replicates whose Newton steps converged

    def interval(self, system: str) -> list[float] | None:
        return interval95(self.theta_reps[:, self.systems.index(system)])


def elo(theta: float) -> float:
    """Log-strength on the Elo-like scale: 1000 + 400 / ln 10 * theta (the mean system at 1000)."""
    return float(ELO_CENTRE + ELO_PER_UNIT * theta)


@dataclass(frozen=True)
class Resampling:
    """Paired cluster-bootstrap draws: multiplicities of every instruction of a report, one row per replicate."""

    instructions: list
    multiplicities: np.ndarray  # (R, instructions)

    @classmethod
    def draw(cls, instructions: Sequence, *, replicates: int, seed: int) -> Resampling:
        labels = sorted(set(instructions))
        return cls(labels, bootstrap_weights(len(labels), replicates=replicates, seed=seed))

    def cell_weights(self, d: Design) -> np.ndarray:
        position = {label: k for k, label in enumerate(self.instructions)}
        columns = np.array([position[label] for label in d.instructions], dtype=np.int64)
        per_triplet = self.multiplicities[:, columns[d.where]] * d.count
        starts = np.flatnonzero(np.r_[True, d.cell[1:] != d.cell[:-1]])
        return np.add.reduceat(per_triplet, starts, axis=1)


def scores(
    comparisons: pd.DataFrame,
    resampling: Resampling,
    *,
    systems: Sequence[str] | None = None,
    covariate: bool = False,
    ridge: float = RIDGE,
) -> Scores | None:
    """Fit and bootstrap one subject's comparisons; None when nothing was compared."""
    d = design(comparisons, systems, covariate=covariate)
    if not d.systems or d.count.size == 0:
        return None
    ties = bool(d.tie.any())
    point = fit_weighted(d, d.weights[None, :], ties=ties, covariate=covariate, ridge=ridge)
    reps = fit_weighted(
        d, resampling.cell_weights(d), ties=ties, covariate=covariate, ridge=ridge, start=point.solution
    )
    separated = separation(d)
    appearances = np.bincount(d.first, d.weights, len(d.systems)) + np.bincount(d.second, d.weights, len(d.systems))
    return Scores(
        systems=d.systems,
        theta=point.theta[0],
        theta_reps=reps.theta,
        nu=float(np.exp(point.log_nu[0])),
        nu_reps=np.exp(reps.log_nu),
        beta=float(point.beta[0]) if covariate else None,
        beta_reps=reps.beta if covariate else None,
        beta_separated=covariate and _one_signed(d.x[~d.tie], d.weights[~d.tie]),
        appearances=appearances,
        n_comparisons=int(d.weights.sum()),
        n_ties=int(d.weights[d.tie].sum()),
        n_instructions=len(d.instructions),
        excluded=d.excluded,
        mle_exists=separated.mle_exists,
        never_lost=separated.never_lost,
        never_won=separated.never_won,
        held=separated.held,
        replicates_converged=float(reps.converged.mean()),
    )


def _one_signed(x: np.ndarray, weights: np.ndarray) -> bool:
    """True when x never points both ways: beta's MLE is then infinite (a judge that always picks the longer)."""
    used = x[weights > 0]
    return not ((used > 0).any() and (used < 0).any())


def point_fit(
    comparisons: pd.DataFrame, *, systems: Sequence[str] | None = None, covariate: bool = False, ridge: float = RIDGE
) -> tuple[list[str], Params]:
    """The fit alone, without a bootstrap (``ridge=0`` gives the plain MLE when it exists)."""
    d = design(comparisons, systems, covariate=covariate)
    return d.systems, fit_weighted(d, d.weights[None, :], ties=bool(d.tie.any()), covariate=covariate, ridge=ridge)


def interval95(samples: np.ndarray) -> list[float] | None:
    """The 2.5-97.5 percentile interval of the finite replicates; None when there are none."""
    low, high = percentile_interval(samples)
    return [low, high] if np.isfinite(low) and np.isfinite(high) else None


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between the rows of ``x`` and ``y`` (R, K), over systems finite in both; NaN if undefined."""
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    ok = np.isfinite(x) & np.isfinite(y)
    upper = np.triu(np.ones((x.shape[1], x.shape[1]), dtype=bool), 1)
    both = ok[:, :, None] & ok[:, None, :] & upper
    dx = np.sign(np.nan_to_num(x)[:, :, None] - np.nan_to_num(x)[:, None, :]) * both
    dy = np.sign(np.nan_to_num(y)[:, :, None] - np.nan_to_num(y)[:, None, :]) * both
    concordance = (dx * dy).sum(axis=(1, 2))
    untied_x = (dx != 0).sum(axis=(1, 2))
    untied_y = (dy != 0).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return concordance / np.sqrt(untied_x * untied_y)


def ranking(systems: Sequence[str], theta: np.ndarray) -> list:
    """Systems best first; equal scores (to 1e-9) form one tied group; systems without a score are left out."""
    rounded = np.round(np.asarray(theta, dtype=float), 9)
    out: list = []
    for value in sorted({v for v in rounded if np.isfinite(v)}, reverse=True):
        members = sorted(s for s, v in zip(systems, rounded, strict=True) if v == value)
        out.append(members[0] if len(members) == 1 else frozenset(members))
    return out


def rbo_of_scores(
    systems: Sequence[str], x: np.ndarray, y: np.ndarray, *, p: float, variant: str, ties: str = "a"
) -> np.ndarray:
    """RBO between the rankings the rows of ``x`` and ``y`` (R, K) imply; NaN for a row missing a system."""
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    full = np.isfinite(x).all(axis=1) & np.isfinite(y).all(axis=1)
    out = np.full(len(x), np.nan)
    untied = full & _untied(x) & _untied(y)
    if untied.any() and variant in BATCHED:
        # Complete untied rankings (almost every replicate): one vectorised call on rank codes.
        best_first = np.argsort(-x[untied], axis=1), np.argsort(-y[untied], axis=1)
        out[untied] = BATCHED[variant](*best_first, p)
    rows = np.flatnonzero(full & ~(untied if variant in BATCHED else np.zeros_like(full)))
    if rows.size:
        xs = [ranking(systems, x[r]) for r in rows]
        ys = [ranking(systems, y[r]) for r in rows]
        out[rows] = rbo_many(xs, ys, p, variant=variant, ties=ties)
    return out


def _untied(scores: np.ndarray) -> np.ndarray:
    """Rows whose scores differ pairwise by more than the 1e-9 rounding ``ranking`` ties on."""
    ordered = np.sort(np.round(scores, 9), axis=1)
    return np.all(np.diff(ordered, axis=1) > 0, axis=1)


def agreement(left: Scores, right: Scores, *, p: float, variant: str, ties: str = "a") -> dict | None:
    """Kendall tau-b and RBO between two subjects' rankings on their common systems, with paired intervals.

    Both must come from the same ``Resampling``: replicate r of each used the same instructions.
    """
    common = [s for s in left.systems if s in right.systems]
    if len(common) < 2:
        return None
    a = [left.systems.index(s) for s in common]
    b = [right.systems.index(s) for s in common]
    tau = kendall_tau_b(left.theta[a], right.theta[b])[0]
    tau_reps = kendall_tau_b(left.theta_reps[:, a], right.theta_reps[:, b])
    value = rbo_of_scores(common, left.theta[a][None], right.theta[b][None], p=p, variant=variant, ties=ties)[0]
    rbo_reps = rbo_of_scores(common, left.theta_reps[:, a], right.theta_reps[:, b], p=p, variant=variant, ties=ties)
    return {
        "n_systems": len(common),
        "kendall_tau": float(tau) if np.isfinite(tau) else None,
        "kendall_tau_ci95": interval95(tau_reps),
        "rbo": float(value),
        "rbo_ci95": interval95(rbo_reps),
        "rbo_variant": variant,
        "rbo_p": p,
    }
