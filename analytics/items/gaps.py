"""Where machines and humans part, item by item: observed model correctness against the 3PL
expectation at the model's θ, and against humans of the same θ.

For one group of response patterns (the repetitions of one model, or every selected run
pooled) on a set of items:

observed_i
    the share of the patterns that answered item i and got it right;
expected_i
    the 3PL probability at each pattern's own θ, averaged over the same patterns:
    E_i = (1/n_i) Σ_r P_i(θ_r);
residual_i (standardized)
    z_i = (Σ_r x_ri − Σ_r P_i(θ_r)) / sqrt(Σ_r P_i(θ_r)(1 − P_i(θ_r))), the usual Pearson
    residual of the item summed over the patterns. Under the model (each answer an independent
    Bernoulli draw with P_i(θ_r)) it is about N(0, 1); a model's repetitions of one prompt are
    not independent draws, so read it as a ranking score, not a test: |z| ≥ 3 marks an item
    the model finds much easier (z > 0) or much harder (z < 0) than the exam's curve says;
humans_near_i
    the humans' share correct among the candidates whose θ lies near the patterns' mean θ:
    the empirical item characteristic curve (candidates and correct answers per θ bin, stored
    at ingest) summed over the bins whose centre lies within ``half_width`` of that θ;
gap_i
    observed_i − humans_near_i: how much more (or less) often the machine is right than humans
    of its ability, in the data rather than in the model.

Across several run series (:func:`series_agreement`) the unit is the series, not the
repetition: each series s contributes its mean residual d_si = observed_si − expected_si, and
the item is much easier (harder) for the machines when the mean of d over the k series is
positive (negative) beyond what their spread allows: t_i = mean(d) / (sd(d)/√k) on k − 1 degrees
of freedom, two-sided p, Benjamini–Hochberg over the items. Thirty repetitions of one prompt are
nearly one draw, so a per-repetition z marks most items of a pooled selection; the series test
asks whether the models agree. It needs at least :data:`MIN_SERIES` series: from two, t has one
degree of freedom and its SD is half the distance between two numbers, so two series that
happen to agree to the third decimal give a t in the thousands that says nothing; with fewer
series t, p and q are NaN (shown as "—").
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from analytics.irt import FloatArray, ItemBank, probability
from analytics.multiple_testing import benjamini_hochberg

#: Half width (θ units) of the human comparison group around a model's θ.
HUMANS_NEAR_HALF_WIDTH = 0.25
#: |z| at or above which an item is listed as much easier / much harder for one series.
MARKED_RESIDUAL = 3.0
#: The false discovery rate of the across-series marks, and the fewest series the t over
#: series (and so its marks) needs (module notes).
SERIES_Q = 0.05
MIN_SERIES = 3


class ItemGaps(NamedTuple):
    """Per item (arrays of shape (n_items,)): answers (patterns that answered it), observed,
    expected, residual (standardized, NaN without answers or with a variance of 0)."""

    answers: FloatArray
    observed: FloatArray
    expected: FloatArray
    residual: FloatArray


def item_gaps(correct: ArrayLike, theta: ArrayLike, bank: ItemBank) -> ItemGaps:
    """Observed against 3PL-expected correctness per item over a group of patterns.

    Parameters
    ----------
    correct : array of shape (n_patterns, n_items)
        1.0 right, 0.0 wrong, NaN not answered (the item left out of that pattern).
    theta : array of shape (n_patterns,)
        Each pattern's ability estimate on the bank's scale.
    bank : ItemBank
        The items' 3PL parameters, in the columns' order.
    """
    x = np.asarray(correct, dtype=np.float64)
    t = np.asarray(theta, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != bank.n_items or t.shape != (x.shape[0],):
        raise ValueError(f"correct must be (n_patterns, {bank.n_items}) and theta "
                         f"(n_patterns,); got {x.shape} and {t.shape}")
    answered = np.isfinite(x) & np.isfinite(t)[:, None]
    p = np.where(answered, probability(np.where(np.isfinite(t), t, 0.0), bank), 0.0)
    answers = answered.sum(axis=0).astype(np.float64)
    right = np.where(answered, x, 0.0).sum(axis=0)
    expected_sum = p.sum(axis=0)
    variance = (p * (1.0 - p)).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.where(answers > 0, right / answers, np.nan)
        expected = np.where(answers > 0, expected_sum / answers, np.nan)
        residual = np.where((answers > 0) & (variance > 0),
                            (right - expected_sum) / np.sqrt(variance), np.nan)
    return ItemGaps(answers, observed, expected, residual)


def humans_near(answered: ArrayLike, right: ArrayLike, bin_lower: ArrayLike, bin_width: float,
                theta: float, half_width: float = HUMANS_NEAR_HALF_WIDTH
                ) -> tuple[FloatArray, FloatArray]:
    """The humans' share correct near ``theta``, per item, from binned counts.

    Parameters
    ----------
    answered, right : arrays of shape (n_items, n_bins)
        Candidates who answered each item in each θ bin, and how many of them were right.
    bin_lower : array of shape (n_bins,)
        The bins' lower edges (width ``bin_width``).
    theta : float
        The centre of the comparison group; a bin counts when its centre lies within
        ``half_width`` of it.

    Returns
    -------
    (share, candidates) : arrays of shape (n_items,)
        share is NaN for an item without candidates near ``theta``.
    """
    n = np.asarray(answered, dtype=np.float64)
    k = np.asarray(right, dtype=np.float64)
    middles = np.asarray(bin_lower, dtype=np.float64) + bin_width / 2.0
    if n.shape != k.shape or n.ndim != 2 or n.shape[1] != middles.shape[0]:
        raise ValueError("answered and right must be (n_items, n_bins) with one lower edge "
                         f"per bin; got {n.shape}, {k.shape} and {middles.shape}")
    if not np.isfinite(theta):
        return np.full(n.shape[0], np.nan), np.zeros(n.shape[0])
    # The tolerance keeps a bin centre that lies exactly half_width away on both machines.
    near = np.abs(middles - theta) <= half_width + 1e-9
    candidates = n[:, near].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(candidates > 0, k[:, near].sum(axis=1) / candidates, np.nan)
    return share, candidates


def marked_direction(residual: ArrayLike, threshold: float = MARKED_RESIDUAL) -> np.ndarray:
    """'easier' (z ≥ threshold), 'harder' (z ≤ −threshold) or '' per item, shape of
    ``residual``."""
    z = np.asarray(residual, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(z >= threshold, "easier", np.where(z <= -threshold, "harder", ""))


class SeriesAgreement(NamedTuple):
    """Per item (arrays of shape (n_items,)): series (how many answered it), mean_gap (the mean
    over series of observed − expected), t, p_value (two-sided, k − 1 df; NaN with fewer than
    :data:`MIN_SERIES` series or no spread) and q_value (Benjamini–Hochberg over the items)."""

    series: FloatArray
    mean_gap: FloatArray
    t: FloatArray
    p_value: FloatArray
    q_value: FloatArray


def series_agreement(gaps_by_series: list[ItemGaps],
                     min_series: int = MIN_SERIES) -> SeriesAgreement:
    """Whether several series find each item easier (or harder) than the 3PL curve says: a
    one-sample t-test over the series' gaps observed − expected (module notes); t, p and q are
    NaN on an item fewer than ``min_series`` series answered (at least 2)."""
    if min_series < 2:
        raise ValueError(f"a t over series needs at least 2 series, got {min_series}")
    if not gaps_by_series:
        raise ValueError("need the gaps of at least one series")
    d = np.vstack([g.observed - g.expected for g in gaps_by_series])  # (k, n_items)
    k = np.isfinite(d).sum(axis=0).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(k > 0, np.nansum(d, axis=0) / np.maximum(k, 1.0), np.nan)
        spread = np.sqrt(np.nansum((d - mean) ** 2, axis=0) / (k - 1.0))
        t = np.where((k >= min_series) & (spread > 0), mean / (spread / np.sqrt(k)), np.nan)
    p = np.where(np.isfinite(t), 2.0 * stats.t.sf(np.abs(t), np.maximum(k - 1.0, 1.0)), np.nan)
    return SeriesAgreement(k, mean, t, p, benjamini_hochberg(p))


def agreed_direction(agreement: SeriesAgreement, q_level: float = SERIES_Q,
                     min_series: int = MIN_SERIES) -> np.ndarray:
    """'easier', 'harder' or '' per item: the series agree (q < ``q_level``, at least
    ``min_series`` of them) on the sign of the gap."""
    with np.errstate(invalid="ignore"):
        marked = (agreement.q_value < q_level) & (agreement.series >= min_series)
    return np.where(marked & (agreement.mean_gap > 0), "easier",
                    np.where(marked & (agreement.mean_gap < 0), "harder", ""))
