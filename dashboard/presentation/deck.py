"""Presentation mode: the current selection's figures one per screen, for an audience.

``?present=1`` on any page's address (or the sidebar's *Present these figures* button) shows
this instead of the page and the sidebar: one figure at a time with its page title and
caption, sized to fit the window without scrolling (1280×720 as 1920×1080), Previous / Next
buttons (and Streamlit's own button shortcuts: the arrow keys move, Esc leaves). It opens at
the first figure of the page it was entered from; the figure shown is in the address too
(``slide=N``), so a link opens at the same figure. Leaving removes both keys: the page comes
back with the same selection (the sidebar's filters stay in the session and in the address).

The switch is :func:`present_if_asked`, called by :func:`dashboard.navigation.navigation`
right after the menu is built. Every script run takes that step before the sidebar is drawn:
the frame (``app.py``) and also the path Streamlit takes when it runs a page file on its own
(the first request of a fresh server, every rerun under ``AppTest``; see
:func:`dashboard.state.frame.open_page`).

The figures are those the report captures for the same selection
(:mod:`dashboard.presentation.slides`), captured once per selection and database version.
"""

from __future__ import annotations

import urllib.parse

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from dashboard import queries
from dashboard.data import database_state
from dashboard.figures import plotly_config
from dashboard.presentation.slides import (
    PLOTLY_HEIGHT,
    SLIDE_HEIGHT,
    SLIDE_WIDTH,
    Deck,
    selection_deck,
    slide_figure,
    slide_scale,
)
from workflows.report.build import Selection
from workflows.views import HOME, VIEWS

#: Query keys of presentation mode itself; every other key is the selection.
PRESENT_KEY, SLIDE_KEY = "present", "slide"

#: The slide fills the window and never scrolls: no sidebar (nor the button that opens it), no
#: header bar; type sized by the window's height (Streamlit sizes its text in rem: about 15 px
#: at 720 px, 23 px at 1080 px); the main block a column exactly the window's height, whose
#: body (the figure beside its caption) takes what the controls and the title leave. The
#: figure is drawn at its container's size (``height="stretch"``, no height of its own); a
#: caption longer than its column scrolls inside the column, never the page.
STYLE = """<style>
html { font-size: clamp(14px, 2.1vh, 24px); }
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stHeader"] { display: none; }
[data-testid="stMainBlockContainer"] { padding: 0.5rem 1.5rem; max-width: none;
  height: 100vh; box-sizing: border-box; }
[data-testid="stMainBlockContainer"] > [data-testid="stVerticalBlock"] { height: 100%;
  flex-wrap: nowrap; gap: 0.5rem; }
[data-testid="stMainBlockContainer"] > [data-testid="stVerticalBlock"] > * { flex-shrink: 0; }
.st-key-present_viewport { display: none; }
[data-testid="stLayoutWrapper"]:has(> .st-key-present_body),
.st-key-present_body > [data-testid="stLayoutWrapper"] { flex: 1 1 0; min-height: 0; }
.st-key-present_body, .st-key-present_body [data-testid="stHorizontalBlock"],
.st-key-present_body [data-testid="stColumn"] > [data-testid="stVerticalBlock"] { height: 100%; }
.st-key-present_body [data-testid="stColumn"] { overflow-y: auto; }
[data-testid="stMainBlockContainer"] h3 { font-size: 1.3rem; padding: 0; line-height: 1.3; }
[data-testid="stHeading"] [data-testid="stMarkdownContainer"] { margin-bottom: 0; }
[data-testid="stCaptionContainer"] { font-size: 0.9rem; }
</style>"""


#: The window's size, which the server cannot know: a script in the page reports it when the
#: slide is first drawn and again after every resize (a quarter second after the last step).
VIEWPORT_JS = """
export default function (component) {
  const { setStateValue } = component;
  let timer = null;
  const report = () => setStateValue("size", [window.innerWidth, window.innerHeight]);
  const later = () => { clearTimeout(timer); timer = setTimeout(report, 250); };
  report();
  window.addEventListener("resize", later);
  return () => { clearTimeout(timer); window.removeEventListener("resize", later); };
}
"""
_viewport = st.components.v2.component("enem_presentation_viewport", js=VIEWPORT_JS)
#: The window heights (px) STYLE's type size follows (``clamp(14px, 2.1vh, 24px)``) and the
#: height, in rem, of what stands above the figure (padding, the controls, the title, gaps).
REM_PX, REM_VH, ABOVE_FIGURE_REM = (14.0, 24.0), 0.021, 6.5


