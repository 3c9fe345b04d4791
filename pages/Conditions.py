"""Conditions: one model under different prompt languages, shot settings, repetitions,
temperatures, answer methods or years, side by side.

Pick what tells conditions apart; every other condition stays where the sidebar sets it. The
means with their intervals come first, then the difference between two levels with an interval
that respects how they pair (numbers: ``dashboard.conditions.data``; statistics:
``analytics.conditions``).
"""

from __future__ import annotations

import streamlit as st

from dashboard import queries
from dashboard.conditions import data as cd
from dashboard.conditions.captions import difference_caption, held_conditions, level_caption
from dashboard.conditions.figure import difference_figure, level_figure
from dashboard.conditions.queries import condition_patterns
from dashboard.figures import show_figure
from dashboard.state.frame import no_runs_message, open_page
from dashboard.state.url import seed_page_choice, write_page_choice

filters = open_page("Conditions: one model, several prompts and settings")

top = st.columns(4)
seed_page_choice("compare", list(cd.DIMENSIONS), "conditions.dimension", cd.DEFAULT_DIMENSION)
dimension = top[0].selectbox("Compare", list(cd.DIMENSIONS), key="conditions.dimension",
                             help="What tells the conditions apart; the sidebar holds the rest.")
write_page_choice("compare", "conditions.dimension")
years = queries.loaded_years() if dimension == "year" else [filters.year]
patterns = condition_patterns(years, filters.areas, filters.models)
if patterns.empty:
    st.info(no_runs_message(filters))
    st.stop()
offered = cd.statistics_offered(patterns)
seed_page_choice("stat", offered, "conditions.statistic", offered[0])
statistic = top[1].radio("Statistic", offered, key="conditions.statistic",
                         help="\n\n".join(f"**{k}**: {cd.STATISTICS[k]}" for k in offered))
write_page_choice("stat", "conditions.statistic")
rows = cd.compared_patterns(patterns, dimension, statistic, language=filters.language,
                            shots=filters.shots, year=filters.year)
held = held_conditions(dimension, filters.language, filters.shots_words, filters.year)
if rows.empty:
    st.info(f"No response pattern of the selected runs under {held}: change the sidebar's "
            "prompt language, shots or year, or compare along another dimension.")
    st.stop()

rows = cd.with_all_areas(rows)
levels_found = cd.level_order(rows["level"])
areas = cd.area_order(list(rows["area"].unique()))
series = list(dict.fromkeys(rows["series"]))
levels = cd.level_table(rows)
value_title = statistic if statistic != "% correct" else "% correct"
show_figure(level_figure(levels, areas, series, levels_found, value_title),
            key="conditions.levels", file_stem=f"conditions_{dimension.replace(' ', '_')}",
            image_format=filters.image_format, data=levels,
            caption=level_caption(dimension, statistic, levels, held, filters.provenance))

if len(levels_found) < 2:
    st.info(f"The selected runs have one {dimension} here ({levels_found[0]}): nothing to "
            "compare it with. Select more runs in the sidebar.")
    st.stop()
pick = st.columns(4)
seed_page_choice("level_from", levels_found, "conditions.first", levels_found[0])
seed_page_choice("level_to", levels_found, "conditions.second", levels_found[1])
first = pick[0].selectbox("Difference from", levels_found, key="conditions.first")
second = pick[1].selectbox("to", levels_found, key="conditions.second")
write_page_choice("level_from", "conditions.first")
write_page_choice("level_to", "conditions.second")
if first == second:
    st.info("Pick two different levels to see their difference.")
    st.stop()
differences = cd.difference_table(rows, first, second, cd.DIMENSIONS[dimension].paired)
show_figure(difference_figure(differences, areas, series, first, second, value_title),
            key="conditions.differences",
            file_stem=f"conditions_{dimension.replace(' ', '_')}_difference",
            image_format=filters.image_format, data=differences,
            caption=difference_caption(dimension, statistic, first, second, differences))
st.dataframe(differences, hide_index=True, placeholder="—", column_config={
    "difference": st.column_config.NumberColumn(f"{second} − {first}", format="%.3f"),
    "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
    "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
    "p": st.column_config.NumberColumn("p", format="%.2g"),
    "n_first": "patterns (first)", "n_second": "patterns (second)"})
