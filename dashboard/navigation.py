"""The dashboard's menu: :data:`workflows.views.VIEWS` as ``st.navigation`` pages.

The menu sits in the header bar at the top of the window: Home as a plain link, every other
section of :data:`~workflows.views.SECTIONS` a drop-down of its pages. In the sidebar the
thirteen links filled a 900-px high window down to the first filter, so the filters (what a
reader changes most) started below the fold. The list of views itself is data in
:mod:`workflows.views`, read by the report too.
"""

from __future__ import annotations

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from dashboard.presentation.deck import present_if_asked
from workflows.views import HOME, SECTIONS, VIEWS


def navigation() -> StreamlitPage:
    """Set the wide layout, draw the navigation menu in the header bar and return the page this
    run shows (Home when the URL names none). ``st.Page`` needs a running script, so the pages
    are built here, not at import. Each browser tab is titled by its page's navigation title."""
    st.set_page_config(layout="wide")
    menu: dict[str, list[StreamlitPage]] = {_menu_heading(section): [] for section in SECTIONS}
    for view in VIEWS:
        menu[_menu_heading(view.section)].append(
            st.Page(view.file, title=view.title, url_path=view.url_path, default=view is HOME))
    page = st.navigation(menu, position="top")
    present_if_asked(page)  # ?present=1: the selection's figures instead of sidebar and page
    return page


def _menu_heading(section: str) -> str:
    """The heading ``section`` gets in the top menu: none for Home's own section, whose pages
    Streamlit's top navigation then shows as plain links before the drop-downs."""
    return "" if section == HOME.section else section


def is_home(page: StreamlitPage) -> bool:
    """Whether ``page`` is the Home page (the default page is served at the root URL)."""
    return page.url_path == ""
