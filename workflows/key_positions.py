"""Correctness by the position the key was shown at (the Options and traps page and
``enem-llm items --table key-position``): per series and item, how often the answer was
correct when the key stood at each of the five positions, and how much correctness depends on
that position against the item's difficulty b, with Pearson's r per area. Two measures of that
dependence: Pearson's χ² of correct × key position
(:func:`analytics.options.key_position_dependence`), and the paper's uniformity measure, the
most minus the fewest correct answers over the five positions
(:func:`analytics.options.key_position_uniformity`, 0–24 when all 120 orders were shown).

``answers`` are the rows of :func:`dashboard.options.data.answer_table` or of
:func:`key_shown_answers` (``key_shown`` -1 where the key's position is unknown; ``correct``
NaN for an answer scored neither way); ``items`` need item_id and b.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analytics.options import (
    key_position_dependence,
    key_position_uniformity,
    position_accuracy,
    shown_positions,
)
from analytics.paper_tables import least_squares_line, pearson
from enem.areas import OPTION_LETTERS
from store import item_queries, option_queries
from store.model_runs import UNRECORDED_OPTION

#: One (series, item) of :func:`key_position_counts`.
ITEM_KEYS = ["series", "area", "item_id"]


#: The per-position correct counts of :func:`key_dependence`.
CORRECT_AT = [f"correct_{letter}" for letter in OPTION_LETTERS]
#: The two measures of how much correctness depends on the key's position, and their labels.
MEASURES = {"dependence": "χ² of correct × key position",
            "uniformity": "the paper's uniformity (most − fewest correct over the positions)"}


def letter_index(letters: pd.Series) -> np.ndarray:
    """'A'–'E' → 0–4; anything else (blank, '.', 'X', NULL) → -1."""
    return pd.Index(list(OPTION_LETTERS)).get_indexer(pd.Series(letters, dtype=object))


def permutation_indices(permutation) -> np.ndarray | None:
    """A stored permutation ('CAEBD': the original letter shown under A, B, …; '?C??A' where
    the source recorded only some, :data:`store.model_runs.UNRECORDED_OPTION`) as indices, -1
    where not recorded; None when it is missing, records nothing, or is no (partial)
    permutation of A–E."""
    if not isinstance(permutation, str) or len(permutation) != len(OPTION_LETTERS):
        return None
    known = [letter for letter in permutation if letter != UNRECORDED_OPTION]
    if not known or len(set(known)) != len(known) or not set(known) <= set(OPTION_LETTERS):
        return None
    return np.array([OPTION_LETTERS.index(letter) if letter != UNRECORDED_OPTION else -1
                     for letter in permutation], dtype=np.int64)


def shown_at(permutations: pd.Series, options: np.ndarray) -> np.ndarray:
    """Where each row's option (``options``, indices 0–4, -1 for none) was shown under its
    stored permutation: display positions 0–4, -1 where unknown."""
    codes, distinct = pd.factorize(permutations)
    # A run shows at most 120 orders: read each distinct one once.
    lookup = [permutation_indices(text) for text in distinct]
    recorded = codes >= 0
    recorded[recorded] = [lookup[code] is not None for code in codes[recorded]]
    out = np.full(len(options), -1, dtype=np.int64)
    if recorded.any():
        table = np.stack([order if order is not None else np.arange(len(OPTION_LETTERS))
                          for order in lookup])
        out[recorded] = shown_positions(np.asarray(options)[recorded], table[codes[recorded]])
    return out


def key_shown_answers(answers: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """``store.option_queries.model_option_answers`` rows with what the key-position tables
    need: area, chosen and key_index (0–4, -1 for none), correct as 1/0/NaN, key_shown."""
    merged = answers.merge(items[["item_id", "area", "key"]], on="item_id", how="left")
    merged["chosen"] = letter_index(merged["choice"])
    merged["key_index"] = letter_index(merged["key"])
    merged["correct"] = pd.to_numeric(merged["correct"].astype(object), errors="coerce") \
        .astype(np.float64)
    merged["key_shown"] = shown_at(merged["permutation"], merged["key_index"].to_numpy())
    return merged


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
    (its lowest place in the booklets the series answered), b, key_position (A–E), shown
    (answers with the key shown there, those without a letter included), answers (the scored
    ones), correct, accuracy (NaN without answers).

    Only answers with a known key position count; items of :func:`rescored_items` are left
    out."""
    known = answers[answers["key_shown"] >= 0]
    known = known.rename(columns={"model": "series"})
    dropped = rescored_items(answers)
    if len(dropped):
        marked = known[ITEM_KEYS].merge(dropped.assign(_drop=True), on=ITEM_KEYS, how="left")
        known = known[marked["_drop"].isna().to_numpy()]
    columns = [*ITEM_KEYS, "position", "b", "key_position", "shown", "answers", "correct",
               "accuracy"]
    if known.empty:
        return pd.DataFrame(columns=columns)
    grouped = known.groupby([*ITEM_KEYS, "key_shown"], sort=False)["correct"]
    cells = grouped.agg(shown="size", answers="count", correct="sum").reset_index()
    places = known.groupby(ITEM_KEYS, sort=False)["position"].min().rename("position")
    wide = cells.pivot_table(index=ITEM_KEYS, columns="key_shown",
                             values=["shown", "answers", "correct"], aggfunc="sum", fill_value=0)
    letters = range(len(OPTION_LETTERS))
    exposed = wide["shown"].reindex(columns=letters, fill_value=0).to_numpy(np.float64)
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
        "shown": exposed.ravel().astype(np.int64),
        "answers": shown.ravel().astype(np.int64), "correct": right.ravel().astype(np.int64),
        "accuracy": accuracy.ravel()})
    return long.sort_values(["series", "area", "position", "item_id"], kind="stable") \
        .reset_index(drop=True)[columns]


