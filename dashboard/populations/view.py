"""How the Populations page shows its tables: column formats, the highlighted rank table and
a CSV download under each table."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from dashboard.downloads import csv_download

#: Background of a row whose rank differs between percent correct and IRT.
CHANGED = "background-color: #FFF2CC"

_FORMATS: dict[str, tuple[str, str]] = {
    "pct_mean": ("mean % correct", "%.1f"), "irt_mean": ("mean IRT score", "%.3f"),
    "rank_ctt": ("rank by % correct", "%d"), "rank_irt": ("rank by IRT", "%d"),
    "change": ("rank change", "%+d"), "ctt_difference": ("% correct: model − population", "%.2f"),
    "ctt_t": ("t (% correct)", "%.2f"), "ctt_df": ("df (% correct)", "%.1f"),
    "ctt_p": ("p (% correct)", "%.3g"), "irt_difference": ("IRT: model − population", "%.3f"),
    "irt_t": ("t (IRT)", "%.2f"), "irt_df": ("df (IRT)", "%.1f"), "irt_p": ("p (IRT)", "%.3g"),
    "theta_percentile": ("percentile by θ", "%.1f"),
    "pct_percentile": ("percentile by % correct", "%.1f"),
}


def table_config() -> dict:
    """Column titles and number formats shared by the page's tables."""
    config = {name: st.column_config.NumberColumn(title, format=fmt)
              for name, (title, fmt) in _FORMATS.items()}
    config["ctt_ci_overlap"] = st.column_config.CheckboxColumn("95% CIs overlap (% correct)")
    config["irt_ci_overlap"] = st.column_config.CheckboxColumn("95% CIs overlap (IRT)")
    return config


def rank_styler(ranks: pd.DataFrame) -> Styler:
    """The rank table with the rows that change rank highlighted."""
    return ranks.style.apply(
        lambda row: [CHANGED if row["change"] != 0 else ""] * len(row), axis=1)


def download(table: pd.DataFrame, file_stem: str, key: str) -> None:
    """A CSV download of ``table``."""
    csv_download(table, label="Table (CSV)", file_stem=file_stem, key=key,
                 icon=":material/table:")
