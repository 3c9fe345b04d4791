"""Data: what has been ingested, when, from which files, how many rows, and what was rejected."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import access, queries
from dashboard.data import database_state
from dashboard.downloads import csv_download
from dashboard.state.frame import open_page
from dashboard.summaries import scoring_words
from enem.score_batches import reproduced_share_text
from store.schema import TABLES

#: Every table of the schema but its bookkeeping (a new table is counted without an edit here).
COUNTED_TABLES = tuple(name for name in TABLES if name not in ("meta", "ingests"))


def for_display(frame: pd.DataFrame, first: list[str]) -> pd.DataFrame:
    """``frame`` with the ``first`` columns leading: what a reader looks for, on screen without
    scrolling sideways."""
    leading = [column for column in first if column in frame.columns]
    return frame[leading + [column for column in frame.columns if column not in leading]]


filters = open_page("Data: what is loaded and what was rejected")
# A viewer is shown file names only: the server's folders are the operator's business.
operating = access.session_access().may_operate
db_path = database_state().path
st.caption(f"Database file: `{db_path if operating else db_path.name}`")

st.subheader("Ingests")
history = queries.ingest_history()
if not operating:
    for column in ("microdata_file", "items_file"):
        # An items-only ingest has no microdata file (NULL, read back as None or NaN).
        history[column] = history[column].map(
            lambda file: Path(file).name if isinstance(file, str) else None)
history["scoring"] = history["scoring"].map(scoring_words)
history = for_display(history, ["year", "live", "layout", "is_synthetic", "scoring",
                                "records_present", "nota_checked", "nota_matched"])
st.dataframe(history, hide_index=True, placeholder="—", width="stretch", column_config={
    "items_only": st.column_config.CheckboxColumn(
        "items only", help="stored from the item file alone (`ingest-items`): no candidates"),
    "scoring": st.column_config.TextColumn(
        "scoring", help="how θ, SE and l_z were computed for this year's candidates and runs"),
    "live": st.column_config.CheckboxColumn("live", help="the newest ingest of its year"),
    "is_synthetic": st.column_config.CheckboxColumn("synthetic demo"),
    "seconds": st.column_config.NumberColumn("seconds", format="%.1f"),
})
st.caption("One row per ingest, newest first; re-ingesting a year replaces its rows atomically, "
           "so only the newest ingest of each year is live.")

st.subheader(f"Booklets of {filters.year}: is INEP's nota reproduced?")
audit = queries.booklet_audit(filters.year)
if audit.empty:
    st.info(f"No per-booklet audit for {filters.year}: the year holds no candidates (item file "
            "only) or was ingested before audits were stored; re-ingest it to add one.")
else:
    flagged = int(audit["flagged"].sum())
    floor = reproduced_share_text()
    st.dataframe(for_display(audit, []), hide_index=True, placeholder="—", width="stretch",
                 column_config={
        "present": st.column_config.NumberColumn("present", format="localized",
                                                 help="candidates with TP_PRESENCA = 1"),
        "scored": st.column_config.NumberColumn("scored", format="localized"),
        "nota_checked": st.column_config.NumberColumn(
            "official notas", format="localized", help="scored candidates with an official nota"),
        "nota_matched": st.column_config.NumberColumn(
            "reproduced", format="localized", help="official notas reproduced to the decimal"),
        "reproduced": st.column_config.ProgressColumn("share reproduced", format="percent",
                                                      min_value=0.0, max_value=1.0),
        "inep_recipe": st.column_config.CheckboxColumn(
            "INEP's recipe", help="the audit scored these notas by INEP's official recipe"),
        "flagged": st.column_config.CheckboxColumn(
            "flagged", help=f"fewer than {floor} reproduced: flagged on every page"),
    })
    if not audit["inep_recipe"].all():
        st.warning(f"This audit of {filters.year} was stored by an older version, which "
                   f"compared the nota of the year's display settings "
                   f"({scoring_words(filters.profile.get('scoring'))}) with INEP's instead of "
                   "INEP's own recipe: its counts say nothing about the parameters, so no "
                   "booklet is flagged. Re-ingest the year to audit it.")
    st.caption(f"One row per booklet of {filters.year} with candidates. The audit always "
               f"scores by INEP's official recipe ({scoring_words(None)}), whatever settings "
               f"the year displays ({filters.scoring}): the display settings change what is "
               f"drawn, never this check. {flagged} booklet(s) reproduce fewer than {floor} of "
               "INEP's official notas with the published item parameters; that is in the data "
               "(for example 2011 CN, most of 2017, 2019 MT), not a scoring error. They are "
               "flagged on every page, and the sidebar switch leaves them out of the human "
               "reference.")

st.subheader("Rows per table")
counts = queries.table_counts(COUNTED_TABLES)
st.dataframe(counts, hide_index=True, placeholder="—", column_config={
    "rows": st.column_config.NumberColumn("rows", format="localized")})

st.subheader("Files of the store")
files = queries.store_files()
files["MB"] = files.pop("bytes") / 1e6
st.dataframe(files, hide_index=True, placeholder="—", column_config={
    "MB": st.column_config.NumberColumn("size (MB)", format="%.1f")})
if (files["holds"] == "every table").any():
    st.info("This store is one file, as stores were before per-year files: every write (a run's "
            "publication included) copies it whole. `enem-llm migrate` turns it into a main "
            "file plus one file per year, so that a write copies only what it changes.")
else:
    st.caption("The main file holds the runs and metadata and names each year's file; a write "
               "copies the main file and, when it changes a year, writes a new file for that "
               "year (docs/store.md).")

st.subheader("Rejected rows")
summary = queries.reject_summary()
if summary.empty:
    st.success("Nothing was rejected: every row of every ingested file could be used.")
else:
    st.dataframe(summary, hide_index=True, placeholder="—", width="stretch")
    reasons = ["every reason"] + sorted(summary.loc[summary["year"] == filters.year, "reason"]
                                        .unique())
    reason = st.selectbox(f"Show rejected rows of {filters.year} for", reasons,
                          key="data.reason")
    sample = queries.reject_sample(filters.year, None if reason == "every reason" else reason,
                                   200)
    st.dataframe(sample, hide_index=True, placeholder="—", width="stretch")
    st.caption("At most 200 rows are shown; `kind` says whether a CSV line, a candidate's area "
               "record or an item row was set aside, and `reason` why.")
    csv_download(sample, label="Rejected rows shown (CSV)", file_stem=f"rejects_{filters.year}",
                 key="data.rejects.csv")

st.subheader("Model runs")
runs = queries.model_run_table()
if runs.empty:
    st.info("No model runs yet — launch one on the Runs page; its rows appear here while it "
            "writes.")
else:
    runs["scoring"] = runs["scoring"].map(scoring_words)
    runs = for_display(runs, ["series", "status", "patterns", "years", "areas", "languages",
                              "repetition", "repetitions", "backend", "scoring"])
    st.dataframe(runs, hide_index=True, placeholder="—", width="stretch", column_config={
        "series": st.column_config.TextColumn("series", help="the name pages show"),
        "repetition": st.column_config.TextColumn(
            "repetition", help="shuffle: the options reordered per repetition; seed: sampling "
                               "seeds with the options in their original order"),
    })
    st.caption("`patterns` counts the scored response patterns (repetition × prompt variant × "
               "area) a run has written so far; a running run grows between refreshes. "
               "`scoring` is how its patterns were scored (the year's settings unless the "
               "import named others).")
