"""Test characteristic curve and IRT reliability of a dichotomous 3PL test.

Test characteristic curve (TCC)
    T(θ) = Σ_i P_i(θ), the expected number correct at θ (Lord, 1980), over the items with
    parameters; T(θ)/n is the expected proportion correct, the CTT score's true-score curve.

Marginal reliability (Green, Bock, Humphreys, Linn & Reckase, 1984; Thissen, 2000)
    ρ = σ²_θ / (σ²_θ + E[SE²(θ)]),  SE²(θ) = 1/I(θ) with I the test information,

    the expectation taken over θ ~ N(μ, σ²) restricted to ``theta_range`` (renormalised), by
    Gauss–Legendre quadrature over that range. 1/I(θ) is the asymptotic error variance of the
    ML estimate, so ρ is the reliability of ML scores only approximately (for long tests),
    and it is not the reliability of EAP scores (their error is shrunk toward the prior mean);
    for those use :func:`empirical_reliability` on the EAPs and posterior SDs.

    The range matters for 3PL items: with c > 0 the information vanishes like e^{2Da(θ − b)} as
    θ → −∞, so 1/I(θ)·φ(θ) can stay large out to several SDs below the mean and E[1/I] grows
    with the lower limit. The default range [−6, 6] is the project's θ interval
    (``ability.THETA_BOUNDS``, the bounds of its ML estimates, whose error cannot exceed the
    interval anyway). Gauss–Legendre nodes are used rather than the uniform grid because that
    integrand need not vanish at the ends of the range.

Empirical reliability (as mirt's ``empirical_rxx``)
    ρ̂ = var(θ̂) / (var(θ̂) + mean(SE²)) over a sample of EAP estimates θ̂ and their posterior
    SDs, with optional frequency weights (aggregated counts) and the sample variance (divisor
    Σw − 1).

References
----------
Lord, F. M. (1980). Applications of item response theory to practical testing problems.
    Erlbaum.
Green, B. F., Bock, R. D., Humphreys, L. G., Linn, R. L., & Reckase, M. D. (1984). Technical
    guidelines for assessing computerized adaptive tests. Journal of Educational Measurement,
    21(4), 347–360.
Thissen, D. (2000). Reliability and measurement precision. In H. Wainer (Ed.), Computerized
    adaptive testing: a primer (2nd ed., pp. 159–183). Erlbaum.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from analytics.ability import THETA_BOUNDS, QuadratureGrid
from analytics.irt import FloatArray, ItemBank, probability, test_information
from analytics.mode_search import check_prior, normal_log_prior

#: Gauss–Legendre nodes for the marginal reliability integral over ``theta_range``.
RELIABILITY_N_QUADRATURE = 121


def test_characteristic_curve(
    theta: ArrayLike, bank: ItemBank, proportion: bool = False
) -> FloatArray:
    """Expected number correct at each θ (the TCC).

    Parameters
    ----------
    theta : array-like of shape (n_theta,) or scalar
        Abilities on the bank's θ scale.
    bank : ItemBank
        Items without parameters are left out.
    proportion : bool, default False
        Divide by the number of items with parameters: the expected proportion correct
        (0 … 1) instead of the expected number correct (0 … n_items).

    Returns
    -------
    ndarray of shape (n_theta,)
        Σ_i P_i(θ) (or its mean over items); NaN for a bank without usable items and
        ``proportion=True``.
    """
    usable = bank.usable
    expected = probability(theta, bank)[:, usable].sum(axis=1)
    if proportion:
        n_usable = int(usable.sum())
        return expected / n_usable if n_usable else np.full(expected.shape, np.nan)
    return expected


# The name starts with "test_": keep pytest from collecting it when a test module imports it
# (as irt does for test_information).
test_characteristic_curve.__dict__["__test__"] = False


def marginal_reliability(
    bank: ItemBank,
    n_quadrature: int = RELIABILITY_N_QUADRATURE,
    theta_range: tuple[float, float] = THETA_BOUNDS,
    prior_mean: float = 0.0,
    prior_sd: float = 1.0,
) -> float:
    """Marginal reliability σ²/(σ² + E[1/I(θ)]) over θ ~ N(μ, σ²) restricted to a range.

    Parameters
    ----------
    bank : ItemBank
    n_quadrature : int, default 121
        Gauss–Legendre nodes over ``theta_range``.
    theta_range : (float, float), default (−6, 6)
        The θ interval the expectation is taken over (the normal is renormalised to it).
    prior_mean, prior_sd : float, default 0.0 and 1.0
        μ and σ of the latent distribution, on the bank's θ scale; σ² is the true-score
        variance in the numerator.

    Returns
    -------
    float
        ρ in [0, 1]; 0.0 when the information is 0 somewhere on the range (infinite error
        variance there).

    Notes
    -----
    Approximate for ML scores (1/I is their asymptotic error variance) and not the reliability
    of EAP scores; see the module docstring, also for why the range matters with 3PL items.
    """
    check_prior(prior_mean, prior_sd)
    grid = QuadratureGrid(n_quadrature, theta_range, rule="gauss-legendre")
    points = grid.points
    log_weight = normal_log_prior(points, prior_mean, prior_sd) + grid.log_weights
    weight = np.exp(log_weight - log_weight.max())
    weight /= weight.sum()
    information = test_information(points, bank)
    if np.any(information <= 0):
        return 0.0
    error_variance = float(weight @ (1.0 / information))
    true_variance = float(prior_sd) ** 2
    return true_variance / (true_variance + error_variance)


def empirical_reliability(
    eap: ArrayLike, se: ArrayLike, weights: ArrayLike | None = None
) -> float:
    """Empirical reliability var(θ̂)/(var(θ̂) + mean(SE²)) of a sample of EAP scores.

    Parameters
    ----------
    eap : array of shape (n_examinees,)
        EAP estimates θ̂.
    se : array of shape (n_examinees,)
        Their posterior SDs.
    weights : array of shape (n_examinees,), optional
        Frequency weights (how many examinees share each row, as in aggregated tables); the
        result equals that of the expanded sample with each row repeated ``weights`` times.

    Returns
    -------
    float
        The variance is the sample variance Σw(θ̂ − m)²/(Σw − 1) (as R's ``var`` in mirt's
        ``empirical_rxx``); mean(SE²) = Σw·SE²/Σw.

    Raises
    ------
    ValueError
        If the shapes differ, a value is not finite, a weight is negative, or the total weight
        is not above 1.
    """
    theta_hat = np.asarray(eap, dtype=np.float64)
    error = np.asarray(se, dtype=np.float64)
    if theta_hat.ndim != 1 or theta_hat.shape != error.shape:
        raise ValueError("eap and se must both have shape (n_examinees,)")
    weight = (np.ones_like(theta_hat) if weights is None
              else np.asarray(weights, dtype=np.float64))
    if weight.shape != theta_hat.shape:
        raise ValueError("weights must have shape (n_examinees,)")
    if not (np.all(np.isfinite(theta_hat)) and np.all(np.isfinite(error))
            and np.all(np.isfinite(weight))):
        raise ValueError("eap, se and weights must be finite")
    if np.any(weight < 0):
        raise ValueError("weights must be non-negative")
    total = float(weight.sum())
    if total <= 1.0:
        raise ValueError("the total weight must exceed 1 for a sample variance")
    mean = float(weight @ theta_hat) / total
    variance = float(weight @ (theta_hat - mean) ** 2) / (total - 1.0)
    error_variance = float(weight @ error**2) / total
    return variance / (variance + error_variance)
