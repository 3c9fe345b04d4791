"""The numbers of the Options and traps page, built from the store's frames (no Streamlit).

The statistics come from :mod:`analytics.options` and :mod:`analytics.significance`; this module
puts the store's rows into their arrays and their results into tables. Options are indices
0..4 (A..E) inside, letters in every table shown. Accuracy is always the mean over items of the
share of an item's answers that are correct, for humans (the item p-value) and for a model
(over its repetitions), so each item weighs the same in both.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.options import (
    counts_near,
    difficulty_band,
    difficulty_band_edges,
    distractor_agreement,
    most_chosen_distractor,
    option_shares,
    trap_flags,
)
from analytics.significance import chi_square_goodness_of_fit
from enem.areas import OPTION_LETTERS
from enem.item_statistics import ICC_BIN_WIDTH
from workflows.key_positions import letter_index, shown_at

#: Half-width (logits) of the θ window around an item's b (θ-conditional trap) or a model's θ.
NEAR = 0.5
#: Difficulty bands: equal thirds of an area's items ordered by b.
BAND_NAMES: tuple[str, ...] = ("easy", "medium", "difficult")
HUMANS = "humans"
SHARE_COLUMNS = [f"share_{letter}" for letter in OPTION_LETTERS]


def _letter(index: np.ndarray) -> list[str | None]:
    return [OPTION_LETTERS[i] if i >= 0 else None for i in np.asarray(index, dtype=np.int64)]


def _letter_counts(counts: pd.DataFrame, item_ids: np.ndarray) -> np.ndarray:
    """(n_items, 5) candidates per letter from rows item_id, option, n (other marks dropped)."""
    table = counts[counts["option"].isin(list(OPTION_LETTERS))].pivot_table(
        index="item_id", columns="option", values="n", aggfunc="sum", fill_value=0)
    return table.reindex(index=item_ids, columns=list(OPTION_LETTERS), fill_value=0) \
        .to_numpy(np.float64)


def theta_cube(theta_counts: pd.DataFrame, item_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n_items, n_bins, 5) candidates per item, θ bin and letter, and the bins' lower edges,
    from rows item_id, theta_bin, option, n."""
    bins = np.sort(theta_counts["theta_bin"].unique()) if len(theta_counts) else np.zeros(0)
    cube = np.zeros((len(item_ids), len(bins), len(OPTION_LETTERS)))
    if len(theta_counts):
        row_of = pd.Series(np.arange(len(item_ids)), index=item_ids)
        known = theta_counts[theta_counts["item_id"].isin(item_ids)]
        rows = row_of[known["item_id"]].to_numpy()
        np.add.at(cube, (rows, np.searchsorted(bins, known["theta_bin"]),
                         letter_index(known["option"])), known["n"].to_numpy(np.float64))
    return cube, bins


def human_items(area: str, items: pd.DataFrame, counts: pd.DataFrame,
                theta_counts: pd.DataFrame) -> pd.DataFrame:
    """One row per item of an area: area, item_id, key, b, band (easy/medium/difficult by b),
    human_p, human_n (candidates who saw it), humans_with_a_letter, share_A..E (of those),
    distractor (the letter), trap (1/0/NaN), trap_near_b (the same among candidates within
    :data:`NEAR` of b; NaN without them) and candidates_near_b."""
    ids = items["item_id"].to_numpy(np.int64)
    keys = letter_index(items["key"])
    letters = _letter_counts(counts, ids)
    cube, bins = theta_cube(theta_counts, ids)
    b = items["b"].to_numpy(np.float64)
    near = counts_near(cube, bins, ICC_BIN_WIDTH, b, NEAR) if len(bins) else np.zeros_like(letters)
    near_flags = np.where(np.isfinite(b), trap_flags(near, keys), np.nan)
    finite = np.isfinite(b)
    band = (difficulty_band(b, difficulty_band_edges(b, len(BAND_NAMES))) if finite.any()
            else np.full(len(b), -1))
    frame = pd.DataFrame({
        "area": area, "item_id": ids, "key": items["key"].to_numpy(), "b": b,
        "band": [BAND_NAMES[i] if i >= 0 else None for i in band],
        "human_p": items["p_value"].to_numpy(np.float64),
        "human_n": items["n"].to_numpy(np.float64),
        "humans_with_a_letter": letters.sum(axis=1),
        "distractor": _letter(most_chosen_distractor(letters, keys)),
        "trap": trap_flags(letters, keys), "trap_near_b": near_flags,
        "candidates_near_b": np.where(finite, near.sum(axis=1), np.nan),
    })
    frame[SHARE_COLUMNS] = option_shares(letters)
    return frame


