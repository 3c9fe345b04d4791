"""What the pages show next to the figures, computed here so that pages compute nothing.

The psychometrics (IRT curves, the discrimination index) come from :mod:`analytics`; this module
applies them to the rows the pages fetch and adds descriptive summaries. Human distributions
arrive as histograms (lower bin edge, count); percentiles are read from them with linear
interpolation inside a bin, so they are exact to within one bin width.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from analytics.ctt import DISCRIMINATION_GROUP_FRACTION, discrimination_index
from analytics.irt import (
    item_information,
    probability,
    standard_error_curve,
    test_information,
)
from enem.items import PUBLISHED_SCALING, stored_item_bank
from enem.scoring import ScoringOptions

#: The θ values item and test curves are drawn at (the θ axis the pages show).
THETA_GRID = np.round(np.arange(-4.0, 4.0001, 0.02), 4)


def information_curves(items: pd.DataFrame, scaling: float = PUBLISHED_SCALING
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Test information I(θ) and SE(θ) = 1/√I(θ) over :data:`THETA_GRID` of a form's items
    (columns a, b, c), each of shape (len(THETA_GRID),), with the year's constant D
    (``scaling``: ``ScoringOptions.scaling`` of the year; INEP's D = 1 by default)."""
    bank = stored_item_bank(items, scaling=scaling)
    return test_information(THETA_GRID, bank), standard_error_curve(THETA_GRID, bank)


def item_curves(a: float, b: float, c: float, scaling: float = PUBLISHED_SCALING
                ) -> tuple[np.ndarray, np.ndarray]:
    """Probability correct P(θ) and information I(θ) of one 3PL item over :data:`THETA_GRID`,
    each of shape (len(THETA_GRID),), with the year's constant D (``scaling``, INEP's by
    default)."""
    bank = stored_item_bank({"a": [a], "b": [b], "c": [c]}, scaling=scaling)
    return probability(THETA_GRID, bank)[:, 0], item_information(THETA_GRID, bank)[:, 0]


