"""Item calibration: 2PL and 3PL parameters by marginal maximum likelihood (Bock–Aitkin EM).

The model is the one of ``analytics.irt``: P_i(θ) = c_i + (1 − c_i)/(1 + exp(−D·a_i·(θ − b_i))),
with θ ~ N(0, 1) in the calibrated population (that fixes the scale: mean 0, SD 1).

Algorithm (Bock & Aitkin 1981; Baker & Kim 2004, ch. 6–7):

* The N(0, 1) latent distribution is replaced by a fixed discrete one: ``n_quadrature`` equally
  spaced points over ``theta_range`` (default 61 points on [−6, 6], mirt's grid, ``ability.
  MIRT_LEGACY_GRID``) with weights proportional to the normal density, normalised to sum 1.
* E-step: for every examinee the posterior over the points, computed in log space (one matrix
  product of the 0/1 response matrix with log P and log Q per block of rows, then a log-sum-exp
  normalisation), and from it the expected counts at each point: n_ik, the expected number of
  examinees at point k who answered item i, and r_ik, how many of them answered it correctly.
* M-step: each item maximises Σ_k r_ik log P_i(θ_k) + (n_ik − r_ik) log Q_i(θ_k) (+ its log
  prior), a weighted logistic regression on the points. Newton's method runs on all items at once
  (their problems are independent given the counts), in the slope–intercept form z = α·θ + δ
  (α = D·a, δ = −D·a·b) and, for the 3PL, γ = logit(c / C_MAX): unconstrained, and concave in
  (α, δ) for the 2PL. A step that lowers an item's objective is halved; an indefinite Hessian is
  shifted until it is negative definite (Levenberg–Marquardt).
* The two steps alternate until no a, b or c moves by more than ``tolerance`` in one cycle.
* A 3PL fit asked for with priors other than the defaults (e.g. none) first converges with the
  default priors and continues from there: the 3PL likelihood has worse local maxima (a hard
  item sliding to a low slope, a far difficulty and c ≈ 0) that EM from a plain start can reach.
* Estimates are kept within |D·a| ≤ SLOPE_LIMIT and |b| ≤ DIFFICULTY_LIMIT; an item that ends on
  a bound has no finite estimate (perfect separation, pure guessing) and is flagged.

Standard errors come from the observed information of the marginal log-likelihood (plus the
priors' curvature), by Louis's (1982) identity evaluated exactly on the quadrature grid:

    I_obs = Σ_j w_j [ E_j(−∂² log f(u_j | θ)) − Var_j(∂ log f(u_j | θ)) ],

where E_j and Var_j are over examinee j's posterior on the points. The first term is the
M-step's Hessian (block-diagonal: one block per item); the second couples the items, and is
built from the per-point products Σ_j w_j π_jk u_ij u_i'j. The whole (n_params × n_params) matrix
is inverted, so the SEs include the uncertainty that items share through the latent scale. It
is exactly the negative Hessian of the marginal log-likelihood computed on the grid, as a
numerical differentiation would give it (the tests check this to 1e−3), without that cost.

Missing responses (NaN) are missing at random: they contribute nothing to any count or
likelihood. Frequency weights let identical response patterns be given once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, log_expit

from analytics.ability import QuadratureGrid
from analytics.irt import (
    ROW_BLOCK,
    FloatArray,
    ItemBank,
    as_response_matrix,
    for_each_row_block,
    sliced_product,
)

MODELS: tuple[str, ...] = ("2PL", "3PL")

# Examinees below which the fit is flagged. Hulin, Lissak & Drasgow (1982, Applied Psychological
# Measurement 6, 249–260) found 500 examinees (with 30 items) enough to recover 2PL curves
# and about 1,000 (with 60 items) for the 3PL, whose lower asymptote is learnt only from the
# few low-ability examinees; De Ayala (2009, The Theory and Practice of IRT, ch. 3 and 6) gives
# the same orders of magnitude. A population of a few dozen language models is far below both.
MIN_EXAMINEES_2PL = 500
MIN_EXAMINEES_3PL = 1000

# c is modelled as C_MAX·logistic(γ): an asymptote at or above one half would mean an item that
# is mostly guessed right, which no five-option item is.
C_MAX = 0.5

# Bounds on the estimates. A slope |D·a| of 20 is ten times any real ENEM item's: an item that
# reaches it has answers that (nearly) separate perfectly, e.g. in a tiny population, and no
# finite maximum. A difficulty 10 SDs from the population mean is beyond every examinee: an item
# runs there when its answers look like pure guessing (3PL) or nearly everyone is on one side,
# and the likelihood then keeps creeping b outward for hundreds of cycles without settling.
# c = C_MAX·logistic(±12) is within 3e−6 of 0 or C_MAX.
SLOPE_LIMIT = 20.0
DIFFICULTY_LIMIT = 10.0
GUESSING_LOGIT_LIMIT = 12.0
# The starting slope D·a without a slope prior: a = 1 in the normal metric.
START_SLOPE = 1.7

# Newton iterations per M-step, and step halvings per iteration; the M-step is cheap (points ×
# items), so it is solved to near convergence every cycle.
_NEWTON_STEPS = 20
_HALVINGS = 20
# A Newton step this small (internal units) ends an item's M-step: the objective cannot tell
# the two points apart.
_NEGLIGIBLE_STEP = 1e-9
# ... and so does a predicted gain below this share of the objective (the acceptance test below
# tolerates 1e-12 of it).
_NEGLIGIBLE_GAIN = 1e-11
# No single Newton step moves an internal parameter by more than this.
_MAX_STEP = 2.0
# Rows per block in the pass that builds the information matrix: it holds a (rows, points ×
# items) array per block, so its blocks are smaller than ROW_BLOCK.
_INFORMATION_BLOCK = 256


@dataclass(frozen=True)
class ItemPriors:
    """Priors on the item parameters; with them the M-step finds the posterior mode (MAP).

    Parameters
    ----------
    log_slope : (float, float) or None
        Mean and SD of log(D·a), a normal prior (a lognormal prior on the slope D·a). Stated on
        the slope D·a, so the same prior means the same thing whatever ``scaling`` is.
        ``DEFAULT_LOG_SLOPE`` = (log 1.7, 0.5) puts the median at a = 1 in the normal metric
        (D = 1.7), i.e. a = 1.7 with D = 1, and 95 % of its mass on slopes 0.64–4.5: BILOG-MG's
        customary lognormal slope prior, which ENEM's items (a ≈ 2 with D = 1) sit well inside.
    guessing : (float, float) or None
        Beta(α, β) prior on c (3PL only). ``DEFAULT_GUESSING`` = Beta(5, 17) is the BILOG-MG
        convention α = 20/k + 1, β = 20·(1 − 1/k) + 1 for k = 5 options: mode 1/5, the chance
        of a blind guess on ENEM's five-option items, with the weight of about 20 observations.
    """

    log_slope: tuple[float, float] | None = None
    guessing: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.log_slope is not None:
            mean, sd = (float(v) for v in self.log_slope)
            if not (np.isfinite(mean) and np.isfinite(sd) and sd > 0.0):
                raise ValueError(f"log_slope must be (finite mean, SD > 0); got {self.log_slope}")
            object.__setattr__(self, "log_slope", (mean, sd))
        if self.guessing is not None:
            alpha, beta = (float(v) for v in self.guessing)
            if not (np.isfinite(alpha) and np.isfinite(beta) and alpha >= 1.0 and beta >= 1.0):
                # Below 1 a Beta density is unbounded at 0 or 1 and has no interior mode.
                raise ValueError(f"guessing must be Beta(α ≥ 1, β ≥ 1); got {self.guessing}")
            object.__setattr__(self, "guessing", (alpha, beta))


DEFAULT_LOG_SLOPE: tuple[float, float] = (float(np.log(1.7)), 0.5)
DEFAULT_GUESSING: tuple[float, float] = (5.0, 17.0)
NO_PRIORS = ItemPriors()
# The 2PL default is plain marginal ML, as girth's and mirt's defaults, so its estimates compare
# with theirs directly. The 3PL is poorly identified without priors: c is learnt only from the
# low-ability tail, and in small samples c runs to 0 or a to infinity. Both priors are on for it
# (BILOG-MG's practice); with thousands of examinees they move the estimates by a fraction of
# an SE, with dozens they keep the fit finite.
DEFAULT_PRIORS: dict[str, ItemPriors] = {
    "2PL": NO_PRIORS,
    "3PL": ItemPriors(log_slope=DEFAULT_LOG_SLOPE, guessing=DEFAULT_GUESSING),
}


@dataclass(frozen=True, eq=False)
class Calibration:
    """The result of :func:`calibrate`.

    Attributes
    ----------
    bank : ItemBank
        Estimated a, b, c (c = 0 for a 2PL) with the requested ``scaling``; NaN for the items
        that could not be calibrated (see ``warnings``).
    se_a, se_b, se_c : arrays of shape (n_items,)
        Standard errors from the observed information (Louis), in the units of a, b, c. NaN
        where the item was not calibrated or its estimate sits on a bound; se_c is NaN for a
        2PL (c is fixed at 0, not estimated).
    log_likelihood : float
        Marginal log-likelihood of the data (weighted) at the estimates, over the calibrated
        items; the priors are not included.
    iterations : int
        EM cycles run.
    converged : bool
        Whether the last cycle moved no parameter by more than the tolerance.
    n_examinees : float
        Sum of the weights of the rows with at least one response (their number when unweighted).
    model : str
        "2PL" or "3PL".
    priors : ItemPriors
        The priors used.
    warnings : tuple of str
        Plain-English notes on what makes the estimates less trustworthy.
    """

    bank: ItemBank
    se_a: FloatArray
    se_b: FloatArray
    se_c: FloatArray
    log_likelihood: float
    iterations: int
    converged: bool
    n_examinees: float
    model: str
    priors: ItemPriors
    warnings: tuple[str, ...] = field(default=())


def calibrate(
    responses: ArrayLike,
    model: str = "2PL",
    *,
    weights: ArrayLike | None = None,
    n_quadrature: int = 61,
    theta_range: tuple[float, float] = (-6.0, 6.0),
    quadrature_rule: str = "uniform",
    scaling: float = 1.0,
    priors: ItemPriors | None = None,
    max_iter: int = 500,
    tolerance: float = 1e-4,
) -> Calibration:
    """Estimate 2PL or 3PL item parameters by marginal maximum likelihood (EM).

    Parameters
    ----------
    responses : array of shape (n_examinees, n_items)
        1.0 correct, 0.0 wrong, NaN not answered (missing at random: contributes nothing).
    model : {"2PL", "3PL"}, default "2PL"
    weights : array of shape (n_examinees,), optional
        Non-negative frequency weights: a row with weight w counts as w identical examinees, so
        identical response patterns can be given once. Default: 1 for every row.
    n_quadrature : int, default 61
        Points of the discrete latent distribution.
    theta_range : (float, float), default (−6, 6)
        Lowest and highest point, in SD units of the population.
    quadrature_rule : {"uniform", "gauss-legendre"}, default "uniform"
        Placement of the points (``ability.QuadratureGrid``); the weights are the N(0, 1)
        density times the rule's weights, normalised. "gauss-legendre" is girth's.
    scaling : float, default 1.0
        D of the returned bank (1.0 as INEP's parameters; 1.7 for the normal metric).
    priors : ItemPriors, optional
        Default ``DEFAULT_PRIORS[model]``: none for the 2PL; for the 3PL a lognormal slope prior
        and a Beta(5, 17) prior on c (see ``ItemPriors``). Pass ``NO_PRIORS`` for plain ML.
    max_iter : int, default 500
        EM cycles at most (mirt's default), per stage for a staged 3PL fit (see the module
        docstring); ``iterations`` reports the total.
    tolerance : float, default 1e-4
        Convergence when no a, b or c changes by more than this in a cycle (mirt's default).

    Returns
    -------
    Calibration

    Raises
    ------
    ValueError
        For an unknown model, entries other than 0/1/NaN, weights of the wrong shape or negative,
        or settings out of range.

    Notes
    -----
    An item with no variance (every counted answer right, or every one wrong, or no answers)
    has no finite maximum: it gets NaN parameters and a warning and is left out of the fit.
    The fit, its E-step and its information matrix take O(n_examinees · n_quadrature · n_items)
    per cycle, as matrix products over blocks of rows on ``irt.MAX_THREADS`` threads.
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}; got {model!r}")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}")
    if not (np.isfinite(tolerance) and tolerance > 0.0):
        raise ValueError(f"tolerance must be positive; got {tolerance!r}")
    d = float(scaling)
    if not (np.isfinite(d) and d > 0.0):
        raise ValueError(f"scaling (D) must be a finite positive number; got {scaling!r}")
    grid = QuadratureGrid(n_quadrature, theta_range, quadrature_rule)
    priors = DEFAULT_PRIORS[model] if priors is None else priors
    three = model == "3PL"

    matrix = np.asarray(responses, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"responses must have shape (n_examinees, n_items); got {matrix.shape}")
    n_items = matrix.shape[1]
    matrix, finite = as_response_matrix(matrix, n_items)
    row_weights = _check_weights(weights, matrix.shape[0])

    notes: list[str] = []
    usable = _items_with_variance(matrix, finite, row_weights, notes)
    data = _data(matrix[:, usable], finite[:, usable], row_weights)
    n_examinees = float(data.weights.sum())
    minimum = MIN_EXAMINEES_3PL if three else MIN_EXAMINEES_2PL
    if n_examinees < minimum:
        notes.insert(0, f"the population has only {n_examinees:g} examinees: far too few for a "
                        f"{model} fit ({minimum} at least are recommended), so the estimates "
                        "and their SEs are rough at best")

    a = np.full(n_items, np.nan)
    b = np.full(n_items, np.nan)
    c = np.full(n_items, np.nan) if three else np.zeros(n_items)
    se_a, se_b, se_c = (np.full(n_items, np.nan) for _ in range(3))
    if not usable.any() or data.weights.size == 0:
        notes.append("no item could be calibrated")
        return Calibration(ItemBank(a, b, c, d), se_a, se_b, se_c, float("nan"), 0, False,
                           n_examinees, model, priors, tuple(notes))

    points = grid.points
    log_density = -0.5 * points**2 + grid.log_weights
    log_density -= np.logaddexp.reduce(log_density)
    staged = three and priors != DEFAULT_PRIORS["3PL"]
    eta = _start(data, three, DEFAULT_PRIORS["3PL"] if staged else priors)
    iterations = 0
    if staged:
        # The 3PL likelihood has worse local maxima (a hard item sliding to a low slope, a far
        # difficulty and c ≈ 0); the default priors keep EM off them, so it first converges
        # with those and then moves to the nearby maximum under the requested priors.
        eta, iterations, _, _ = _em(data, eta, points, log_density, three, DEFAULT_PRIORS["3PL"],
                                    d, max_iter, tolerance)
    eta, more, converged, change = _em(data, eta, points, log_density, three, priors, d,
                                       max_iter, tolerance)
    iterations += more
    if not converged:
        moving = np.flatnonzero(usable)[change > tolerance]
        listed = ", ".join(str(item) for item in moving[:10]) + (", …" if moving.size > 10 else "")
        notes.append(f"EM did not converge in {max_iter} cycles (tolerance {tolerance:g}); "
                     f"still moving: item(s) {listed} (often an item whose difficulty drifts "
                     "off the scale because its answers look like pure guessing)")

    at_bound = _at_bound(eta)
    info, log_likelihood = _observed_information(data, eta, points, log_density, three, priors)
    covariance = _item_covariances(info, at_bound, eta.shape[1])
    estimates = _natural(eta, three, d)
    se_natural = _natural_se(eta, covariance, three, d)
    index = np.flatnonzero(usable)
    a[index], b[index] = estimates[:, 0], estimates[:, 1]
    se_a[index], se_b[index] = se_natural[:, 0], se_natural[:, 1]
    if three:
        c[index], se_c[index] = estimates[:, 2], se_natural[:, 2]
    for position in np.flatnonzero(at_bound):
        notes.append(f"item {index[position]}: an estimate reached its bound (|D·a| ≤ "
                     f"{SLOPE_LIMIT:g}, |b| ≤ {DIFFICULTY_LIMIT:g}): the answers do not pin it "
                     "down (they separate perfectly, or look like pure guessing), so it has no "
                     "finite estimate; its SEs are NaN")
    if np.any(np.isnan(covariance[~at_bound])):
        notes.append("the information matrix is not positive definite at the estimates; "
                     "the affected SEs are NaN")
    return Calibration(ItemBank(a, b, c, d), se_a, se_b, se_c, log_likelihood, iterations,
                       converged, n_examinees, model, priors, tuple(notes))


