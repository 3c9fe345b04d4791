"""Years: the humans' and the selected runs' mean θ and percent correct in every ingested exam
year, then their percent correct per difficulty third of each year's items (Khayyam
Challenge's accuracy by difficulty, year by year).

Every year of the store is shown, whatever the sidebar's year; the sidebar's areas, runs,
prompt language and shots apply. The two views are tabs (the open one is the URL's
``section=``), each read and drawn only when open. Numbers: ``dashboard.years.data``;
docs/years.md.
"""

from __future__ import annotations

import streamlit as st

from dashboard import queries
from dashboard.figures import show_figure
from dashboard.state.frame import no_runs_message, open_page
from dashboard.state.url import section_tabs
from dashboard.years import data as yd
from dashboard.years.captions import (
    band_caption,
    one_year_note,
    run_scorings,
    scoring_sentence,
    without_humans,
    year_caption,
    year_scorings,
)
from dashboard.years.figure import band_figure, thirds_in_rows, year_figure
from dashboard.years.queries import band_answers, year_humans, year_items, year_patterns

#: The page's tabs (a label is the URL's ``section=``); only the open one is read and drawn.
SECTIONS = ("By year", "By difficulty third")

filters = open_page("Years: models and humans across exam years")
years = queries.loaded_years()
if len(years) < 2:
    st.info(one_year_note(years[0]))
areas = yd.area_order(filters.areas)
runs = (filters.models, filters.language, filters.shots)
humans = year_humans(years, areas)
patterns = year_patterns(years, areas, *runs, filters.pooled)
if patterns.empty:
    st.info(no_runs_message(filters))
means = yd.year_means(humans, patterns)
if means.empty:
    st.info("Nothing to draw: no year holds candidates and the selected runs answered none.")
    st.stop()

shown_years = sorted({int(y) for y in means["year"]})
missing = without_humans(shown_years, yd.human_years(humans))
scoring = scoring_sentence(year_scorings({y: queries.year_profile(y) for y in shown_years}),
                           run_scorings(filters.catalogue, filters.models))
series = yd.series_order(filters.series, list(means["series"]))
number = st.column_config.NumberColumn
by_year, by_third = section_tabs(SECTIONS)
with by_year:
    if by_year.open:
        show_figure(year_figure(means, areas, series, shown_years, filters.series_order),
                    key="years.means", file_stem="years_means", image_format=filters.image_format,
                    data=means, caption=year_caption(means, filters.prompt_label, filters.year,
                                                     missing, scoring))
        st.dataframe(means, hide_index=True, placeholder="—", column_config={
            "n_of": "n counts", "mean": number("mean", format="%.3f"),
            "sd": number("SD", format="%.3f"), "ci_low": number("95% CI low", format="%.3f"),
            "ci_high": number("95% CI high", format="%.3f")})
with by_third:
    if by_third.open:
        st.subheader("By difficulty: the easiest, middle and hardest third of each year's items")
        banded = yd.banded_items(year_items(years, areas, *runs))
        answers = band_answers(years, areas, *runs, filters.pooled, yd.band_keys(banded))
        bands = yd.band_means(banded, answers)
        if bands.empty:
            st.info("No item of the shown years has both a difficulty and an answer to count.")
            st.stop()
        band_years = sorted({int(y) for y in bands["year"]})
        show_figure(band_figure(bands, areas, series, band_years, filters.series_order),
                    key="years.bands", file_stem="years_difficulty_thirds",
                    image_format=filters.image_format, data=bands,
                    caption=band_caption(bands, filters.prompt_label, filters.year,
                                         without_humans(band_years, yd.human_years(humans)),
                                         thirds_in_rows(band_years)))
        st.dataframe(bands, hide_index=True, placeholder="—", column_config={
            "band": None, "band_name": "difficulty third", "items": "items in third",
            "b_min": number("b from", format="%.2f"), "b_max": number("b to", format="%.2f"),
            "n_of": "n counts", "mean": number("% correct", format="%.1f"),
            "sd": number("SD", format="%.1f"), "ci_low": number("95% CI low", format="%.1f"),
            "ci_high": number("95% CI high", format="%.1f")})
