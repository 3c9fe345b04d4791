"""Plausible values: a population's mean and SD with intervals that include measurement error,
as large-scale assessments (PISA, NAEP, SAEB) report them, on plain numpy arrays.

The spread of EAP estimates is narrower than the spread of true abilities (each estimate is
pulled toward the prior's mean by its measurement error), so the SD of EAP θ understates the
population's SD, and an interval built from EAP θ alone is centred too low and too narrow.
Plausible values are draws from each candidate's posterior under a population model fitted to
the group itself, repeated M times with the model's own uncertainty (proper imputation):

1. the latent distribution N(μ, σ²) is fitted by marginal maximum likelihood, EM on a θ grid
   (:func:`fit_latent_normal`);
2. for set m, (μ_m, σ_m) is refitted on a bootstrap resample of the candidates (the model's
   uncertainty), and every candidate's θ is drawn from their posterior on the grid under
   N(μ_m, σ_m²), spread uniformly within the grid step (:func:`draw_plausible_values`);
3. a statistic is computed on each set and the M results combined by Rubin's rules
   (:func:`combine_rubin`):

       Q̄ = mean Q_m,  T = Ū + (1 + 1/M)·B  (Ū: mean sampling variance, B: variance of the Q_m),
       interval Q̄ ± t·√T on ν = (M − 1)(1 + Ū / ((1 + 1/M)B))² degrees of freedom.

The sampling variance of a mean is s²/n, of an SD s²/(2(n − 1)) (normal theory).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from scipy.special import logsumexp

from analytics.irt import FloatArray, ItemBank, as_response_matrix
from analytics.mode_search import grid_log_probabilities

#: Sets of plausible values drawn per candidate (PISA and NAEP draw 5 to 10).
N_PLAUSIBLE = 10
#: The θ grid of the population model: 121 points on [−6, 6] (the paper's mirt grid).
PV_GRID: FloatArray = np.linspace(-6.0, 6.0, 121)
#: The most EM iterations of the fit and of each bootstrap refit (started from the fit), and
#: the change in μ and σ below which they stop.
FIT_ITERATIONS, REFIT_ITERATIONS = 500, 50
EM_TOLERANCE = 1e-5


def grid_log_likelihoods(responses: ArrayLike, bank: ItemBank,
                         points: FloatArray = PV_GRID) -> FloatArray:
    """log P(pattern | θ) of every response pattern (rows of ``responses``, 1/0/NaN, shape
    (n, n_items)) at every grid point: shape (n, k). NaN items are left out."""
    values, counted = as_response_matrix(responses, bank.n_items)
    log_p, log_q = grid_log_probabilities(bank, np.asarray(points, dtype=np.float64))
    right = np.where(counted, values, 0.0)
    wrong = np.where(counted, 1.0 - values, 0.0)
    return right @ log_p.T + wrong @ log_q.T


def _posterior(log_lik: FloatArray, points: FloatArray, mean: float, sd: float) -> FloatArray:
    log_prior = -0.5 * ((points - mean) / sd) ** 2
    joint = log_lik + log_prior
    return np.exp(joint - logsumexp(joint, axis=1, keepdims=True))


def _em(log_lik: FloatArray, points: FloatArray, mean: float, sd: float,
        iterations: int) -> tuple[float, float]:
    """At most ``iterations`` EM steps from (mean, sd); stops once neither moves by
    :data:`EM_TOLERANCE`."""
    for _ in range(iterations):
        weights = _posterior(log_lik, points, mean, sd)
        new_mean = float((weights @ points).mean())
        new_sd = float(np.sqrt(max((weights @ (points - new_mean) ** 2).mean(), 1e-12)))
        moved = max(abs(new_mean - mean), abs(new_sd - sd))
        mean, sd = new_mean, new_sd
        if moved < EM_TOLERANCE:
            break
    return mean, sd


def fit_latent_normal(log_lik: FloatArray, points: FloatArray = PV_GRID,
                      iterations: int = FIT_ITERATIONS) -> tuple[float, float]:
    """(μ, σ) of the normal latent distribution that maximises the marginal likelihood of the
    patterns whose grid log-likelihoods are ``log_lik`` (n, k), by EM from N(0, 1)."""
    return _em(np.asarray(log_lik), np.asarray(points, dtype=np.float64), 0.0, 1.0, iterations)


def draw_plausible_values(log_lik: FloatArray, rng: np.random.Generator,
                          n_sets: int = N_PLAUSIBLE, points: FloatArray = PV_GRID) -> FloatArray:
    """``n_sets`` plausible values per candidate: shape (n_sets, n), θ's unit (module
    docstring, steps 1 and 2). ``log_lik``: :func:`grid_log_likelihoods` (n, k)."""
    log_lik = np.asarray(log_lik, dtype=np.float64)
    points = np.asarray(points, dtype=np.float64)
    n = log_lik.shape[0]
    mean, sd = fit_latent_normal(log_lik, points)
    step = float(points[1] - points[0])
    draws = np.empty((int(n_sets), n))
    for m in range(int(n_sets)):
        resample = log_lik[rng.integers(0, n, n)]
        mean_m, sd_m = _em(resample, points, mean, sd, REFIT_ITERATIONS)
        cumulative = np.cumsum(_posterior(log_lik, points, mean_m, sd_m), axis=1)
        picked = (cumulative < rng.random((n, 1)) * cumulative[:, -1:]).sum(axis=1)
        picked = np.minimum(picked, points.size - 1)
        draws[m] = points[picked] + step * (rng.random(n) - 0.5)
    return draws


@dataclass(frozen=True)
class CombinedEstimate:
    """Rubin's combination of M estimates: the estimate, its total SE, the 95% interval and
    the degrees of freedom of its t quantile."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    df: float


def combine_rubin(estimates: ArrayLike, variances: ArrayLike,
                  confidence: float = 0.95) -> CombinedEstimate:
    """Combine M estimates (shape (M,)) with their sampling variances (shape (M,)) by Rubin's
    rules (module docstring)."""
    estimates = np.asarray(estimates, dtype=np.float64).ravel()
    variances = np.asarray(variances, dtype=np.float64).ravel()
    m = estimates.size
    if m < 2:
        raise ValueError("Rubin's rules need at least two sets of plausible values")
    within = float(variances.mean())
    between = float(estimates.var(ddof=1))
    total = within + (1 + 1 / m) * between
    df = np.inf if between == 0 else (m - 1) * (1 + within / ((1 + 1 / m) * between)) ** 2
    estimate = float(estimates.mean())
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * np.sqrt(total)
    return CombinedEstimate(estimate, float(np.sqrt(total)), estimate - half, estimate + half,
                            float(df))


def population_mean(draws: ArrayLike) -> CombinedEstimate:
    """The population mean from plausible values ``draws`` (shape (M, n))."""
    draws = np.asarray(draws, dtype=np.float64)
    return combine_rubin(draws.mean(axis=1), draws.var(axis=1, ddof=1) / draws.shape[1])


def population_sd(draws: ArrayLike) -> CombinedEstimate:
    """The population SD from plausible values ``draws`` (shape (M, n))."""
    draws = np.asarray(draws, dtype=np.float64)
    sd = draws.std(axis=1, ddof=1)
    return combine_rubin(sd, sd ** 2 / (2 * (draws.shape[1] - 1)))
