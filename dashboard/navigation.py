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

from dashboard.presentation.deck import present_if_asked


@dataclass(frozen=True)
class View:
    """One page of the dashboard: its file (relative to ``app.py``), navigation title and URL."""

    file: str
    title: str
    #: The menu section heading it is listed under (one of :data:`SECTIONS`).
    section: str = "The paper's analyses"

    @property
    def url_path(self) -> str:
        """The URL path: the file's name without ``.py``. It is also the name Streamlit gives a
        page file it runs on its own (a deep link as a fresh server's first request, AppTest),
        so both routes agree on which page a URL means and shared links keep working."""
        return self.file.removeprefix("pages/").removesuffix(".py")


#: Menu sections, in order.
SECTIONS: tuple[str, ...] = ("Overview", "The paper's analyses", "Beyond the paper",
                             "Items, data and runs")


#: The default page, served at the root URL (its url_path only names it internally).
HOME = View("pages/home.py", "Home", "Overview")
ITEM_EXPLORER = View("pages/Item_explorer.py", "Item explorer", "Items, data and runs")
RUNS = View("pages/Runs.py", "Runs", "Items, data and runs")

VIEWS: tuple[View, ...] = (
    HOME,
    View("pages/Accuracy_vs_ability.py", "Accuracy vs ability"),
    View("pages/Person_fit.py", "Person fit"),
    View("pages/Response_patterns.py", "Response patterns"),
    View("pages/Test_information.py", "Test information"),
    View("pages/Discrimination.py", "Discrimination"),
    View("pages/Paper_tables.py", "Paper tables"),
    View("pages/Populations.py", "Populations", "Beyond the paper"),
    View("pages/Options_and_traps.py", "Options and traps", "Beyond the paper"),
    View("pages/Adaptive_testing.py", "Adaptive testing", "Beyond the paper"),
    ITEM_EXPLORER,
    View("pages/Data.py", "Data", "Items, data and runs"),
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