def _em(
    data: _Data,
    eta: FloatArray,
    points: FloatArray,
    log_density: FloatArray,
    three: bool,
    priors: ItemPriors,
    scaling: float,
    max_iter: int,
    tolerance: float,
) -> tuple[FloatArray, int, bool, FloatArray]:
    """EM cycles from ``eta`` until no a, b, c moves by more than ``tolerance``: the final η,
    the cycles run, whether it converged, and each item's last change (items,)."""
    change = np.zeros(eta.shape[0])
    for iteration in range(1, int(max_iter) + 1):
        counts = _e_step(data, _node_terms(eta, points, three), log_density)
        new_eta = _m_step(eta, counts, points, three, priors)
        change = np.max(np.abs(_natural(new_eta, three, scaling) - _natural(eta, three, scaling)),
                        axis=1)
        eta = new_eta
        if change.max() <= tolerance:
            return eta, iteration, True, change
    return eta, int(max_iter), False, change


# ---------------------------------------------------------------------------------------------
# Data


class _Data(NamedTuple):
    """Responses of the rows that count, for the calibrated items.

    ``correct`` (n, items): 1.0 for a right answer, else 0.0. ``counted`` (n, items): 1.0 for an
    answered item, or None when every entry is answered. ``weights`` (n,) positive.
    """

    correct: FloatArray
    counted: FloatArray | None
    weights: FloatArray


