"""θ estimators for adaptive testing, vectorised over simulees that answered the same number of
items (every step of a lockstep simulation).

The log-likelihood of every simulee is kept on a fixed θ grid (:class:`GridLikelihood`) and
updated by one column gather per step, so EAP costs one pass over (n, K) and the ML/MAP searches
are bracketed by the grid's best point. ML and MAP then polish it with a bracketed Newton
iteration on the simulee's administered items only (shape (n, t)). The derivatives, prior,
search grid, start and Newton search are ``analytics.mode_search``'s, the same as the
whole-test estimators use.

One small class per estimator, all subclasses of :class:`CatEstimator`:
:class:`CatEAP` (posterior mean, as ``analytics.ability.EAPEstimator``), :class:`CatMAP`
(posterior mode, as ``MAPEstimator``) and :class:`CatML` (bounded maximum likelihood, as
``MLEstimator``, with catsim's Dodd rule for all-correct / all-wrong starts as an option).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np
from numpy.typing import NDArray

from analytics import mode_search
from analytics.ability import INEP_GRID, THETA_BOUNDS, AbilityEstimate, QuadratureGrid
from analytics.irt import FloatArray, ItemBank

#: How ML treats a pattern with only correct or only wrong answers (no finite maximum).
CONSTANT_PATTERN_RULES = ("dodd", "bound")


class GridLikelihood:
    """Log-likelihood of n simulees at K grid points, built up one answered item at a time.

    ``values`` has shape (n, K). Row 2j of ``terms`` (2·n_items, K) is log Q of item j at every
    grid point and row 2j + 1 its log P, computed once, so adding an answer is one row gather.
    """

    def __init__(self, bank: ItemBank, points: FloatArray, n_simulees: int) -> None:
        self.points = np.asarray(points, dtype=np.float64)
        log_p, log_q = mode_search.grid_log_probabilities(bank, self.points)
        self.terms = np.empty((2 * bank.n_items, self.points.shape[0]))
        self.terms[0::2] = log_q.T
        self.terms[1::2] = log_p.T
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
        log_prior = mode_search.normal_log_prior(points, self.prior_mean, self.prior_sd)
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
        return mode_search.search_grid(self.theta_bounds)

    def estimate(self, answered: Answered, bank: ItemBank) -> AbilityEstimate:
        precision = mode_search.prior_precision(self.prior_sd)
        log_prior = mode_search.normal_log_prior(self.points, self.prior_mean, self.prior_sd)
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
        return mode_search.search_grid(self.theta_bounds)

    def estimate(self, answered: Answered, bank: ItemBank) -> AbilityEstimate:
        flat = mode_search.normal_log_prior(self.points, 0.0, None)
        theta = maximise(answered, bank, self.points, flat, 0.0, mode_search.prior_precision(None))
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


def administered_information(items: NDArray[np.intp], theta: FloatArray,
                             bank: ItemBank) -> FloatArray:
    """Test information Σ_j I_j(θ̂_i) over each simulee's items (n, t), shape (n,)."""
    return mode_search.information_at(theta, bank, items=items)


def maximise(answered: Answered, bank: ItemBank, points: FloatArray, log_prior: FloatArray,
             prior_mean: float, precision: float, max_iter: int = 100,
             tol: float = 1e-8) -> FloatArray:
    """The highest mode of log L + log prior for every simulee, shape (n,).

    ``points`` (K,) is the grid of ``answered.log_likelihood`` and ``log_prior`` (K,) the prior
    on it; ``prior_mean`` and ``precision`` (1/σ², 0.0 for ML) are the same prior for the Newton
    steps. The best grid point and its neighbours bracket the mode; ``mode_search``'s
    safeguarded Newton search polishes it over the administered items (n, t) alone. A maximum
    at a bound ends there.
    """
    objective = answered.log_likelihood + log_prior
    # The grid runs along axis 1 here; grid_bracket wants it along axis 0 (a view, no copy).
    bracket = mode_search.grid_bracket(objective.T, points)

    def derivatives(rows: NDArray[np.intp],
                    theta: FloatArray) -> mode_search.LogLikelihoodDerivatives:
        return mode_search.log_likelihood_derivatives(theta, bank, answered.correct[rows],
                                                      items=answered.items[rows])

    return mode_search.newton_in_bracket(derivatives, bracket, prior_mean, precision, max_iter, tol)
