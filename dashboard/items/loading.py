"""The Item gaps page's numbers for the sidebar's selection and one area: every check of
``workflows.items.checks``, run once per selection and store version on the shared reader; and
the booklet's score tables per group of candidates (``workflows.items.group_dif``), read once
per booklet form, grouping and store version."""

from __future__ import annotations

import streamlit as st

from dashboard.data import Token, shared_reader, version_token
from dashboard.state.filters import Filters
from dashboard.state.selection import information_booklet
from enem.scoring import ScoringOptions
from workflows.items.checks import ItemChecks, item_checks, runs_item_language
from workflows.items.group_dif import FormGroupTables, form_group_tables
from workflows.items.selection import ItemSelection


def checks_for(filters: Filters, area: str) -> ItemChecks:
    """The checks of ``area`` for the sidebar's selection (cached): on the booklet of the test
    information (the sidebar's, else the runs', else the candidates' most taken)."""
    scaling = ScoringOptions.from_stored(filters.profile.get("scoring")).scaling
    # Plain values as the cache's key (st.cache_data hashes them without pickling a class).
    return _checks(version_token(), filters.year, area, information_booklet(filters, area),
                   filters.language, filters.shots, tuple(filters.models),
                   bool(filters.pooled), scaling)


@st.cache_data(show_spinner="Checking the items…", max_entries=16)
def _checks(token: Token, year: int, area: str, booklet: int | None, language: str,
            shots: int, models: tuple[str, ...], pooled: bool, scaling: float) -> ItemChecks:
    """``token`` (the store's version) keys the cache and names the file read."""
    with shared_reader(token).cursor() as con:
        selection = ItemSelection(year, area, booklet, None, language, shots, models, pooled)
        selection = ItemSelection(year, area, booklet, runs_item_language(con, selection),
                                  language, shots, models, pooled)
        return item_checks(con, selection, scaling)


def group_tables_for(checks: ItemChecks, grouping: str) -> FormGroupTables:
    """The score tables per value of ``grouping`` on the booklet form of ``checks`` (cached;
    the selection must have a booklet). Every contrast of the grouping (each state against
    the others) is drawn from them without reading the store again."""
    selection = checks.selection
    return _group_tables(version_token(), selection.year, selection.area, selection.booklet,
                         selection.item_language, grouping)


@st.cache_data(show_spinner="Counting each group's answers…", max_entries=16)
def _group_tables(token: Token, year: int, area: str, booklet: int | None,
                  item_language: int | None, grouping: str) -> FormGroupTables:
    """``token`` (the store's version) keys the cache and names the file read."""
    with shared_reader(token).cursor() as con:
        # Only the form matters here: no runs are read.
        form = ItemSelection(year, area, booklet, item_language, None, None, ())
        return form_group_tables(con, form, grouping)
