"""Adaptive testing (CAT): how few items give θ, for simulees, real candidates and live models.

The simulation study (MSE of θ̂ by test length, CAT against random fixed forms) on an item bank
of one year or several, the variable-length CAT (stop at an SE target), SE curves of careless
or lucky simulees (guess/slip) with the models' live curves, the live CAT paths against the
same models' full exams, the overlap of the items given to each model, the models' diagnostic
report by skill (θ̂ per competência beside the top 20% and 50% of humans), and the post-hoc CAT
of real candidates: one tab each (``dashboard.cat.sections``), drawn and computed when it is
opened; the open tab is the URL's ``section=``.
"""

from __future__ import annotations

import streamlit as st

from dashboard import queries
from dashboard.cat import figures as cat
from dashboard.cat.queries import cat_paths
from dashboard.cat.sections import show_live, show_posthoc, show_simulation, show_skills
from dashboard.state.frame import open_page
from dashboard.state.url import section_tabs

#: The page's tabs, in order (a label is the URL's ``section=``); only the open one is drawn
#: and computed.
SECTIONS = ("Simulation", "Live CAT", "Skills", "Post-hoc")

filters = open_page("Adaptive testing (CAT)")
settings, simulees, seed = cat.sidebar_settings()
left, right = st.columns([1, 2])
area = left.selectbox("Area", filters.areas, key="cat.area",
                      help="the item bank's area (and of every section below)")
years = right.multiselect("Item bank: years", queries.loaded_years(), default=[filters.year],
                          key="cat.years",
                          help="the distinct items with parameters of these years form the "
                               "bank of the simulations (INEP's scale is common across years; "
                               "an item in several years counts once)")
paths = cat.with_series(cat_paths(filters.year, area))

simulation, live, by_skill, posthoc = section_tabs(SECTIONS)
with simulation:
    if simulation.open:
        show_simulation(filters, area, years, paths, settings, simulees, seed)
with live:
    if live.open:
        show_live(filters, area, paths, settings)
with by_skill:
    if by_skill.open:
        show_skills(filters, area, seed)
with posthoc:
    if posthoc.open:
        show_posthoc(filters, area, seed)
