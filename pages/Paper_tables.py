"""Paper tables: the analyses of *Beyond accuracy* shown as tables, for any year in the store.

Table 1, the random-choice baseline; Table 2 (appendix A.2), item attributes against poor
discrimination for the models; Fig 6 / Table 3 (appendix A.3), the contamination probe (Min-K%
Prob against 4-shot accuracy).
"""

from __future__ import annotations

import streamlit as st

from dashboard.data import database_state
from dashboard.paper_tables.sections import attribute_section, baseline_section, min_k_section
from dashboard.report_button import report_section
from dashboard.state.frame import open_page

filters = open_page("Paper tables: random baseline, item attributes, contamination")
db_path = database_state().path
st.caption("The three appendix analyses of the paper, computed from this store's runs and items "
           "for the sidebar's year and areas. Each table can be downloaded; the methods are in "
           "docs/paper_tables_and_report.md.")

baseline_section(filters, db_path)
st.divider()
attribute_section(filters, db_path)
st.divider()
min_k_section(filters)
st.divider()
report_section(db_path)
