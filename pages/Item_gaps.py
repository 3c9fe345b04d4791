"""Item gaps: the items the selected models find much easier or much harder than the exam's
3PL curve (and than humans of their ability) say, DIF between humans and machines on the
booklet with the same DIF between two groups of humans as a control, the items calibrated on
the machines against INEP's calibration on humans, and the humans' item fit. Numbers:
``dashboard.items.loading`` (``workflows.items``); sections: ``dashboard.items.sections``;
definitions and references: docs/item_gaps.md.
"""

from __future__ import annotations

import streamlit as st

from analytics.items.gaps import HUMANS_NEAR_HALF_WIDTH, MARKED_RESIDUAL, MIN_SERIES
from dashboard.figures import area_title
from dashboard.items.loading import checks_for
from dashboard.items.sections import (
    show_calibration,
    show_dif,
    show_fit,
    show_group_dif,
    show_residuals,
)
from dashboard.items.tables import GAP_AREA_PARAM
from dashboard.state.frame import open_page
from dashboard.state.url import seed_page_choice, write_page_choice

filters = open_page("Item gaps: where machines and humans part")
st.markdown(
    "For every item: how often the selected runs got it right, against the exam's 3PL curve "
    "at each run's own θ (the **standardized residual z**, summed over the repetitions) and "
    f"against humans of the same ability (candidates within ±{HUMANS_NEAR_HALF_WIDTH} of the "
    "runs' θ). An item is listed as much easier (harder) for the machines when the selected "
    "run series agree on it: a one-sample t over the series' observed − expected, "
    "Benjamini–Hochberg q < 0.05 (repetitions of one prompt are nearly one draw, so a series "
    f"is the unit; with fewer than {MIN_SERIES} series, |z| ≥ {MARKED_RESIDUAL:g}). The DIF "
    "tests below compare the machines with humans of the same score.")
seed_page_choice(GAP_AREA_PARAM, list(filters.areas), "items.area", default=filters.areas[0])
# Seeded above and required, so never None (the fallback is the seed's default).
area = st.segmented_control("Area", list(filters.areas), key="items.area",
                            format_func=area_title, required=True) or filters.areas[0]
write_page_choice(GAP_AREA_PARAM, "items.area")
checks = checks_for(filters, area)

for section in (show_residuals, show_dif, show_group_dif, show_calibration, show_fit):
    section(filters, checks)
