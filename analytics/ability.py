"""Ability (θ) estimation for dichotomous 3PL items: EAP, MAP and bounded ML.

Responses are a float array of shape (n_examinees, n_items): 1.0 correct, 0.0 wrong, NaN for an
item not administered or missing. An entry counts in the likelihood only if the response is finite
and the item has parameters (``ItemBank.usable``). A 1-D array is one examinee. Every estimator is
vectorised over examinees: the work is a few matrix products and elementwise passes.

There is one way to ask for θ: build an estimator (:class:`EAPEstimator`, :class:`MAPEstimator`,
:class:`MLEstimator`, or :func:`make_estimator` by name) and call its ``estimate``. Every
estimator subclasses :class:`AbilityEstimator`, whose docstring is the contract that
``scoring.score_responses`` relies on. The formulas are in docs/methods.md, Ability estimation.
MAP and ML find their mode with ``mode_search`` (grid bracket, bracketed Newton, the
log-likelihood derivatives), the kernel the adaptive-testing estimators share.
"""

from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass
from typing import ClassVar, NamedTuple, cast

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import roots_legendre

from analytics.irt import (
    GRID_BLOCK,
    CountedResponses,
    FloatArray,
    ItemBank,
    counted_responses,
    for_each_row_block,
    sliced_product,
)
from analytics.mode_search import (
    Bracket,
    LogLikelihoodDerivatives,
    check_prior,
    check_theta_bounds,
    grid_bracket,
    grid_log_probabilities,
    information_at,
    log_likelihood_derivatives,
    newton_in_bracket,
    normal_log_prior,
    prior_precision,
    search_grid,
)

QUADRATURE_RULES = ("uniform", "gauss-legendre")


@dataclass(frozen=True)
class QuadratureGrid:
    """Quadrature points for EAP.

    Parameters
    ----------
    n_quadrature : int, default 40
        Number of points (≥ 2).
    theta_range : (float, float), default (-4.0, 4.0)
        Lowest and highest point (inclusive for the uniform rule).
    rule : {"uniform", "gauss-legendre"}, default "uniform"
        "uniform" is equally spaced points with equal weights (INEP, mirt). "gauss-legendre" is
        Gauss–Legendre nodes and weights over the range, as girth uses; offered to compare with it.
    """

    n_quadrature: int = 40
    theta_range: tuple[float, float] = (-4.0, 4.0)
    rule: str = "uniform"

    def __post_init__(self) -> None:
        if int(self.n_quadrature) != self.n_quadrature or self.n_quadrature < 2:
            raise ValueError(f"n_quadrature must be an integer ≥ 2; got {self.n_quadrature!r}")
        low, high = (float(bound) for bound in self.theta_range)
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise ValueError(f"theta_range must be finite with low < high; got {self.theta_range}")
        if self.rule not in QUADRATURE_RULES:
            raise ValueError(
                f"rule must be one of {', '.join(QUADRATURE_RULES)}; got {self.rule!r}")
        object.__setattr__(self, "n_quadrature", int(self.n_quadrature))
        object.__setattr__(self, "theta_range", (low, high))

    @property
    def points(self) -> FloatArray:
        """Quadrature points, shape (n_quadrature,)."""
        low, high = self.theta_range
        if self.rule == "uniform":
            return np.linspace(low, high, self.n_quadrature)
        nodes, _ = roots_legendre(self.n_quadrature)
        return low + (high - low) * (nodes + 1.0) / 2.0

    @property
    def log_weights(self) -> FloatArray:
        """Log quadrature weights, shape (n_quadrature,); zeros for the uniform rule."""
        if self.rule == "uniform":
            return np.zeros(self.n_quadrature)
        _, weights = roots_legendre(self.n_quadrature)
        return np.log(weights)


THETA_BOUNDS: tuple[float, float] = (-6.0, 6.0)
"""The wide θ interval: mirt's ``theta_lim`` for the paper's grids, and the default interval
MAP and ML search (their ``theta_bounds``)."""

