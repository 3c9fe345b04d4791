"""Correctness by the position the key was shown at, on the Options and traps page (no
Streamlit): per series and item, how often the answer was correct when the key stood at each
of the five positions, and how much correctness depends on that position
(:func:`analytics.options.key_position_dependence`: Pearson's χ² of correct × key position)
against the item's difficulty b, with Pearson's r per area.

``answers`` are the rows of :func:`dashboard.options.data.answer_table` (``key_shown`` -1 where
the key's position is unknown; ``correct`` NaN for an answer scored neither way); ``items``
those of :func:`dashboard.options.data.human_items`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.options import key_position_dependence, position_accuracy
from analytics.paper_tables import least_squares_line, pearson
from enem.areas import OPTION_LETTERS

#: One (series, item) of :func:`key_position_counts`.
ITEM_KEYS = ["series", "area", "item_id"]


def rescored_items(answers: pd.DataFrame) -> pd.DataFrame:
    """(series, area, item_id, position) of the items whose answers were scored against another key
    than the stored one (a chosen key marked wrong, or another choice marked right: the paper's 2019
    MT booklet 522 position 16): where the stored key was shown says nothing there."""
    chosen = (answers["chosen"] >= 0) & (answers["key_index"] >= 0) & answers["correct"].notna()
    other = chosen & ((answers["chosen"] == answers["key_index"]) != (answers["correct"] == 1))
    found = answers[other].groupby(["model", "area", "item_id"], as_index=False)["position"].min()
    return found.rename(columns={"model": "series"}).sort_values(ITEM_KEYS) \
        .reset_index(drop=True)


def key_position_counts(answers: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Five rows per series and item (items in booklet order): series, area, item_id, position
    (its lowest place in the booklets the series answered), b, key_position (A–E), answers
    (scored answers with the key shown there), correct, accuracy (NaN without answers).

    Only answers with a known key position and a score count; items of
    :func:`rescored_items` are left out."""
    known = answers[(answers["key_shown"] >= 0) & answers["correct"].notna()]
    known = known.rename(columns={"model": "series"})
    dropped = rescored_items(answers)
    if len(dropped):
        marked = known[ITEM_KEYS].merge(dropped.assign(_drop=True), on=ITEM_KEYS, how="left")
        known = known[marked["_drop"].isna().to_numpy()]
    columns = [*ITEM_KEYS, "position", "b", "key_position", "answers", "correct", "accuracy"]
    if known.empty:
        return pd.DataFrame(columns=columns)
    grouped = known.groupby([*ITEM_KEYS, "key_shown"], sort=False)["correct"]
    cells = grouped.agg(answers="count", correct="sum").reset_index()
    places = known.groupby(ITEM_KEYS, sort=False)["position"].min().rename("position")
    wide = cells.pivot_table(index=ITEM_KEYS, columns="key_shown", values=["answers", "correct"],
                             aggfunc="sum", fill_value=0)
    letters = range(len(OPTION_LETTERS))
    shown = wide["answers"].reindex(columns=letters, fill_value=0).to_numpy(np.float64)
    right = wide["correct"].reindex(columns=letters, fill_value=0).to_numpy(np.float64)
    accuracy = position_accuracy(shown, right)
    index = wide.index.to_frame(index=False)
    index = index.join(places, on=ITEM_KEYS).merge(
        items[["item_id", "b"]].drop_duplicates("item_id"), on="item_id", how="left")
    n = len(index)
    long = pd.DataFrame({
        **{column: np.repeat(index[column].to_numpy(), len(OPTION_LETTERS))
           for column in (*ITEM_KEYS, "position", "b")},
        "key_position": np.tile(list(OPTION_LETTERS), n),
        "answers": shown.ravel().astype(np.int64), "correct": right.ravel().astype(np.int64),
        "accuracy": accuracy.ravel()})
    return long.sort_values(["series", "area", "position", "item_id"], kind="stable") \
        .reset_index(drop=True)[columns]


def key_dependence(counts: pd.DataFrame) -> pd.DataFrame:
    """One row per series and item of :func:`key_position_counts`: series, area, item_id,
    position, b, answers, key_positions (positions that held the key), accuracy (over every
    position) and dependence (χ² of correct × key position; NaN with fewer than two
    positions)."""
    columns = [*ITEM_KEYS, "position", "b", "answers", "key_positions", "accuracy",
               "dependence"]
    if counts.empty:
        return pd.DataFrame(columns=columns)
    width = len(OPTION_LETTERS)
    shown = counts["answers"].to_numpy(np.float64).reshape(-1, width)
    right = counts["correct"].to_numpy(np.float64).reshape(-1, width)
    first = counts.iloc[::width].reset_index(drop=True)
    total = shown.sum(axis=1)
    return pd.DataFrame({
        **{column: first[column].to_numpy() for column in (*ITEM_KEYS, "position", "b")},
        "answers": total.astype(np.int64), "key_positions": (shown > 0).sum(axis=1),
        "accuracy": right.sum(axis=1) / total,
        "dependence": key_position_dependence(shown, right)})[columns]


def dependence_correlations(dependence: pd.DataFrame) -> pd.DataFrame:
    """Per series and area: items (with a dependence and a b), Pearson's r of the dependence
    with b and its two-sided p, and the least-squares line (slope, intercept) of the
    dependence on b."""
    rows = []
    for (series, area), group in dependence.groupby(["series", "area"], sort=False):
        x = group["b"].to_numpy(np.float64)
        y = group["dependence"].to_numpy(np.float64)
        correlation = pearson(x, y)
        slope, intercept = least_squares_line(x, y)
        rows.append({"series": series, "area": area, "items": correlation.n,
                     "r": correlation.r, "p_value": correlation.p_value, "slope": slope,
                     "intercept": intercept})
    return pd.DataFrame(rows, columns=["series", "area", "items", "r", "p_value", "slope",
                                       "intercept"])


def shuffled_series(dependence: pd.DataFrame) -> list[str]:
    """The series, in order, that showed at least one item's key at two or more positions."""
    if dependence.empty:
        return []
    moved = dependence[dependence["key_positions"] >= 2]
    return list(dict.fromkeys(moved["series"]))
