"""Streamlit entry point and frame of the dashboard. Run with ``streamlit run app.py``.

Every script run goes through here: an operator link's token is taken from the URL and the
session's role settled (``dashboard.access``); on first start with no database the operator's
Home page builds the synthetic demo year (about half a minute; a viewer is told to wait for the
operator); then the navigation picks the page, the shared sidebar filters are drawn once
(``dashboard.state.frame``), and the page runs. The views are listed in
``dashboard.navigation`` and live one file each under ``pages/``.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from threadpoolctl import threadpool_limits

from dashboard import access
from dashboard.cache_guard import guard_cache_clearing
from dashboard.navigation import is_home, navigation
from dashboard.operator_proof import accept_operator_link
from dashboard.state.frame import run_page
from store.connection import database_path
from workflows.demo_build import build_fresh_demo_database


@st.cache_resource(show_spinner=False)
def ensure_database(db_path: Path) -> Path:
    """Build the demo database at ``db_path`` once when none exists there; returns the path."""
    if not db_path.exists():
        with st.spinner("First start: generating and ingesting the synthetic demo year…"):
            build_fresh_demo_database(db_path, progress=False)
    return db_path



@st.cache_resource(show_spinner=False)
def one_blas_thread() -> None:
    """Use one BLAS thread in this server process (once; it serves every session).

    The dashboard's linear algebra is small (density contours, CAT steps); BLAS threads of
    their own only fight the other sessions and the browser for the cores: on 2 busy cores a
    page's 24 density contours took 0.3–1.2 s with two OpenBLAS threads and 0.07 s with one.
    """
    threadpool_limits(1)


one_blas_thread()
guard_cache_clearing()
page = navigation()
accept_operator_link()
role = access.settle_role()
# Only the operator's Home page builds the demo, as before the frame existed: a deep link into
# another page of a fresh install explains that there is no database and points to Home.
if is_home(page) and role.may_operate:
    missing = not database_path().exists()
    ensure_database(database_path())
    if missing and database_path().exists():
        # This run's frame saw no database and drew no presentation switch: draw it again.
        st.rerun()
run_page(page)