def figure_size(window: tuple[float, float] | None) -> tuple[float, float]:
    """About the width and height (px) STYLE leaves the figure in a ``window`` (width, height)
    px large (a 1280×720 screen's, :data:`SLIDE_WIDTH` × :data:`SLIDE_HEIGHT`, when the window
    has not reported its size): three quarters of the width inside the padding, the height
    below the controls and the title."""
    if not window:
        return SLIDE_WIDTH, SLIDE_HEIGHT
    width, height = window
    rem = min(REM_PX[1], max(REM_PX[0], REM_VH * height))
    return (max(0.75 * (width - 4 * rem), 1.0), max(height - ABOVE_FIGURE_REM * rem, 1.0))


def _window() -> tuple[float, float] | None:
    size = _viewport(key="present_viewport", on_size_change=lambda: None).get("size")
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return float(size[0]), float(size[1])
    return None


def is_presenting() -> bool:
    """Whether the address asks for presentation mode (``present=1``)."""
    return st.query_params.get(PRESENT_KEY) == "1"


def present_if_asked(page: StreamlitPage | None = None) -> None:
    """When the address asks for presentation mode, draw it and end the script run (no sidebar,
    no page); otherwise offer the switch into it at the top of the sidebar. ``page`` is the
    page the address names (``st.navigation``'s choice): without a slide in the address the
    presentation opens at that page's first figure."""
    if is_presenting():
        present_selection(page_file(page))
        st.stop()
    presentation_button()


def page_file(page: StreamlitPage | None) -> str | None:
    """The file of ``page`` as the slides name it (``pages/Person_fit.py``), None without
    a page or for one the menu does not list."""
    if page is None:
        return None
    if page.url_path == "":  # the default page is served at the root URL
        return HOME.file
    return next((view.file for view in VIEWS if view.url_path == page.url_path), None)


def _enter() -> None:
    # No slide: the presentation opens at the first figure of the page it was entered from.
    st.query_params[PRESENT_KEY] = "1"
    if SLIDE_KEY in st.query_params:
        del st.query_params[SLIDE_KEY]


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


def slide_number(count: int, start: int = 1) -> int:
    """The slide the address names (1-based), kept within 1..count (1 when unreadable);
    ``start`` when it names none."""
    try:
        wanted = int(st.query_params.get(SLIDE_KEY, str(start)))
    except ValueError:
        wanted = 1
    return min(max(wanted, 1), max(count, 1))


def present_selection(page: str | None = None) -> None:
    """Draw presentation mode for the address's selection (instead of page and sidebar),
    from the first figure of the page file ``page`` when the address names no slide."""
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
    number = slide_number(len(deck.slides), deck.first_of(page) or 1)
    if deck.slides and st.query_params.get(SLIDE_KEY) != str(number):
        # The address names the slide shown, so that a shared link opens the same one.
        st.query_params[SLIDE_KEY] = str(number)
    _draw(deck, number, query)


def _leave_button() -> None:
    st.button("Leave presentation", key="present_leave", on_click=_leave,
              icon=":material/close:", shortcut="Esc",
              help="Back to the page with the same selection")


def _draw(deck: Deck, number: int, query: dict[str, list[str]]) -> None:
    """Slide ``number`` of ``deck``: the controls, then the page title, then the figure with
    its caption and the selection in a column beside it (a screen is wider than tall; below
    the figure they took the height a tall figure needs)."""
    count = len(deck.slides)
    previous, position, following, leave = st.columns([2, 2, 2, 3], vertical_alignment="center")
    previous.button("Previous", key="present_previous", on_click=_go, args=(number - 1,),
                    disabled=number <= 1, icon=":material/arrow_back:", shortcut="Left",
                    width="stretch", help="Previous figure")
    position.markdown(f"**Figure {number} of {count}**" if count else "**No figures**")
    with position:
        width, height = figure_size(_window())
    following.button("Next", key="present_next", on_click=_go, args=(number + 1,),
                     disabled=number >= count, icon=":material/arrow_forward:",
                     shortcut="Right", width="stretch", help="Next figure")
    with leave:
        _leave_button()
    for problem in deck.problems:
        st.warning(f"A page showed an error while its figures were collected: {problem}")
    synthetic = " Synthetic demo data." if queries.is_synthetic() else ""
    selection = f"Selection: {Selection.from_url(_query_string(query)).words()}.{synthetic}"
    if not count:
        st.info("No page shows a figure for this selection: leave presentation mode and widen "
                "the sidebar's filters.")
        st.caption(selection)
        return
    slide = deck.slides[number - 1]
    st.subheader(slide.page)
    chart, words = st.container(key="present_body").columns([3, 1])
    layout = slide.figure.get("layout") or {}
    scale = slide_scale(layout.get("height") or PLOTLY_HEIGHT, height, width)
    chart.plotly_chart(slide_figure(slide.figure, scale), width="stretch", height="stretch",
                       key=f"present_figure_{number}",
                       config=plotly_config(f"figure-{number:02d}"))
    words.caption(f"Figure {number}. {slide.caption}")
    words.caption(selection)


def _query_string(query: dict[str, list[str]]) -> str:
    return urllib.parse.urlencode(query, doseq=True)
