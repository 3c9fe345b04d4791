"""The dashboard's views: one file each under ``pages/``, in navigation order.

``app.py`` turns :data:`VIEWS` into ``st.Page`` objects for ``st.navigation``. The menu sits in
the header bar at the top of the window: Home as a plain link, every other section of
:data:`SECTIONS` a drop-down of its pages. In the sidebar the thirteen links filled a 900-px
high window down to the first filter, so the filters (what a reader changes most) started below
the fold. Pages that link to another page and the page benchmark read the same list. A new
view: add its file under ``pages/`` and one line here, in its section.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from dashboard.presentation import present_if_asked


@dataclass(frozen=True)
class View:
    """One page of the dashboard: its file (relative to ``app.py``), navigation title and URL."""

    file: str
    title: str
    #: The URL path: the one Streamlit derived from the file name before the app had a
    #: navigation frame, set explicitly so that shared links keep working.
    url_path: str
    #: The menu section heading it is listed under (one of :data:`SECTIONS`).
    section: str = "The paper's analyses"


#: Menu sections, in order.
SECTIONS: tuple[str, ...] = ("Overview", "The paper's analyses", "Beyond the paper",
                             "Items, data and runs")


#: The default page, served at the root URL (its url_path only names it internally).
HOME = View("pages/home.py", "Home", "home", "Overview")
ITEM_EXPLORER = View("pages/6_Item_explorer.py", "Item explorer", "Item_explorer",
                     "Items, data and runs")
RUNS = View("pages/8_Runs.py", "Runs", "Runs", "Items, data and runs")

VIEWS: tuple[View, ...] = (
    HOME,
    View("pages/1_Accuracy_vs_ability.py", "Accuracy vs ability", "Accuracy_vs_ability"),
    View("pages/2_Person_fit.py", "Person fit", "Person_fit"),
    View("pages/3_Response_patterns.py", "Response patterns", "Response_patterns"),
    View("pages/4_Test_information.py", "Test information", "Test_information"),
    View("pages/5_Discrimination.py", "Discrimination", "Discrimination"),
    View("pages/12_Paper_tables.py", "Paper tables", "Paper_tables"),
    View("pages/10_Populations.py", "Populations", "Populations", "Beyond the paper"),
    View("pages/11_Options_and_traps.py", "Options and traps", "Options_and_traps",
         "Beyond the paper"),
    View("pages/9_Adaptive_testing.py", "Adaptive testing", "Adaptive_testing",
         "Beyond the paper"),
    ITEM_EXPLORER,
    View("pages/7_Data.py", "Data", "Data", "Items, data and runs"),
    RUNS,
)


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