def answer_table(answers: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """The model answers (``store.option_queries.model_option_answers``) with option indices:
    chosen, key_index and distractor (the humans' most chosen distractor), and the positions
    shown: shown (of the chosen option) and key_shown, -1 where unknown (no choice, a run that
    did not record its option order, or an option its partial order leaves out). Items carry area,
    band, trap and trap_near_b."""
    merged = answers.merge(items[["item_id", "area", "key", "band", "distractor", "trap",
                                  "trap_near_b"]], on="item_id", how="left")
    merged["chosen"] = letter_index(merged["choice"])
    merged["key_index"] = letter_index(merged["key"])
    merged["distractor_index"] = letter_index(merged["distractor"])
    # 1/0, NaN for an answer scored neither way (a generated answer whose letter was unread).
    merged["correct"] = pd.to_numeric(merged["correct"].astype(object), errors="coerce") \
        .astype(np.float64)
    merged["shown"] = shown_at(merged["permutation"], merged["chosen"].to_numpy())
    merged["key_shown"] = shown_at(merged["permutation"], merged["key_index"].to_numpy())
    return merged


def model_item_accuracy(answers: pd.DataFrame) -> pd.DataFrame:
    """Per series and item: answers (scored ones: an unread generated answer is left out),
    correct, accuracy (share correct)."""
    grouped = answers.groupby(["model", "item_id"], sort=True)["correct"]
    frame = grouped.agg(answers="count", correct="sum").reset_index()
    frame["accuracy"] = frame["correct"] / frame["answers"]
    return frame


def trap_table(items: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """Accuracy x/y as Khayyam's trap table, humans first then each series: accuracy on every
    item, on the trap items and on the θ-conditional trap items, with the number of items of
    each. Humans: the items with a p-value; a series: the items it answered."""
    # Only the two flag columns are looked up per series (reindexing the whole item table,
    # text columns included, cost more than the rest of the table).
    flags = items.set_index("item_id")[["trap", "trap_near_b"]]
    rows = [_accuracy_row(HUMANS, items.set_index("item_id")["human_p"], flags)]
    per_item = model_item_accuracy(answers)
    for model, group in per_item.groupby("model", sort=False):
        rows.append(_accuracy_row(model, group.set_index("item_id")["accuracy"], flags))
    return pd.DataFrame(rows)


def _accuracy_row(who: str, accuracy: pd.Series, item_flags: pd.DataFrame) -> dict:
    accuracy = accuracy.dropna()
    flags = item_flags.reindex(accuracy.index)
    row = {"series": who, "items": len(accuracy), "accuracy_all": accuracy.mean()}
    for column in ("trap", "trap_near_b"):
        chosen = accuracy[flags[column].to_numpy() == 1]
        row[f"{column}_items"] = len(chosen)
        row[f"accuracy_{column}"] = chosen.mean() if len(chosen) else np.nan
    return row


def distractor_table(answers: pd.DataFrame) -> pd.DataFrame:
    """Per series: wrong answers (with a choice, on items with a key and a humans' distractor),
    how many chose the humans' most chosen distractor, that share, chance (1/4) and the
    two-sided exact binomial p-value."""
    rows = []
    for model, group in answers.groupby("model", sort=False):
        test = distractor_agreement(group["chosen"], group["key_index"],
                                    group["distractor_index"])
        rows.append({"series": model, "wrong_answers": test.trials, "agreed": test.successes,
                     "share": test.share, "chance": test.chance, "p_value": test.p_value})
    return pd.DataFrame(rows, columns=["series", "wrong_answers", "agreed", "share", "chance",
                                       "p_value"])


def position_table(answers: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Where chosen options were shown: (long, tests).

    long: series, position (A–E), chosen (answers whose option was shown there), share, key
    (answers whose key was shown there). tests: series, answers, chi2, dof, p_value (χ² of the
    chosen positions against uniform). Only answers with a choice and a recorded order count.
    """
    long_rows, test_rows = [], []
    for model, group in answers.groupby("model", sort=False):
        known = group[group["shown"] >= 0]
        chosen = np.bincount(known["shown"], minlength=len(OPTION_LETTERS))
        keys = np.bincount(known["key_shown"][known["key_shown"] >= 0],
                           minlength=len(OPTION_LETTERS))
        test = chi_square_goodness_of_fit(chosen)
        test_rows.append({"series": model, "answers": test.total, "chi2": test.statistic,
                          "dof": test.dof, "p_value": test.p_value})
        total = chosen.sum()
        for index, letter in enumerate(OPTION_LETTERS):
            long_rows.append({"series": model, "position": letter, "chosen": int(chosen[index]),
                              "share": chosen[index] / total if total else np.nan,
                              "key": int(keys[index])})
    return (pd.DataFrame(long_rows, columns=["series", "position", "chosen", "share", "key"]),
            pd.DataFrame(test_rows, columns=["series", "answers", "chi2", "dof", "p_value"]))
