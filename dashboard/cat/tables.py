"""Tables of the Adaptive testing page: a live CAT against the same model's full exam."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.cat.queries import full_exam_scores
from dashboard.downloads import csv_download
from workflows.cat.comparison import compare_with_full_exam

#: The comparison's columns as the page names them, in the page's order: the path, then its
#: verdict (items needed, within SE, the difference), then the numbers behind it. With the
#: verdict last, a 1440-px window showed the run's long name and the θs but cut "items
#: needed" off at the right edge.
COMPARISON_HEADERS = {
    "series": "run", "area": "area", "path": "path", "items_needed": "items needed",
    "within_se": "within SE", "difference": "θ̂ − θ", "cat_theta": "CAT θ̂",
    "full_theta": "full-exam θ", "cat_se": "CAT SE", "full_se": "full-exam SE",
    "items": "CAT items", "full_patterns": "full-exam patterns", "full_runs": "full-exam runs",
}


def full_exam_comparison(year: int, paths: pd.DataFrame) -> pd.DataFrame:
    """Each live CAT path of ``paths`` (with its ``series``) against its model's full exam,
    with the page's column names (``workflows.cat.comparison``)."""
    full = full_exam_scores(year, sorted(paths["area"].unique()),
                            sorted(paths["model_id"].unique()))
    table = compare_with_full_exam(paths, full)
    series = paths.drop_duplicates("run_id").set_index("run_id")["series"]
    table["series"] = table["run_id"].map(series)
    return table[list(COMPARISON_HEADERS)].rename(columns=COMPARISON_HEADERS)


def show_table(table: pd.DataFrame, key: str, caption: str,
               pinned: tuple[str, ...] = ()) -> None:
    """A table with its caption and a CSV download; the ``pinned`` columns stay in view when
    the table is scrolled sideways."""
    st.dataframe(table, hide_index=True, width="stretch", key=key, placeholder="—",
                 column_config={column: st.column_config.Column(pinned=True)
                                for column in pinned if column in table.columns})
    st.caption(caption)
    csv_download(table, label="Table (CSV)", file_stem=key.replace(".", "_"), key=f"{key}.csv",
                 icon=":material/table:")
