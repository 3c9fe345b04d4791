"""The Conditions page's lower sections, each drawn whole (pickers, figure, table): the
difference between two levels, and the consistency of the runs' choices across repetitions."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.conditions import data as cd
from dashboard.conditions.captions import consistency_caption, difference_caption
from dashboard.conditions.figure import difference_figure
from dashboard.conditions.queries import consistency_tables
from dashboard.downloads import csv_download
from dashboard.figures import show_figure
from dashboard.state.filters import Filters
from dashboard.state.url import seed_page_choice, write_page_choice

#: Items listed on screen in the per-item consistency table (the CSV holds them all).
ITEMS_SHOWN = 50


def difference_section(rows: pd.DataFrame, dimension: str, statistic: str,
                       levels_found: list[str], areas: list[str], series: list[str],
                       image_format: str) -> None:
    """Two level pickers (kept in the address), then second − first per series and area:
    figure, caption and table."""
    if len(levels_found) < 2:
        st.info(f"The selected runs have one {dimension} here ({levels_found[0]}): nothing "
                "to compare it with. Select more runs in the sidebar.")
        return
    pick = st.columns(4)
    seed_page_choice("level_from", levels_found, "conditions.first", levels_found[0])
    seed_page_choice("level_to", levels_found, "conditions.second", levels_found[1])
    first = pick[0].selectbox("Difference from", levels_found, key="conditions.first")
    second = pick[1].selectbox("to", levels_found, key="conditions.second")
    write_page_choice("level_from", "conditions.first")
    write_page_choice("level_to", "conditions.second")
    if first == second:
        st.info("Pick two different levels to see their difference.")
        return
    differences = cd.difference_table(rows, first, second, cd.DIMENSIONS[dimension].paired)
    stem = f"conditions_{dimension.replace(' ', '_')}_difference"
    show_figure(difference_figure(differences, areas, series, first, second, statistic),
                key="conditions.differences", file_stem=stem, image_format=image_format,
                data=differences,
                caption=difference_caption(dimension, statistic, first, second, differences))
    st.dataframe(differences, hide_index=True, placeholder="—", column_config={
        "difference": st.column_config.NumberColumn(f"{second} − {first}", format="%.3f"),
        "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
        "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
        "p": st.column_config.NumberColumn("p", format="%.2g"),
        "q": st.column_config.NumberColumn("q (BH)", format="%.2g",
                                           help="Benjamini–Hochberg over the table's rows"),
        "n_first": "patterns (first)", "n_second": "patterns (second)"})


def consistency_section(filters: Filters, held: str) -> None:
    """Per run and area, how often its repetitions chose the same option on an item, at the
    sidebar's prompt language and shots."""
    st.subheader("Consistency across repetitions")
    table, items = consistency_tables(filters.year, filters.areas, filters.models,
                                      filters.language, filters.shots)
    if table.empty:
        st.info(f"No recorded choice of the selected runs under {held}.")
        return
    st.dataframe(table, hide_index=True, placeholder="—", column_config={
        "repetitions": "repetitions", "items": "items (2+ choices)",
        "mean_modal_share": st.column_config.NumberColumn("modal choice share",
                                                          format="%.3f"),
        "share_changed": st.column_config.NumberColumn("items answered differently",
                                                       format="%.3f"),
        "mean_entropy": st.column_config.NumberColumn("entropy (bits)", format="%.3f")})
    st.caption(consistency_caption(held))
    csv_download(table, label="Table (CSV)", file_stem=f"conditions_consistency_{filters.year}",
                 key="conditions.consistency_csv")
    with st.expander(f"Per item: the {min(len(items), ITEMS_SHOWN)} least consistent of "
                     f"{len(items):,}"):
        st.dataframe(items.head(ITEMS_SHOWN), hide_index=True, placeholder="—",
                     column_config={
                         "answered": "repetitions answered",
                         "modal_choice": "most chosen",
                         "modal_share": st.column_config.NumberColumn("its share",
                                                                      format="%.3f"),
                         "entropy": st.column_config.NumberColumn("entropy (bits)",
                                                                  format="%.3f"),
                         "changed": "answered differently"})
        st.caption("One row per run, area and item, the items whose repetitions disagree most "
                   "first (entropy of the choices, in the options' original letters). The CSV "
                   "holds every item.")
        csv_download(items, label="Items (CSV)",
                     file_stem=f"conditions_item_consistency_{filters.year}",
                     key="conditions.item_consistency_csv")
