"""Test information (the paper's Fig. 4): where on the θ axis each area's exam measures well, and
where the models' θ fall.

An exam is built for the human population: its information I(θ) peaks where most candidates
are. A model whose θ lies where I(θ) is low gets a wide interval — its score says little. Each
model row shows its θ over repetitions (faint markers) and its mean θ with one of three 95%
intervals the user picks (``dashboard.information``): the bootstrap CI of the mean, the
central 95% of the repetitions' θ, or each pattern's own SE(θ). The paper's "IRT scores, 95%
CI" does not say which it drew; the caption says which is drawn.
"""

from __future__ import annotations

import streamlit as st

from dashboard.downloads import csv_download
from dashboard.figures import show_figure
from dashboard.information import figure as info
from dashboard.information.intervals import DEFAULT_INTERVAL, INTERVALS, theta_intervals
from dashboard.information.reliability import (
    RELIABILITY_CAPTION,
    reliability_columns,
    reliability_table,
)
from dashboard.information.verdicts import verdict_caption, verdict_columns, verdict_table
from dashboard.state.frame import note_missing_runs, open_page
from dashboard.state.selection import information_booklet, selected_model_points
from enem.areas import LANGUAGE_NAMES
from enem.trust import INFORMATIVE_SE

filters = open_page("Test information: where the exam can measure, and where the models are")

left, middle, right = st.columns(3)
max_se = left.slider("Call the exam informative where SE(θ) is at most", 0.2, 1.0,
                     INFORMATIVE_SE, 0.05, key="information.max_se",
                     help=f"SE(θ) = 1/√I(θ); {INFORMATIVE_SE:g} means I(θ) ≥ "
                          f"{1 / INFORMATIVE_SE ** 2:g} (the Person fit page's trust verdict "
                          "uses this default)")
interval = middle.radio("95% interval around each model's θ", list(INTERVALS),
                        index=list(INTERVALS).index(DEFAULT_INTERVAL), key="information.interval",
                        format_func=lambda key: INTERVALS[key][0],
                        help="The paper's Fig. 4 draws a \"95% CI computed using the shuffles\" "
                             "without saying which: the CI of the mean (as plotting libraries "
                             "draw by default), the central 95% of the shuffles' θ, or neither "
                             "(a pattern's own SE(θ) is in none of them).")
points = selected_model_points(filters)
lc_language = right.radio("LC foreign-language items", list(LANGUAGE_NAMES), horizontal=True,
                          index=list(LANGUAGE_NAMES).index(info.lc_default_language(points)),
                          key="information.lc", format_func=LANGUAGE_NAMES.get)
note_missing_runs(filters, points)

curves = info.area_information(
    filters.year, {area: information_booklet(filters, area) for area in filters.areas},
    lc_language)
intervals_table = theta_intervals(points).set_index(["model", "area"])
drawn = info.information_figure(filters.areas, curves, points, intervals_table, interval,
                                max_se, filters.series_order)
show_figure(
    drawn.figure, key="information.figure", file_stem=f"test_information_{filters.year}",
    image_format=filters.image_format, data=info.information_numbers(drawn, intervals_table),
    caption=info.information_caption(drawn, interval, max_se, filters.prompt_label,
                                     len(points) > 0, filters.provenance),
)

st.subheader("Verdict per model")
if drawn.verdicts:
    table = verdict_table(drawn.verdicts, interval)
    st.dataframe(table, hide_index=True, width="stretch", placeholder="—",
                 column_config=verdict_columns())
    st.caption(verdict_caption(interval))
    csv_download(table, label="Table (CSV)", file_stem=f"information_verdicts_{filters.year}",
                 key="information.table.csv")
else:
    st.caption("Verdicts appear once the selection has model runs.")

st.subheader("Reliability of each booklet")
reliability = reliability_table(filters.year, curves, lc_language, filters.profile.get("scoring"))
if reliability.empty:
    st.caption("No booklet to measure.")
else:
    st.dataframe(reliability, hide_index=True, width="stretch", placeholder="—",
                 column_config=reliability_columns())
    st.caption(RELIABILITY_CAPTION + filters.provenance)
    csv_download(reliability, label="Reliability (CSV)",
                 file_stem=f"information_reliability_{filters.year}",
                 key="information.reliability.csv")
