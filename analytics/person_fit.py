"""Person-fit statistics for dichotomous 3PL items: l_z and Snijders' corrected l_z*.

Responses are (n_examinees, n_items) floats, 1.0 / 0.0 / NaN; an entry counts when the response is
finite and the item has parameters. Each examinee's probabilities are evaluated at their own θ, so
the work is one exp and two logs per (examinee, item) entry, never a loop over examinees.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from analytics.irt import (
    CountedResponses,
    FloatArray,
    ItemBank,
    counted_responses,
    for_each_row_block,
    logits,
    response_probabilities,
)


class _FitSums(NamedTuple):
    """Per-examinee sums over counted entries, each of shape (n_examinees,)."""

    excess: FloatArray  # W = Σ (u − P) w = l0 − E
    variance: FloatArray  # V = Σ P Q w²
    slope_log_odds: FloatArray  # Σ P' w
    slope_ratio: FloatArray  # Σ P' r


def _row_dot(left: FloatArray, right: FloatArray) -> FloatArray:
    """Σ_j left[i, j]·right[i, j] for each row; one fused pass, unlike (left*right).sum(1)."""
    return np.einsum("ij,ij->i", left, right)


def _fit_sums(data: CountedResponses, theta: FloatArray, with_star: bool) -> _FitSums:
    bank = data.bank
    probs = response_probabilities(logits(theta, bank), bank.c)
    log_odds = np.log(probs.p / probs.q)
    # Masking Q and u − P with the counted entries masks every sum that uses them.
    if data.all_counted:
        q, residual = probs.q, data.correct - probs.p
    else:
        q, residual = probs.q * data.counted, data.correct - probs.p * data.counted
    excess = _row_dot(residual, log_odds)
    variance = _row_dot(probs.p * q * log_odds, log_odds)
    if not with_star:
        unused = np.full_like(excess, np.nan)
        return _FitSums(excess, variance, unused, unused)
    # P' = D·a·s·Q and r = P'/(PQ) = D·a·s/P, so P'·w and P'·r need no new transcendental.
    slope = bank.scaling * bank.a
    s_q = probs.s * q
    # einsum rather than BLAS for these matrix-vector products: see irt.sliced_product.
    slope_log_odds = np.einsum("ij,j->i", s_q * log_odds, slope)
    slope_ratio = np.einsum("ij,j->i", s_q * probs.s_over_p, slope**2)
    return _FitSums(excess, variance, slope_log_odds, slope_ratio)


def _as_theta(theta: ArrayLike) -> FloatArray:
    return np.atleast_1d(np.asarray(theta, dtype=np.float64))


def _standardise(numerator: FloatArray, variance: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(variance > 0.0, numerator / np.sqrt(variance), np.nan)


def lz(responses: ArrayLike, theta: ArrayLike, bank: ItemBank) -> FloatArray:
    """Standardised log-likelihood person-fit statistic l_z (Drasgow, Levine & Williams 1985).

    With P_i = P_i(θ), Q_i = 1 − P_i and sums over each examinee's counted entries:

        l0 = Σ [u log P + (1 − u) log Q],   E = Σ [P log P + Q log Q],
        V = Σ P Q (log(P/Q))²,              l_z = (l0 − E) / sqrt(V)

    (computed as l0 − E = Σ (u − P) log(P/Q), the same quantity with fewer passes).

    Parameters
    ----------
    responses : array of shape (n_examinees, n_items)
        1.0 / 0.0 / NaN.
    theta : array of shape (n_examinees,)
        The θ at which each examinee's probabilities are evaluated (EAP in the paper).
    bank : ItemBank

    Returns
    -------
    ndarray of shape (n_examinees,)
        l_z; ≈ N(0, 1) for well-fitting examinees, negative for unlikely patterns. NaN where
        V = 0 (no counted item) or θ is NaN.
    """
    data = counted_responses(responses, bank)
    return lz_and_lz_star(data, _as_theta(theta), with_star=False)[0]


def lz_star(
    responses: ArrayLike,
    theta: ArrayLike,
    bank: ItemBank,
    prior_mean: float = 0.0,
    prior_sd: float | None = None,
) -> FloatArray:
    """Snijders' (2001) l_z*, l_z corrected for θ being estimated from the same responses.

    Following Magis, Raîche & Béland (2012), with w_i = log(P_i/Q_i), P_i' = dP_i/dθ,
    r_i = P_i' / (P_i Q_i) and sums over counted entries, all at the supplied θ̂:

        W   = Σ (u_i − P_i) w_i                          (= l0 − E of l_z)
        c_n = Σ P_i' w_i / Σ P_i' r_i
        w̃_i = w_i − c_n r_i
        l_z* = (W + c_n r_0(θ̂)) / sqrt(Σ w̃_i² P_i Q_i)

    Since r_i P_i Q_i = P_i', the denominator is computed as Σ w_i² P_i Q_i − c_n Σ P_i' w_i
    (algebraically identical, and it needs no second pass over the items).

    r_0 is the prior's term in the estimating equation Σ (u_i − P_i) r_i + r_0(θ) = 0 that θ̂
    solves: r_0 = 0 for ML (``prior_sd=None``) and r_0(θ) = (μ − θ)/σ² for MAP with a N(μ, σ²)
    prior (Magis et al.'s Bayes-modal case, here with general μ, σ). For EAP θ, passing the prior
    uses the MAP correction as an approximation: EAP solves no such equation exactly.

    Parameters
    ----------
    responses : array of shape (n_examinees, n_items)
        1.0 / 0.0 / NaN.
    theta : array of shape (n_examinees,)
        The estimated θ of each examinee.
    bank : ItemBank
    prior_mean : float
        μ of the normal prior (ignored when ``prior_sd`` is None).
    prior_sd : float or None
        σ of the normal prior; None means θ is an ML estimate.

    Returns
    -------
    ndarray of shape (n_examinees,)
        l_z*; asymptotically N(0, 1) for well-fitting examinees. NaN where no item counts or
        where Σ w̃_i² P_i Q_i vanishes (a single counted item).
    """
    if prior_sd is not None and not (np.isfinite(prior_sd) and prior_sd > 0):
        raise ValueError(f"prior_sd must be None or finite and positive; got {prior_sd!r}")
    data = counted_responses(responses, bank)
    return lz_and_lz_star(data, _as_theta(theta), prior_mean, prior_sd)[1]


def _lz_star_from_sums(
    sums: _FitSums, theta: FloatArray, prior_mean: float, prior_sd: float | None
) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        c_n = sums.slope_log_odds / sums.slope_ratio
        variance = sums.variance - c_n * sums.slope_log_odds
    # Σ w̃²PQ is a difference; a value at rounding level means w̃ ≡ 0 (e.g. a single item).
    variance = np.where(variance > 1e-12 * sums.variance, variance, 0.0)
    r0 = 0.0 if prior_sd is None else (prior_mean - theta) / prior_sd**2
    return _standardise(sums.excess + c_n * r0, variance)


def lz_and_lz_star(
    data: CountedResponses,
    theta: FloatArray,
    prior_mean: float = 0.0,
    prior_sd: float | None = None,
    with_star: bool = True,
) -> tuple[FloatArray, FloatArray]:
    """l_z and l_z* of shape (n_examinees,) from already counted responses, sharing one pass of
    probabilities per block of rows; see :func:`lz` and :func:`lz_star`. With
    ``with_star=False`` the second array is left NaN."""
    if theta.shape != (data.n_examinees,):
        raise ValueError(
            f"theta must have shape ({data.n_examinees},), one per examinee; got {theta.shape}"
        )
    plain = np.full(data.n_examinees, np.nan)
    star = np.full(data.n_examinees, np.nan)

    def person_fit(rows: slice) -> None:
        sums = _fit_sums(data.rows(rows), theta[rows], with_star)
        plain[rows] = _standardise(sums.excess, sums.variance)
        if with_star:
            star[rows] = _lz_star_from_sums(sums, theta[rows], prior_mean, prior_sd)

    for_each_row_block(person_fit, data.n_examinees)
    return plain, star