INEP_GRID = QuadratureGrid(40, (-4.0, 4.0))
PAPER_GRID = QuadratureGrid(121, THETA_BOUNDS)
MIRT_LEGACY_GRID = QuadratureGrid(61, THETA_BOUNDS)

@dataclass(frozen=True, eq=False)
class AbilityEstimate:
    """θ estimates and their standard errors, each of shape (n_examinees,)."""

    theta: FloatArray
    se: FloatArray


def log_likelihood_on_grid(responses: ArrayLike, bank: ItemBank, points: ArrayLike) -> FloatArray:
    """Log-likelihood of each response pattern at each θ point.

    Parameters
    ----------
    responses : array of shape (n_examinees, n_items)
        1.0 / 0.0 / NaN.
    bank : ItemBank
    points : array of shape (k,)
        θ values.

    Returns
    -------
    ndarray of shape (n_examinees, k)
        Σ_i [u log P_i(θ) + (1 − u) log Q_i(θ)] over counted entries (0 when none count).

    Notes
    -----
    log P and log Q are computed from the logit (``irt.response_probabilities``), so they are
    finite for any finite θ without clipping P away from 0 or 1.
    """
    return _grid_log_likelihood(counted_responses(responses, bank), np.asarray(points, float))


def _grid_log_likelihood(data: CountedResponses, points: FloatArray) -> FloatArray:
    terms = _grid_terms(data.bank, points)
    return _log_likelihood_columns(data, terms, np.zeros(points.shape[0])).T.copy()


class _GridTerms(NamedTuple):
    """log P, log Q and log(P/Q) of shape (k, n_items) at each grid point; Σ_i log Q, (k,)."""

    log_p: FloatArray
    log_q: FloatArray
    log_odds: FloatArray
    log_q_total: FloatArray


def _grid_terms(bank: ItemBank, points: FloatArray) -> _GridTerms:
    log_p, log_q = grid_log_probabilities(bank, points)
    return _GridTerms(log_p, log_q, log_p - log_q, log_q.sum(axis=1))


def _log_likelihood_columns(
    data: CountedResponses, terms: _GridTerms, offset: FloatArray
) -> FloatArray:
    """Log-likelihood plus ``offset`` (k,), shape (k, n): one column per examinee.

    Grid points run down the rows because reductions over them (max, argmax, the posterior
    moments) are then fast vectorised passes over contiguous rows.
    """
    if data.all_counted:
        # Every entry counts: Σ log Q is one shared column, so one product is enough.
        result = sliced_product(terms.log_odds, data.correct.T)
        result += (terms.log_q_total + offset)[:, None]
        return result
    result = sliced_product(terms.log_p, data.correct.T)
    result += sliced_product(terms.log_q, data.wrong.T)
    result += offset[:, None]
    return result


def _derivatives(data: CountedResponses, theta: FloatArray) -> LogLikelihoodDerivatives:
    """Log-likelihood derivatives at one θ per examinee (n,), in blocks of rows on the block
    threads; the formulas are ``mode_search.log_likelihood_derivatives``."""
    out = LogLikelihoodDerivatives(*(np.empty(data.n_examinees) for _ in range(3)))

    def derivatives_of(rows: slice) -> None:
        block = data.rows(rows)
        derivs = log_likelihood_derivatives(theta[rows], data.bank, block.correct, block.counted)
        for field, values in zip(out, derivs, strict=True):
            field[rows] = values

    for_each_row_block(derivatives_of, data.n_examinees)
    return out


def _information_at(data: CountedResponses, theta: FloatArray) -> FloatArray:
    """Test information over each examinee's counted items at one θ each, shape (n,)."""
    out = np.empty(data.n_examinees)

    def information_of(rows: slice) -> None:
        out[rows] = information_at(theta[rows], data.bank, data.counted[rows])

    for_each_row_block(information_of, data.n_examinees)
    return out


