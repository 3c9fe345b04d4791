"""The mathematics every θ estimator shares: the 3PL log-likelihood's derivatives, the normal
log-prior, the θ search grid and the safeguarded Newton search for the highest mode.

Two estimator families use it: ``analytics.ability`` (whole tests, responses of shape
(n_examinees, n_items) over the whole bank, NaN for an entry that does not count) and
``analytics.cat.estimators`` (adaptive tests, each simulee's own administered items as bank
indices of shape (n, t)). Both describe the responses to this module in the same terms:

* ``correct`` (n, m): 1 / True for a correct answer, 0 / False otherwise;
* ``counted`` (n, m) or None: 1.0 where the entry counts in the likelihood, 0.0 where it does
  not; None when every entry counts;
* ``items`` (n, m) of bank indices, or None when the m columns are the bank's own items.

The mode search is the one for MAP and ML in both families: the best point of a grid over the
θ bounds and its neighbours bracket the mode, the parabola through those three values gives the
start, and Newton steps polish it without leaving the bracket (:func:`grid_bracket`,
:func:`newton_in_bracket`). The formulas are in docs/methods.md, Ability estimation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from analytics.irt import (
    FloatArray,
    ItemBank,
    ResponseProbabilities,
    information_from_probabilities,
    logits,
    response_probabilities,
)

#: Spacing of the coarse grid that seeds MAP and ML. The likelihood of a test is smooth on this
#: scale, so its grid maximum sits next to the continuous one.
SEARCH_STEP = 0.1


def check_theta_bounds(theta_bounds: tuple[float, float]) -> tuple[float, float]:
    """``theta_bounds`` as two floats.

    Raises
    ------
    ValueError
        Unless both are finite and low < high.
    """
    low, high = (float(bound) for bound in theta_bounds)
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(f"theta_bounds must be finite with low < high; got {theta_bounds}")
    return low, high


def search_grid(theta_bounds: tuple[float, float]) -> FloatArray:
    """Equally spaced θ points over ``theta_bounds``, ends included, at most SEARCH_STEP apart
    (at least 3 points), shape (k,).

    Raises
    ------
    ValueError
        As :func:`check_theta_bounds`.
    """
    low, high = check_theta_bounds(theta_bounds)
    return np.linspace(low, high, max(3, math.ceil((high - low) / SEARCH_STEP) + 1))


def check_prior(prior_mean: float, prior_sd: float) -> None:
    """Raise ValueError unless ``prior_mean`` is finite and ``prior_sd`` finite and positive."""
    if not np.isfinite(prior_mean):
        raise ValueError(f"prior_mean must be finite; got {prior_mean!r}")
    if not (np.isfinite(prior_sd) and prior_sd > 0):
        raise ValueError(f"prior_sd must be finite and positive; got {prior_sd!r}")


def normal_log_prior(points: FloatArray, prior_mean: float, prior_sd: float | None) -> FloatArray:
    """Log density of N(μ, σ²) at ``points`` (k,), up to a constant; zeros when ``prior_sd`` is
    None (no prior). Shape (k,).

    The constant is dropped because it cancels when a posterior is normalised and does not move
    a mode.
    """
    if prior_sd is None:
        return np.zeros(points.shape[0])
    return -0.5 * ((points - prior_mean) / prior_sd) ** 2


def prior_precision(prior_sd: float | None) -> float:
    """1/σ² of the prior, the amount it adds to the information; 0.0 without a prior."""
    return 0.0 if prior_sd is None else 1.0 / prior_sd**2


def grid_log_probabilities(bank: ItemBank, points: FloatArray) -> tuple[FloatArray, FloatArray]:
    """log P and log Q of every item at every θ point, each of shape (k, n_items).

    They come from the logit (``irt.response_probabilities``), so both are finite for any finite
    θ without clipping P away from 0 or 1.
    """
    probs = response_probabilities(logits(points, bank), bank.c)
    return np.log(probs.p), np.log(probs.q)


class LogLikelihoodDerivatives(NamedTuple):
    """Score, second derivative and Fisher information of the log-likelihood, each (n,)."""

    score: FloatArray
    second: FloatArray
    information: FloatArray


class _ItemTerms(NamedTuple):
    """The probabilities at each row's θ and the parameters of the items they belong to:
    ``probs`` fields (n, m); ``a`` and ``c`` (m,) for the bank's own columns or (n, m)."""

    probs: ResponseProbabilities
    a: FloatArray
    c: FloatArray


