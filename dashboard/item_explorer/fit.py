"""The Item explorer's human item fit of the shown item: its S-X² row on a booklet form (the
table of the Item gaps page), marked when the 3PL curve misfits the candidates."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import queries
from dashboard.item_fit import MARK, form_fit, item_fit_row, runs_language
from dashboard.state.filters import Filters
from enem.areas import LANGUAGE_NAMES
from workflows.items.fit import FIT_Q, MISFIT_RMSEA


def fit_form(filters: Filters, area: str, item: pd.Series, opening_booklet: int | None
             ) -> tuple[int, int | None] | None:
    """The form whose fit is shown for ``item`` (a row of ``area_items``): the page's opening
    booklet when it holds the item (the Item gaps page's booklet), else the booklet holding it
    that most candidates took; in LC the item's own foreign language, or for a common item the
    language of the runs, as the Item gaps page picks it. None when no booklet holds it."""
    holders = set(queries.item_record(filters.year, int(item["item_id"]))["booklet_id"]
                  .astype(int))
    if not holders:
        return None
    if opening_booklet is not None and opening_booklet in holders:
        booklet = int(opening_booklet)
    else:
        # The catalogue lists each area's booklets by candidates, most first.
        catalogue = queries.booklet_catalogue(filters.year)["booklet_id"].astype(int)
        booklet = next((b for b in catalogue if b in holders), min(holders))
    language = (int(item["item_language"]) if pd.notna(item["item_language"])
                else runs_language(filters, area, booklet))
    return booklet, language


def _number(value, pattern: str) -> str:
    return "—" if pd.isna(value) else pattern.format(value)


def show_fit(filters: Filters, area: str, item: pd.Series, opening_booklet: int | None) -> None:
    """S-X², df, p, q and RMSEA of ``item`` on its form, a warning when it is flagged, and what
    the numbers mean; one caption instead when the store has no fit for it."""
    if item["abandoned"]:
        return  # No parameters, no curve to misfit: the page's warning says why.
    form = fit_form(filters, area, item, opening_booklet)
    if form is None:
        return
    booklet, language = form
    fit = form_fit(filters.year, area, booklet, language)
    if fit.empty:
        st.caption(f"No human item fit: {filters.year} holds only its item file (no "
                   "candidates' answers)." if not filters.has_humans else
                   "No human item fit: this store holds no per-score item tables for "
                   f"{filters.year} (stored before they existed): ingest the year again.")
        return
    row = item_fit_row(fit, int(item["item_id"]))
    if row is None:
        st.caption(f"No human item fit: booklet {booklet}'s scores do not count this item.")
        return
    # Six columns, not the seven of the row above: p and q can be as long as "9.4e-169".
    cells = st.columns(6)
    cells[0].metric("S-X² (human fit)", _number(row["sx2"], "{:.1f}"),
                    help="Orlando–Thissen S-X²: the candidates' share correct at each number "
                         "correct of the booklet against what INEP's 3PL curve predicts there")
    cells[1].metric("df", _number(row["df"], "{:.0f}"))
    cells[2].metric("p", _number(row["p"], "{:.2g}"))
    cells[3].metric("q (BH)", _number(row["q"], "{:.2g}"),
                    help="Benjamini–Hochberg over the booklet's items")
    cells[4].metric("RMSEA", _number(row["rmsea"], "{:.3f}"),
                    help="the misfit per candidate: √max(0, (S-X² − df) / (df·(N − 1)))")
    flagged = bool(row["misfit"])
    cells[5].metric("Fit flag", f"{MARK} misfit" if flagged else "fits",
                    help=f"flagged when q < {FIT_Q:g} and RMSEA > {MISFIT_RMSEA:g}")
    where = f"question {int(row['position'])} of booklet {booklet}" + (
        "" if language is None else f", {LANGUAGE_NAMES[language]} form")
    if flagged:
        st.warning(f"{MARK} The 3PL curve misfits the humans on this item ({where}): "
                   f"S-X² = {row['sx2']:.1f} on {row['df']:.0f} df, q = {row['q']:.2g}, "
                   f"RMSEA = {row['rmsea']:.3f} (flagged: q < {FIT_Q:g} and RMSEA > "
                   f"{MISFIT_RMSEA:g}). The comparisons with the "
                   "models on θ lean on a curve the candidates do not follow here.")
    st.caption(f"Human item fit on the candidates of {where}: does INEP's curve (a, b, c) "
               "predict how often the candidates of each number correct got this item right? "
               "With this many candidates a tiny misfit is significant, so an item is flagged "
               f"only when its q < {FIT_Q:g} and its RMSEA > {MISFIT_RMSEA:g}. The booklet's "
               "whole table: Human item fit on the Item gaps page (link below).")