def _mode(
    data: CountedResponses,
    theta_bounds: tuple[float, float],
    prior_mean: float,
    prior_sd: float | None,
    max_iter: int,
    tol: float,
) -> FloatArray:
    """The highest mode of log L + log N(μ, σ²) (log L alone when ``prior_sd`` is None) inside
    ``theta_bounds`` for every examinee, shape (n,): ``mode_search``'s grid bracket and
    bracketed Newton search.

    The grid objective (search points × examinees) is built in blocks of GRID_BLOCK examinees,
    so its memory stays bounded for any number of them.
    """
    points = search_grid(theta_bounds)
    terms = _grid_terms(data.bank, points)
    log_prior = normal_log_prior(points, prior_mean, prior_sd)
    bracket = Bracket(*(np.empty(data.n_examinees) for _ in range(3)))

    def search(rows: slice) -> None:
        objective = _log_likelihood_columns(data.rows(rows), terms, log_prior)
        for field, values in zip(bracket, grid_bracket(objective, points), strict=True):
            field[rows] = values

    for_each_row_block(search, data.n_examinees, GRID_BLOCK)
    return newton_in_bracket(lambda rows, theta: _derivatives(data.rows(rows), theta), bracket,
                             prior_mean, prior_precision(prior_sd), max_iter, tol)


class AbilityEstimator(abc.ABC):
    """Base class of the θ estimators; its docstring is their whole contract.

    ``scoring.score_responses`` and ``person_fit.lz_star`` need exactly what is listed here, so
    a new estimator is a subclass (a frozen dataclass, like the three below) that sets the three
    attributes and implements ``_estimate_counted``; ``make_estimator`` names the built-in ones.

    Attributes
    ----------
    name : str
        Class attribute: the method's short name ("eap", "map", "ml"), as ``make_estimator`` and
        the command line spell it.
    prior_mean : float
        μ of the N(μ, σ²) prior. Ignored when ``prior_sd`` is None.
    prior_sd : float or None
        σ of the prior, or None for an estimator without one. ``score_responses`` passes both to
        ``person_fit.lz_star``: None selects the ML correction (r0 = 0), a number the MAP
        correction with r0(θ) = (μ − θ)/σ² (an approximation for EAP).

    Methods
    -------
    estimate(responses, bank) -> AbilityEstimate
        The public way to ask for θ; implemented once, here.
    _estimate_counted(data) -> AbilityEstimate
        Abstract: θ and SE from responses already split by ``irt.counted_responses``, shape
        (n_examinees,) each. It validates the estimator's settings (ValueError) before any work.
        ``score_responses`` calls it directly, so the split is made once for θ, person fit and
        CTT.
    """

    name: ClassVar[str]
    prior_mean: float
    prior_sd: float | None

    def estimate(self, responses: ArrayLike, bank: ItemBank) -> AbilityEstimate:
        """θ and its standard error for every response pattern.

        Parameters
        ----------
        responses : array of shape (n_examinees, n_items)
            1.0 / 0.0 / NaN; a 1-D array is one examinee.
        bank : ItemBank

        Returns
        -------
        AbilityEstimate
            theta and se of shape (n_examinees,).

        Raises
        ------
        ValueError
            If the estimator's settings are invalid (a prior SD that is not positive, bounds
            with low ≥ high) or ``responses`` does not have ``bank.n_items`` columns.
        """
        return self._estimate_counted(counted_responses(responses, bank))

    @abc.abstractmethod
    def _estimate_counted(self, data: CountedResponses) -> AbilityEstimate:
        """θ and SE of shape (n_examinees,) from responses already split into counted entries."""


