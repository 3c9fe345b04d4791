"""DIF between humans (reference group) and machines (focal group) on one booklet form,
matched on the number-correct score of the form: Mantel–Haenszel with ETS classes and
logistic regression (:mod:`analytics.items.dif`), Benjamini–Hochberg q-values over the items.

The humans come as stored tables (candidates per summed score, and of them how many got each
item right: ``item_score_counts``), the machines as response patterns, each repetition one
examinee whose score counts an unanswered item as wrong, as a blank counts for a candidate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.items.dif import logistic_dif, mantel_haenszel
from analytics.multiple_testing import benjamini_hochberg

DIF_COLUMNS = ["item_id", "position", "mh_odds_ratio", "mh_delta", "mh_delta_se", "mh_chi2",
               "mh_p", "mh_q", "ets_class", "favours", "lr_chi2_uniform", "lr_p_uniform",
               "lr_chi2_total", "lr_p_total", "lr_q_total", "delta_r2", "effect_class",
               "machines"]


def focal_tables(correct: np.ndarray, n_scores: int) -> tuple[np.ndarray, np.ndarray]:
    """The machines' right and wrong counts per item and number-correct score.

    ``correct`` (n_patterns, n_items) 1/0/NaN; returns two (n_items, n_scores) arrays (a
    pattern counts in an item's table only when it answered the item)."""
    score = np.nansum(correct, axis=1).astype(np.int64)
    right = np.zeros((correct.shape[1], n_scores))
    wrong = np.zeros_like(right)
    for item in range(correct.shape[1]):
        answers = correct[:, item]
        known = np.isfinite(answers)
        right[item] = np.bincount(score[known], weights=answers[known], minlength=n_scores)
        wrong[item] = np.bincount(score[known], weights=1.0 - answers[known],
                                  minlength=n_scores)
    return right, wrong


def human_rows(score_counts: np.ndarray, correct_by_score: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The humans' tables as weighted rows for a per-examinee method: each row answers one item
    (the others NaN), right or wrong, at one score, weighted by its number of candidates.

    Returns (responses (rows, n_items), score (rows,), weights (rows,)); empty cells dropped."""
    n_items, n_scores = correct_by_score.shape
    item = np.repeat(np.arange(n_items), 2 * n_scores)
    score = np.tile(np.repeat(np.arange(n_scores), 2), n_items)
    outcome = np.tile([1.0, 0.0], n_items * n_scores)
    right = correct_by_score.astype(np.float64)
    wrong = score_counts[None, :].astype(np.float64) - right
    weights = np.stack([right, wrong], axis=-1).reshape(-1)
    keep = weights > 0
    responses = np.full((int(keep.sum()), n_items), np.nan)
    responses[np.arange(responses.shape[0]), item[keep]] = outcome[keep]
    return responses, score[keep].astype(np.float64), weights[keep]


def human_machine_dif(item_ids: np.ndarray, positions: np.ndarray, score_counts: np.ndarray,
                      correct_by_score: np.ndarray, machine_correct: np.ndarray
                      ) -> pd.DataFrame:
    """One row per item of the form (:data:`DIF_COLUMNS`), in booklet order.

    Parameters
    ----------
    item_ids, positions : arrays of shape (n_items,)
        The form's items in booklet order.
    score_counts : array of shape (n_items + 1,)
        Candidates of the form at each number-correct score 0 … n.
    correct_by_score : array of shape (n_items, n_items + 1)
        Of those, how many got each item right.
    machine_correct : array of shape (n_patterns, n_items)
        The machines' answers to the same items (1/0, NaN unanswered).

    ``favours``: 'humans' where Δ < 0 (the item is harder for the machines than for humans of
    the same score), 'machines' where Δ > 0; ``machines``: patterns that answered the item.
    """
    n_items = len(item_ids)
    n_scores = n_items + 1
    focal_right, focal_wrong = focal_tables(machine_correct, n_scores)
    ref_right = correct_by_score.astype(np.float64)
    ref_wrong = score_counts[None, :].astype(np.float64) - ref_right
    mh = mantel_haenszel(ref_right, ref_wrong, focal_right, focal_wrong)
    rows, score, weights = human_rows(score_counts, correct_by_score)
    responses = np.vstack([rows, machine_correct])
    group = np.concatenate([np.zeros(len(rows), bool), np.ones(len(machine_correct), bool)])
    matching = np.concatenate([score, np.nansum(machine_correct, axis=1)])
    lr = logistic_dif(responses, group, matching,
                      np.concatenate([weights, np.ones(len(machine_correct))]))
    favours = np.where(mh.delta < 0, "humans", np.where(mh.delta > 0, "machines", ""))
    return pd.DataFrame({
        "item_id": item_ids, "position": positions, "mh_odds_ratio": mh.common_odds_ratio,
        "mh_delta": mh.delta, "mh_delta_se": mh.delta_se, "mh_chi2": mh.chi2,
        "mh_p": mh.p_value, "mh_q": benjamini_hochberg(mh.p_value),
        "ets_class": mh.ets_class, "favours": favours,
        "lr_chi2_uniform": lr.chi2_uniform, "lr_p_uniform": lr.p_uniform,
        "lr_chi2_total": lr.chi2_total, "lr_p_total": lr.p_total,
        "lr_q_total": benjamini_hochberg(lr.p_total), "delta_r2": lr.delta_r2,
        "effect_class": lr.effect_class,
        "machines": (focal_right + focal_wrong).sum(axis=1).astype(np.int64)})[DIF_COLUMNS]
