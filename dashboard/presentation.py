"""Presentation mode: the current selection's figures one per screen, for an audience.

``?present=1`` on any page's address (or the sidebar's *Present these figures* button) shows
this instead of the page and the sidebar: one figure at a time with its page title and
caption, larger type, Previous / Next buttons (and Streamlit's own button shortcuts: the arrow
keys move, Esc leaves). The figure shown is in the address too (``slide=N``), so a link opens
at the same figure. Leaving removes both keys: the page comes back with the same selection
(the sidebar's filters stay in the session and in the address).

The switch is :func:`present_if_asked`, called by :func:`dashboard.navigation.navigation`
right after the menu is built. Every script run takes that step before the sidebar is drawn:
the frame (``app.py``) and also the path Streamlit takes when it runs a page file on its own
(the first request of a fresh server, every rerun under ``AppTest``; see
:func:`dashboard.state.open_page`).

The figures are those the report captures for the same selection
(:mod:`dashboard.presentation_slides`), captured once per selection and database version.
"""

from __future__ import annotations

import urllib.parse

import streamlit as st

from dashboard import queries
from dashboard.data import database_state
from dashboard.figures import plotly_config
from dashboard.presentation_slides import Deck, selection_deck, slide_figure
from workflows.report import Selection

#: Query keys of presentation mode itself; every other key is the selection.
PRESENT_KEY, SLIDE_KEY = "present", "slide"

#: Larger type everywhere (Streamlit sizes its text in rem), no sidebar (nor the button that
#: opens it) and no header bar, the figure using the whole width.
STYLE = """<style>
html { font-size: 22px; }
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stHeader"] { display: none; }
[data-testid="stMainBlockContainer"] { padding: 1rem 2rem 2rem; max-width: none; }
[data-testid="stMainBlockContainer"] h3 { font-size: 1.3rem; padding: 0.25rem 0; }
[data-testid="stCaptionContainer"] { font-size: 1rem; }
</style>"""


def is_presenting() -> bool:
    """Whether the address asks for presentation mode (``present=1``)."""
    return st.query_params.get(PRESENT_KEY) == "1"


def present_if_asked() -> None:
    """When the address asks for presentation mode, draw it and end the script run (no sidebar,
    no page); otherwise offer the switch into it at the top of the sidebar."""
    if is_presenting():
        present_selection()
        st.stop()
    presentation_button()


def _enter() -> None:
    st.query_params[PRESENT_KEY] = "1"
    st.query_params[SLIDE_KEY] = "1"


def _leave() -> None:
    for key in (PRESENT_KEY, SLIDE_KEY):
        if key in st.query_params:
            del st.query_params[key]


def _go(slide: int) -> None:
    st.query_params[SLIDE_KEY] = str(slide)


def presentation_button() -> None:
    """The sidebar's switch into presentation mode (drawn by the frame above the filters;
    not without a database to show)."""
    state = database_state()
    if not state.usable or not state.has_humans:
        return
    st.sidebar.button("Present these figures", key="present_enter", on_click=_enter,
                      icon=":material/slideshow:", width="stretch",
                      help="Every figure of the selection, one per screen in large type, "
                           "Previous / Next or the arrow keys; the same as adding "
                           "`?present=1` to the address")


def selection_query() -> dict[str, list[str]]:
    """The selection in the address: every query key but presentation mode's own."""
    return {key: st.query_params.get_all(key) for key in st.query_params
            if key not in (PRESENT_KEY, SLIDE_KEY)}


def slide_number(count: int) -> int:
    """The slide the address names (1-based), kept within 1..count (1 when unreadable)."""
    try:
        wanted = int(st.query_params.get(SLIDE_KEY, "1"))
    except ValueError:
        wanted = 1
    return min(max(wanted, 1), max(count, 1))


def present_selection() -> None:
    """Draw presentation mode for the address's selection (instead of page and sidebar)."""
    st.html(STYLE)
    state = database_state()
    if not state.usable or not state.has_humans:
        st.info(state.problem or f"The database `{state.path.name}` is empty: nothing to present.")
        _leave_button()
        return
    query = selection_query()
    try:
        deck = selection_deck(query)
    except (RuntimeError, OSError) as error:
        st.error(f"The figures of this selection could not be collected: {error}")
        _leave_button()
        return
    _draw(deck, query)


def _leave_button() -> None:
    st.button("Leave presentation", key="present_leave", on_click=_leave,
              icon=":material/close:", shortcut="Esc",
              help="Back to the page with the same selection")


def _draw(deck: Deck, query: dict[str, list[str]]) -> None:
    count = len(deck.slides)
    number = slide_number(count)
    previous, position, following, leave = st.columns([2, 2, 2, 3], vertical_alignment="center")
    previous.button("Previous", key="present_previous", on_click=_go, args=(number - 1,),
                    disabled=number <= 1, icon=":material/arrow_back:", shortcut="Left",
                    width="stretch", help="Previous figure")
    position.markdown(f"**Figure {number} of {count}**" if count else "**No figures**")
    following.button("Next", key="present_next", on_click=_go, args=(number + 1,),
                     disabled=number >= count, icon=":material/arrow_forward:",
                     shortcut="Right", width="stretch", help="Next figure")
    with leave:
        _leave_button()
    for problem in deck.problems:
        st.warning(f"A page showed an error while its figures were collected: {problem}")
    if not count:
        st.info("No page shows a figure for this selection: leave presentation mode and widen "
                "the sidebar's filters.")
    else:
        slide = deck.slides[number - 1]
        st.subheader(slide.page)
        st.plotly_chart(slide_figure(slide.figure), width="stretch",
                        key=f"present_figure_{number}",
                        config=plotly_config(f"figure-{number:02d}"))
        st.caption(f"Figure {number}. {slide.caption}")
    synthetic = " Synthetic demo data." if queries.is_synthetic() else ""
    st.caption(f"Selection: {Selection.from_url(_query_string(query)).words()}.{synthetic}")


def _query_string(query: dict[str, list[str]]) -> str:
    return urllib.parse.urlencode(query, doseq=True)