def _cumulative(lower_edges: ArrayLike, counts: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    edges = np.asarray(lower_edges, np.float64)
    order = np.argsort(edges)
    edges = edges[order]
    counts = np.asarray(counts, np.float64)[order]
    return edges, np.cumsum(counts)


def histogram_percentile(
    lower_edges: ArrayLike, counts: ArrayLike, width: float, values: ArrayLike
) -> np.ndarray:
    """Percent of the histogram's population below each value (0–100); NaN if it is empty."""
    values = np.asarray(values, np.float64)
    edges, cumulative = _cumulative(lower_edges, counts)
    if len(edges) == 0 or cumulative[-1] <= 0:
        return np.full(values.shape, np.nan)
    knots_x = np.concatenate([[edges[0]], edges + width])
    knots_y = np.concatenate([[0.0], cumulative]) / cumulative[-1]
    return 100.0 * np.interp(values, knots_x, knots_y, left=0.0, right=1.0)


def histogram_quantile(
    lower_edges: ArrayLike, counts: ArrayLike, width: float, quantile: float
) -> float:
    """The value below which ``quantile`` of the histogram's population lies; NaN if empty."""
    edges, cumulative = _cumulative(lower_edges, counts)
    if len(edges) == 0 or cumulative[-1] <= 0:
        return float("nan")
    knots_x = np.concatenate([[edges[0]], edges + width])
    knots_y = np.concatenate([[0.0], cumulative]) / cumulative[-1]
    # The cumulative curve is flat over empty bins; take the first crossing.
    index = int(np.searchsorted(knots_y, quantile, side="left"))
    index = min(max(index, 1), len(knots_y) - 1)
    y0, y1 = knots_y[index - 1], knots_y[index]
    x0, x1 = knots_x[index - 1], knots_x[index]
    if y1 == y0:
        return float(x1)
    return float(x0 + (quantile - y0) / (y1 - y0) * (x1 - x0))


def model_ability_table(points: pd.DataFrame) -> pd.DataFrame:
    """Per model and area: patterns, mean and SD of CTT and θ, mean SE, mean and SD of l_z."""
    if points.empty:
        return pd.DataFrame(columns=["model", "area", "patterns", "mean_ctt", "sd_ctt",
                                     "mean_theta", "sd_theta", "mean_se", "mean_lz", "sd_lz"])
    grouped = points.groupby(["model", "area"], sort=True)
    table = grouped.agg(
        patterns=("theta", "size"),
        mean_ctt=("ctt", "mean"), sd_ctt=("ctt", "std"),
        mean_theta=("theta", "mean"), sd_theta=("theta", "std"),
        mean_se=("theta_se", "mean"),
        mean_lz=("lz", "mean"), sd_lz=("lz", "std"),
    ).reset_index()
    return table


def left_out_cells(everyone: pd.DataFrame, kept: pd.DataFrame,
                   keys: tuple[str, ...] = ("theta_bin", "lz_bin")) -> pd.DataFrame:
    """The histogram cells (``keys``, n) holding the candidates that are in ``everyone`` but
    not in ``kept``, e.g. the all-blank tests of a histogram queried with and without them;
    n > 0 only, sorted by ``keys``."""
    columns = [*keys, "n"]
    if everyone.empty:
        return pd.DataFrame(columns=columns)
    merged = everyone[columns].merge(kept[columns] if len(kept) else pd.DataFrame(columns=columns),
                                     on=list(keys), how="left", suffixes=("", "_kept"))
    merged["n"] = merged["n"] - pd.to_numeric(merged["n_kept"]).fillna(0)
    left = merged.loc[merged["n"] > 0, columns]
    return left.sort_values(list(keys)).reset_index(drop=True)


def informative_intervals(grid: ArrayLike, informative: ArrayLike) -> list[tuple[float, float]]:
    """Maximal θ intervals where ``informative`` (bool over the grid) holds."""
    grid = np.asarray(grid, np.float64)
    flags = np.asarray(informative, bool)
    intervals, start = [], None
    for index, flag in enumerate(flags):
        if flag and start is None:
            start = grid[index]
        if not flag and start is not None:
            intervals.append((float(start), float(grid[index - 1])))
            start = None
    if start is not None:
        intervals.append((float(start), float(grid[-1])))
    return intervals


#: What :func:`information_verdict`'s words imply, for the verdict column's help.
VERDICT_HELP = ("Where the model's mean θ falls on the exam's information curve. Above the "
                "range: the exam cannot tell this model apart from stronger candidates; below "
                "it: from weaker ones; in a gap: its θ is measured loosely. SE: the exam's "
                "SE(θ) at the mean θ; the 95% interval is the one drawn in the figure.")


def information_verdict(
    theta: float, low: float, high: float, intervals: list[tuple[float, float]],
    se_at_theta: float,
) -> str:
    """Plain-words reading of where a model's θ (and its 95% interval) falls on the exam."""
    if not np.isfinite(theta):
        return "no θ could be estimated"
    if not intervals:
        return "this exam is not informative anywhere on the θ axis at the chosen threshold"
    first, last = intervals[0][0], intervals[-1][1]
    inside = any(lo <= theta <= hi for lo, hi in intervals)
    # Short enough to sit beside the series name in a 1440-px table; what "above" and
    # "below" imply is the column's help (:data:`VERDICT_HELP`).
    if theta > last:
        where = "θ falls above the range where this exam has information"
    elif theta < first:
        where = "θ falls below the range where this exam has information"
    elif not inside:
        where = "θ falls in a gap where this exam has little information"
    else:
        where = "θ falls where this exam measures well"
    wide = high - low
    return f"{where} (SE ≈ {se_at_theta:.2f}, 95% interval {wide:.2f} wide)"


def model_item_di(long: pd.DataFrame, group_fraction: float = DISCRIMINATION_GROUP_FRACTION
                  ) -> tuple[pd.Series, int]:
    """Discrimination index of each item over model response patterns ranked by θ.

    ``long`` has one row per (pattern, item) with columns pattern, theta, item_id, correct (as
    returned by ``model_pattern_matrix``). Returns (DI indexed by item_id, number of patterns);
    the index itself is computed by :func:`analytics.ctt.discrimination_index`.
    """
    if long.empty:
        return pd.Series(dtype=float), 0
    matrix = long.pivot_table(index="pattern", columns="item_id", values="correct")
    theta = long.drop_duplicates("pattern").set_index("pattern")["theta"].reindex(matrix.index)
    values = discrimination_index(matrix.to_numpy(float), theta.to_numpy(float),
                                  group_fraction=group_fraction)
    return pd.Series(values, index=matrix.columns), len(matrix)


def scoring_words(stored: str | float | None) -> str:
    """Stored scoring settings (JSON of ``ScoringOptions.as_dict``) in words; INEP's defaults
    when nothing was stored (None, or NaN in a DataFrame column; older files)."""
    return ScoringOptions.from_stored(stored).describe()
