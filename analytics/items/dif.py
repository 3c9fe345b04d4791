"""Differential item functioning (DIF) between a reference and a focal group matched on a score.

Here the reference group is the human examinees and the focal group the language models; the
matching score is usually the number correct. An item shows DIF when examinees of the two groups
with the same matching score have different chances of answering it correctly.

Mantel–Haenszel (Mantel & Haenszel 1959; Holland & Thayer 1988)
-------------------------------------------------------------------
For item i and stratum k (one value of the matching score) the 2×2 table is

    A_k = reference right   B_k = reference wrong   n_Rk = A_k + B_k
    C_k = focal right       D_k = focal wrong       n_Fk = C_k + D_k
    m_1k = A_k + C_k        m_0k = B_k + D_k        N_k = n_Rk + n_Fk

Counts may be weighted (the humans come as frequency-weighted aggregates). Then

    α_MH = Σ_k (A_k D_k / N_k) / Σ_k (B_k C_k / N_k)          common odds ratio
    MH D-DIF = Δ = −2.35 · ln α_MH                             ETS delta scale

Convention: α_MH > 1 (Δ < 0) means that at equal matching score the reference group has the
higher odds of answering right, i.e. the item favours the reference group (is harder for the
focal group); α_MH < 1 (Δ > 0) favours the focal group. ETS writes the sign of Δ: '-' favours
the reference group, '+' the focal group (plain ASCII here).

The variance of ln α_MH is the Robins–Breslow–Greenland (1986) estimator, with
P_k = (A_k + D_k)/N_k, Q_k = (B_k + C_k)/N_k, R_k = A_k D_k/N_k, S_k = B_k C_k/N_k, R = Σ R_k,
S = Σ S_k:

    Var(ln α_MH) = Σ P_k R_k / (2R²) + Σ (P_k S_k + Q_k R_k) / (2RS) + Σ Q_k S_k / (2S²)

and SE(Δ) = 2.35 · SE(ln α_MH). With one stratum it reduces to Woolf's 1/A + 1/B + 1/C + 1/D.

The MH χ² (1 df) with continuity correction tests α_MH = 1:

    E(A_k) = n_Rk m_1k / N_k,   Var(A_k) = n_Rk n_Fk m_1k m_0k / (N_k² (N_k − 1))
    χ²_MH = max(|Σ A_k − Σ E(A_k)| − ½, 0)² / Σ Var(A_k)

(the correction never pushes the statistic past zero, as Yates's does not).

ETS classes (Zwick & Ercikan 1989; Zwick 2012), checked in this order:
    A  |Δ| < 1, or χ²_MH not significant at 5% (p ≥ 0.05)            negligible
    C  |Δ| ≥ 1.5 and |Δ| significantly above 1: (|Δ| − 1)/SE(Δ) > 1.645  large
    B  otherwise                                                       moderate

Strata with N_k < 2, or with either group empty, carry no comparison and are left out of every
sum. An item without a stratum that carries information (no usable stratum, or a usable one but
everybody right or everybody wrong everywhere) gets NaN statistics and class ''. When one of the
sums R or S is zero (e.g. every focal examinee answered right), α_MH is 0 or ∞ and Δ is ±∞: the
χ² and p are still reported, the SE is NaN, and the class is A when p ≥ 0.05 and '' otherwise
(the B/C rule needs the SE).

Logistic-regression DIF (Swaminathan & Rogers 1990; Zumbo 1999; Jodoin & Gierl 2001)
-------------------------------------------------------------------------------------
Per item, with z the standardised matching score (weighted mean 0, SD 1 over the item's
respondents) and g = 1 for the focal group, three nested logistic models are fitted by maximum
(frequency-weighted) likelihood:

    M1: logit p = β0 + β1 z
    M2: logit p = β0 + β1 z + β2 g                  (β2 > 0 favours the focal group)
    M3: logit p = β0 + β1 z + β2 g + β3 z·g

and the likelihood-ratio statistics G² = 2 (ℓ_big − ℓ_small) are compared with χ²:
uniform DIF M2 vs M1 (1 df), non-uniform M3 vs M2 (1 df), total M3 vs M1 (2 df). The
statistics do not depend on standardising z (the models span the same space either way); only
the coefficients do. The effect size is Nagelkerke's ΔR² = R²_N(M3) − R²_N(M1), with
R²_CS = 1 − exp(2(ℓ_0 − ℓ)/n), R²_N = R²_CS / (1 − exp(2ℓ_0/n)), ℓ_0 the intercept-only
log-likelihood and n the total weight. Jodoin & Gierl's classes: negligible when ΔR² < 0.035 or
the 2-df test is not significant; moderate when significant and 0.035 ≤ ΔR² < 0.070; large when
significant and ΔR² ≥ 0.070.

The fits are Newton–Raphson (IRLS) with step halving on the exact, unpenalised log-likelihood.
Separation (a group, or a score range, answering all right or all wrong) has no finite MLE, but
the log-likelihood is bounded and increases monotonically towards its supremum, which Newton
approaches geometrically; the iterations stop when the predicted gain (half the Newton decrement)
falls below ``tol`` log-likelihood units, or at ``max_iter``. The LR statistics are then those
of the supremum (finite and meaningful), while the coefficients are not: such items are flagged
in ``separated`` (a fitted linear predictor beyond ±20, i.e. a probability within 2·10⁻⁹ of 0
or 1). A damping of 10⁻¹⁰ × the largest Hessian diagonal in the Newton system keeps it solvable
near separation; it changes the path, not the fixed point. Items with one group absent, a
constant response or a single score value get NaN statistics and class ''.

References: Holland, P. W. & Thayer, D. T. (1988). Differential item performance and the
Mantel–Haenszel procedure. In Test Validity. Robins, J., Breslow, N. & Greenland, S. (1986).
Estimators of the Mantel–Haenszel variance consistent in both sparse data and large-strata
limiting models. Biometrics 42, 311–323. Swaminathan, H. & Rogers, H. J. (1990). Detecting
differential item functioning using logistic regression procedures. JEM 27, 361–370. Zumbo, B. D.
(1999). A handbook on the theory and methods of DIF. Jodoin, M. G. & Gierl, M. J. (2001).
Evaluating type I error and power rates using an effect size measure with the logistic
regression procedure for DIF detection. AME 14, 329–349. Zwick, R. (2012). A review of ETS
differential item functioning assessment procedures. ETS RR-12-08.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats
from scipy.special import expit

from analytics.irt import FloatArray

#: Factor of the ETS delta scale: Δ = −2.35 ln α (4/1.7, the delta metric's SD of 4 over the
#: logistic-to-normal constant).
ETS_DELTA_FACTOR = 2.35
#: |Δ| below which an item is A whatever its significance, and the null value of C's test.
ETS_NEGLIGIBLE = 1.0
#: |Δ| from which an item can be C.
ETS_LARGE = 1.5
#: One-sided 5% normal quantile of C's test that |Δ| exceeds 1.
ETS_ONE_SIDED_Z = 1.645
#: Significance level of the MH χ² in the A rule and of the 2-df LR test in Jodoin–Gierl's.
SIGNIFICANCE_LEVEL = 0.05
#: Jodoin & Gierl's (2001) Nagelkerke ΔR² bounds: moderate from the first, large from the second.
JODOIN_GIERL_BOUNDS = (0.035, 0.070)
#: |linear predictor| beyond which a fit counts as separated (probability within 2e-9 of 0 or 1).
SEPARATION_ETA = 20.0
# Rows of the response matrix per bincount pass: bounds the index arrays' memory on large sets.
_ROW_BLOCK = 16384

StrArray = NDArray[np.str_]
BoolArray = NDArray[np.bool_]


class MHTables(NamedTuple):
    """Stratified 2×2 counts, each (n_items, n_strata), float (weighted counts allowed)."""

    ref_right: FloatArray
    ref_wrong: FloatArray
    focal_right: FloatArray
    focal_wrong: FloatArray


@dataclass(frozen=True, eq=False)
class MantelHaenszelResult:
    """Per-item Mantel–Haenszel DIF statistics, every field of shape (n_items,).

    ``common_odds_ratio`` α_MH (> 1 favours the reference group); ``delta`` the ETS MH D-DIF
    −2.35 ln α_MH (< 0 favours the reference group); ``delta_se`` its RBG standard error;
    ``chi2`` the continuity-corrected MH χ² (1 df) and ``p_value`` its upper tail; ``ets_class``
    'A', 'B', 'C' or '' (not determinable); ``sign`` '-' (favours reference), '+' (favours
    focal) or '' (Δ zero or NaN); ``n_strata`` the number of strata that entered the sums.
    """

    common_odds_ratio: FloatArray
    delta: FloatArray
    delta_se: FloatArray
    chi2: FloatArray
    p_value: FloatArray
    ets_class: StrArray
    sign: StrArray
    n_strata: NDArray[np.int64]


class LogisticFit(NamedTuple):
    """One weighted logistic fit: coefficients (n_columns,), maximised log-likelihood (nats),
    whether the Newton decrement met the tolerance, iterations used, and the separation flag."""

    coef: FloatArray
    log_likelihood: float
    converged: bool
    iterations: int
    separated: bool


@dataclass(frozen=True, eq=False)
class LogisticDIFResult:
    """Per-item logistic-regression DIF statistics, every field of shape (n_items,).

    ``chi2_uniform``/``p_uniform``: M2 vs M1 (1 df); ``chi2_nonuniform``/``p_nonuniform``: M3 vs
    M2 (1 df); ``chi2_total``/``p_total``: M3 vs M1 (2 df); ``delta_r2`` Nagelkerke's ΔR² of M3
    over M1; ``effect_class`` 'negligible', 'moderate', 'large' or '' (NaN item);
    ``group_coef`` M2's group coefficient (logits at equal standardised score, > 0 favours the
    focal group); ``separated`` True where any of the three fits is separated (statistics are
    those of the likelihood's supremum, coefficients not interpretable).
    """

    chi2_uniform: FloatArray
    p_uniform: FloatArray
    chi2_nonuniform: FloatArray
    p_nonuniform: FloatArray
    chi2_total: FloatArray
    p_total: FloatArray
    delta_r2: FloatArray
    effect_class: StrArray
    group_coef: FloatArray
    separated: BoolArray


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


def _checked_inputs(
    responses: ArrayLike, group: ArrayLike, weights: ArrayLike | None
) -> tuple[FloatArray, BoolArray, FloatArray]:
    """Responses (n_examinees, n_items) of 0/1/NaN, the focal mask and the weights, validated."""
    matrix = np.asarray(responses, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"responses must be (n_examinees, n_items); got shape {matrix.shape}")
    finite = np.isfinite(matrix)
    if np.isinf(matrix).any() or not np.isin(matrix[finite], (0.0, 1.0)).all():
        raise ValueError("responses must be 0 (wrong), 1 (right) or NaN (not answered)")
    focal = np.asarray(group)
    if focal.dtype != np.bool_:
        raise ValueError("group must be a boolean array (True = focal group)")
    n_examinees = matrix.shape[0]
    if focal.shape != (n_examinees,):
        raise ValueError(f"group must have shape ({n_examinees},); got {focal.shape}")
    if weights is None:
        w = np.ones(n_examinees)
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (n_examinees,):
            raise ValueError(f"weights must have shape ({n_examinees},); got {w.shape}")
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError("weights must be finite and non-negative")
    return matrix, focal, w


def _score_vector(matching_score: ArrayLike, n_examinees: int) -> FloatArray:
    score = np.asarray(matching_score, dtype=np.float64)
    if score.shape != (n_examinees,):
        raise ValueError(f"matching_score must have shape ({n_examinees},); got {score.shape}")
    if not np.isfinite(score).all():
        raise ValueError("matching_score must be finite for every examinee")
    return score


def _cell_counts(
    matrix: FloatArray, focal: BoolArray, stratum: NDArray[np.intp], n_strata: int,
    weights: FloatArray,
) -> FloatArray:
    """Weighted counts (4, n_items, n_strata): ref right, ref wrong, focal right, focal wrong.

    One bincount per block of rows over a flat (cell, item, stratum) code: no loop over
    examinees, and the block bounds the memory of the index arrays.
    """
    n_examinees, n_items = matrix.shape
    size = 4 * n_items * n_strata
    counts = np.zeros(size)
    for start in range(0, n_examinees, _ROW_BLOCK):
        block = matrix[start:start + _ROW_BLOCK]
        rows, items = np.nonzero(np.isfinite(block))
        rows_global = rows + start
        cell = 2 * focal[rows_global].astype(np.intp) + (block[rows, items] == 0.0)
        code = (cell * n_items + items) * n_strata + stratum[rows_global]
        counts += np.bincount(code, weights=weights[rows_global], minlength=size)
    return counts.reshape(4, n_items, n_strata)


def mh_tables(
    responses: ArrayLike,
    group: ArrayLike,
    matching_score: ArrayLike,
    weights: ArrayLike | None = None,
) -> MHTables:
    """The stratified 2×2 tables of the Mantel–Haenszel procedure, from per-examinee data.

    ``responses`` (n_examinees, n_items): 1 right, 0 wrong, NaN not answered (drops out of that
    item's tables only). ``group`` (n_examinees,) bool, True = focal. ``matching_score``
    (n_examinees,) integer-valued (e.g. the number correct); the strata are its distinct values
    in increasing order (``np.unique(matching_score)``), so n_strata = their count. ``weights``
    (n_examinees,) non-negative frequency weights (default 1). Returns four (n_items, n_strata)
    float arrays of weighted counts; pass them to :func:`mantel_haenszel`.
    """
    matrix, focal, w = _checked_inputs(responses, group, weights)
    score = _score_vector(matching_score, matrix.shape[0])
    if not np.array_equal(score, np.round(score)):
        raise ValueError("matching_score must be integer-valued (one stratum per value)")
    values, stratum = np.unique(score, return_inverse=True)
    counts = _cell_counts(matrix, focal, stratum.astype(np.intp), values.size, w)
    return MHTables(counts[0], counts[1], counts[2], counts[3])


# ---------------------------------------------------------------------------------------------
# Mantel–Haenszel
# ---------------------------------------------------------------------------------------------


def ets_class(
    delta: ArrayLike, delta_se: ArrayLike, p_value: ArrayLike
) -> StrArray:
    """ETS A/B/C classes from MH D-DIF, its SE and the MH χ² p-value (all the same shape).

    A: |Δ| < 1 or p ≥ 0.05; C: |Δ| ≥ 1.5 and (|Δ| − 1)/SE > 1.645; B: otherwise. '' where the
    rule cannot be applied: Δ or p NaN, or the B/C branch reached with a NaN SE.
    """
    size = np.abs(np.asarray(delta, dtype=np.float64))
    se = np.asarray(delta_se, dtype=np.float64)
    p = np.asarray(p_value, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        negligible = (size < ETS_NEGLIGIBLE) | (p >= SIGNIFICANCE_LEVEL)
        large = (size >= ETS_LARGE) & ((size - ETS_NEGLIGIBLE) / se > ETS_ONE_SIDED_Z)
    known = np.isfinite(p) & ~np.isnan(size)
    classes = np.where(large, "C", np.where(np.isfinite(se), "B", ""))
    classes = np.where(negligible, "A", classes)
    return np.where(known, classes, "").astype(np.str_)


def dif_sign(delta: ArrayLike) -> StrArray:
    """ETS sign of MH D-DIF: '-' favours the reference group, '+' the focal; '' for 0 or NaN."""
    d = np.asarray(delta, dtype=np.float64)
    return np.where(d < 0, "-", np.where(d > 0, "+", "")).astype(np.str_)


def mantel_haenszel(
    ref_right: ArrayLike,
    ref_wrong: ArrayLike,
    focal_right: ArrayLike,
    focal_wrong: ArrayLike,
) -> MantelHaenszelResult:
    """Mantel–Haenszel DIF per item from stratified 2×2 counts (formulas in the module docstring).

    Each argument is (n_items, n_strata) (a 1-D array is one item), non-negative, weighted
    counts allowed. Returns a :class:`MantelHaenszelResult` of (n_items,) arrays.
    """
    tables = [np.asarray(x, dtype=np.float64) for x in (ref_right, ref_wrong, focal_right,
                                                         focal_wrong)]
    tables = [t[None, :] if t.ndim == 1 else t for t in tables]
    shape = tables[0].shape
    if len(shape) != 2 or any(t.shape != shape for t in tables):
        raise ValueError("the four count arrays must share one (n_items, n_strata) shape")
    if any((~np.isfinite(t)).any() or (t < 0).any() for t in tables):
        raise ValueError("counts must be finite and non-negative")
    a, b, c, d = tables
    n_ref, n_focal = a + b, c + d
    total = n_ref + n_focal
    usable = (total >= 2) & (n_ref > 0) & (n_focal > 0)
    # Unusable strata become all-zero tables with N = 1, so they add exactly 0 to every sum.
    a, b, c, d = (np.where(usable, t, 0.0) for t in (a, b, c, d))
    n_ref, n_focal = a + b, c + d
    n = np.where(usable, total, 1.0)

    r_k, s_k = a * d / n, b * c / n
    p_k, q_k = (a + d) / n, (b + c) / n
    r, s = r_k.sum(axis=1), s_k.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = r / s
        log_alpha = np.log(alpha)
        var_log = ((p_k * r_k).sum(axis=1) / (2 * r**2)
                   + (p_k * s_k + q_k * r_k).sum(axis=1) / (2 * r * s)
                   + (q_k * s_k).sum(axis=1) / (2 * s**2))
    delta = -ETS_DELTA_FACTOR * log_alpha
    # α of 0 or ∞ has no finite variance: the SE is undefined rather than infinite.
    delta_se = np.where(np.isfinite(log_alpha), ETS_DELTA_FACTOR * np.sqrt(var_log), np.nan)

    right, wrong = a + c, b + d
    expected = (n_ref * right / n).sum(axis=1)
    variance = (n_ref * n_focal * right * wrong / (n**2 * np.where(usable, n - 1, 1.0))).sum(
        axis=1)
    deviation = np.maximum(np.abs(a.sum(axis=1) - expected) - 0.5, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2 = np.where(variance > 0, deviation**2 / variance, np.nan)
    p_value = stats.chi2.sf(chi2, df=1)
    # An item whose tables carry no information (no usable stratum, or everybody right or wrong
    # in each) has R = S = 0: α is 0/0 and every statistic NaN.
    informative = variance > 0
    alpha = np.where(informative, alpha, np.nan)
    delta = np.where(informative, delta, np.nan)
    delta_se = np.where(informative, delta_se, np.nan)
    return MantelHaenszelResult(
        common_odds_ratio=alpha,
        delta=delta,
        delta_se=delta_se,
        chi2=chi2,
        p_value=p_value,
        ets_class=ets_class(delta, delta_se, p_value),
        sign=dif_sign(delta),
        n_strata=usable.sum(axis=1).astype(np.int64),
    )


# ---------------------------------------------------------------------------------------------
# Logistic regression
# ---------------------------------------------------------------------------------------------


def _log_likelihood(eta: FloatArray, outcome: FloatArray, weights: FloatArray) -> float:
    # y η − log(1 + e^η), with logaddexp so that large |η| neither overflows nor loses digits.
    return float(np.sum(weights * (outcome * eta - np.logaddexp(0.0, eta))))


def fit_logistic(
    design: ArrayLike,
    outcome: ArrayLike,
    weights: ArrayLike | None = None,
    *,
    max_iter: int = 100,
    tol: float = 1e-9,
) -> LogisticFit:
    """Maximum-likelihood logistic regression with frequency weights, by Newton–Raphson (IRLS).

    ``design`` (n_rows, n_columns), including an intercept column if one is wanted; ``outcome``
    (n_rows,) in [0, 1] (0/1 for Bernoulli rows); ``weights`` (n_rows,) non-negative frequency
    weights (a row of weight w counts as w identical rows). Maximises
    Σ w (y η − log(1 + e^η)), η = design @ coef. Stops when half the Newton decrement (the
    predicted gain) is ≤ ``tol`` nats, or after ``max_iter`` iterations; each step is halved
    until the log-likelihood does not decrease. Under separation see the module docstring.
    """
    x = np.asarray(design, dtype=np.float64)
    y = np.asarray(outcome, dtype=np.float64)
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError("design must be (n_rows, n_columns) and outcome (n_rows,)")
    w = np.ones(y.shape) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != y.shape or (w < 0).any() or not np.isfinite(w).all():
        raise ValueError("weights must be (n_rows,), finite and non-negative")
    if not np.isfinite(x).all() or not ((y >= 0) & (y <= 1)).all():
        raise ValueError("design must be finite and outcome in [0, 1]")

    coef = np.zeros(x.shape[1])
    eta = x @ coef
    log_lik = _log_likelihood(eta, y, w)
    converged = False
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        prob = expit(eta)
        gradient = x.T @ (w * (y - prob))
        hessian = (x * (w * prob * (1.0 - prob))[:, None]).T @ x
        # Damping relative to the Hessian's scale: keeps the system solvable when some
        # directions flatten out (separation, an empty column) without moving the optimum.
        damping = 1e-10 * max(float(np.max(np.diag(hessian), initial=0.0)), 1e-300)
        try:
            step = np.linalg.solve(hessian + damping * np.eye(x.shape[1]), gradient)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hessian, gradient, rcond=None)[0]
        decrement = float(gradient @ step)
        scale = 1.0
        while True:
            trial = coef + scale * step
            trial_eta = x @ trial
            trial_lik = _log_likelihood(trial_eta, y, w)
            if trial_lik >= log_lik - 1e-12 * abs(log_lik):
                coef, eta, log_lik = trial, trial_eta, trial_lik
                break
            scale /= 2.0
            if scale < 1e-10:  # no ascent along the step: numerically at the optimum
                break
        if decrement / 2.0 <= tol or scale < 1e-10:
            converged = True
            break
    active = w > 0
    separated = bool(active.any() and np.max(np.abs(eta[active])) > SEPARATION_ETA)
    return LogisticFit(coef, log_lik, converged, iterations, separated)


def nagelkerke_r2(log_likelihood: ArrayLike, null_log_likelihood: ArrayLike,
                  n: ArrayLike) -> FloatArray:
    """Nagelkerke's R² from a model's and the intercept-only log-likelihoods (nats) and n.

    R²_CS = 1 − exp(2(ℓ_0 − ℓ)/n) rescaled by its maximum 1 − exp(2ℓ_0/n); NaN when ℓ_0 = 0
    (a constant outcome). Arrays broadcast; n is the total (frequency) weight.
    """
    ll = np.asarray(log_likelihood, dtype=np.float64)
    ll0 = np.asarray(null_log_likelihood, dtype=np.float64)
    size = np.asarray(n, dtype=np.float64)
    # expm1 keeps the digits of R² near 0, where the DIF effect sizes live.
    cox_snell = -np.expm1(2.0 * (ll0 - ll) / size)
    maximum = -np.expm1(2.0 * ll0 / size)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(maximum > 0, cox_snell / maximum, np.nan), dtype=np.float64)


def jodoin_gierl_class(delta_r2: ArrayLike, p_value: ArrayLike | None = None) -> StrArray:
    """Jodoin & Gierl (2001) effect classes of Nagelkerke ΔR²: 'negligible' (< 0.035),
    'moderate' (0.035 to < 0.070), 'large' (≥ 0.070); '' for NaN. With ``p_value`` (the 2-df LR
    test), a result not significant at 5% is 'negligible' whatever its ΔR²."""
    effect = np.asarray(delta_r2, dtype=np.float64)
    moderate, large = JODOIN_GIERL_BOUNDS
    classes = np.where(effect >= large, "large",
                       np.where(effect >= moderate, "moderate", "negligible"))
    if p_value is not None:
        p = np.asarray(p_value, dtype=np.float64)
        classes = np.where(p >= SIGNIFICANCE_LEVEL, "negligible", classes)
        classes = np.where(np.isnan(p), "", classes)
    return np.where(np.isnan(effect), "", classes).astype(np.str_)


def _item_lr_statistics(
    counts: FloatArray, score_values: FloatArray, max_iter: int, tol: float
) -> tuple[float, float, float, float, float, bool]:
    """(G² uniform, G² non-uniform, G² total, ΔR², M2's group coefficient, separated) of one
    item from its (4, n_strata) cell counts; NaN statistics where the item cannot be tested."""
    nan_result = (np.nan, np.nan, np.nan, np.nan, np.nan, False)
    # One row per (cell, score value) with its count as frequency weight: the fit on these rows
    # is exactly the fit on the examinees, at a cost set by the number of score values.
    outcome = np.repeat([1.0, 0.0, 1.0, 0.0], score_values.size)
    focal = np.repeat([0.0, 0.0, 1.0, 1.0], score_values.size)
    score = np.tile(score_values, 4)
    weight = counts.ravel()
    keep = weight > 0
    outcome, focal, score, weight = outcome[keep], focal[keep], score[keep], weight[keep]
    total = weight.sum()
    n_focal = weight[focal == 1].sum()
    mean_right = (weight * outcome).sum() / total if total > 0 else np.nan
    if not (0 < n_focal < total) or not (0 < mean_right < 1) or np.unique(score).size < 2:
        return nan_result
    centre = (weight * score).sum() / total
    spread = np.sqrt((weight * (score - centre) ** 2).sum() / total)
    z = (score - centre) / spread
    design = np.column_stack([np.ones_like(z), z, focal, z * focal])
    fits = [fit_logistic(design[:, :k], outcome, weight, max_iter=max_iter, tol=tol)
            for k in (2, 3, 4)]
    ll1, ll2, ll3 = (f.log_likelihood for f in fits)
    ll0 = total * (mean_right * np.log(mean_right) + (1 - mean_right) * np.log1p(-mean_right))
    # Nested fits can end a hair apart in the wrong order at the tolerance: G² is at least 0.
    g_uniform = max(2.0 * (ll2 - ll1), 0.0)
    g_nonuniform = max(2.0 * (ll3 - ll2), 0.0)
    g_total = max(2.0 * (ll3 - ll1), 0.0)
    delta_r2 = float(nagelkerke_r2(ll3, ll0, total) - nagelkerke_r2(ll1, ll0, total))
    separated = any(f.separated for f in fits)
    return g_uniform, g_nonuniform, g_total, delta_r2, float(fits[1].coef[2]), separated


def logistic_dif(
    responses: ArrayLike,
    group: ArrayLike,
    matching_score: ArrayLike,
    weights: ArrayLike | None = None,
    *,
    max_iter: int = 100,
    tol: float = 1e-9,
) -> LogisticDIFResult:
    """Logistic-regression DIF per item (formulas and classes in the module docstring).

    ``responses`` (n_examinees, n_items) of 1/0/NaN (NaN drops the examinee from that item);
    ``group`` (n_examinees,) bool, True = focal; ``matching_score`` (n_examinees,) finite,
    any real values (number correct, θ, …), standardised per item over its respondents;
    ``weights`` (n_examinees,) non-negative frequency weights (aggregated human patterns).
    ``max_iter`` and ``tol`` (nats) go to :func:`fit_logistic`. Returns a
    :class:`LogisticDIFResult` of (n_items,) arrays.
    """
    matrix, focal, w = _checked_inputs(responses, group, weights)
    score = _score_vector(matching_score, matrix.shape[0])
    values, stratum = np.unique(score, return_inverse=True)
    counts = _cell_counts(matrix, focal, stratum.astype(np.intp), values.size, w)
    n_items = matrix.shape[1]
    per_item = [_item_lr_statistics(counts[:, i, :], values, max_iter, tol)
                for i in range(n_items)]
    rows = np.array([item[:5] for item in per_item], dtype=np.float64).reshape(n_items, 5)
    separated = np.array([item[5] for item in per_item], dtype=np.bool_)
    g_uniform, g_nonuniform, g_total, delta_r2, group_coef = rows.T
    p_total = stats.chi2.sf(g_total, df=2)
    return LogisticDIFResult(
        chi2_uniform=g_uniform,
        p_uniform=stats.chi2.sf(g_uniform, df=1),
        chi2_nonuniform=g_nonuniform,
        p_nonuniform=stats.chi2.sf(g_nonuniform, df=1),
        chi2_total=g_total,
        p_total=p_total,
        delta_r2=delta_r2,
        effect_class=jodoin_gierl_class(delta_r2, p_total),
        group_coef=group_coef,
        separated=separated,
    )
