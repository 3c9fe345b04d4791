"""The frame around every page: the sidebar before it, the title and notices at its top.

``app.py`` calls :func:`run_page`, which draws the shared sidebar once per script run and then
runs the page; the page calls :func:`open_page`, which draws its title, takes the selection the
sidebar computed in this same run, and says under the title what the reader must know about it
(no or untrusted human reference, the booklet the models took). Pages call
:func:`no_runs_message` and :func:`note_missing_runs` for their empty states.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.navigation.page import StreamlitPage

from dashboard import access, queries
from dashboard.data import DatabaseState, database_state
from dashboard.navigation import navigation
from dashboard.state.filters import Filters
from dashboard.state.sidebar import CURRENT_FILTERS, draw_sidebar
from dashboard.warm_start import import_page_modules
from enem.score_batches import reproduced_share_text


def run_page(page: StreamlitPage) -> None:
    """The frame's last steps (``app.py``, or a deep link's first run): import what every page
    needs (once per server, :mod:`dashboard.warm_start`), draw the shared sidebar once, then
    run ``page``."""
    import_page_modules()
    draw_sidebar()
    page.run()


def require_database() -> DatabaseState:
    """Stop the page with an explanation when there is no usable database or no year loaded
    (to a viewer without the server's paths, and without telling them to build anything)."""
    state = database_state()
    if not state.usable:
        st.info(_problem_for_this_session(state))
        st.stop()
    if not state.has_humans:
        st.info(f"The database `{state.path.name}` is empty: nothing has been ingested yet. Build "
                "the demo with `enem-llm demo`, or ingest a year with `enem-llm ingest-enem --year "
                "… --microdata … --items …`; the Data page will then list it.")
        st.stop()
    return state


def _problem_for_this_session(state: DatabaseState) -> str:
    """Why the store cannot be shown, in the words this session's role may read."""
    if access.settle_role().may_operate:
        return state.problem
    if not state.path.exists():
        return ("There is no store to show yet: this dashboard's operator builds it on their "
                "first visit (through the operator link `make run` prints).")
    return access.without_paths(state.problem)


def open_page(title: str) -> Filters:
    """Start a page: draw its title and return the sidebar's selection of this run. Stops the
    page (with an explanation under the title) when the database is missing or empty, in which
    case ``app.py`` drew no sidebar."""
    if CURRENT_FILTERS not in st.session_state:
        # app.py did not run: when the first request a fresh server gets is a deep link,
        # Streamlit runs the page file on its own (the legacy meaning of a pages/ folder, given
        # up once st.navigation has been called). Run the frame from here, with the page inside
        # it, in this same run (a rerun would drop a button's click), then end this outer run.
        run_page(navigation())
        st.stop()
    st.title(title)
    # Taken, not read: each run's page must find the filters of that run or none.
    filters = st.session_state.pop(CURRENT_FILTERS)
    if filters is None:
        require_database()
    _note_human_reference(filters)
    _note_model_booklet(filters)
    return filters


def no_runs_message(filters: Filters, area: str | None = None,
                    language: str | None = None) -> str:
    """The empty-state sentence for a selection without model runs (in ``area``, default the
    whole year; in ``language``, default the sidebar's prompt language)."""
    where = f"{filters.year} {area}" if area else f"{filters.year}"
    lang = language or filters.language
    if filters.catalogue.empty:
        return f"No model runs for {where} yet — launch one on the Runs page."
    if not filters.models:
        return (f"No model runs for {where} match the sidebar's families, tuning and "
                "runs — launch one on the Runs page or widen the run filters.")
    # The sidebar sets booklet_area whenever it sets a booklet (the check is for the types).
    if (filters.booklet is not None and filters.booklet_area is not None
            and (area is None or area == filters.booklet_area)):
        took = queries.model_booklet(filters.year, filters.booklet_area, lang, filters.shots,
                                     filters.models)
        if took is not None:
            return (f"The selected models took booklet {took}, which holds other items than "
                    f"booklet {filters.booklet}: pick booklet {took}, or every booklet, to see "
                    "them.")
    return (f"No model runs for {where} ({lang}, {filters.shots_words}) yet — launch one on "
            "the Runs page or pick another prompt language or number of shots.")


def note_missing_runs(filters: Filters, points: pd.DataFrame,
                      areas: tuple[str, ...] | None = None, language: str | None = None) -> None:
    """One info box naming the selected areas that have no model response pattern."""
    areas = areas or filters.areas
    present = set(points["area"]) if len(points) else set()
    missing = [area for area in areas if area not in present]
    if missing:
        st.info(no_runs_message(filters, ", ".join(missing), language))


def _note_model_booklet(filters: Filters) -> None:
    """With one booklet chosen, say which booklet the selected models took when it is another
    one holding the same items (their answers are then placed on the chosen booklet's items)."""
    if filters.booklet is None or not filters.models or filters.booklet_area is None:
        return
    took = queries.model_booklet(filters.year, filters.booklet_area, filters.language,
                                 filters.shots, filters.models)
    if took is None or took == filters.booklet:
        return
    same = queries.model_booklet(filters.year, filters.booklet_area, filters.language,
                                 filters.shots, filters.models, filters.booklet)
    if same is not None:
        st.caption(f"Booklet {filters.booklet} holds the same items as booklet {same}, which the "
                   "selected models took: their answers are placed on booklet "
                   f"{filters.booklet}'s items through the item ids.")


def _note_human_reference(filters: Filters) -> None:
    """Say under the title when the human background is missing or not to be trusted."""
    if not filters.has_humans:
        st.info(f"{filters.year} holds only its item file (no candidates' answers): pages show "
                "the models without the human background. Ingest the year's microdata with "
                "`enem-llm ingest-enem` to add it.")
        return
    if filters.no_humans:
        st.warning("The sidebar's filters leave no human to draw in "
                   + "; ".join(f"{area}: {why}" for area, why in filters.no_humans)
                   + ". Those figures show the models alone; change the filters to bring the "
                     "humans back.")
    if filters.audit.empty:
        return
    shown = filters.audit[filters.audit["flagged"] & filters.audit["area"].isin(filters.areas)]
    if filters.booklet is not None:
        shown = shown[shown["booklet_id"] == filters.booklet]
    if shown.empty:
        return
    listed = ", ".join(f"{r.booklet_id} ({r.area}, {r.reproduced:.0%} reproduced)"
                       for r in shown.head(8).itertuples())
    more = f" and {len(shown) - 8} more" if len(shown) > 8 else ""
    left_out = (" They are left out of the human reference (sidebar switch)."
                if filters.excluded else " The sidebar can leave them out of the human reference.")
    st.warning(f"Published parameters do not reproduce INEP's scores for booklet(s) {listed}"
               f"{more}: fewer than {reproduced_share_text()} of their candidates' official "
               f"notas come out to the decimal.{left_out}")
