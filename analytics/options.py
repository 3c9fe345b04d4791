"""Option-level behaviour: trap items, shared distractors, option distributions, positions.

Options are indices 0..4 (A..E); -1 means none (no key, no answer, no distractor). Option
counts are arrays (n_items, 5) of how many answers chose each option; blanks and multiple marks
are not options and are left out before these functions see the counts.

Definitions (the Options and traps page states them too):

- the **most chosen distractor** of an item is its wrong option chosen most often (ties: the
  earliest letter);
- an item is a **trap** when that distractor draws at least as many answers as the key;
- the **θ-conditional** version counts only answers of examinees whose θ lies near the item's
  difficulty b (:func:`counts_near`), where a 3PL item without a trap is answered correctly
  more often than any single wrong option, so a merely hard item is not called a trap;
- **distractor agreement**: among a model's wrong answers, the share that chose the humans'
  most chosen distractor; by chance (a wrong answer spread evenly over the four wrong options)
  it is 1/4 (:data:`DISTRACTOR_CHANCE`);
- **key-position dependence** of an item: Pearson's χ² of independence between correctness and
  the position the key was shown at (:func:`key_position_dependence`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from analytics.significance import BinomialTest, binomial_test

N_OPTIONS = 5
#: The chance that a wrong answer picks one given wrong option of four.
DISTRACTOR_CHANCE = 1.0 / (N_OPTIONS - 1)
NO_OPTION = -1


def _counts(counts: ArrayLike) -> np.ndarray:
    array = np.asarray(counts, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] != N_OPTIONS:
        raise ValueError(f"option counts must be (n_items, {N_OPTIONS}); got {array.shape}")
    return array


def most_chosen_distractor(counts: ArrayLike, key: ArrayLike) -> np.ndarray:
    """(n_items,) int: the wrong option with the most answers (ties: earliest letter); -1
    where the item has no key or no answers."""
    table = _counts(counts)
    keys = np.asarray(key, dtype=np.int64)
    wrong = table.copy()
    has_key = keys >= 0
    wrong[np.flatnonzero(has_key), keys[has_key]] = -np.inf
    best = np.argmax(wrong, axis=1)
    return np.where(has_key & (table.sum(axis=1) > 0), best, NO_OPTION)


def trap_flags(counts: ArrayLike, key: ArrayLike) -> np.ndarray:
    """(n_items,) float: 1.0 where the most chosen distractor draws at least as many answers as
    the key, 0.0 where it draws fewer, NaN where undefined (no key or no answers)."""
    table = _counts(counts)
    keys = np.asarray(key, dtype=np.int64)
    distractor = most_chosen_distractor(table, keys)
    defined = distractor >= 0
    rows = np.arange(len(table))
    key_count = table[rows, np.where(defined, keys, 0)]
    lure_count = table[rows, np.where(defined, distractor, 0)]
    return np.where(defined, (lure_count >= key_count).astype(np.float64), np.nan)


def counts_near(bin_counts: ArrayLike, bin_lower: ArrayLike, bin_width: float,
                centre: ArrayLike, half_width: float) -> np.ndarray:
    """Option counts of the examinees whose θ bin lies near ``centre``.

    ``bin_counts`` (n_items, n_bins, 5): answers per item, θ bin and option; ``bin_lower``
    (n_bins,): lower bin edges of width ``bin_width``; ``centre`` (n_items,) or a scalar: the θ
    each item is looked at (its b, or a model's θ). A bin counts when its centre lies within
    ``half_width`` of the item's centre. Returns (n_items, 5); NaN centres give zeros.
    """
    table = np.asarray(bin_counts, dtype=np.float64)
    if table.ndim != 3 or table.shape[2] != N_OPTIONS:
        raise ValueError(f"bin counts must be (n_items, n_bins, {N_OPTIONS}); got {table.shape}")
    middles = np.asarray(bin_lower, dtype=np.float64) + bin_width / 2
    centres = np.broadcast_to(np.asarray(centre, dtype=np.float64), (table.shape[0],))
    with np.errstate(invalid="ignore"):
        near = np.abs(middles[None, :] - centres[:, None]) <= half_width + 1e-9
    return np.einsum("ib,ibk->ik", near.astype(np.float64), table)


def distractor_agreement(chosen: ArrayLike, key: ArrayLike, distractor: ArrayLike,
                         alternative: str = "two-sided") -> BinomialTest:
    """How often wrong answers chose the humans' most chosen distractor, against 1/4.

    All arguments are (n_answers,) option indices: the option chosen (-1: no answer), the
    item's key and the item's most chosen distractor among humans (-1: none). Counted are the
    answers that chose an option other than the key on an item with a key and a distractor;
    unanswered items are no choice and are left out. Returns the binomial test of the agreeing
    answers among them against :data:`DISTRACTOR_CHANCE`.
    """
    chosen = np.asarray(chosen, dtype=np.int64)
    keys = np.asarray(key, dtype=np.int64)
    lures = np.asarray(distractor, dtype=np.int64)
    wrong = (chosen >= 0) & (keys >= 0) & (lures >= 0) & (chosen != keys)
    agreed = wrong & (chosen == lures)
    return binomial_test(int(agreed.sum()), int(wrong.sum()), DISTRACTOR_CHANCE, alternative)


def jensen_shannon_distance(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """Jensen–Shannon distance (base 2, in [0, 1]) between distributions along the last axis.

    ``p`` and ``q`` are counts or probabilities of the same shape (..., k); each is normalised
    to sum to 1. With m = (p + q)/2, JSD = ½·KL(p‖m) + ½·KL(q‖m) in bits and the distance is
    sqrt(JSD). NaN where either has no mass.
    """
    a = np.asarray(p, dtype=np.float64)
    b = np.asarray(q, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"p and q must have one shape, got {a.shape} and {b.shape}")
    total_a, total_b = a.sum(axis=-1, keepdims=True), b.sum(axis=-1, keepdims=True)
    empty = (total_a <= 0) | (total_b <= 0)
    a = np.where(empty, 0.0, a / np.where(empty, 1.0, total_a))
    b = np.where(empty, 0.0, b / np.where(empty, 1.0, total_b))
    m = (a + b) / 2
    divergence = (_kl_terms(a, m) + _kl_terms(b, m)).sum(axis=-1) / 2
    # Rounding can leave a divergence a hair below 0 for identical distributions.
    distance = np.sqrt(np.clip(divergence, 0.0, 1.0))
    return np.where(empty[..., 0], np.nan, distance)


def _kl_terms(p: np.ndarray, m: np.ndarray) -> np.ndarray:
    """p·log2(p/m) elementwise, 0 where p = 0 (m > 0 wherever p > 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, p * np.log2(p / np.where(m > 0, m, 1.0)), 0.0)


def option_shares(counts: ArrayLike) -> np.ndarray:
    """Counts (..., k) → shares of their row total; NaN rows where the total is 0."""
    table = np.asarray(counts, dtype=np.float64)
    total = table.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, table / total, np.nan)