@dataclass(frozen=True)
class EAPEstimator(AbilityEstimator):
    """Expected a posteriori θ on a quadrature grid, with a normal prior.

    w_k ∝ v_k · φ((q_k − μ)/σ) · L(q_k), θ = Σ w_k q_k / Σ w_k,
    SE = sqrt(Σ w_k q_k² / Σ w_k − θ²) (the posterior SD on the grid), where v_k are the grid's
    quadrature weights (all equal for the uniform rule).

    Parameters
    ----------
    grid : QuadratureGrid, default INEP_GRID (40 points on [−4, 4])
    prior_mean, prior_sd : float, default 0.0 and 1.0
        μ and σ of the N(μ, σ²) prior.

    Notes
    -----
    The posterior is normalised with a log-sum-exp, so long tests do not underflow. An examinee
    with no counted item gets the grid prior's mean and SD (μ restricted to the grid: finite, and
    equal to μ only when the grid is symmetric about it). All-correct and all-wrong patterns have
    finite EAPs (pulled toward the grid ends), unlike ML.
    """

    grid: QuadratureGrid = INEP_GRID
    prior_mean: float = 0.0
    prior_sd: float = 1.0
    name: ClassVar[str] = "eap"

    def _estimate_counted(self, data: CountedResponses) -> AbilityEstimate:
        check_prior(self.prior_mean, self.prior_sd)
        points = self.grid.points
        terms = _grid_terms(data.bank, points)
        log_prior = normal_log_prior(points, self.prior_mean, self.prior_sd) + self.grid.log_weights
        theta = np.empty(data.n_examinees)
        variance = np.empty(data.n_examinees)
        # One product gives Σw, Σw·q and Σw·q² for every examinee.
        powers = np.vstack([np.ones_like(points), points, points**2])

        def posterior_moments(rows: slice) -> None:
            log_post = _log_likelihood_columns(data.rows(rows), terms, log_prior)
            log_post -= log_post.max(axis=0)
            total, first, second = sliced_product(powers, np.exp(log_post, out=log_post))
            theta[rows] = first / total
            variance[rows] = second / total - theta[rows] ** 2

        for_each_row_block(posterior_moments, data.n_examinees, GRID_BLOCK)
        # Rounding can leave a tiny negative variance when the posterior sits on one grid point.
        return AbilityEstimate(theta=theta, se=np.sqrt(np.maximum(variance, 0.0)))


@dataclass(frozen=True)
class MAPEstimator(AbilityEstimator):
    """Maximum a posteriori θ with a N(μ, σ²) prior, restricted to ``theta_bounds``.

    Parameters
    ----------
    prior_mean, prior_sd : float, default 0.0 and 1.0
        μ and σ of the prior.
    theta_bounds : (float, float), default THETA_BOUNDS (−6, 6)
        θ is searched in this interval.
    max_iter : int, default 50
        Newton iterations at most.
    tol : float, default 1e-8
        Convergence when a step moves θ by less than ``tol``.

    Notes
    -----
    SE = 1/sqrt(I(θ) + 1/σ²). The search starts at the maximum of the log posterior over a
    0.1-spaced grid of the bounds (rather than at the EAP) because that point also brackets the
    mode, so the safeguarded Newton iteration finds the highest mode even when a 3PL posterior
    has more than one. An examinee with no counted item gets μ (clipped to the bounds) and SE σ.
    """

    prior_mean: float = 0.0
    prior_sd: float = 1.0
    theta_bounds: tuple[float, float] = THETA_BOUNDS
    max_iter: int = 50
    tol: float = 1e-8
    name: ClassVar[str] = "map"

    def _estimate_counted(self, data: CountedResponses) -> AbilityEstimate:
        check_prior(self.prior_mean, self.prior_sd)
        bounds = check_theta_bounds(self.theta_bounds)
        theta = _mode(data, bounds, self.prior_mean, self.prior_sd, self.max_iter, self.tol)
        se = 1.0 / np.sqrt(_information_at(data, theta) + prior_precision(self.prior_sd))
        return AbilityEstimate(theta=theta, se=se)


