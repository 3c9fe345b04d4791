"""Item fit for dichotomous 3PL items with known parameters: S-X² and RMSD.

Both statistics compare what a fixed item bank predicts with what a group of examinees did. The
latent ability of the group is N(μ, σ²) (``prior_mean``, ``prior_sd``; N(0, 1) by default), and
every integral over θ is a sum over a uniform quadrature grid: ``n_quadrature`` equally spaced
points on ``theta_range`` (by default 121 points on [−6, 6], the paper's grid, ``PAPER_GRID``),
weighted by the normal density and normalised to sum to 1.

Summed-score likelihood (Lord & Wingersky, 1984)
    f_0(0 | θ) = 1; adding item i with P_i(θ), Q_i = 1 − P_i:
    f_i(s | θ) = f_{i−1}(s | θ)·Q_i(θ) + f_{i−1}(s − 1 | θ)·P_i(θ), for s = 0 … i.
    After all n items f(s | θ) = P(S = s | θ), s = 0 … n.

S-X² (Orlando & Thissen, 2000, 2003)
    For item i and summed score s = 1 … n − 1 (scores 0 and n carry no information: everyone
    there has the item wrong or right),

        E_is = ∫ P_i(θ)·f*_i(s − 1 | θ) φ(θ) dθ / ∫ f(s | θ) φ(θ) dθ,

    the model's probability of a correct answer to i among examinees with summed score s, where
    f*_i is the summed-score likelihood of the other n − 1 items. O_is is the observed proportion
    correct among the N_s examinees with score s. Adjacent scores are pooled into groups g until
    every group's expected counts N_g·E_ig and N_g·(1 − E_ig) reach ``min_expected`` (1 by
    default, as Orlando & Thissen): by default as mirt does (:func:`pool_into_less_populated`:
    the lowest sparse group joins its less populated neighbour), or from the tails toward the
    centre (:func:`collapse_score_groups`, ``pooling="tails"``), and

        S-X²_i = Σ_g N_g (O_ig − E_ig)² / (E_ig (1 − E_ig)),

    with O_ig and E_ig the count-weighted means of the group's scores. Its reference distribution
    is χ² with df = (number of groups) − (number of estimated item parameters): 3 for a 3PL item
    calibrated on the same data; 0 when the parameters are fixed in advance (published INEP
    parameters checked on a new sample), since nothing was fitted to these counts.

RMSD (OECD, PISA 2015 Technical Report, ch. 9; Köhler, Robitzsch & Hartig, 2020)
    With each examinee's posterior π(θ_q | x) on the grid (the N(μ, σ²) prior times the
    likelihood of all their counted items), the pseudo-observed item characteristic curve and
    the ability density are

        P_obs,i(θ_q) = Σ_p w_p π(θ_q | x_p) x_pi / Σ_p w_p π(θ_q | x_p),
        g(θ_q) = Σ_p w_p π(θ_q | x_p) / Σ_p w_p,

    (sums over examinees who answered item i; w_p frequency weights), and

        RMSD_i = sqrt( Σ_q g(θ_q) (P_obs,i(θ_q) − P_i(θ_q))² ),
        MD_i = Σ_q g(θ_q) (P_obs,i(θ_q) − P_i(θ_q))  (mean deviation, signed).

    An item is flagged when RMSD > ``RMSD_MISFIT_THRESHOLD`` = 0.12, PISA's cut-off since 2015
    (some studies use 0.10; pass ``threshold``). RMSD has a small positive bias from sampling
    noise (≈ 0.01–0.02 with a few thousand examinees), which is why it is read against a cut-off
    and not tested against 0.

References
----------
Lord, F. M., & Wingersky, M. S. (1984). Comparison of IRT true-score and equipercentile
    observed-score "equatings". Applied Psychological Measurement, 8(4), 453–461.
Orlando, M., & Thissen, D. (2000). Likelihood-based item-fit indices for dichotomous item
    response theory models. Applied Psychological Measurement, 24(1), 50–64.
Orlando, M., & Thissen, D. (2003). Further investigation of the performance of S-X²: an item
    fit index for use with dichotomous item response theory models. Applied Psychological
    Measurement, 27(4), 289–298.
OECD (2017). PISA 2015 Technical Report, chapter 9 (scaling: item fit by RMSD).
Köhler, C., Robitzsch, A., & Hartig, J. (2020). A bias-corrected RMSD item fit statistic.
    Journal of Educational and Behavioral Statistics, 45(3), 251–273.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import chi2

from analytics.ability import PAPER_GRID, QuadratureGrid
from analytics.irt import (
    FloatArray,
    ItemBank,
    as_response_matrix,
    counted_responses,
    probability,
    row_blocks,
    sliced_product,
)
from analytics.mode_search import check_prior, grid_log_probabilities, normal_log_prior

#: PISA's RMSD cut-off for item misfit (OECD, 2017); RMSD above it flags an item.
RMSD_MISFIT_THRESHOLD = 0.12

#: Default quadrature: the paper's 121 points on [−6, 6] (step 0.1). The integrands of S-X² and
#: RMSD are smooth and carry the normal density, so this equally spaced sum is accurate far
#: beyond the sampling error of any real sample.
DEFAULT_N_QUADRATURE = PAPER_GRID.n_quadrature
DEFAULT_THETA_RANGE = PAPER_GRID.theta_range

# Examinees per block in the passes over a response matrix (the score tables' cell indices, the
# RMSD posteriors of shape (n_quadrature, block)): a few tens of MB however many examinees.
_EXAMINEE_BLOCK = 16384


# --- Summed scores ------------------------------------------------------------------------------

def summed_score_likelihood(probabilities: ArrayLike) -> FloatArray:
    """Distribution of the number-correct score given θ, by the Lord–Wingersky recursion.

    Parameters
    ----------
    probabilities : array of shape (n_theta, n_items)
        P_i(θ) of each item at each θ (any leading shape works: (..., n_items)).

    Returns
    -------
    ndarray of shape (n_theta, n_items + 1)
        Entry [t, s] is P(S = s | θ_t) for s = 0 … n_items; each row sums to 1.

    Raises
    ------
    ValueError
        If a probability is not finite or lies outside [0, 1].
    """
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim < 1:
        raise ValueError("probabilities must have shape (n_theta, n_items)")
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise ValueError("probabilities must be finite and lie in [0, 1]")
    n_items = p.shape[-1]
    # Scores on the first axis, so that each step's slice of scores is one contiguous block
    # (3× faster than slicing the last axis for a form's leave-one-out lanes).
    by_item = np.moveaxis(p, -1, 0)
    likelihood = np.zeros((n_items + 1,) + p.shape[:-1])
    likelihood[0] = 1.0
    moved_up = np.empty_like(likelihood)
    # One item at a time, over every θ at once: after item i only scores 0 … i + 1 are possible,
    # so each step touches i + 2 scores: L(s) ← L(s)·(1 − P_i) + L(s − 1)·P_i.
    for i in range(n_items):
        right = by_item[i]
        np.multiply(likelihood[: i + 1], right, out=moved_up[1 : i + 2])
        likelihood[: i + 1] *= 1.0 - right
        likelihood[1 : i + 2] += moved_up[1 : i + 2]
    return np.moveaxis(likelihood, 0, -1)


def score_tables(
    responses: ArrayLike, weights: ArrayLike | None = None
) -> tuple[FloatArray, FloatArray]:
    """The aggregated data S-X² needs, from complete 0/1 response patterns.

    Parameters
    ----------
    responses : array of shape (n_examinees, n_items)
        1.0 correct, 0.0 wrong; no missing entries (every examinee of a booklet answers every
        item, and the summed score is over all of them).
    weights : array of shape (n_examinees,), optional
        Frequency weights (how many examinees each row stands for); 1 each by default.

    Returns
    -------
    score_counts : ndarray of shape (n_items + 1,)
        Total weight of the examinees at each summed score s = 0 … n_items.
    correct_by_score : ndarray of shape (n_items, n_items + 1)
        Entry [i, s]: total weight of the examinees with summed score s who got item i right.

    Raises
    ------
    ValueError
        If an entry is not 0 or 1 (NaN included), or the weights are not finite, non-negative
        and of shape (n_examinees,).
    """
    matrix = np.asarray(responses, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"responses must have shape (n_examinees, n_items); got {matrix.shape}")
    matrix, finite = as_response_matrix(matrix, matrix.shape[1])
    if not finite.all():
        raise ValueError("responses must be complete 0/1 patterns (no NaN) for summed scores")
    n_examinees, n_items = matrix.shape
    weight = _frequency_weights(weights, n_examinees)
    scores = matrix.sum(axis=1).astype(np.intp)  # exact: sums of 0.0 and 1.0
    score_counts = np.bincount(scores, weights=weight, minlength=n_items + 1).astype(np.float64)
    # One bincount per block over the cells (score, item): cell index s·n_items + i, weighted by
    # w·x, so the whole table is one pass over the matrix with memory bounded by the block.
    cells = np.zeros((n_items + 1) * n_items)
    items = np.arange(n_items)
    for rows in row_blocks(n_examinees, _EXAMINEE_BLOCK):
        index = scores[rows, None] * n_items + items
        cells += np.bincount(index.ravel(), weights=(matrix[rows] * weight[rows, None]).ravel(),
                             minlength=cells.shape[0])
    return score_counts, cells.reshape(n_items + 1, n_items).T.copy()


def expected_proportions_by_score(
    bank: ItemBank,
    n_quadrature: int = DEFAULT_N_QUADRATURE,
    theta_range: tuple[float, float] = DEFAULT_THETA_RANGE,
    prior_mean: float = 0.0,
    prior_sd: float = 1.0,
) -> FloatArray:
    """E_is: the model's proportion correct on item i among examinees with summed score s.

    Parameters
    ----------
    bank : ItemBank
        Every item must have parameters (``bank.usable`` all True).
    n_quadrature, theta_range : int and (float, float)
        The uniform quadrature grid over θ (default 121 points on [−6, 6]).
    prior_mean, prior_sd : float
        The examinees' latent distribution N(μ, σ²), on the bank's θ scale.

    Returns
    -------
    ndarray of shape (n_items, n_items + 1)
        E_is for s = 0 … n_items (0 at s = 0 and 1 at s = n_items by construction).
    """
    _check_all_usable(bank)
    check_prior(prior_mean, prior_sd)
    points, density = _normal_quadrature(n_quadrature, theta_range, prior_mean, prior_sd)
    p = probability(points, bank)  # (k, n)
    n_items = bank.n_items
    # The leave-one-out likelihoods f*_i for all items at once: lane i is the whole test with
    # item i's P set to 0, which removes it from the recursion exactly (it adds nothing to any
    # score). Lanes × grid × scores is n·k·(n + 1) numbers, small for any real booklet.
    without_item = np.broadcast_to(p, (n_items,) + p.shape).copy()
    lanes = np.arange(n_items)
    without_item[lanes, :, lanes] = 0.0
    rest = summed_score_likelihood(without_item)  # (n, k, n + 1); score n impossible
    marginal = density @ summed_score_likelihood(p)  # (n + 1,): P(S = s)
    # Σ_q φ_q P_i(θ_q) f*_i(s − 1 | θ_q) for s = 1 … n.
    joint = np.einsum("q,qi,iqs->is", density, p, rest[:, :, :n_items])
    expected = np.zeros((n_items, n_items + 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        expected[:, 1:] = joint / marginal[1:]
    return expected


# --- S-X² ---------------------------------------------------------------------------------------

#: S-X²'s pooling rules for sparse score groups (:func:`sx2_item_fit`'s ``pooling``).
#: ``"mirt"``, the default, is the rule of the reference implementations (mirt for R, the
#: Python ``mirt`` package): the first sparse score row merges into its less populated neighbour.
#: ``"tails"`` pools from both tails toward the centre (:func:`collapse_score_groups`).
POOLING_RULES = ("mirt", "tails")
DEFAULT_POOLING = "mirt"

# mirt's slack on the minimum: a pooled row's expected total equals its person count only up
# to rounding, which must not decide whether a one-person row is sparse.
_SPARSE_RELATIVE_TOLERANCE = 1e-10


def pool_into_less_populated(
    counts: ArrayLike, expected: ArrayLike, min_expected: float = 1.0
) -> NDArray[np.intp]:
    """mirt's pooling of sparse score rows (the default of :func:`sx2_item_fit`).

    Scores nobody obtained (N_s = 0) are left out first. Then, while more than one group is
    left and some group has an expected count of correct or of incorrect answers (N_g·E_g or
    N_g·(1 − E_g)) below ``min_expected`` (less a relative 1e-10), the lowest such group
    merges into its less populated neighbour (fewer examinees; the lower one on a tie; an end
    group into its only neighbour). If a single group is left it may still be sparse.

    Parameters
    ----------
    counts : array of shape (m,)
        N_s of consecutive scores (for S-X², s = 1 … n − 1).
    expected : array of shape (m,)
        E_s, the model's proportion correct at each score.
    min_expected : float, default 1.0
        The minimum expected count of correct and of incorrect answers in a group (> 0).

    Returns
    -------
    ndarray of int, shape (m,)
        Group label of each score, 0 … n_groups − 1, non-decreasing over the populated
        scores; −1 for a score nobody obtained.
    """
    n, e = _checked_score_rows(counts, expected, min_expected)
    minimum = min_expected * (1.0 - _SPARSE_RELATIVE_TOLERANCE)
    populated = np.flatnonzero(n > 0)
    starts = list(range(populated.shape[0]))
    people = list(n[populated])
    right = list(n[populated] * e[populated])
    wrong = list(n[populated] * (1.0 - e[populated]))
    while len(starts) > 1:
        sparse = next((g for g in range(len(starts))
                       if min(right[g], wrong[g]) < minimum), None)
        if sparse is None:
            break
        if sparse == 0:
            neighbour = 1
        elif sparse == len(starts) - 1:
            neighbour = sparse - 1
        else:
            below, above = people[sparse - 1], people[sparse + 1]
            neighbour = sparse - 1 if below <= above else sparse + 1
        people[neighbour] += people[sparse]
        right[neighbour] += right[sparse]
        wrong[neighbour] += wrong[sparse]
        # The merged group starts at the lower of the two.
        starts[neighbour] = min(starts[neighbour], starts[sparse])
        del starts[sparse], people[sparse], right[sparse], wrong[sparse]
    labels = np.full(n.shape[0], -1, dtype=np.intp)
    labels[populated] = np.searchsorted(np.asarray(starts, dtype=np.intp),
                                        np.arange(populated.shape[0]), side="right") - 1
    return labels


def collapse_score_groups(
    counts: ArrayLike, expected: ArrayLike, min_expected: float = 1.0
) -> NDArray[np.intp]:
    """Group adjacent score cells so that each group's expected counts reach a minimum (the
    ``"tails"`` pooling of :func:`sx2_item_fit`).

    A group is adequate when both N_g·E_g = Σ N_s E_s and N_g·(1 − E_g) = Σ N_s (1 − E_s)
    are ≥ ``min_expected``. Rule (from the tails inward): while some group is inadequate and
    more than one group is left, take the inadequate group nearest to either end of the score
    range (counted in groups; the lower one on a tie) and merge it with its neighbour on the
    side of the middle (the next higher group for one in the lower part, the next lower for one
    in the upper part). Sparse tails therefore pool toward the centre, and a sparse interior
    score joins the neighbour nearer the centre. If a single group is left it may still be
    inadequate.

    Parameters
    ----------
    counts : array of shape (m,)
        N_s of consecutive scores (for S-X², s = 1 … n − 1).
    expected : array of shape (m,)
        E_s, the model's proportion correct at each score.
    min_expected : float, default 1.0
        The minimum expected count of correct and of incorrect answers in a group (> 0).

    Returns
    -------
    ndarray of int, shape (m,)
        Group label of each score, 0 … n_groups − 1, non-decreasing.
    """
    n, e = _checked_score_rows(counts, expected, min_expected)
    starts = list(range(n.shape[0]))
    right = list(n * e)
    wrong = list(n * (1.0 - e))
    while len(starts) > 1:
        failing = [g for g in range(len(starts))
                   if right[g] < min_expected or wrong[g] < min_expected]
        if not failing:
            break
        low, high = failing[0], failing[-1]
        # Distance from the bottom of the lowest failing group vs from the top of the highest.
        if low <= len(starts) - 1 - high:
            keep, drop = low, low + 1
        else:
            keep, drop = high - 1, high
        right[keep] += right[drop]
        wrong[keep] += wrong[drop]
        del starts[drop], right[drop], wrong[drop]
    labels = np.searchsorted(np.asarray(starts, dtype=np.intp), np.arange(n.shape[0]),
                             side="right") - 1
    return labels.astype(np.intp)


class SX2Result(NamedTuple):
    """S-X² item fit, each field of shape (n_items,).

    statistic : S-X² (NaN when no adequate group could be formed).
    df : degrees of freedom, groups − estimated parameters (may be ≤ 0).
    p_value : upper tail of χ²(df); NaN where df ≤ 0 or the statistic is NaN.
    n_groups : score groups after collapsing.
    """

    statistic: FloatArray
    df: NDArray[np.intp]
    p_value: FloatArray
    n_groups: NDArray[np.intp]


def sx2_item_fit(
    bank: ItemBank,
    score_counts: ArrayLike,
    correct_by_score: ArrayLike,
    n_estimated_parameters: int = 3,
    min_expected: float = 1.0,
    n_quadrature: int = DEFAULT_N_QUADRATURE,
    theta_range: tuple[float, float] = DEFAULT_THETA_RANGE,
    prior_mean: float = 0.0,
    prior_sd: float = 1.0,
    pooling: str = DEFAULT_POOLING,
) -> SX2Result:
    """Orlando–Thissen S-X² for every item of a fixed booklet, from aggregated counts.

    Parameters
    ----------
    bank : ItemBank
        The booklet's items, in the columns' order; all must have parameters (drop abandoned
        items from the bank and the responses before summing scores).
    score_counts : array of shape (n_items + 1,)
        Examinees (or total frequency weight) at each summed score 0 … n_items.
    correct_by_score : array of shape (n_items, n_items + 1)
        Of those, how many got item i right. :func:`score_tables` builds both from 0/1 data.
    n_estimated_parameters : int, default 3
        Subtracted from the number of groups for the df: 3 for a 3PL calibrated on these
        examinees (2 for a 2PL); 0 for parameters fixed in advance, as INEP's published ones
        are when checked against another sample.
    min_expected : float, default 1.0
        Minimum expected count of correct and of incorrect answers per group.
    n_quadrature, theta_range : int and (float, float)
        Uniform quadrature grid over θ (default 121 points on [−6, 6]).
    pooling : {"mirt", "tails"}, default "mirt"
        How sparse score groups are pooled (:data:`POOLING_RULES`): ``"mirt"`` as mirt's
        ``S_X2`` (:func:`pool_into_less_populated`; empty scores left out; when a single group
        is left still sparse its statistic is reported with a NaN p-value, as mirt does);
        ``"tails"`` toward the centre (:func:`collapse_score_groups`; a single group left
        sparse has a NaN statistic).
    prior_mean, prior_sd : float, default 0.0 and 1.0
        The examinees' latent distribution N(μ, σ²) on the bank's θ scale. E_is depends on it,
        though weakly, because conditioning on the summed score absorbs most of a shift (in
        simulations a cohort at N(0.5, 1) tested under N(0, 1) is not flagged; one at
        N(0, 0.6²) inflates S-X²/df by about a third). ENEM's scale is N(0, 1) in its 2009
        reference group; for another cohort pass its own mean and SD where known.

    Returns
    -------
    SX2Result
        statistic, df, p_value and n_groups, each of shape (n_items,).
    """
    counts = np.asarray(score_counts, dtype=np.float64)
    correct = np.asarray(correct_by_score, dtype=np.float64)
    n_items = bank.n_items
    if counts.shape != (n_items + 1,):
        raise ValueError(f"score_counts must have shape ({n_items + 1},); got {counts.shape}")
    if correct.shape != (n_items, n_items + 1):
        raise ValueError(f"correct_by_score must have shape ({n_items}, {n_items + 1}); "
                         f"got {correct.shape}")
    if not (np.all(np.isfinite(counts)) and np.all(np.isfinite(correct))
            and counts.min() >= 0 and correct.min() >= 0):
        raise ValueError("score_counts and correct_by_score must be finite and non-negative")
    # Relative slack: the two tables may be sums of float weights taken in different orders.
    if np.any(correct > counts * (1.0 + 1e-9)):
        raise ValueError("correct_by_score cannot exceed score_counts at the same score")
    if int(n_estimated_parameters) != n_estimated_parameters or n_estimated_parameters < 0:
        raise ValueError("n_estimated_parameters must be a non-negative integer")
    if pooling not in POOLING_RULES:
        raise ValueError(f"pooling must be one of {POOLING_RULES}; got {pooling!r}")
    pool = pool_into_less_populated if pooling == "mirt" else collapse_score_groups
    # The minimum a group left alone must reach (mirt's rule keeps its rounding slack).
    threshold = (min_expected * (1.0 - _SPARSE_RELATIVE_TOLERANCE) if pooling == "mirt"
                 else min_expected)
    expected = expected_proportions_by_score(bank, n_quadrature, theta_range, prior_mean,
                                             prior_sd)
    inner = slice(1, n_items)  # scores 1 … n − 1
    statistic = np.full(n_items, np.nan)
    n_groups = np.zeros(n_items, dtype=np.intp)
    testable = np.zeros(n_items, dtype=bool)
    for i in range(n_items):
        labels = pool(counts[inner], expected[i, inner], min_expected)
        kept = labels >= 0
        if not kept.any():
            continue
        groups = int(labels[kept][-1]) + 1
        right = np.bincount(labels[kept], (counts[inner] * expected[i, inner])[kept],
                            minlength=groups)
        wrong = np.bincount(labels[kept], (counts[inner] * (1.0 - expected[i, inner]))[kept],
                            minlength=groups)
        observed = np.bincount(labels[kept], correct[i, inner][kept], minlength=groups)
        n_groups[i] = groups
        sparse = min(right.min(), wrong.min()) < threshold
        if sparse and pooling == "tails":
            continue  # one group left and still too sparse: no test
        testable[i] = not sparse
        # N(O − E)²/(E(1 − E)) written with counts: (O·N − E·N)² (1/(N·E) + 1/(N·(1 − E))).
        deviation = observed - right
        statistic[i] = float(np.sum(deviation**2 * (1.0 / right + 1.0 / wrong)))
    df = n_groups - int(n_estimated_parameters)
    p_value = np.full(n_items, np.nan)
    testable &= (df > 0) & np.isfinite(statistic)
    p_value[testable] = chi2.sf(statistic[testable], df[testable])
    return SX2Result(statistic=statistic, df=df, p_value=p_value, n_groups=n_groups)


# --- RMSD ---------------------------------------------------------------------------------------

class PseudoObservedCurves(NamedTuple):
    """Posterior-weighted item characteristic curves on the quadrature grid.

    points : θ grid, shape (k,).
    observed : P_obs,i(θ_q), shape (k, n_items); NaN for items without parameters or answers.
    density : g_i(θ_q), the average posterior of the examinees who answered item i, each column
        summing to 1, shape (k, n_items).
    """

    points: FloatArray
    observed: FloatArray
    density: FloatArray


def pseudo_observed_curves(
    responses: ArrayLike,
    bank: ItemBank,
    weights: ArrayLike | None = None,
    n_quadrature: int = DEFAULT_N_QUADRATURE,
    theta_range: tuple[float, float] = DEFAULT_THETA_RANGE,
    prior_mean: float = 0.0,
    prior_sd: float = 1.0,
) -> PseudoObservedCurves:
    """Pseudo-observed ICCs from each examinee's posterior over the θ grid.

    Parameters
    ----------
    responses : array of shape (n_examinees, n_items)
        1.0 / 0.0 / NaN (missing: the examinee counts for neither the likelihood nor the item's
        curve).
    bank : ItemBank
        Items without parameters get NaN curves and do not enter the posterior.
    weights : array of shape (n_examinees,), optional
        Frequency weights; 1 each by default.
    n_quadrature, theta_range : int and (float, float)
        Uniform θ grid (default 121 points on [−6, 6]).
    prior_mean, prior_sd : float, default 0.0 and 1.0
        The N(μ, σ²) prior of the posterior, on the bank's θ scale.

    Returns
    -------
    PseudoObservedCurves
    """
    check_prior(prior_mean, prior_sd)
    data = counted_responses(responses, bank)
    weight = _frequency_weights(weights, data.n_examinees)
    grid = QuadratureGrid(n_quadrature, theta_range)
    points = grid.points
    log_p, log_q = grid_log_probabilities(data.bank, points)  # (k, usable items)
    log_prior = normal_log_prior(points, prior_mean, prior_sd) + grid.log_weights
    k, n_usable = points.shape[0], data.bank.n_items
    right_mass = np.zeros((k, n_usable))
    answered_mass = np.zeros((k, n_usable))
    for rows in row_blocks(data.n_examinees, _EXAMINEE_BLOCK):
        block = data.rows(rows)
        # Log posterior (k, block) up to a constant per examinee, normalised by log-sum-exp so
        # long tests do not underflow.
        log_post = sliced_product(log_p, block.correct.T) + sliced_product(log_q, block.wrong.T)
        log_post += log_prior[:, None]
        log_post -= log_post.max(axis=0)
        posterior = np.exp(log_post)
        posterior *= weight[rows] / posterior.sum(axis=0)
        # Plain products: their inner dimension is the block of examinees, which
        # ``sliced_product`` (built for short inner dimensions) would cut into one product per
        # grid point, some twenty times slower.
        right_mass += posterior @ block.correct
        if data.all_counted:  # every item answered: the same column for each item
            answered_mass += posterior.sum(axis=1)[:, None]
        else:
            answered_mass += posterior @ block.counted
    observed = np.full((k, bank.n_items), np.nan)
    density = np.full((k, bank.n_items), np.nan)
    usable = bank.usable
    with np.errstate(divide="ignore", invalid="ignore"):
        # A grid point where no posterior mass reached (far tails) has 0/0: NaN, and density 0.
        observed[:, usable] = right_mass / answered_mass
        density[:, usable] = answered_mass / answered_mass.sum(axis=0)
    return PseudoObservedCurves(points=points, observed=observed, density=density)


class RMSDResult(NamedTuple):
    """RMSD item fit, each field of shape (n_items,).

    rmsd : root mean squared deviation of the pseudo-observed from the model ICC (NaN for items
        without parameters or without answers).
    mean_deviation : the signed mean deviation (observed − model), > 0 when the item is easier
        for these examinees than the model says.
    misfit : rmsd > threshold.
    """

    rmsd: FloatArray
    mean_deviation: FloatArray
    misfit: NDArray[np.bool_]


def rmsd_item_fit(
    responses: ArrayLike,
    bank: ItemBank,
    weights: ArrayLike | None = None,
    threshold: float = RMSD_MISFIT_THRESHOLD,
    n_quadrature: int = DEFAULT_N_QUADRATURE,
    theta_range: tuple[float, float] = DEFAULT_THETA_RANGE,
    prior_mean: float = 0.0,
    prior_sd: float = 1.0,
) -> RMSDResult:
    """RMSD and mean deviation of every item (PISA's item fit), with a misfit flag.

    Parameters
    ----------
    responses : array of shape (n_examinees, n_items)
        1.0 / 0.0 / NaN.
    bank : ItemBank
    weights : array of shape (n_examinees,), optional
        Frequency weights; 1 each by default.
    threshold : float, default RMSD_MISFIT_THRESHOLD (0.12, PISA)
        RMSD above it flags the item; 0.10 is a stricter choice some studies make.
    n_quadrature, theta_range, prior_mean, prior_sd
        As for :func:`pseudo_observed_curves`.

    Returns
    -------
    RMSDResult
        rmsd, mean_deviation (probability units, 0 … 1) and misfit, each of shape (n_items,).
    """
    curves = pseudo_observed_curves(responses, bank, weights, n_quadrature, theta_range,
                                    prior_mean, prior_sd)
    model = probability(curves.points, bank)
    # Grid points without posterior mass have density 0 and a NaN curve: they add nothing.
    deviation = np.where(curves.density > 0, curves.observed - model, 0.0)
    has_curve = bank.usable & np.any(curves.density > 0, axis=0)
    rmsd = np.full(bank.n_items, np.nan)
    mean_deviation = np.full(bank.n_items, np.nan)
    rmsd[has_curve] = np.sqrt(np.sum(curves.density * deviation**2, axis=0))[has_curve]
    mean_deviation[has_curve] = np.sum(curves.density * deviation, axis=0)[has_curve]
    with np.errstate(invalid="ignore"):
        misfit = rmsd > threshold
    return RMSDResult(rmsd=rmsd, mean_deviation=mean_deviation, misfit=misfit)


# --- helpers ------------------------------------------------------------------------------------

def _checked_score_rows(
    counts: ArrayLike, expected: ArrayLike, min_expected: float
) -> tuple[FloatArray, FloatArray]:
    """N_s and E_s as float arrays of one shape (m,), with a usable minimum."""
    n = np.asarray(counts, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if n.ndim != 1 or n.shape != e.shape:
        raise ValueError("counts and expected must both have shape (m,)")
    if not (np.isfinite(min_expected) and min_expected > 0):
        raise ValueError(f"min_expected must be finite and positive; got {min_expected!r}")
    return n, e


def _normal_quadrature(
    n_quadrature: int, theta_range: tuple[float, float], prior_mean: float, prior_sd: float
) -> tuple[FloatArray, FloatArray]:
    """Uniform grid points (k,) and N(μ, σ²) weights (k,) summing to 1."""
    grid = QuadratureGrid(n_quadrature, theta_range)
    points = grid.points
    log_density = normal_log_prior(points, prior_mean, prior_sd) + grid.log_weights
    density = np.exp(log_density - log_density.max())
    return points, density / density.sum()


def _check_all_usable(bank: ItemBank) -> None:
    if not bank.usable.all():
        raise ValueError("every item needs parameters for summed scores; drop the items without "
                         "them (bank.subset(bank.usable)) and their columns first")


def _frequency_weights(weights: ArrayLike | None, n_examinees: int) -> FloatArray:
    """Weights as a float array of shape (n_examinees,); ones when None."""
    if weights is None:
        return np.ones(n_examinees)
    weight = np.asarray(weights, dtype=np.float64)
    if weight.shape != (n_examinees,):
        raise ValueError(f"weights must have shape ({n_examinees},); got {weight.shape}")
    if not (np.all(np.isfinite(weight)) and np.all(weight >= 0)):
        raise ValueError("weights must be finite and non-negative")
    return weight
