"""Columns and formats of the Options and traps page's tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from analytics.multiple_testing import benjamini_hochberg
from dashboard.options.comparisons import MODEL_SHARE_COLUMNS
from dashboard.options.data import SHARE_COLUMNS

#: The item table's columns, in order (those a selection lacks are left out).
ITEM_COLUMNS: list[str] = [
    "area", "item_id", "explorer", "b", "band", "key", "distractor", "trap", "trap_near_b",
    "human_p", "model_accuracy", "js_humans", "js_near_theta", *SHARE_COLUMNS,
    *MODEL_SHARE_COLUMNS, "model_answers", "candidates_near_b", "model_theta",
]

_SHARE = "%.2f"


def with_ratio(traps: pd.DataFrame) -> pd.DataFrame:
    """The trap table with Khayyam's 'x/y' (accuracy on all items / on trap items) column,
    placed right after the series: it is the table's answer, so it must be on screen without
    scrolling sideways (the counts and the θ-conditional columns follow it)."""
    ratio = [f"{a:.2f}/{t:.2f}" if pd.notna(a) and pd.notna(t) else "—"
             for a, t in zip(traps["accuracy_all"], traps["accuracy_trap"], strict=True)]
    table = traps.assign(**{"x/y": ratio})
    first = [column for column in ("series", "x/y") if column in table.columns]
    return table[first + [column for column in table.columns if column not in first]]


#: A table of at least this many tests shows Benjamini–Hochberg q-values beside its p-values.
MIN_TESTS_FOR_Q = 4
#: The column of those q-values.
Q_COLUMN = "q (BH)"


def with_p_text(table: pd.DataFrame, column: str = "p_value") -> pd.DataFrame:
    """``table`` for display with ``column`` (p-values) as text: three significant digits,
    '< 1e-300' where the p-value underflowed to 0 (a bare '0' would claim certainty) and '—'
    where it is undefined. With :data:`MIN_TESTS_FOR_Q` tests or more, the Benjamini–Hochberg
    q-values over the table's rows follow in :data:`Q_COLUMN` (a table of many tests finds
    some p < 0.05 by chance). Downloads keep the numbers."""
    def words(p: float) -> str:
        if pd.isna(p):
            return "—"
        return "< 1e-300" if p == 0 else f"{p:.3g}"
    shown = table.assign(**{column: [words(p) for p in table[column]]})
    p_values = table[column].to_numpy(np.float64)
    if np.isfinite(p_values).sum() >= MIN_TESTS_FOR_Q:
        shown.insert(shown.columns.get_loc(column) + 1, Q_COLUMN,
                     [words(q) for q in benjamini_hochberg(p_values)])
    return shown


def trap_column_config() -> dict:
    percent = "%.3f"
    return {
        "series": st.column_config.TextColumn("humans or run", width="medium"),
        "x/y": st.column_config.TextColumn(
            "x/y", help="accuracy on all items / on trap items (the Khayyam Challenge's form)"),
        "items": st.column_config.NumberColumn("items", help="items with an accuracy"),
        "accuracy_all": st.column_config.NumberColumn("accuracy, all items", format=percent),
        "trap_items": st.column_config.NumberColumn("trap items"),
        "accuracy_trap": st.column_config.NumberColumn("accuracy, trap items", format=percent),
        "trap_near_b_items": st.column_config.NumberColumn("θ-conditional trap items"),
        "accuracy_trap_near_b": st.column_config.NumberColumn(
            "accuracy, θ-conditional traps", format=percent),
    }


def item_column_config() -> dict:
    shares = {column: st.column_config.NumberColumn(f"humans {column[-1]}", format=_SHARE)
              for column in SHARE_COLUMNS}
    shares.update({column: st.column_config.NumberColumn(f"run {column[-1]}", format=_SHARE)
                   for column in MODEL_SHARE_COLUMNS})
    return {
        **shares,
        "explorer": st.column_config.LinkColumn("open", display_text="Item explorer"),
        "b": st.column_config.NumberColumn(format="%.2f"),
        "trap": st.column_config.NumberColumn("trap", format="%d",
                                              help="1: the humans' most chosen distractor "
                                                   "draws at least as many as the key"),
        "trap_near_b": st.column_config.NumberColumn("trap near b", format="%d",
                                                     help="the same among candidates with θ "
                                                          "near the item's b"),
        "human_p": st.column_config.NumberColumn("humans p", format="%.3f"),
        "model_accuracy": st.column_config.NumberColumn("run accuracy", format="%.3f"),
        "js_humans": st.column_config.NumberColumn("JS vs humans", format="%.3f"),
        "js_near_theta": st.column_config.NumberColumn("JS vs humans near run's θ",
                                                       format="%.3f"),
        "model_theta": st.column_config.NumberColumn("run's mean θ", format="%.2f"),
        "candidates_near_b": st.column_config.NumberColumn("candidates near b", format="%d"),
        "model_answers": st.column_config.NumberColumn("run answers", format="%d"),
    }


def length_column_config() -> dict:
    number = "%.1f"
    return {
        "mean_correct": st.column_config.NumberColumn("mean, correct", format=number),
        "mean_incorrect": st.column_config.NumberColumn("mean, incorrect", format=number),
        "n_correct": st.column_config.NumberColumn("correct answers", format="%d"),
        "n_incorrect": st.column_config.NumberColumn("incorrect answers", format="%d"),
        "t": st.column_config.NumberColumn(format="%.2f"),
        "dof": st.column_config.NumberColumn("df", format="%.0f"),
        "p_value": st.column_config.TextColumn("p"),
    }
