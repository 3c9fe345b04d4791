"""The item gap table of a selection: per run series and item, and pooled over the selected
runs, the models' correct rate against the 3PL curve at their θ and against humans of their θ
(:mod:`analytics.items.gaps`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.irt import ItemBank
from analytics.items.gaps import (
    HUMANS_NEAR_HALF_WIDTH,
    MIN_SERIES,
    agreed_direction,
    humans_near,
    item_gaps,
    marked_direction,
    series_agreement,
)
from enem.item_statistics import ICC_BIN_WIDTH
from workflows.items.selection import pattern_matrix

#: The series name of the rows pooled over every selected run.
ALL_RUNS = "all selected runs"

GAP_COLUMNS = ["series", "item_id", "position", "skill", "a", "b", "c", "point_biserial",
               "theta", "answers",
               "observed", "expected", "humans_near", "humans_near_n", "gap", "residual",
               "series_count", "series_t", "series_q", "direction"]


def icc_arrays(icc: pd.DataFrame, item_ids: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows item_id, theta_bin, n, n_correct as (answered, right) of shape (n_items, n_bins)
    in the order of ``item_ids``, and the bins' lower edges (n_bins,)."""
    bins = np.sort(icc["theta_bin"].unique()) if len(icc) else np.zeros(0)
    answered = np.zeros((len(item_ids), len(bins)))
    right = np.zeros_like(answered)
    if len(icc):
        row_of = pd.Series(np.arange(len(item_ids)), index=item_ids)
        known = icc[icc["item_id"].isin(item_ids)]
        rows = row_of[known["item_id"]].to_numpy()
        columns = np.searchsorted(bins, known["theta_bin"].to_numpy(np.float64))
        np.add.at(answered, (rows, columns), known["n"].to_numpy(np.float64))
        np.add.at(right, (rows, columns), known["n_correct"].to_numpy(np.float64))
    return answered, right, bins


def gap_table(patterns: pd.DataFrame, items: pd.DataFrame, icc: pd.DataFrame,
              scaling: float = 1.0) -> pd.DataFrame:
    """Per series and item, then the pooled rows (series :data:`ALL_RUNS`), columns
    :data:`GAP_COLUMNS`, items in booklet order.

    ``patterns``: the selection's long pattern rows (``model_pattern_matrix``); ``items``: the
    area's items (``area_items``: item_id, first_position, skill, a, b, c, …) — items without
    3PL parameters (abandoned) are left out; ``icc``: the humans' binned correct counts
    (item_id, theta_bin, n, n_correct); ``scaling``: the year's D.
    θ of a series is the mean of its patterns' θ; the humans near it are the candidates within
    :data:`HUMANS_NEAR_HALF_WIDTH` of it. The pooled rows' humans_near is the answers-weighted
    mean of the series' values; their series_count, series_t and series_q test whether the
    series agree on the sign of observed − expected (``analytics.items.gaps.series_agreement``),
    which marks them when there are at least ``MIN_SERIES`` series (|z| ≥ 3 otherwise, and in
    every series' own rows).
    """
    usable = items[items[["a", "b", "c"]].notna().all(axis=1)].sort_values("first_position")
    ids = usable["item_id"].to_numpy(np.int64)
    if patterns.empty or not len(ids):
        return pd.DataFrame(columns=GAP_COLUMNS)
    bank = ItemBank(usable["a"], usable["b"], usable["c"], scaling=scaling)
    correct, theta, series = pattern_matrix(patterns, ids)
    answered, right, bins = icc_arrays(icc, ids)
    frames, near_sum, near_n = [], np.zeros(len(ids)), np.zeros(len(ids))
    per_series = []
    for name in sorted(set(series)):
        rows = series == name
        per_series.append(item_gaps(correct[rows], theta[rows], bank))
        frame = _series_frame(name, usable, per_series[-1], float(np.nanmean(theta[rows])))
        share, candidates = humans_near(answered, right, bins, ICC_BIN_WIDTH,
                                        float(np.nanmean(theta[rows])))
        frame["humans_near"], frame["humans_near_n"] = share, candidates
        weight = np.where(np.isfinite(share), frame["answers"].to_numpy(np.float64), 0.0)
        near_sum += weight * np.nan_to_num(share)
        near_n += weight
        frames.append(frame)
    pooled = _series_frame(ALL_RUNS, usable, item_gaps(correct, theta, bank),
                           float(np.nanmean(theta)))
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled["humans_near"] = np.where(near_n > 0, near_sum / near_n, np.nan)
    pooled["humans_near_n"] = np.nan
    agreement = series_agreement(per_series)
    pooled["series_count"], pooled["series_t"] = agreement.series, agreement.t
    pooled["series_q"] = agreement.q_value
    table = pd.concat([*frames, pooled], ignore_index=True)
    table["gap"] = table["observed"] - table["humans_near"]
    # One series: its repetitions are all there is, marked by |z|. Several: the pooled rows are
    # marked where the series agree (the repetitions of a series are nearly one draw).
    table["direction"] = marked_direction(table["residual"].to_numpy(np.float64))
    if len(per_series) >= MIN_SERIES:
        table.loc[table["series"] == ALL_RUNS, "direction"] = agreed_direction(agreement)
    return table[table["answers"] > 0][GAP_COLUMNS].reset_index(drop=True)


def _series_frame(name: str, items: pd.DataFrame, gaps, theta: float) -> pd.DataFrame:
    return pd.DataFrame({
        "series": name, "item_id": items["item_id"].to_numpy(np.int64),
        "position": items["first_position"].to_numpy(), "skill": items["skill"].to_numpy(),
        "a": items["a"].to_numpy(np.float64), "b": items["b"].to_numpy(np.float64),
        "c": items["c"].to_numpy(np.float64),
        # The humans' item-total correlation: an item that barely separates strong from weak
        # candidates says little when the machines find it harder or easier.
        "point_biserial": (items["point_biserial"].to_numpy(np.float64)
                           if "point_biserial" in items else np.nan),
        "theta": theta, "answers": gaps.answers,
        "observed": gaps.observed, "expected": gaps.expected, "residual": gaps.residual})


def ranked(table: pd.DataFrame, series: str = ALL_RUNS) -> pd.DataFrame:
    """One series' rows from the most positive residual (much easier for the machines) to the
    most negative (much harder)."""
    rows = table[table["series"] == series]
    return rows.sort_values("residual", ascending=False, na_position="last") \
        .reset_index(drop=True)


__all__ = ["ALL_RUNS", "GAP_COLUMNS", "HUMANS_NEAR_HALF_WIDTH", "gap_table", "icc_arrays",
           "ranked"]