@dataclass(frozen=True)
class MLEstimator(AbilityEstimator):
    """Bounded maximum-likelihood θ.

    It has no prior: ``prior_sd`` is None, which tells ``person_fit.lz_star`` to use the ML
    correction (``prior_mean`` is 0.0 and unused).

    Parameters
    ----------
    theta_bounds : (float, float), default THETA_BOUNDS (−6, 6)
        The likelihood is maximised over this closed interval.
    max_iter : int, default 100
        Newton iterations at most.
    tol : float, default 1e-8
        Convergence when a step moves θ by less than ``tol``.

    Notes
    -----
    SE = 1/sqrt(I(θ)) (inf where I(θ) = 0). No finite ML exists for an all-correct or all-wrong
    pattern (the likelihood is monotone), so those get the upper or lower bound. Examinees with
    no counted item have no likelihood at all: their θ is NaN and SE inf. The search starts from
    the best point of a 0.1-spaced grid over the bounds, which brackets the global maximum, then
    runs a safeguarded Newton iteration.
    """

    theta_bounds: tuple[float, float] = THETA_BOUNDS
    max_iter: int = 100
    tol: float = 1e-8
    name: ClassVar[str] = "ml"
    # Fixed per instance, not constructor arguments: fields without init, repr or compare, so
    # the constructor, repr, equality and hash are those of the three parameters above.
    prior_mean: float = dataclasses.field(default=0.0, init=False, repr=False, compare=False)
    prior_sd: float | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    def _estimate_counted(self, data: CountedResponses) -> AbilityEstimate:
        bounds = check_theta_bounds(self.theta_bounds)
        theta = _mode(data, bounds, 0.0, None, self.max_iter, self.tol)
        theta[data.counted.sum(axis=1) == 0] = np.nan
        info = np.zeros_like(theta)
        has_theta = np.isfinite(theta)
        info[has_theta] = _information_at(data.rows(has_theta), theta[has_theta])
        with np.errstate(divide="ignore"):
            se = 1.0 / np.sqrt(info)
        return AbilityEstimate(theta=theta, se=se)


ESTIMATOR_METHODS: tuple[str, ...] = (EAPEstimator.name, MAPEstimator.name, MLEstimator.name)
"""The names ``make_estimator`` accepts."""


def make_estimator(
    method: str,
    n_quadrature: int = INEP_GRID.n_quadrature,
    theta_range: tuple[float, float] = INEP_GRID.theta_range,
) -> AbilityEstimator:
    """An estimator by name, with a N(0, 1) prior where one applies.

    Parameters
    ----------
    method : {"eap", "map", "ml"}
        Case-insensitive.
    n_quadrature : int, default 40
        Equally spaced EAP grid points; ignored by "map" and "ml".
    theta_range : (float, float), default (−4, 4)
        The θ interval of the analysis, as mirt's ``theta_lim``: the quadrature range for "eap"
        and the search bounds for "map" and "ml". The defaults are INEP's grid (``INEP_GRID``).

    Returns
    -------
    AbilityEstimator
        An EAPEstimator, MAPEstimator or MLEstimator.

    Raises
    ------
    ValueError
        If ``method`` is not one of ``ESTIMATOR_METHODS``.
    """
    key = method.lower() if isinstance(method, str) else method
    # tuple() turns a list (as settings read back from JSON hold) into the pair the signature
    # promises; the estimators check its values.
    theta_pair = cast("tuple[float, float]", tuple(theta_range))
    if key == EAPEstimator.name:
        return EAPEstimator(grid=QuadratureGrid(n_quadrature, theta_pair))
    if key == MAPEstimator.name:
        return MAPEstimator(theta_bounds=theta_pair)
    if key == MLEstimator.name:
        return MLEstimator(theta_bounds=theta_pair)
    raise ValueError(
        f"unknown estimation method {method!r}; choose one of {', '.join(ESTIMATOR_METHODS)}"
    )
