"""Group means of θ with intervals that include measurement error, for millions of candidates
in many groups at once, from each candidate's stored estimate and SE.

``analytics.plausible_values`` draws plausible values from each candidate's exact posterior on a
θ grid; that needs the whole response pattern. A store of a full ENEM year keeps, per candidate,
the EAP θ̂ and its posterior SD s under the N(0, τ₀²) prior it was scored with (τ₀ = 1), so here
each candidate's *likelihood* is taken as the normal that reproduces that posterior:

    precision λ = 1/s² − 1/τ₀²  (≥ 0; 0 = no information),   λ·m = θ̂/s²

(ML estimates: λ = 1/s², m = θ̂). Within a group the abilities are N(μ, σ²), fitted by EM in
closed form — E-step: each candidate's posterior under the group's model is normal with
variance bᵢ = 1/(λᵢ + 1/σ²) and mean aᵢ = bᵢ·(λᵢmᵢ + μ/σ²); M-step: μ = mean a, σ² = mean
(b + (a − μ)²) — so μ̂ is the marginal maximum-likelihood mean, not the mean of EAPs (which the
N(0, 1) prior pulls toward 0 for every group).

Plausible values are draws θᵢ ~ N(aᵢ, bᵢ) after a draw of the model from its sampling
distribution (proper imputation). Their mean's interval by Rubin's rules, in expectation over
infinitely many sets (no Monte Carlo noise in a stored number):

    Ū = (Σ(aᵢ − ā)²/(n − 1) + mean b)/n        the within-set variance of a mean of PVs
    B = mean b / n + (mean w)²·Var(μ̂)           between sets: the draws, and the model's own
                                               uncertainty, wᵢ = bᵢ/σ² = ∂aᵢ/∂μ,
                                               Var(μ̂) = 1/Σ λᵢ/(1 + λᵢσ²)
    SE = √(Ū + B)

With equal precisions this is exactly Var(μ̂) = (σ² + 1/λ)/n, the sampling variance of the
group's ML mean; with no measurement error (λ → ∞) it is σ²/n, the usual SD/√n.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from analytics.irt import FloatArray

#: The SD of the prior the stored EAP/MAP estimates were computed under (INEP's N(0, 1)).
SCORING_PRIOR_SD = 1.0
#: EM stops when no group's μ or σ moves more than this (logits), or after this many steps.
EM_TOLERANCE = 1e-6
EM_MAX_ITERATIONS = 500
#: The smallest latent SD a group is given (a group of identical estimates has none).
MIN_LATENT_SD = 1e-3


@dataclass(frozen=True, eq=False)
class GroupMeans:
    """Per group (shape (n_groups,) each): candidates, the latent mean μ̂ and SD σ̂ (logits),
    and the SE of the mean by Rubin's rules over plausible values (NaN for fewer than two
    candidates)."""

    n: np.ndarray
    mean: FloatArray
    sd: FloatArray
    se: FloatArray


def likelihood_precision(theta: ArrayLike, se: ArrayLike,
                         prior_sd: float | None = SCORING_PRIOR_SD) -> tuple[FloatArray,
                                                                             FloatArray]:
    """(λ, λ·m): the precision and precision-weighted centre of the normal likelihood that,
    times the N(0, prior_sd²) prior, gives the posterior N(θ̂, SE²) (``prior_sd`` None: ML
    estimates, λ = 1/SE²). Shapes as ``theta``; λ is clipped at 0 (an SE at or above the
    prior's SD says the responses told nothing)."""
    theta = np.asarray(theta, dtype=np.float64)
    posterior_precision = 1.0 / np.asarray(se, dtype=np.float64) ** 2
    prior_precision = 0.0 if prior_sd is None else 1.0 / prior_sd ** 2
    precision = np.maximum(posterior_precision - prior_precision, 0.0)
    return precision, theta * posterior_precision


def group_means(theta: ArrayLike, se: ArrayLike, codes: ArrayLike, n_groups: int,
                prior_sd: float | None = SCORING_PRIOR_SD) -> GroupMeans:
    """Each group's latent mean and its plausible-value SE (module docstring).

    ``theta``, ``se``: each candidate's estimate and SE (shape (n,), logits; non-finite entries
    are left out); ``codes``: each candidate's group, 0 … ``n_groups`` − 1 (shape (n,));
    ``prior_sd``: the SD of the N(0, ·) prior of the estimates (None for ML). One entry per
    candidate: the reference :func:`table_group_means` is checked against."""
    theta = np.asarray(theta, dtype=np.float64).ravel()
    se = np.asarray(se, dtype=np.float64).ravel()
    codes = np.asarray(codes).ravel().astype(np.intp)
    keep = np.isfinite(theta) & np.isfinite(se) & (se > 0)
    theta, se, codes = theta[keep], se[keep], codes[keep]
    precision, weighted = likelihood_precision(theta, se, prior_sd)

    def total(values: FloatArray) -> FloatArray:
        return np.asarray(np.bincount(codes, values, n_groups), dtype=np.float64)

    n = np.bincount(codes, minlength=n_groups)
    counted = np.maximum(n, 1)
    # Start from the groups' EAP means and an SD that adds the mean posterior variance back.
    mu = total(theta) / counted
    variance = np.maximum(total((theta - mu[codes]) ** 2 + se ** 2) / counted,
                          MIN_LATENT_SD ** 2)
    for _ in range(EM_MAX_ITERATIONS):
        b = 1.0 / (precision + 1.0 / variance[codes])
        a = b * (weighted + mu[codes] / variance[codes])
        new_mu = total(a) / counted
        new_variance = np.maximum(total(b + (a - new_mu[codes]) ** 2) / counted,
                                  MIN_LATENT_SD ** 2)
        moved = max(np.max(np.abs(new_mu - mu), initial=0.0),
                    np.max(np.abs(np.sqrt(new_variance) - np.sqrt(variance)), initial=0.0))
        mu, variance = new_mu, new_variance
        if moved < EM_TOLERANCE:
            break
    b = 1.0 / (precision + 1.0 / variance[codes])
    a = b * (weighted + mu[codes] / variance[codes])
    mean_b = total(b) / counted
    within = (total((a - mu[codes]) ** 2) / np.maximum(n - 1, 1) + mean_b) / counted
    mean_w = total(b / variance[codes]) / counted
    information = total(precision / (1.0 + precision * variance[codes]))
    between = mean_b / counted + _model_term(mean_w, information)
    se_mean = np.where(n >= 2, np.sqrt(within + between), np.nan)
    return GroupMeans(n, np.where(n > 0, mu, np.nan), np.where(n > 0, np.sqrt(variance), np.nan),
                      se_mean)


def _model_term(mean_weight: np.ndarray, information: np.ndarray) -> np.ndarray:
    """The latent mean's share of a group mean's variance, w̄² / I per group (shapes
    (n_groups,)); infinite for a group without information (an empty one). Dividing, rather
    than multiplying by an infinite 1/I, keeps 0 × inf (a NaN and its warning) out."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(information > 0, mean_weight ** 2 / information, np.inf)


#: Bins of the likelihood precision λ for :func:`precision_table` (on log(1 + λ)).
PRECISION_BINS = 512


def precision_bins(precision: ArrayLike, n_bins: int = PRECISION_BINS) -> np.ndarray:
    """Each candidate's bin of λ (shape (n,), 0 … ``n_bins`` − 1): equal widths of
    log(1 + λ) between the smallest and largest λ."""
    scaled = np.log1p(np.asarray(precision, dtype=np.float64))
    low, high = float(scaled.min(initial=0.0)), float(scaled.max(initial=0.0))
    if high <= low:
        return np.zeros(scaled.shape, dtype=np.intp)
    return np.minimum(((scaled - low) / (high - low) * n_bins).astype(np.intp), n_bins - 1)


@dataclass(frozen=True, eq=False)
class PrecisionTable:
    """Per group and λ bin (shape (n_groups, n_bins) each): candidates, and the sums of λ, of
    λ·m and of (λ·m)². Additive: the table of a union of candidates is the sum of theirs."""

    n: FloatArray
    precision: FloatArray
    weighted: FloatArray
    weighted_squares: FloatArray


def precision_table(precision: ArrayLike, weighted: ArrayLike, codes: ArrayLike,
                    bins: ArrayLike, n_groups: int, n_bins: int = PRECISION_BINS
                    ) -> PrecisionTable:
    """The :class:`PrecisionTable` of candidates with likelihood precision ``precision`` and
    ``weighted`` = λ·m (:func:`likelihood_precision`), groups ``codes`` and λ bins ``bins``
    (all shape (n,))."""
    cells = np.asarray(codes, dtype=np.intp) * n_bins + np.asarray(bins, dtype=np.intp)
    size, shape = n_groups * n_bins, (n_groups, n_bins)
    weighted = np.asarray(weighted, dtype=np.float64)

    def total(values: ArrayLike | None) -> FloatArray:
        return np.bincount(cells, values, size).astype(np.float64).reshape(shape)

    return PrecisionTable(total(None), total(precision), total(weighted),
                          total(weighted * weighted))


def table_group_means(table: PrecisionTable) -> GroupMeans:
    """:func:`group_means` from a :class:`PrecisionTable`: every candidate of a cell is given
    the cell's mean λ (the λ·m sums are exact), so the EM and Rubin's rules run on
    n_groups × n_bins numbers instead of one per candidate. With :data:`PRECISION_BINS` bins
    the group means agree with :func:`group_means` to about 1e-4 logits."""
    n_cell = table.n
    lam = np.divide(table.precision, n_cell, out=np.zeros_like(n_cell), where=n_cell > 0)
    h, hh = table.weighted, table.weighted_squares
    n = np.rint(n_cell.sum(axis=1)).astype(np.int64)
    counted = np.maximum(n, 1).astype(np.float64)

    def moments(mu: FloatArray, variance: FloatArray) -> tuple[FloatArray, FloatArray,
                                                                FloatArray, FloatArray]:
        """Σb, Σa, Σa² and Σ b/σ² per group under the group model N(μ, σ²)."""
        k = (mu / variance)[:, None]
        d = lam + 1.0 / variance[:, None]
        sum_b = (n_cell / d).sum(axis=1)
        sum_a = ((h + n_cell * k) / d).sum(axis=1)
        sum_aa = ((hh + 2 * k * h + n_cell * k * k) / (d * d)).sum(axis=1)
        return sum_b, sum_a, sum_aa, sum_b / variance

    # Start at each group's precision-weighted centre Σλm/Σλ with a unit SD.
    mu = np.divide(h.sum(axis=1), np.maximum(table.precision.sum(axis=1), 1e-12))
    variance = np.ones_like(mu)
    for _ in range(EM_MAX_ITERATIONS):
        sum_b, sum_a, sum_aa, _ = moments(mu, variance)
        new_mu = sum_a / counted
        spread = sum_aa - 2 * new_mu * sum_a + n * new_mu ** 2
        new_variance = np.maximum((sum_b + spread) / counted, MIN_LATENT_SD ** 2)
        moved = max(np.max(np.abs(new_mu - mu), initial=0.0),
                    np.max(np.abs(np.sqrt(new_variance) - np.sqrt(variance)), initial=0.0))
        mu, variance = new_mu, new_variance
        if moved < EM_TOLERANCE:
            break
    sum_b, sum_a, sum_aa, sum_w = moments(mu, variance)
    spread = sum_aa - 2 * mu * sum_a + n * mu ** 2
    within = (spread / np.maximum(n - 1, 1) + sum_b / counted) / counted
    information = (n_cell * lam / (1.0 + lam * variance[:, None])).sum(axis=1)
    between = sum_b / counted / counted + _model_term(sum_w / counted, information)
    return GroupMeans(n, np.where(n > 0, mu, np.nan), np.where(n > 0, np.sqrt(variance), np.nan),
                      np.where(n >= 2, np.sqrt(within + between), np.nan))