def _check_weights(weights: ArrayLike | None, n_rows: int) -> FloatArray:
    if weights is None:
        return np.ones(n_rows)
    values = np.asarray(weights, dtype=np.float64)
    if values.shape != (n_rows,):
        raise ValueError(f"weights must have shape ({n_rows},); got {values.shape}")
    if not np.all(np.isfinite(values) & (values >= 0.0)):
        raise ValueError("weights must be finite and non-negative")
    return values


def _items_with_variance(
    matrix: FloatArray, finite: NDArray[np.bool_], weights: FloatArray, notes: list[str]
) -> NDArray[np.bool_]:
    """Mask of the items with both right and wrong answers (weighted); a note for the others."""
    answered = weights @ finite
    right = weights @ np.where(finite, matrix, 0.0)
    usable = (right > 0.0) & (right < answered)
    for item in np.flatnonzero(~usable):
        if answered[item] == 0.0:
            notes.append(f"item {item} has no answers: its parameters are NaN")
        else:
            kind = "right" if right[item] > 0.0 else "wrong"
            notes.append(f"item {item} has no variance (all {answered[item]:g} answers {kind}): "
                         "its parameters are NaN")
    return usable


def _data(matrix: FloatArray, finite: NDArray[np.bool_], weights: FloatArray) -> _Data:
    # Rows with no answer to any calibrated item, or weight 0, change nothing: drop them.
    keep = finite.any(axis=1) & (weights > 0.0)
    matrix, finite, weights = matrix[keep], finite[keep], weights[keep]
    if finite.all():
        return _Data(np.ascontiguousarray(matrix), None, weights)
    return _Data(np.where(finite, matrix, 0.0), finite.astype(np.float64), weights)