def _item_terms(theta: FloatArray, bank: ItemBank, items: NDArray[np.intp] | None) -> _ItemTerms:
    if items is None:
        return _ItemTerms(response_probabilities(logits(theta, bank), bank.c), bank.a, bank.c)
    a, c = bank.a[items], bank.c[items]
    z = bank.scaling * a * (theta[:, None] - bank.b[items])
    return _ItemTerms(response_probabilities(z, c), a, c)


def _sum_over_items(values: FloatArray, counted: FloatArray | None) -> FloatArray:
    """Row sums of ``values`` (n, m) over the entries that count, shape (n,)."""
    if counted is None:
        return values.sum(axis=1)
    return np.einsum("ij,ij->i", values, counted)


def information_at(theta: FloatArray, bank: ItemBank, counted: FloatArray | None = None,
                   items: NDArray[np.intp] | None = None) -> FloatArray:
    """Test information Σ_j I_j(θ_i) over each row's counted items, shape (n,): the
    ``information`` of :func:`log_likelihood_derivatives` (same parameters) without the rest."""
    terms = _item_terms(theta, bank, items)
    info = information_from_probabilities(terms.probs, terms.a, terms.c, bank.scaling)
    return _sum_over_items(info, counted)


def log_likelihood_derivatives(
    theta: FloatArray,
    bank: ItemBank,
    correct: FloatArray | NDArray[np.bool_],
    counted: FloatArray | None = None,
    items: NDArray[np.intp] | None = None,
) -> LogLikelihoodDerivatives:
    """First and second derivatives and Fisher information of the 3PL log-likelihood at θ.

    With s = logistic(z), z = D·a·(θ − b), P = c + (1−c)s and P' = D·a·(1−c)·s·(1−s), summed
    over the entries that count:

      score       = Σ D·a·(u − P)·s/P
      second      = Σ D²a²·(1−s)·(s/P)·[(u − P)·c/P − (1 − c)·s]
      information = Σ D²a²·(1−c)·s·(1−s)·(s/P)

    Parameters
    ----------
    theta : array of shape (n,)
        One θ per row.
    bank : ItemBank
    correct : array of shape (n, m)
        1.0 / True for a correct answer; 0 elsewhere (including entries that do not count).
    counted : array of shape (n, m), optional
        1.0 where the entry counts in the likelihood, 0.0 where not; None when all count.
    items : int array of shape (n, m), optional
        Bank indices of each row's items (an adaptive test); None when the m columns are the
        bank's items.

    Returns
    -------
    LogLikelihoodDerivatives
        score, second and information, each of shape (n,).
    """
    probs, a, c = _item_terms(theta, bank, items)
    slope = bank.scaling * a
    # einsum rather than BLAS for these matrix-vector products: see irt.sliced_product.
    subscripts = "ij,j->i" if slope.ndim == 1 else "ij,ij->i"
    if counted is None:
        residual = correct - probs.p
        curvature = residual * (c / probs.p) - (1.0 - c) * probs.s
    else:
        residual = correct - probs.p * counted
        curvature = residual * (c / probs.p) - (1.0 - c) * probs.s * counted
    score = np.einsum(subscripts, residual * probs.s_over_p, slope)
    second = np.einsum(subscripts, probs.s_complement * probs.s_over_p * curvature, slope**2)
    info = information_from_probabilities(probs, a, c, bank.scaling)
    return LogLikelihoodDerivatives(score, second, _sum_over_items(info, counted))


class Bracket(NamedTuple):
    """Where the Newton search starts and the interval it stays in, each of shape (n,)."""

    start: FloatArray
    lower: FloatArray
    upper: FloatArray


