"""The humans' item fit (S-X²) of one booklet form, for the pages that mark the items whose 3PL
curve misfits the candidates (the Item explorer, Response patterns): cached per form and store
version on the shared reader, like :mod:`dashboard.queries`, and the words of the mark.

The form is the one the Item gaps page's fit table is about: its booklet and, in LC, the
foreign language the selected runs answered most (``workflows.items.checks``), so a flag seen
here is the row flagged there.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
import streamlit as st

from dashboard.data import Token, shared_reader, version_token
from dashboard.queries import cached_query
from dashboard.state.filters import Filters
from workflows.items.checks import runs_item_language
from workflows.items.fit import FIT_Q, MISFIT_RMSEA
from workflows.items.form_fit import form_item_fit, misfitting_items
from workflows.items.selection import ItemSelection

#: The mark of a flagged item on the pages.
MARK = "⚑"
#: The flag rule in words (its numbers are the workflow's).
RULE_WORDS = f"S-X², q < {FIT_Q:g} and RMSEA > {MISFIT_RMSEA:g}"
#: What the mark means, as a legend.
MARK_LEGEND = f"{MARK} items whose 3PL curve misfits the humans ({RULE_WORDS})"

#: The fit table of one form (``form_item_fit`` without the connection; the year's D).
form_fit = cached_query(form_item_fit)


def runs_language(filters: Filters, area: str, booklet: int | None) -> int | None:
    """LC: the foreign language the selected runs answered most on ``booklet`` (0 English
    when none), the form the Item gaps page checks; None in the other areas."""
    if area != "LC":
        return None
    return _runs_language(version_token(), filters.year, area, booklet, filters.language,
                          filters.shots, tuple(filters.models), bool(filters.pooled))


@st.cache_data(show_spinner=False, max_entries=32)
def _runs_language(token: Token, year: int, area: str, booklet: int | None, language: str,
                   shots: int, models: tuple[str, ...], pooled: bool) -> int | None:
    """``token`` (the store's version) keys the cache and names the file read; plain values as
    the key, as ``dashboard.items.loading`` does."""
    with shared_reader(token).cursor() as con:
        return runs_item_language(con, ItemSelection(year, area, booklet, None, language,
                                                     shots, models, pooled))


def flagged_items(year: int, area: str, booklet: int,
                  languages: Iterable[int | None]) -> frozenset[int] | None:
    """The items flagged on the forms of ``booklet`` in ``languages`` (LC: a form per
    foreign language, a common item counted when any of them flags it; elsewhere ``[None]``),
    None when the store holds no score tables of one of them."""
    flagged: set[int] = set()
    for language in languages:
        fit = form_fit(year, area, booklet, language)
        if fit.empty:
            return None
        flagged |= misfitting_items(fit)
    return frozenset(flagged)


def item_fit_row(fit: pd.DataFrame, item_id: int) -> pd.Series | None:
    """``item_id``'s row of a fit table, None when the form does not count it."""
    rows = fit[fit["item_id"] == int(item_id)]
    return None if rows.empty else rows.iloc[0]
