"""analytics.items.dif: Mantel–Haenszel and logistic-regression DIF against slow references,
scipy, hand cases and a simulation with planted DIF."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit
from scipy.stats import chi2_contingency
from scipy.stats.contingency import odds_ratio

from analytics.items.dif import (
    ets_class,
    fit_logistic,
    jodoin_gierl_class,
    logistic_dif,
    mantel_haenszel,
    mh_tables,
)

# ---------------------------------------------------------------------------------------------
# Mantel–Haenszel against a slow reference
# ---------------------------------------------------------------------------------------------

# Three items × five strata: A = reference right, B = reference wrong, C = focal right,
# D = focal wrong. Item 0 has a stratum with N = 1 (index 2) and one without focal examinees
# (index 3); item 1 has weighted (non-integer) counts; item 2 has no usable stratum at all.
A = np.array([[10, 4, 1, 7, 12], [3.5, 12.2, 8, 0.7, 20], [0, 5, 0, 1, 0]])
B = np.array([[5, 6, 0, 3, 2], [2.1, 4, 6.5, 1.3, 3], [0, 3, 0, 0, 0]])
C = np.array([[6, 3, 0, 0, 9], [1.5, 5, 2.2, 3, 8.8], [2, 0, 0, 0, 1]])
D = np.array([[9, 2, 0, 0, 4], [4, 3.3, 1, 2.5, 1.2], [1, 0, 0, 0, 0]])


def slow_mantel_haenszel(a, b, c, d):
    """α_MH, Δ, SE(Δ) (RBG), continuity-corrected χ² and strata used, one stratum at a time."""
    r_sum = s_sum = pr = ps_qr = qs = 0.0
    observed = expected = variance = 0.0
    used = 0
    for k in range(len(a)):
        n_ref, n_focal = a[k] + b[k], c[k] + d[k]
        n = n_ref + n_focal
        if n < 2 or n_ref == 0 or n_focal == 0:
            continue
        used += 1
        r, s = a[k] * d[k] / n, b[k] * c[k] / n
        p, q = (a[k] + d[k]) / n, (b[k] + c[k]) / n
        r_sum += r
        s_sum += s
        pr += p * r
        ps_qr += p * s + q * r
        qs += q * s
        right, wrong = a[k] + c[k], b[k] + d[k]
        observed += a[k]
        expected += n_ref * right / n
        variance += n_ref * n_focal * right * wrong / (n * n * (n - 1))
    alpha = r_sum / s_sum
    var_log = pr / (2 * r_sum**2) + ps_qr / (2 * r_sum * s_sum) + qs / (2 * s_sum**2)
    chi2 = (abs(observed - expected) - 0.5) ** 2 / variance
    return alpha, -2.35 * math.log(alpha), 2.35 * math.sqrt(var_log), chi2, used


def test_mantel_haenszel_matches_slow_reference():
    result = mantel_haenszel(A, B, C, D)
    for item in (0, 1):
        alpha, delta, se, chi2, used = slow_mantel_haenszel(A[item], B[item], C[item], D[item])
        assert result.common_odds_ratio[item] == pytest.approx(alpha, rel=1e-12)
        assert result.delta[item] == pytest.approx(delta, rel=1e-12)
        assert result.delta_se[item] == pytest.approx(se, rel=1e-12)
        assert result.chi2[item] == pytest.approx(chi2, rel=1e-12)
        assert result.n_strata[item] == used
    assert result.n_strata.tolist() == [3, 5, 0]
    np.testing.assert_allclose(result.p_value[:2], [math.erfc(math.sqrt(x / 2))
                                                    for x in result.chi2[:2]], rtol=1e-10)


def test_item_without_usable_stratum_is_nan():
    result = mantel_haenszel(A, B, C, D)
    for field in (result.common_odds_ratio, result.delta, result.delta_se, result.chi2,
                  result.p_value):
        assert np.isnan(field[2])
    assert result.ets_class[2] == ""
    assert result.sign[2] == ""


def test_two_strata_odds_ratio_by_hand():
    # (10·9/30 + 20·12/50) / (5·6/30 + 10·8/50) = (3 + 4.8) / (1 + 1.6) = 3.
    result = mantel_haenszel([[10, 20]], [[5, 10]], [[6, 8]], [[9, 12]])
    assert result.common_odds_ratio[0] == pytest.approx(3.0)
    assert result.delta[0] == pytest.approx(-2.35 * math.log(3.0))
    assert result.sign[0] == "-"  # α > 1: favours the reference group


@pytest.mark.parametrize("table", [(12, 7, 5, 9), (41, 10, 22, 30), (3, 9, 8, 2)])
def test_single_stratum_reduces_to_woolf_and_yates(table):
    a, b, c, d = table
    result = mantel_haenszel([a], [b], [c], [d])
    sample_or = odds_ratio(np.array([[a, b], [c, d]]), kind="sample").statistic
    assert result.common_odds_ratio[0] == pytest.approx(sample_or, rel=1e-12)
    woolf = 1 / a + 1 / b + 1 / c + 1 / d
    assert result.delta_se[0] == pytest.approx(2.35 * math.sqrt(woolf), rel=1e-12)
    # One stratum: the MH χ² is Pearson's with Yates's correction times (N − 1)/N.
    n = a + b + c + d
    yates = chi2_contingency(np.array([[a, b], [c, d]]), correction=True).statistic
    assert result.chi2[0] == pytest.approx(yates * (n - 1) / n, rel=1e-10)


def test_zero_odds_ratio_is_infinite_delta_without_se():
    # Every focal examinee right: Σ A·D/N = 0, so α = 0 and Δ = +∞; the χ² still exists.
    result = mantel_haenszel([[10, 5]], [[5, 5]], [[8, 6]], [[0, 0]])
    assert result.common_odds_ratio[0] == 0.0
    assert result.delta[0] == math.inf
    assert np.isnan(result.delta_se[0])
    assert np.isfinite(result.chi2[0])
    assert result.sign[0] == "+"
    assert result.ets_class[0] == ("A" if result.p_value[0] >= 0.05 else "")


# ---------------------------------------------------------------------------------------------
# ETS classes
# ---------------------------------------------------------------------------------------------


def test_ets_class_hand_cases():
    delta = [-0.5, -1.8, -1.2, -1.6, -1.6, 2.0, 1.0, -1.5, -1.9, np.nan, np.inf, np.inf]
    se = [0.1, 0.3, 0.2, 0.5, 0.2, 0.3, 0.1, 0.1, 0.3, 0.3, np.nan, np.nan]
    p = [1e-4, 0.2, 1e-3, 1e-3, 1e-6, 1e-6, 1e-5, 1e-5, 0.05, 0.01, 0.01, 0.5]
    expected = [
        "A",  # |Δ| < 1
        "A",  # large but not significant
        "B",  # 1 ≤ |Δ| < 1.5, significant
        "B",  # |Δ| ≥ 1.5 but (1.6 − 1)/0.5 = 1.2 ≤ 1.645
        "C",  # (1.6 − 1)/0.2 = 3 > 1.645
        "C",  # favouring the focal group: the rule uses |Δ|
        "B",  # |Δ| = 1 exactly is not below 1
        "C",  # |Δ| = 1.5 exactly, (0.5)/0.1 = 5
        "A",  # p = 0.05 exactly is not significant
        "",  # Δ unknown
        "",  # Δ = ∞, significant: B or C needs the SE
        "A",  # Δ = ∞ but not significant
    ]
    assert ets_class(delta, se, p).tolist() == expected


@pytest.mark.parametrize(("table", "expected_class", "expected_sign"), [
    ((100, 100, 100, 100), "A", ""),  # α = 1, Δ = 0
    ((500, 300, 300, 300), "B", "-"),  # α = 5/3, Δ = −1.20, z ≈ 4.7
    ((300, 100, 100, 100), "C", "-"),  # α = 3, Δ = −2.58, (2.58 − 1)/0.43 ≈ 3.7
    ((100, 300, 100, 100), "C", "+"),  # α = 1/3, Δ = +2.58
])
def test_ets_class_from_tables(table, expected_class, expected_sign):
    a, b, c, d = table
    result = mantel_haenszel([a], [b], [c], [d])
    size = abs(2.35 * math.log(a * d / (b * c)))
    se = 2.35 * math.sqrt(1 / a + 1 / b + 1 / c + 1 / d)
    assert abs(result.delta[0]) == pytest.approx(size)
    if expected_class == "B":
        assert 1.0 <= size < 1.5 and result.p_value[0] < 1e-4
    if expected_class == "C":
        assert size >= 1.5 and (size - 1) / se > 3
    assert result.ets_class[0] == expected_class
    assert result.sign[0] == expected_sign


# ---------------------------------------------------------------------------------------------
# Tables from per-examinee responses
# ---------------------------------------------------------------------------------------------


def slow_tables(responses, group, score, weights):
    strata = sorted(set(score.tolist()))
    out = np.zeros((4, responses.shape[1], len(strata)))
    for person in range(responses.shape[0]):
        k = strata.index(score[person])
        for item in range(responses.shape[1]):
            value = responses[person, item]
            if np.isnan(value):
                continue
            cell = 2 * int(group[person]) + (0 if value == 1 else 1)
            out[cell, item, k] += weights[person]
    return out


def test_mh_tables_match_a_loop_and_skip_missing():
    rng = np.random.default_rng(5)
    responses = (rng.random((60, 4)) < 0.6).astype(float)
    responses[rng.random(responses.shape) < 0.1] = np.nan
    group = rng.random(60) < 0.4
    score = rng.integers(-2, 5, 60)  # any integers: the strata are the distinct values
    weights = rng.uniform(0.5, 3.0, 60)
    tables = mh_tables(responses, group, score, weights)
    np.testing.assert_allclose(np.stack(tables), slow_tables(responses, group, score, weights))
    unweighted = mh_tables(responses, group, score)
    np.testing.assert_allclose(np.stack(unweighted),
                               slow_tables(responses, group, score, np.ones(60)))
    assert unweighted.ref_right.shape == (4, np.unique(score).size)


def test_integer_weights_equal_repeated_rows():
    rng = np.random.default_rng(6)
    responses = (rng.random((40, 3)) < 0.5).astype(float)
    group = rng.random(40) < 0.5
    score = np.nansum(responses, axis=1).astype(int)
    copies = rng.integers(0, 4, 40)
    weighted = mh_tables(responses, group, score, copies)
    repeated = mh_tables(np.repeat(responses, copies, axis=0), np.repeat(group, copies),
                         np.repeat(score, copies))
    # A score value whose examinees all have weight 0 is a stratum of zeros in the weighted
    # tables and absent from the repeated ones.
    present = np.isin(np.unique(score), score[copies > 0])
    np.testing.assert_allclose(np.stack(weighted)[..., present], np.stack(repeated))
    assert np.stack(weighted)[..., ~present].sum() == 0


@pytest.mark.parametrize(("responses", "group", "score", "message"), [
    ([[0.0, 2.0]], [True], [1], "0 \\(wrong\\), 1"),
    ([[0.0, 1.0]], [1], [1], "boolean"),
    ([[0.0, 1.0]], [True], [1.5], "integer-valued"),
    ([[0.0, 1.0]], [True], [np.nan], "finite"),
])
def test_mh_tables_rejects_bad_input(responses, group, score, message):
    with pytest.raises(ValueError, match=message):
        mh_tables(np.array(responses), np.array(group), np.array(score))


# ---------------------------------------------------------------------------------------------
# Logistic fits
# ---------------------------------------------------------------------------------------------


def negative_log_likelihood(coef, x, y, w):
    eta = x @ coef
    return -np.sum(w * (y * eta - np.logaddexp(0.0, eta)))


def negative_gradient(coef, x, y, w):
    return -x.T @ (w * (y - expit(x @ coef)))


def small_logistic_data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    g = (rng.random(n) < 0.4).astype(float)
    x = np.column_stack([np.ones(n), z, g, z * g])
    y = (rng.random(n) < expit(x @ np.array([0.3, 1.1, -0.6, 0.4]))).astype(float)
    w = rng.integers(1, 6, n).astype(float)
    return x, y, w


def test_irls_matches_scipy_minimize():
    x, y, w = small_logistic_data()
    fit = fit_logistic(x, y, w)
    reference = optimize.minimize(negative_log_likelihood, np.zeros(4), args=(x, y, w),
                                  jac=negative_gradient, method="BFGS",
                                  options={"gtol": 1e-10, "maxiter": 1000})
    assert fit.converged and not fit.separated
    np.testing.assert_allclose(fit.coef, reference.x, rtol=1e-6, atol=1e-7)
    assert fit.log_likelihood == pytest.approx(-reference.fun, rel=1e-10)


def test_frequency_weights_equal_expanded_rows():
    x, y, w = small_logistic_data(seed=1, n=120)
    weighted = fit_logistic(x, y, w)
    counts = w.astype(int)
    expanded = fit_logistic(np.repeat(x, counts, axis=0), np.repeat(y, counts))
    np.testing.assert_allclose(weighted.coef, expanded.coef, rtol=1e-9, atol=1e-10)
    assert weighted.log_likelihood == pytest.approx(expanded.log_likelihood, rel=1e-10)


def test_separation_reaches_the_likelihood_supremum_and_is_flagged():
    x = np.column_stack([np.ones(6), [-2.0, -1.0, -0.5, 0.5, 1.0, 2.0]])
    y = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])  # complete separation at 0
    fit = fit_logistic(x, y)
    assert fit.separated
    assert fit.converged and fit.iterations < 100
    assert -1e-7 < fit.log_likelihood <= 0.0


# ---------------------------------------------------------------------------------------------
# Logistic-regression DIF against a slow reference
# ---------------------------------------------------------------------------------------------


def reference_log_likelihood(x, y, w):
    result = optimize.minimize(negative_log_likelihood, np.zeros(x.shape[1]), args=(x, y, w),
                               jac=negative_gradient, method="BFGS",
                               options={"gtol": 1e-10, "maxiter": 2000})
    return -result.fun


def dif_data(seed=2, n=600, n_items=6):
    rng = np.random.default_rng(seed)
    group = rng.random(n) < 0.35
    theta = rng.normal(size=n)
    b = np.linspace(-1, 1, n_items)
    shift = np.zeros((n, n_items))
    shift[group, 0] = 0.8  # uniform DIF against the focal group
    slope = np.ones((n, n_items))
    slope[group, 1] = 0.3  # non-uniform DIF: flatter for the focal group
    responses = (rng.random((n, n_items)) < expit(1.7 * slope * (theta[:, None] - b - shift)))
    responses = responses.astype(float)
    responses[rng.random(responses.shape) < 0.05] = np.nan
    return responses, group


def test_logistic_dif_matches_slow_reference():
    responses, group = dif_data()
    score = np.nansum(responses, axis=1)  # raw, unstandardised: G² does not depend on it
    weights = np.random.default_rng(3).integers(1, 4, responses.shape[0]).astype(float)
    result = logistic_dif(responses, group, score, weights)
    for item in range(responses.shape[1]):
        answered = np.isfinite(responses[:, item])
        y, s = responses[answered, item], score[answered]
        g, w = group[answered].astype(float), weights[answered]
        x = np.column_stack([np.ones_like(s), s, g, s * g])
        ll1, ll2, ll3 = (reference_log_likelihood(x[:, :k], y, w) for k in (2, 3, 4))
        n, mean = w.sum(), np.sum(w * y) / w.sum()
        ll0 = n * (mean * math.log(mean) + (1 - mean) * math.log(1 - mean))
        nagelkerke = [(1 - math.exp(2 * (ll0 - ll) / n)) / (1 - math.exp(2 * ll0 / n))
                      for ll in (ll1, ll3)]
        assert result.chi2_uniform[item] == pytest.approx(2 * (ll2 - ll1), abs=1e-5)
        assert result.chi2_nonuniform[item] == pytest.approx(2 * (ll3 - ll2), abs=1e-5)
        assert result.chi2_total[item] == pytest.approx(2 * (ll3 - ll1), abs=1e-5)
        assert result.delta_r2[item] == pytest.approx(nagelkerke[1] - nagelkerke[0], abs=1e-8)
    # The planted effects: item 0 uniform DIF against the focal group, item 1 non-uniform.
    assert result.p_uniform[0] < 1e-3 and result.group_coef[0] < 0
    assert result.p_nonuniform[1] < 1e-3
    np.testing.assert_allclose(result.p_total, np.exp(-result.chi2_total / 2), rtol=1e-10)


def test_logistic_dif_weights_equal_repeated_examinees():
    responses, group = dif_data(seed=4, n=200, n_items=3)
    score = np.nansum(responses, axis=1)
    copies = np.random.default_rng(7).integers(0, 4, responses.shape[0])
    weighted = logistic_dif(responses, group, score, copies)
    repeated = logistic_dif(np.repeat(responses, copies, axis=0), np.repeat(group, copies),
                            np.repeat(score, copies))
    for field in ("chi2_uniform", "chi2_nonuniform", "chi2_total", "delta_r2", "group_coef"):
        np.testing.assert_allclose(getattr(weighted, field), getattr(repeated, field),
                                   rtol=1e-7, atol=1e-9)


def test_logistic_dif_degenerate_items():
    rng = np.random.default_rng(8)
    responses = (rng.random((200, 4)) < 0.6).astype(float)
    group = np.zeros(200, bool)
    group[-20:] = True
    responses[:, 1] = 1.0  # everybody right: nothing to model
    responses[group, 2] = np.nan  # no focal respondent
    responses[group, 3] = 1.0  # every focal examinee right: separation in the group term
    result = logistic_dif(responses, group, np.nansum(responses, axis=1))
    assert np.isnan(result.chi2_total[[1, 2]]).all()
    assert result.effect_class[1] == "" and result.effect_class[2] == ""
    assert np.isfinite(result.chi2_total[[0, 3]]).all()
    assert result.separated[3] and result.group_coef[3] > 0


def test_jodoin_gierl_classes():
    effect = [0.01, 0.035, 0.05, 0.07, 0.2, 0.2, np.nan]
    p = [1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 0.5, 1e-6]
    assert jodoin_gierl_class(effect).tolist() == [
        "negligible", "moderate", "moderate", "large", "large", "large", ""]
    assert jodoin_gierl_class(effect, p).tolist() == [
        "negligible", "moderate", "moderate", "large", "large", "negligible", ""]


# ---------------------------------------------------------------------------------------------
# Simulation: planted uniform DIF, power and false-positive rate
# ---------------------------------------------------------------------------------------------

N_REFERENCE, N_FOCAL, N_ITEMS, REPLICATIONS = 2000, 1000, 20, 50
DIF_ITEMS = np.arange(4)
#: b shifts of the focal group on the DIF items: two harder, two easier for it.
DIF_SHIFT = np.array([0.7, -0.7, 0.7, -0.7])
LEVEL = 0.05


@pytest.fixture(scope="module")
def planted_dif_rejections():
    """Rejections at 5% (replications × items) of MH and of the LR uniform test.

    3PL bank (a ~ U(0.8, 1.6), b ~ N(0, 1) with the DIF items' b at −0.8 … 0.8, c = 0.2), both
    groups θ ~ N(0, 1) (no impact), 2,000 reference and 1,000 focal examinees, 20 items of which
    4 carry uniform DIF. The matching score is the number correct on all 20 items, the studied
    item included. The planted DIF is balanced (two items harder, two easier for the focal group,
    at mirrored b) so that it nearly cancels in the total: four shifts the same way contaminate
    the match and push the false-positive rate of both methods far above 5% (a purified total,
    as in ETS's two-stage screening, is the remedy; not tested here). About 1 s on one core.
    """
    rng = np.random.default_rng(2024)
    a = rng.uniform(0.8, 1.6, N_ITEMS)
    b = rng.normal(0.0, 1.0, N_ITEMS)
    b[DIF_ITEMS] = [-0.8, -0.3, 0.3, 0.8]
    group = np.r_[np.zeros(N_REFERENCE, bool), np.ones(N_FOCAL, bool)]
    difficulty = np.tile(b, (group.size, 1))
    difficulty[np.ix_(group, DIF_ITEMS)] += DIF_SHIFT
    mh_rejects, lr_rejects, mh_signs, lr_signs = [], [], [], []
    for _ in range(REPLICATIONS):
        theta = rng.normal(size=group.size)
        p = 0.2 + 0.8 * expit(1.7 * a * (theta[:, None] - difficulty))
        responses = (rng.random(p.shape) < p).astype(float)
        score = responses.sum(axis=1).astype(int)
        mh = mantel_haenszel(*mh_tables(responses, group, score))
        lr = logistic_dif(responses, group, score)
        mh_rejects.append(mh.p_value < LEVEL)
        lr_rejects.append(lr.p_uniform < LEVEL)
        mh_signs.append(mh.sign[DIF_ITEMS])
        lr_signs.append(np.sign(lr.group_coef[DIF_ITEMS]))
    return (np.array(mh_rejects), np.array(lr_rejects), np.array(mh_signs),
            np.array(lr_signs))


def _power_and_false_positives(rejects):
    power = rejects[:, DIF_ITEMS].mean()
    false_positive = np.delete(rejects, DIF_ITEMS, axis=1).mean()
    n_null = REPLICATIONS * (N_ITEMS - DIF_ITEMS.size)
    bound = LEVEL + 3 * math.sqrt(LEVEL * (1 - LEVEL) / n_null)  # 0.05 + 3 binomial SE
    return power, false_positive, bound


def test_mantel_haenszel_power_and_false_positive_rate(planted_dif_rejections):
    mh_rejects, _, mh_signs, _ = planted_dif_rejections
    power, false_positive, bound = _power_and_false_positives(mh_rejects)
    assert power >= 0.9, power
    assert false_positive <= bound, (false_positive, bound)
    # A harder item for the focal group (b up) is '-' (favours the reference group).
    expected = np.where(DIF_SHIFT > 0, "-", "+")
    assert (mh_signs == expected).mean() >= 0.9


def test_logistic_uniform_dif_power_and_false_positive_rate(planted_dif_rejections):
    _, lr_rejects, _, lr_signs = planted_dif_rejections
    power, false_positive, bound = _power_and_false_positives(lr_rejects)
    assert power >= 0.9, power
    assert false_positive <= bound, (false_positive, bound)
    assert (lr_signs == -np.sign(DIF_SHIFT)).mean() >= 0.9
