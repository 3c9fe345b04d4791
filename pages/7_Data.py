"""Data: what has been ingested, when, from which files, how many rows, and what was rejected."""

from __future__ import annotations

import streamlit as st

from dashboard import queries
from dashboard.data import database_state
from dashboard.state import open_page

COUNTED_TABLES = ("examinees", "scores", "items", "booklets", "item_stats", "item_icc",
                  "option_counts", "agg_theta_ctt", "agg_theta_lz", "question_texts", "rejects",
                  "models", "model_runs", "model_responses", "model_scores", "min_k_prob")

filters = open_page("Data: what is loaded and what was rejected")
st.caption(f"Database file: `{database_state().path}`")

st.subheader("Ingests")
history = queries.ingest_history()
st.dataframe(history, hide_index=True, width="stretch", column_config={
    "live": st.column_config.CheckboxColumn("live", help="the newest ingest of its year"),
    "is_synthetic": st.column_config.CheckboxColumn("synthetic demo"),
    "seconds": st.column_config.NumberColumn("seconds", format="%.1f"),
})
st.caption("One row per ingest, newest first; re-ingesting a year replaces its rows atomically, "
           "so only the newest ingest of each year is live.")

st.subheader("Rows per table")
counts = queries.table_counts(COUNTED_TABLES)
st.dataframe(counts, hide_index=True, column_config={
    "rows": st.column_config.NumberColumn("rows", format="localized")})

st.subheader("Rejected rows")
summary = queries.reject_summary()
if summary.empty:
    st.success("Nothing was rejected: every row of every ingested file could be used.")
else:
    st.dataframe(summary, hide_index=True, width="stretch")
    reasons = ["every reason"] + sorted(summary.loc[summary["year"] == filters.year, "reason"]
                                        .unique())
    reason = st.selectbox(f"Show rejected rows of {filters.year} for", reasons,
                          key="data.reason")
    sample = queries.reject_sample(filters.year, None if reason == "every reason" else reason,
                                   200)
    st.dataframe(sample, hide_index=True, width="stretch")
    st.caption("At most 200 rows are shown; `kind` says whether a CSV line, a candidate's area "
               "record or an item row was set aside, and `reason` why.")
    st.download_button("Rejected rows shown (CSV)", data=sample.to_csv(index=False),
                       file_name=f"rejects_{filters.year}.csv", mime="text/csv",
                       on_click="ignore", key="data.rejects.csv")

st.subheader("Model runs")
runs = queries.model_run_table()
if runs.empty:
    st.info("No model runs yet — launch one on the Runs page; its rows appear here while it "
            "writes.")
else:
    st.dataframe(runs, hide_index=True, width="stretch")
    st.caption("`patterns` counts the scored response patterns (shuffle × prompt variant × "
               "area) a run has written so far; a running run grows between refreshes.")
