"""The Test information page's verdict table: per model and area, where its mean θ falls on the
exam's information curve, with all three 95% intervals.

Column order: the series, area and verdict first (on screen at 1440 px with the sidebar
open), then the drawn interval, the exam's SE at the mean θ, booklet and repetitions; the other
two intervals last. The CSV download has the same order.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.information.intervals import INTERVAL_BOUNDS, INTERVALS
from dashboard.summaries import VERDICT_HELP

#: Pixels of the verdict column: its longest words, beside the series name and area, still
#: inside a 1440-px screen with the sidebar open.
VERDICT_PX = 580
#: The help of a bootstrap bound: why it can be empty.
NO_INTERVAL = "— : one repetition has no such interval"


def verdict_table(verdicts: list[dict], interval: str) -> pd.DataFrame:
    """The verdicts of :func:`dashboard.information.figure.information_figure` as the table's
    rows, the ``interval`` drawn (a key of :data:`INTERVALS`) right after the verdict."""
    low_column, high_column = INTERVAL_BOUNDS[interval]
    others = [column for pair in INTERVAL_BOUNDS.values() for column in pair
              if pair != (low_column, high_column)]
    return pd.DataFrame(verdicts)[["model", "area", "verdict", "mean_theta", low_column,
                                   high_column, "exam_se_at_theta", "booklet", "repetitions",
                                   *others]]


def verdict_columns() -> dict:
    """``st.dataframe``'s column settings of :func:`verdict_table` (names, widths, formats)."""
    return {
        "model": st.column_config.TextColumn("model", pinned=True),
        "area": st.column_config.TextColumn("area", width=50),
        # Wide enough for the longest verdict; the auto width stops short of it.
        "verdict": st.column_config.TextColumn("in plain words", help=VERDICT_HELP,
                                               width=VERDICT_PX),
        "mean_theta": st.column_config.NumberColumn("mean θ", format="%.3f"),
        "boot_low": st.column_config.NumberColumn("mean's CI low (bootstrap)", format="%.3f",
                                                  help=NO_INTERVAL),
        "boot_high": st.column_config.NumberColumn("mean's CI high (bootstrap)",
                                                   format="%.3f", help=NO_INTERVAL),
        "central_low": st.column_config.NumberColumn("θ 2.5th pct", format="%.3f"),
        "central_high": st.column_config.NumberColumn("θ 97.5th pct", format="%.3f"),
        "se_low": st.column_config.NumberColumn("mean θ − 1.96·mean SE", format="%.3f"),
        "se_high": st.column_config.NumberColumn("mean θ + 1.96·mean SE", format="%.3f"),
        "exam_se_at_theta": st.column_config.NumberColumn("exam SE at mean θ", format="%.3f"),
        "booklet": st.column_config.NumberColumn(
            "booklet", format="%d", help="the booklet whose items give I(θ)"),
    }


def verdict_caption(interval: str) -> str:
    """The table's caption: the three intervals, and which one the verdict uses."""
    return ("All three 95% intervals per model: the bootstrap CI of its mean θ over its "
            "repetitions, the central 95% of its repetitions' θ (2.5th–97.5th percentile), "
            "and mean θ ± 1.96 × its patterns' mean SE(θ). The verdict's interval is the "
            f"one drawn ({INTERVALS[interval][0]}). The exam's SE at the mean θ comes from the "
            "information curve above. — : not defined (one repetition has no bootstrap "
            "CI, a run without SE(θ) no SE interval).")
