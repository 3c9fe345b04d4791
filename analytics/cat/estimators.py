"""θ estimators for adaptive testing, vectorised over simulees that answered the same number of
items (every step of a lockstep simulation).

The log-likelihood of every simulee is kept on a fixed θ grid (:class:`GridLikelihood`) and
updated by one column gather per step, so EAP costs one pass over (n, K) and the ML/MAP searches
start from the grid's best point. ML and MAP then polish that point with a bracketed Newton
iteration on the simulee's administered items only (shape (n, t)).

One small class per estimator, all subclasses of :class:`CatEstimator`:
:class:`CatEAP` (posterior mean, as ``analytics.ability.EAPEstimator``), :class:`CatMAP`
(posterior mode, as ``MAPEstimator``) and :class:`CatML` (bounded maximum likelihood, as
``MLEstimator``, with catsim's Dodd rule for all-correct / all-wrong starts as an option).
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np
from numpy.typing import NDArray

from analytics.ability import INEP_GRID, THETA_BOUNDS, AbilityEstimate, QuadratureGrid
from analytics.irt import (
    FloatArray,
    ItemBank,
    information_from_probabilities,
    logits,
    response_probabilities,
)

#: Spacing of the grid that brackets the ML / MAP maximum (as ``analytics.ability``'s search).
SEARCH_STEP = 0.1
#: How ML treats a pattern with only correct or only wrong answers (no finite maximum).
CONSTANT_PATTERN_RULES = ("dodd", "bound")


class GridLikelihood:
    """Log-likelihood of n simulees at K grid points, built up one answered item at a time.

    ``values`` has shape (n, K). Row 2j of ``terms`` (2·n_items, K) is log Q of item j at every
    grid point and row 2j + 1 its log P, computed once, so adding an answer is one row gather.
    """

    def __init__(self, bank: ItemBank, points: FloatArray, n_simulees: int) -> None:
        probs = response_probabilities(logits(points, bank), bank.c)
        self.points = np.asarray(points, dtype=np.float64)
        self.terms = np.empty((2 * bank.n_items, self.points.shape[0]))
        self.terms[0::2] = np.log(probs.q).T
        self.terms[1::2] = np.log(probs.p).T
        self.values = np.zeros((n_simulees, self.points.shape[0]))

    def add(self, rows: NDArray[np.intp] | slice, items: NDArray[np.intp],
            correct: NDArray[np.bool_]) -> None:
        """Add one answer per row: item ``items[r]`` answered ``correct[r]`` by simulee
        ``rows[r]`` (shapes (r,))."""
        self.values[rows] += self.terms[2 * items + correct]


class Answered(NamedTuple):
    """What n simulees have answered so far: ``items`` (n, t) bank indices in the order given,
    ``correct`` (n, t) bool, ``log_likelihood`` (n, K) on the estimator's grid and
    ``previous`` (n,) the θ̂ before the latest answer."""

    items: NDArray[np.intp]
    correct: NDArray[np.bool_]
    log_likelihood: FloatArray
    previous: FloatArray


class CatEstimator(abc.ABC):
    """Base class of the CAT estimators.

    ``points`` is the θ grid on which the simulation keeps each simulee's log-likelihood;
    ``estimate(answered, bank)`` returns θ̂ and SE of shape (n,) for simulees that each
    answered t ≥ 1 items.
    """

    name: ClassVar[str]

    @property
    @abc.abstractmethod
    def points(self) -> FloatArray:
        """The grid of the running log-likelihood, shape (K,)."""

    @abc.abstractmethod
    def estimate(self, answered: Answered, bank: ItemBank) -> AbilityEstimate:
        """θ̂ and its SE, each of shape (n,)."""


@dataclass(frozen=True)
class CatEAP(CatEstimator):
    """Posterior mean on a quadrature grid with a N(μ, σ²) prior; SE is the posterior SD.

    The same recipe as ``analytics.ability.EAPEstimator`` (and equal to it to rounding), computed
    from the running grid log-likelihood instead of a response matrix.
    """

    grid: QuadratureGrid = INEP_GRID
    prior_mean: float = 0.0
    prior_sd: float = 1.0
    name: ClassVar[str] = "eap"

    @property
    def points(self) -> FloatArray:
        return self.grid.points

    def estimate(self, answered: Answered, bank: ItemBank) -> AbilityEstimate:
        points = self.grid.points
        log_prior = -0.5 * ((points - self.prior_mean) / self.prior_sd) ** 2
        log_post = answered.log_likelihood + (log_prior + self.grid.log_weights)
        log_post -= log_post.max(axis=1, keepdims=True)
        weights = np.exp(log_post)
        total = weights.sum(axis=1)
        theta = weights @ points / total
        variance = weights @ points**2 / total - theta**2
        return AbilityEstimate(theta=theta, se=np.sqrt(np.maximum(variance, 0.0)))


@dataclass(frozen=True)
class CatMAP(CatEstimator):
    """Posterior mode with a N(μ, σ²) prior inside ``theta_bounds``; SE = 1/√(I(θ̂) + 1/σ²)."""

    prior_mean: float = 0.0
    prior_sd: float = 1.0
    theta_bounds: tuple[float, float] = THETA_BOUNDS
    name: ClassVar[str] = "map"

    @property
    def points(self) -> FloatArray:
        return search_grid(self.theta_bounds)

    def estimate(self, answered: Answered, bank: ItemBank) -> AbilityEstimate:
        precision = 1.0 / self.prior_sd**2
        log_prior = -0.5 * precision * (self.points - self.prior_mean) ** 2
        theta = maximise(answered, bank, self.points, log_prior, self.prior_mean, precision)
        info = administered_information(answered.items, theta, bank)
        return AbilityEstimate(theta=theta, se=1.0 / np.sqrt(info + precision))


@dataclass(frozen=True)
class CatML(CatEstimator):
    """Maximum likelihood inside ``theta_bounds``; SE = 1/√I(θ̂) over the administered items.

    An all-correct or all-wrong pattern has no finite maximum. ``constant_patterns="bound"``
    gives it the bound (where the bounded likelihood peaks); ``"dodd"`` (catsim's default)
    moves the previous θ̂ half-way to the bank's highest b after a correct answer, or to its
    lowest b after a wrong one (Dodd 1990), until the pattern is mixed.
    """

    theta_bounds: tuple[float, float] = THETA_BOUNDS
    constant_patterns: str = "dodd"
    name: ClassVar[str] = "ml"

    def __post_init__(self) -> None:
        if self.constant_patterns not in CONSTANT_PATTERN_RULES:
            raise ValueError(f"constant_patterns must be one of {CONSTANT_PATTERN_RULES}; "
                             f"got {self.constant_patterns!r}")

    @property
    def points(self) -> FloatArray:
        return search_grid(self.theta_bounds)

    def estimate(self, answered: Answered, bank: ItemBank) -> AbilityEstimate:
        theta = maximise(answered, bank, self.points, np.zeros(self.points.shape[0]), 0.0, 0.0)
        if self.constant_patterns == "dodd":
            n_correct = answered.correct.sum(axis=1)
            previous = answered.previous
            up = previous + (bank.b.max() - previous) / 2.0
            down = previous - (previous - bank.b.min()) / 2.0
            theta = np.where(n_correct == answered.correct.shape[1], up,
                             np.where(n_correct == 0, down, theta))
        info = administered_information(answered.items, theta, bank)
        with np.errstate(divide="ignore"):
            return AbilityEstimate(theta=theta, se=1.0 / np.sqrt(info))


def search_grid(theta_bounds: tuple[float, float]) -> FloatArray:
    """Equally spaced points over ``theta_bounds``, about SEARCH_STEP apart, ends included."""
    low, high = (float(bound) for bound in theta_bounds)
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(f"theta_bounds must be finite with low < high; got {theta_bounds}")
    return np.linspace(low, high, max(3, math.ceil((high - low) / SEARCH_STEP) + 1))


def administered_information(items: NDArray[np.intp], theta: FloatArray,
                             bank: ItemBank) -> FloatArray:
    """Test information Σ_j I_j(θ̂_i) over each simulee's items (n, t), shape (n,)."""
    a, c = bank.a[items], bank.c[items]
    z = bank.scaling * a * (theta[:, None] - bank.b[items])
    probs = response_probabilities(z, c)
    return information_from_probabilities(probs, a, c, bank.scaling).sum(axis=1)


def maximise(answered: Answered, bank: ItemBank, points: FloatArray, log_prior: FloatArray,
             prior_mean: float, precision: float, max_iter: int = 100,
             tol: float = 1e-8) -> FloatArray:
    """The highest mode of log L + log prior for every simulee, shape (n,).

    The best grid point and its neighbours bracket the mode; safeguarded Newton steps (Fisher
    scoring where the curvature is not negative, bisection when a step leaves the bracket)
    polish it. A maximum at a bound ends there.
    """
    objective = answered.log_likelihood + log_prior
    best = objective.argmax(axis=1)
    last = points.shape[0] - 1
    theta = points[best].copy()
    lower = points[np.maximum(best - 1, 0)]
    upper = points[np.minimum(best + 1, last)]
    active = np.arange(theta.shape[0])
    for _ in range(max_iter):
        if active.size == 0:
            break
        here = theta[active]
        score, second, fisher = _derivatives(answered.items[active], answered.correct[active],
                                             here, bank)
        score -= precision * (here - prior_mean)
        second -= precision
        fisher += precision
        low = np.where(score > 0.0, here, lower[active])
        high = np.where(score < 0.0, here, upper[active])
        curvature = np.where(second < 0.0, second, -fisher)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(score == 0.0, 0.0, -score / curvature)
        proposal = here + step
        converged = np.abs(step) < tol
        outside = ~(((proposal > low) & (proposal < high)) | converged)
        proposal = np.where(outside, 0.5 * (low + high), proposal)
        done = converged | (high - low < tol)
        theta[active], lower[active], upper[active] = proposal, low, high
        active = active[~done]
    return theta


def _derivatives(items: NDArray[np.intp], correct: NDArray[np.bool_], theta: FloatArray,
                 bank: ItemBank) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Score, second derivative and Fisher information of log L at θ (n,), over items (n, t).

    With s = logistic(D·a·(θ − b)) and P = c + (1 − c)s:
    score = Σ D·a·(u − P)·s/P, second = Σ D²a²·(1 − s)·(s/P)·[(u − P)·c/P − (1 − c)·s].
    """
    a, c = bank.a[items], bank.c[items]
    slope = bank.scaling * a
    probs = response_probabilities(slope * (theta[:, None] - bank.b[items]), c)
    residual = correct - probs.p
    score = np.einsum("ij,ij->i", residual * probs.s_over_p, slope)
    curvature = residual * (c / probs.p) - (1.0 - c) * probs.s
    second = np.einsum("ij,ij->i", probs.s_complement * probs.s_over_p * curvature, slope**2)
    fisher = information_from_probabilities(probs, a, c, bank.scaling).sum(axis=1)
    return score, second, fisher