# ---------------------------------------------------------------------------------------------
# Parameters: internal η = (α, δ[, γ]) per item, shape (items, m)


def _start(data: _Data, three: bool, priors: ItemPriors) -> FloatArray:
    """Starting values: every slope D·a at START_SLOPE, c at the prior's mode (0.1 without a
    prior), and δ set so that the marginal proportion right matches, by the probit
    approximation E[logistic(α·θ + δ)] ≈ logistic(δ / sqrt(1 + π·α²/8)) for θ ~ N(0, 1).

    A common, fairly steep slope is deliberate: from a flat start a hard 3PL item can slide down
    the ridge of low slope, far difficulty and small c to a worse local maximum.
    """
    counted = np.ones_like(data.correct) if data.counted is None else data.counted
    proportion = (data.weights @ data.correct) / (data.weights @ counted)
    slope = float(np.exp(priors.log_slope[0])) if priors.log_slope else START_SLOPE
    guess = 0.0
    if three:
        alpha, beta = priors.guessing or (2.0, 2.0)
        guess = (alpha - 1.0) / (alpha + beta - 2.0) if priors.guessing else 0.1
    above_guess = np.clip((proportion - guess) / (1.0 - guess), 0.02, 0.98)
    intercept = np.log(above_guess / (1.0 - above_guess)) * np.sqrt(1.0 + np.pi * slope**2 / 8)
    columns = [np.full_like(proportion, slope), intercept]
    if three:
        ratio = guess / C_MAX
        columns.append(np.full_like(proportion, np.log(ratio / (1.0 - ratio))))
    return np.column_stack(columns)


