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
from dashboard.conditions.captions import held_conditions, level_caption
from dashboard.conditions.figure import level_figure
from dashboard.conditions.queries import condition_patterns
from dashboard.conditions.sections import consistency_section, difference_section
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
# The sidebar's booklet, when it is one of the chosen areas', keeps that area to its items.
booklet = ((filters.year, filters.booklet_area, filters.booklet)
           if filters.booklet is not None and filters.booklet_area in filters.areas else None)
patterns = condition_patterns(years, filters.areas, filters.models, booklet)
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
held = held_conditions(dimension, filters.language, filters.shots_words, filters.year, booklet)
if rows.empty:
    st.info(f"No response pattern of the selected runs under {held}: change the sidebar's "
            "prompt language, shots or year, or compare along another dimension.")
    st.stop()

rows = cd.with_all_areas(rows)
levels_found = cd.level_order(rows["level"])
areas = cd.area_order(list(rows["area"].unique()))
series = list(dict.fromkeys(rows["series"]))
levels = cd.level_table(rows)
show_figure(level_figure(levels, areas, series, levels_found, statistic),
            key="conditions.levels", file_stem=f"conditions_{dimension.replace(' ', '_')}",
            image_format=filters.image_format, data=levels,
            caption=level_caption(dimension, statistic, levels, held, filters.provenance))

difference_section(rows, dimension, statistic, levels_found, areas, series,
                   filters.image_format)
consistency_section(filters, held_conditions(None, filters.language, filters.shots_words,
                                              filters.year))