def grid_bracket(objective: FloatArray, points: FloatArray) -> Bracket:
    """Start and bracket of the highest mode of an objective known on an equally spaced grid.

    Parameters
    ----------
    objective : array of shape (k, n)
        The log posterior (or log-likelihood) of each of n rows at the k ``points``, grid along
        axis 0 (a transposed (n, k) array is fine).
    points : array of shape (k,)
        Equally spaced θ values, k ≥ 3.

    Returns
    -------
    Bracket
        The bracket is the best grid point and its two neighbours (one side only at a grid end).
        The start is the vertex of the parabola through the three values around the best point,
        kept within one grid step of it, which leaves Newton about one step less to do; at a
        grid end it is the end itself.
    """
    n_points = points.shape[0]
    step = points[1] - points[0]
    top = objective.argmax(axis=0)
    inner = np.clip(top, 1, n_points - 2)
    left, middle, right = (np.take_along_axis(objective, (inner + k)[None, :], axis=0)[0]
                           for k in (-1, 0, 1))
    bend = left - 2.0 * middle + right
    with np.errstate(divide="ignore", invalid="ignore"):
        offset = np.where(bend < 0.0, 0.5 * step * (left - right) / bend, 0.0)
    vertex = points[inner] + np.clip(offset, -step, step)
    start = np.where(top == inner, vertex, points[top])
    return Bracket(start, points[np.maximum(top - 1, 0)], points[np.minimum(top + 1, n_points - 1)])


DerivativesOf = Callable[[NDArray[np.intp], FloatArray], LogLikelihoodDerivatives]
"""``derivatives(rows, theta)``: the log-likelihood derivatives of the given rows (r,) at one θ
each (r,), as :func:`log_likelihood_derivatives` returns them."""


def newton_in_bracket(
    derivatives: DerivativesOf,
    bracket: Bracket,
    prior_mean: float,
    precision: float,
    max_iter: int,
    tol: float,
) -> FloatArray:
    """Maximise log L + log N(θ; μ, 1/precision) inside each row's bracket, shape (n,).

    Parameters
    ----------
    derivatives : callable
        ``derivatives(rows, theta)`` for the rows still searching (see ``DerivativesOf``).
    bracket : Bracket
        Start, lower and upper end for each of the n rows (from :func:`grid_bracket`).
    prior_mean, precision : float
        μ and 1/σ² of the normal prior; precision 0.0 is ML (no prior).
    max_iter : int
        Newton iterations at most.
    tol : float
        A row is done when its step moves θ by less than ``tol`` (or, after a true Newton step
        of length h, when h² < tol/100) or its bracket is narrower than ``tol``.

    Notes
    -----
    Newton steps on the score; Fisher scoring replaces the second derivative where it is not
    negative; a step that leaves the bracket becomes a bisection, and each evaluated score
    shrinks the bracket, so the iteration cannot diverge. A maximum at a bracket end (e.g. ML of
    an all-correct pattern at the upper bound) ends there.
    """
    theta, lower, upper = (values.copy() for values in bracket)
    active = np.arange(theta.shape[0])
    for _ in range(max_iter):
        if active.size == 0:
            break
        here = theta[active]
        derivs = derivatives(active, here)
        score = derivs.score - precision * (here - prior_mean)
        second = derivs.second - precision
        fisher = derivs.information + precision
        low = np.where(score > 0.0, here, lower[active])
        high = np.where(score < 0.0, here, upper[active])
        curvature = np.where(second < 0.0, second, -fisher)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(score == 0.0, 0.0, -score / curvature)
        proposal = here + step
        # A converged step is taken as is: at rounding level the score's sign is noise, and the
        # bracket end it just set may coincide with the point itself.
        # Newton converges quadratically: after a true Newton step of length h the error is of
        # order h², so h² < tol/100 is as good as a step below tol and saves one evaluation.
        converged = (np.abs(step) < tol) | ((second < 0.0) & (step**2 < 0.01 * tol))
        outside = ~((proposal > low) & (proposal < high) | converged)
        proposal = np.where(outside, 0.5 * (low + high), proposal)
        done = converged | (high - low < tol)
        theta[active], lower[active], upper[active] = proposal, low, high
        active = active[~done]
    return theta