def shown_positions(original: ArrayLike, permutations: ArrayLike) -> np.ndarray:
    """Where each answer's option was shown: (n,) display indices 0..4 (A..E), -1 when unknown.

    ``original`` (n,): original option indices (a choice, or the key; -1 for none);
    ``permutations`` (n, 5): the option order of each answer's prompt, ``permutations[i, d]``
    being the original option shown under letter d (the convention of ``inference.shuffles``),
    or -1 where the source did not record which option was shown there (a *partial* order, as
    imported results give: ``?C??A``). The shown position is the d with
    ``permutations[i, d] == original[i]``; -1 when ``original[i]`` is -1 or not among the row's
    recorded entries. Each row's recorded entries must be distinct options 0..4.
    """
    options = np.asarray(original, dtype=np.int64)
    orders = np.asarray(permutations, dtype=np.int64)
    if orders.shape != (len(options), N_OPTIONS):
        raise ValueError(f"permutations must be ({len(options)}, {N_OPTIONS}); got {orders.shape}")
    if ((orders < NO_OPTION) | (orders >= N_OPTIONS)).any():
        raise ValueError("permutations hold options 0..4, or -1 where not recorded")
    shown_twice = ((orders[:, :, None] == np.arange(N_OPTIONS)).sum(axis=1) > 1).any()
    if shown_twice:
        raise ValueError("an option is shown at two places in one row of permutations")
    hits = (orders == options[:, None]) & (options[:, None] >= 0)
    return np.where(hits.any(axis=1), np.argmax(hits, axis=1), NO_OPTION)