def key_dependence(counts: pd.DataFrame) -> pd.DataFrame:
    """One row per series and item of :func:`key_position_counts`: series, area, item_id,
    position, b, answers, key_positions (positions that held the key), accuracy (over every
    position), dependence (χ² of correct × key position; NaN with fewer than two positions),
    correct_A … correct_E (correct answers with the key at each position) and uniformity (the
    paper's measure, most minus fewest of those; NaN unless every position held the key
    equally often, answers without a letter included)."""
    columns = [*ITEM_KEYS, "position", "b", "answers", "key_positions", "accuracy",
               "dependence", *CORRECT_AT, "uniformity"]
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
        "dependence": key_position_dependence(shown, right),
        **{column: right[:, d].astype(np.int64) for d, column in enumerate(CORRECT_AT)},
        "uniformity": key_position_uniformity(
            counts["shown"].to_numpy(np.float64).reshape(-1, width), right)})[columns]


def dependence_correlations(dependence: pd.DataFrame,
                            measure: str = "dependence") -> pd.DataFrame:
    """Per series and area: items (with the measure and a b), Pearson's r of the ``measure``
    (a :data:`MEASURES` column of :func:`key_dependence`) with b and its two-sided p, and the
    least-squares line (slope, intercept) of the measure on b."""
    rows = []
    for (series, area), group in dependence.groupby(["series", "area"], sort=False):
        x = group["b"].to_numpy(np.float64)
        y = group[measure].to_numpy(np.float64)
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


#: The columns of :func:`key_position_table`, as ``enem-llm items --table key-position``
#: prints them.
TABLE_COLUMNS = ["series", "item_id", "position", "b", "answers", *CORRECT_AT, "uniformity",
                 "dependence"]


def key_position_table(con, year: int, area: str, language: str | None, shots: int | None,
                       models: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per series and item of an area (booklet order): the correct answers with the key at
    each position, the paper's uniformity measure and the χ² (:data:`TABLE_COLUMNS`); and per
    series the correlation of the uniformity with b (:func:`dependence_correlations`; series
    without a balanced design left out). ``language``/``shots`` None: every prompt language /
    every shots setting."""
    answers = option_queries.model_option_answers(con, year, area, None, language, shots,
                                                  models)
    items = item_queries.area_items(con, year, area).assign(area=area)
    counts = key_position_counts(key_shown_answers(answers, items), items)
    dependence = key_dependence(counts)
    table = dependence[TABLE_COLUMNS] if len(dependence) else pd.DataFrame(columns=TABLE_COLUMNS)
    measured = dependence[dependence["uniformity"].notna()] if len(dependence) else dependence
    return table.reset_index(drop=True), dependence_correlations(measured, "uniformity")