def _natural(eta: FloatArray, three: bool, scaling: float) -> FloatArray:
    """(a, b[, c]) of shape (items, m) from η."""
    alpha, delta = eta[:, 0], eta[:, 1]
    columns = [alpha / scaling, -delta / alpha]
    if three:
        columns.append(C_MAX * expit(eta[:, 2]))
    return np.column_stack(columns)


def _project(eta: FloatArray) -> FloatArray:
    """η moved inside the bounds: |α| ≤ SLOPE_LIMIT, |b| = |δ/α| ≤ DIFFICULTY_LIMIT (δ is
    rescaled with α kept) and |γ| ≤ GUESSING_LOGIT_LIMIT.

    For α > 0 the feasible set is convex, so a step shortened between two feasible points stays
    feasible.
    """
    out = eta.copy()
    alpha = np.clip(out[:, 0], -SLOPE_LIMIT, SLOPE_LIMIT)
    reach = DIFFICULTY_LIMIT * np.abs(alpha)
    out[:, 0] = alpha
    out[:, 1] = np.clip(out[:, 1], -reach, reach)
    if out.shape[1] == 3:
        out[:, 2] = np.clip(out[:, 2], -GUESSING_LOGIT_LIMIT, GUESSING_LOGIT_LIMIT)
    return out


def _at_bound(eta: FloatArray) -> NDArray[np.bool_]:
    """Items whose slope or difficulty sits on its bound (c on its bound is a legitimate
    c ≈ 0)."""
    edge = 1.0 - 1e-9
    alpha = np.abs(eta[:, 0])
    return (alpha >= SLOPE_LIMIT * edge) | (np.abs(eta[:, 1]) >= DIFFICULTY_LIMIT * alpha * edge)


# ---------------------------------------------------------------------------------------------
# Probabilities and their derivatives at the points


class _NodeTerms(NamedTuple):
    """At every point k and item i, arrays of shape (points, items).

    log P, log Q, and the derivatives of log P and log Q with respect to the logit z and the
    asymptote c (the c ones are zero for a 2PL); ``dc``, ``d2c`` (items,) are dc/dγ, d²c/dγ².
    """

    log_p: FloatArray
    log_q: FloatArray
    p_z: FloatArray
    p_zz: FloatArray
    p_c: FloatArray
    p_cc: FloatArray
    p_zc: FloatArray
    q_z: FloatArray
    q_zz: FloatArray
    q_c: FloatArray
    q_cc: FloatArray
    dc: FloatArray
    d2c: FloatArray


def _node_terms(eta: FloatArray, points: FloatArray, three: bool) -> _NodeTerms:
    z = points[:, None] * eta[:, 0] + eta[:, 1]
    s = expit(z)
    s_c = expit(-z)
    zeros = np.zeros_like(z)
    if not three:
        # log P = log s, log Q = log(1 − s); d/dz: 1 − s and −s; d²/dz²: −s(1 − s) for both.
        curvature = -s * s_c
        items = np.zeros(eta.shape[0])
        return _NodeTerms(log_expit(z), log_expit(-z), s_c, curvature, zeros, zeros, zeros,
                          -s, curvature, zeros, zeros, items, items)
    share = expit(eta[:, 2])
    c = C_MAX * share
    p = c + (1.0 - c) * s
    # log P: z-derivative (1 − c)s(1 − s)/P, c-derivative (1 − s)/P; the second derivatives
    # follow by the quotient rule, using P + (1 − c)(1 − s) = 1 for the cross term.
    p_z = (1.0 - c) * s_c * (s / p)
    p_c = s_c / p
    p_zz = p_z * ((1.0 - 2.0 * s) - p_z)
    p_cc = -(p_c**2)
    p_zc = -p_c * (s / p)
    # log Q = log(1 − c) + log(1 − s).
    q_c = np.broadcast_to(-1.0 / (1.0 - c), z.shape)
    dc = c * (1.0 - share)
    d2c = dc * (1.0 - 2.0 * share)
    return _NodeTerms(np.log(p), np.log1p(-c) + log_expit(-z), p_z, p_zz, p_c, p_cc, p_zc,
                      -s, -s * s_c, q_c, -(q_c**2), dc, d2c)


def _scores(terms: _NodeTerms, points: FloatArray, m: int) -> tuple[FloatArray, FloatArray]:
    """∂ log P/∂η and ∂ log Q/∂η at every point, each of shape (points, items, m)."""
    def score(z_part: FloatArray, c_part: FloatArray) -> FloatArray:
        parts = [z_part * points[:, None], z_part]
        if m == 3:
            parts.append(c_part * terms.dc)
        return np.stack(parts, axis=-1)

    return score(terms.p_z, terms.p_c), score(terms.q_z, terms.q_c)


def _hessians(terms: _NodeTerms, points: FloatArray, m: int) -> tuple[FloatArray, FloatArray]:
    """∂² log P/∂η² and ∂² log Q/∂η² at every point, each of shape (points, items, m, m)."""
    theta = points[:, None]

    def hessian(zz: FloatArray, zc: FloatArray, cc: FloatArray, c1: FloatArray) -> FloatArray:
        out = np.empty(zz.shape + (m, m))
        out[..., 0, 0] = zz * theta**2
        out[..., 0, 1] = out[..., 1, 0] = zz * theta
        out[..., 1, 1] = zz
        if m == 3:
            out[..., 0, 2] = out[..., 2, 0] = zc * terms.dc * theta
            out[..., 1, 2] = out[..., 2, 1] = zc * terms.dc
            out[..., 2, 2] = cc * terms.dc**2 + c1 * terms.d2c
        return out

    zeros = np.zeros_like(terms.q_z)
    return (hessian(terms.p_zz, terms.p_zc, terms.p_cc, terms.p_c),
            hessian(terms.q_zz, zeros, terms.q_cc, terms.q_c))