def _key_counts(answers: ArrayLike, correct: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    shown = np.asarray(answers, dtype=np.float64)
    right = np.asarray(correct, dtype=np.float64)
    if shown.ndim != 2 or shown.shape[1] != N_OPTIONS or right.shape != shown.shape:
        raise ValueError(f"answers and correct must both be (n_items, {N_OPTIONS}); got "
                         f"{shown.shape} and {right.shape}")
    if (right < 0).any() or (right > shown).any():
        raise ValueError("correct counts must lie between 0 and the answers at each position")
    return shown, right


def position_accuracy(answers: ArrayLike, correct: ArrayLike) -> np.ndarray:
    """(n_items, 5) share of correct answers among those whose key was shown at each position.

    ``answers`` (n_items, 5): scored answers with the item's key shown under letter d;
    ``correct`` (n_items, 5): how many of them were correct. NaN where the key was never shown
    there.
    """
    shown, right = _key_counts(answers, correct)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(shown > 0, right / shown, np.nan)


def key_position_dependence(answers: ArrayLike, correct: ArrayLike) -> np.ndarray:
    """(n_items,) how much correctness depends on where the key was shown: Pearson's χ² of
    independence of the 2 × k table (correct, wrong) × the k positions that held the key.

    ``answers`` and ``correct`` are (n_items, 5) as in :func:`position_accuracy`. With n_d
    answers and c_d correct ones when the key stood at position d, N = Σ n_d and
    p = Σ c_d / N, the expected correct count at d is n_d·p and

        χ² = Σ_d (c_d − n_d·p)² / (n_d·p·(1 − p))   (over the d with n_d > 0),

    which is ``scipy.stats.chi2_contingency(table, correction=False).statistic``. It lies in
    [0, N]: 0 when every position has the same accuracy, N when correctness is fully decided
    by the position. An item answered always right or always wrong gets 0 (its correctness
    does not vary, so it cannot depend on the position); an item whose key was shown at fewer
    than two positions has nothing to compare and gets NaN.
    """
    shown, right = _key_counts(answers, correct)
    total, total_right = shown.sum(axis=1), right.sum(axis=1)
    positions = (shown > 0).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = total_right / total
        spread = shown * share[:, None] * (1.0 - share[:, None])
        terms = np.where(shown > 0, (right - shown * share[:, None]) ** 2 / spread, 0.0)
    varied = (total_right > 0) & (total_right < total)
    statistic = np.where(varied, terms.sum(axis=1), 0.0)
    return np.where(positions >= 2, statistic, np.nan)


def key_position_uniformity(answers: ArrayLike, correct: ArrayLike) -> np.ndarray:
    """(n_items,) the paper's uniformity measure: the most minus the fewest correct answers over
    the five positions the key was shown at, max_d c_d − min_d c_d.

    ``answers`` and ``correct`` are (n_items, 5) as in :func:`position_accuracy`. The counts
    compare only when every position held the key equally often (24 times each when an item
    is asked under all 120 orders of its options, so the measure runs 0–24): NaN for an item
    where the positions held it unequally often, or never.
    """
    shown, right = _key_counts(answers, correct)
    balanced = (shown.min(axis=1) == shown.max(axis=1)) & (shown[:, 0] > 0)
    return np.where(balanced, right.max(axis=1) - right.min(axis=1), np.nan)


def difficulty_band_edges(b: ArrayLike, n_bands: int = 3) -> np.ndarray:
    """(n_bands + 1,) edges of equal-count bands of the finite values of ``b`` (its quantiles;
    the outer edges are the minimum and maximum)."""
    values = np.asarray(b, dtype=np.float64)
    values = values[np.isfinite(values)]
    if n_bands < 1 or len(values) == 0:
        raise ValueError("need at least one band and one finite b")
    return np.quantile(values, np.linspace(0.0, 1.0, n_bands + 1))


def difficulty_band(b: ArrayLike, edges: ArrayLike) -> np.ndarray:
    """(n,) band index of each b: band j holds edges[j] ≤ b < edges[j+1], the last band
    including its upper edge; -1 for NaN or b outside the edges."""
    values = np.asarray(b, dtype=np.float64)
    bounds = np.asarray(edges, dtype=np.float64)
    index = np.searchsorted(bounds, values, side="right") - 1
    index = np.where(values == bounds[-1], len(bounds) - 2, index)
    inside = np.isfinite(values) & (values >= bounds[0]) & (values <= bounds[-1])
    return np.where(inside, index, -1)