# ---------------------------------------------------------------------------------------------
# E-step


class _Counts(NamedTuple):
    """Expected counts at the points, (points, items): n_ik answered, r_ik answered right."""

    answered: FloatArray
    right: FloatArray


def _block_posteriors(
    data: _Data, rows: slice, terms: _NodeTerms, log_density: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Posterior over the points for a block of rows, (rows, points), and each row's marginal
    log-likelihood, (rows,)."""
    if data.counted is None:
        # Every entry counts: Σ_i log Q_i(θ_k) is shared by all rows, so one product suffices.
        log_post = sliced_product(data.correct[rows], (terms.log_p - terms.log_q).T)
        log_post += terms.log_q.sum(axis=1) + log_density
    else:
        wrong = data.counted[rows] - data.correct[rows]
        log_post = sliced_product(data.correct[rows], terms.log_p.T)
        log_post += sliced_product(wrong, terms.log_q.T)
        log_post += log_density
    peak = log_post.max(axis=1, keepdims=True)
    log_post -= peak
    np.exp(log_post, out=log_post)
    total = log_post.sum(axis=1)
    log_post /= total[:, None]
    return log_post, np.log(total) + peak[:, 0]


def _e_step(data: _Data, terms: _NodeTerms, log_density: FloatArray) -> _Counts:
    n = data.weights.shape[0]
    blocks: dict[int, tuple[FloatArray, FloatArray]] = {}

    def accumulate(rows: slice) -> None:
        posterior, _ = _block_posteriors(data, rows, terms, log_density)
        posterior *= data.weights[rows, None]
        right = sliced_product(posterior.T, data.correct[rows])
        if data.counted is None:
            answered = np.broadcast_to(posterior.sum(axis=0)[:, None], right.shape)
        else:
            answered = sliced_product(posterior.T, data.counted[rows])
        # Each block writes its own key, so the threads never race.
        blocks[rows.start] = (np.array(answered), right)

    for_each_row_block(accumulate, n, ROW_BLOCK)
    answered = sum(part[0] for part in blocks.values())
    right = sum(part[1] for part in blocks.values())
    return _Counts(np.asarray(answered), np.asarray(right))


# ---------------------------------------------------------------------------------------------
# M-step


def _prior_terms(
    eta: FloatArray, priors: ItemPriors, m: int
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Log prior (items,), its gradient (items, m) and Hessian (items, m, m) in η.

    The priors are densities of the slope α and of c; the mode is taken in those parameters (no
    Jacobian of the change to γ), so it is the same whatever the internal parameterisation.
    """
    n_items = eta.shape[0]
    value = np.zeros(n_items)
    grad = np.zeros((n_items, m))
    hess = np.zeros((n_items, m, m))
    if priors.log_slope is not None:
        mean, sd = priors.log_slope
        alpha = eta[:, 0]
        with np.errstate(invalid="ignore", divide="ignore"):
            log_alpha = np.where(alpha > 0.0, np.log(alpha), np.nan)
            # log density of a lognormal slope: −(log α − μ)²/(2σ²) − log α; −inf for α ≤ 0.
            value += np.where(alpha > 0.0, -((log_alpha - mean) ** 2) / (2 * sd**2) - log_alpha,
                              -np.inf)
            grad[:, 0] += -(log_alpha - mean) / (sd**2 * alpha) - 1.0 / alpha
            hess[:, 0, 0] += (log_alpha - mean - 1.0) / (sd**2 * alpha**2) + 1.0 / alpha**2
    if m == 3 and priors.guessing is not None:
        p, q = priors.guessing
        share = expit(eta[:, 2])
        c = C_MAX * share
        dc = c * (1.0 - share)
        d2c = dc * (1.0 - 2.0 * share)
        value += (p - 1.0) * np.log(c) + (q - 1.0) * np.log1p(-c)
        first = (p - 1.0) / c - (q - 1.0) / (1.0 - c)
        second = -(p - 1.0) / c**2 - (q - 1.0) / (1.0 - c) ** 2
        grad[:, 2] += first * dc
        hess[:, 2, 2] += second * dc**2 + first * d2c
    return value, grad, hess


def _objective_value(
    eta: FloatArray, counts: _Counts, points: FloatArray, three: bool, priors: ItemPriors
) -> FloatArray:
    """Expected complete-data log-likelihood plus log prior, per item (items,)."""
    terms = _node_terms(eta, points, three)
    wrong = counts.answered - counts.right
    value = np.sum(counts.right * terms.log_p + wrong * terms.log_q, axis=0)
    return value + _prior_terms(eta, priors, eta.shape[1])[0]


def _objective_derivatives(
    eta: FloatArray, counts: _Counts, points: FloatArray, three: bool, priors: ItemPriors | None
) -> tuple[FloatArray, FloatArray]:
    """Gradient (items, m) and Hessian (items, m, m) of the M-step objective (priors included
    unless ``priors`` is None)."""
    m = eta.shape[1]
    terms = _node_terms(eta, points, three)
    score_p, score_q = _scores(terms, points, m)
    hess_p, hess_q = _hessians(terms, points, m)
    wrong = counts.answered - counts.right
    grad = np.einsum("ki,kim->im", counts.right, score_p) + np.einsum(
        "ki,kim->im", wrong, score_q)
    hess = np.einsum("ki,kimn->imn", counts.right, hess_p) + np.einsum(
        "ki,kimn->imn", wrong, hess_q)
    if priors is not None:
        _, prior_grad, prior_hess = _prior_terms(eta, priors, m)
        grad += prior_grad
        hess += prior_hess
    return grad, hess


def _m_step(
    eta: FloatArray, counts: _Counts, points: FloatArray, three: bool, priors: ItemPriors
) -> FloatArray:
    """Maximise every item's objective given the counts: safeguarded Newton on all items at once.

    An item leaves the iteration once its step is negligible, or when no halving of its step
    improves its objective (it is at the maximum to rounding, or on a bound).
    """
    m = eta.shape[1]
    eta = eta.copy()
    active = np.arange(eta.shape[0])
    value = _objective_value(eta, counts, points, three, priors)
    for _ in range(_NEWTON_STEPS):
        here = eta[active]
        sub_counts = _Counts(counts.answered[:, active], counts.right[:, active])
        grad, hess = _objective_derivatives(here, sub_counts, points, three, priors)
        negative = -hess
        # Shift an indefinite (or nearly singular) −H until it is positive definite, which makes
        # the step an ascent direction (Levenberg–Marquardt).
        smallest = np.linalg.eigvalsh(negative)[:, 0]
        scale = np.maximum(np.abs(np.diagonal(negative, axis1=1, axis2=2)).max(axis=1), 1e-12)
        negative += np.maximum(0.0, 1e-8 * scale - smallest)[:, None, None] * np.eye(m)
        step = np.linalg.solve(negative, grad[..., None])[..., 0]
        largest = np.abs(step).max(axis=1)
        step *= np.minimum(1.0, _MAX_STEP / np.maximum(largest, 1e-300))[:, None]
        # An item whose Newton step would gain less than the rounding of its objective is at
        # its maximum: halving it would only compare equal values to rounding, 20 times over.
        gain = 0.5 * np.einsum("im,im->i", grad, step)
        done = (largest <= _NEGLIGIBLE_STEP) | (
            gain <= _NEGLIGIBLE_GAIN * (np.abs(value[active]) + 1.0))
        if done.all():
            break
        if done.any():
            active, here, step = active[~done], here[~done], step[~done]
            sub_counts = _Counts(counts.answered[:, active], counts.right[:, active])
        old_value = value[active]
        length = np.ones(active.size)
        accepted = np.zeros(active.size, dtype=bool)
        # An item on a bound whose projected step loses stays where it is: its maximum lies
        # beyond the bound, and shorter steps only slide along it (20 halvings every cycle).
        on_bound = _at_bound(here)
        trial, new_value = here, old_value
        for _ in range(_HALVINGS):
            candidate = _project(here + length[:, None] * step)
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                candidate_value = _objective_value(candidate, sub_counts, points, three, priors)
            # An item whose step raised (or kept) its objective is done; the others halve.
            better = ~accepted & np.isfinite(candidate_value) & (
                candidate_value >= old_value - 1e-12 * (np.abs(old_value) + 1.0))
            trial = np.where(better[:, None], candidate, trial)
            new_value = np.where(better, candidate_value, new_value)
            accepted |= better | on_bound
            if accepted.all():
                break
            length = np.where(accepted, length, length / 2.0)
        moved = np.abs(trial - here).max(axis=1)
        eta[active], value[active] = trial, new_value
        active = active[accepted & (moved > 1e-10)]
        if active.size == 0:
            break
    return eta


# ---------------------------------------------------------------------------------------------
# Observed information (Louis) and standard errors


def _observed_information(
    data: _Data,
    eta: FloatArray,
    points: FloatArray,
    log_density: FloatArray,
    three: bool,
    priors: ItemPriors,
) -> tuple[FloatArray, float]:
    """Observed information of the marginal log-posterior in η, (items·m, items·m), and the
    marginal log-likelihood at ``eta``.

    Louis: I = E(−∂² log f) − Σ_j w_j Σ_k π_jk g_jk g_jkᵀ + Σ_j w_j ḡ_j ḡ_jᵀ (+ the priors'
    −∂²), where g_jk = ∂ log f(u_j | θ_k)/∂η and ḡ_j = Σ_k π_jk g_jk is row j's marginal score.
    Item i's part of g_jk is counted_ij·B_ik + correct_ij·D_ik with B = ∂ log Q/∂η and
    D = ∂ log(P/Q)/∂η, so the middle term needs, per point, the products Σ_j w_j π_jk x_ij y_i'j
    for x, y ∈ {counted, correct}: one matrix product per block of rows.
    """
    n_points, n_items, m = points.shape[0], eta.shape[0], eta.shape[1]
    terms = _node_terms(eta, points, three)
    score_p, score_q = _scores(terms, points, m)
    base = score_q                       # B: (points, items, m)
    slope = score_p - score_q            # D
    stacked = np.concatenate([base.reshape(n_points, -1), slope.reshape(n_points, -1)], axis=1)
    size = n_items * m
    n = data.weights.shape[0]
    # Per block: log-likelihood and the sums below, each under its own key so threads never race.
    parts: dict[int, dict[str, FloatArray]] = {}

    def accumulate(rows: slice) -> None:
        posterior, log_marginal = _block_posteriors(data, rows, terms, log_density)
        w = data.weights[rows]
        correct = data.correct[rows]
        counted = np.ones_like(correct) if data.counted is None else data.counted[rows]
        # Marginal scores ḡ_j, (rows, items·m).
        expected = sliced_product(posterior, stacked)
        marginal = (counted[:, :, None] * expected[:, :size].reshape(-1, n_items, m)
                    + correct[:, :, None] * expected[:, size:].reshape(-1, n_items, m))
        marginal = marginal.reshape(-1, size)
        weighted = posterior * w[:, None]
        spread = (weighted[:, :, None] * correct[:, None, :]).reshape(correct.shape[0], -1)
        sums = {
            "log_likelihood": np.atleast_1d(w @ log_marginal),
            "cross": sliced_product((marginal * w[:, None]).T, marginal),
            "right_right": sliced_product(spread.T, correct),  # (points·items, items)
            "right": sliced_product(weighted.T, correct),      # r_ik
            "answered": sliced_product(weighted.T, counted),   # n_ik
        }
        if data.counted is not None:
            spread_counted = (weighted[:, :, None] * counted[:, None, :]).reshape(
                correct.shape[0], -1)
            sums["right_counted"] = sliced_product(spread.T, counted)
            sums["counted_counted"] = sliced_product(spread_counted.T, counted)
        parts[rows.start] = sums

    for_each_row_block(accumulate, n, _INFORMATION_BLOCK)

    def total(name: str) -> FloatArray:
        return np.sum([part[name] for part in parts.values()], axis=0)

    log_likelihood = float(total("log_likelihood")[0])
    cross = total("cross")
    rr = total("right_right").reshape(n_points, n_items, n_items)
    right = total("right")
    answered = total("answered")
    rc: FloatArray
    cc: FloatArray
    if data.counted is None:
        # counted ≡ 1: Σ_j w π_jk c_ij y_i'j reduces to the counts themselves.
        cc = np.broadcast_to(answered[:, :, None], rr.shape)
        rc = np.broadcast_to(right[:, :, None], rr.shape)    # [k, i, i'] = r_ik
    else:
        rc = total("right_counted").reshape(rr.shape)
        cc = total("counted_counted").reshape(rr.shape)
    cr = np.swapaxes(rc, 1, 2)                                # [k, i, i'] = Σ c_i r_i'
    expected_outer = (
        np.einsum("kij,kip,kjq->ipjq", cc, base, base, optimize=True)
        + np.einsum("kij,kip,kjq->ipjq", cr, base, slope, optimize=True)
        + np.einsum("kij,kip,kjq->ipjq", rc, slope, base, optimize=True)
        + np.einsum("kij,kip,kjq->ipjq", rr, slope, slope, optimize=True)
    ).reshape(size, size)
    counts = _Counts(answered, right)
    _, complete_hess = _objective_derivatives(eta, counts, points, three, None)
    _, _, prior_hess = _prior_terms(eta, priors, m)
    block_diagonal = np.zeros((n_items, m, n_items, m))
    block_diagonal[np.arange(n_items), :, np.arange(n_items), :] = -(complete_hess + prior_hess)
    information = block_diagonal.reshape(size, size) - expected_outer + cross
    return (information + information.T) / 2.0, log_likelihood


def _item_covariances(information: FloatArray, at_bound: NDArray[np.bool_], m: int) -> FloatArray:
    """Per-item covariance blocks of η, (items, m, m), from the inverse of the whole information
    matrix. Items on a bound are held fixed (their rows and columns dropped) and get NaN, as do
    all items when the matrix is not positive definite."""
    n_items = at_bound.shape[0]
    free = np.repeat(~at_bound, m)
    blocks = np.full((n_items, m, m), np.nan)
    if not free.any():
        return blocks
    sub = information[np.ix_(free, free)]
    if np.linalg.eigvalsh(sub)[0] <= 0.0:
        return blocks
    covariance = np.linalg.inv(sub)
    kept = np.flatnonzero(~at_bound)
    shaped = covariance.reshape(kept.size, m, kept.size, m)
    blocks[kept] = shaped[np.arange(kept.size), :, np.arange(kept.size), :]
    return blocks


def _natural_se(eta: FloatArray, covariance: FloatArray, three: bool,
                scaling: float) -> FloatArray:
    """SEs of (a, b[, c]), (items, m), by the delta method from η's covariance blocks.

    a = α/D, b = −δ/α (so its SE needs the covariance of α and δ), c = C_MAX·logistic(γ).
    """
    alpha, delta = eta[:, 0], eta[:, 1]
    m = eta.shape[1]
    jacobian = np.zeros((eta.shape[0], m, m))
    jacobian[:, 0, 0] = 1.0 / scaling
    jacobian[:, 1, 0] = delta / alpha**2
    jacobian[:, 1, 1] = -1.0 / alpha
    if three:
        share = expit(eta[:, 2])
        jacobian[:, 2, 2] = C_MAX * share * (1.0 - share)
    variance = np.einsum("ipm,imn,ipn->ip", jacobian, covariance, jacobian)
    with np.errstate(invalid="ignore"):
        return np.where(variance > 0.0, np.sqrt(variance), np.nan)
