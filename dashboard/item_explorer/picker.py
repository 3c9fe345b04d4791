"""Which item the Item explorer shows: the link's item, else the item the picker keeps, else
the first answered item of the opening booklet; and what the picker's labels say.

The URL (``?item=CO_ITEM&area=CN``, which the Response patterns page uses to open an item)
wins when it names an item other than the one the page last wrote there; an area without an
item (a link such as ``?area=LC``, or the sidebar's area) opens that area's first item.
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from dashboard import queries
from dashboard.state.filters import Filters
from enem.areas import AREAS, LANGUAGE_NAMES
from workflows.views import ITEM_EXPLORER

#: An item number in the URL: ASCII digits only (``str.isdigit`` also takes "²", which int()
#: refuses), at most 12 of them (CO_ITEM has 5–6).
URL_ITEM = re.compile(r"[0-9]{1,12}")
#: Session keys: the area and item pickers, the item a link asks for, the item last written
#: to the URL.
AREA_KEY, ITEM_KEY, WANTED_KEY, WRITTEN_KEY = ("explorer.area", "explorer.item",
                                               "explorer.wanted", "explorer.written")


def area_holding(year: int, item_id: int, first: str | None) -> str | None:
    """The area of ``year`` whose items include ``item_id`` (``first`` is looked at first)."""
    for candidate in sorted(AREAS, key=lambda a: a != first):
        if item_id in set(queries.area_items(year, candidate)["item_id"]):
            return candidate
    return None


def explorer_link(item_id: int, area: str, year: int) -> str:
    """A relative link opening the item in the Item explorer (``?item=&area=&year=``, the
    address :func:`read_link` reads)."""
    return f"{ITEM_EXPLORER.url_path}?item={int(item_id)}&area={area}&year={int(year)}"


def read_link(year: int) -> int | None:
    """Set the area and item pickers' session state from the page's URL.

    Returns the item the link asks for when ``year`` holds no such item (the page says so),
    else None. A link item that is not a number gets a warning here.
    """
    url_item = st.query_params.get("item")
    url_area = next((a for a in st.query_params.get_all("area") if a in AREAS), None)
    not_in_year: int | None = None
    if url_item and url_item != st.session_state.get(WRITTEN_KEY):
        if url_area:
            st.session_state[AREA_KEY] = url_area
        if URL_ITEM.fullmatch(url_item):
            asked = int(url_item)
            holder = area_holding(year, asked, url_area)
            if holder is None:
                not_in_year = asked
                st.session_state.pop(ITEM_KEY, None)
            else:
                st.session_state[AREA_KEY] = holder
                st.session_state[WANTED_KEY] = asked
        else:
            st.warning("The item in this page's link is not an item number (a CO_ITEM such as "
                       "123456); pick an item below.")
    elif not url_item and url_area:
        st.session_state[AREA_KEY] = url_area
        st.session_state.pop(ITEM_KEY, None)
    return not_in_year


def write_link(item_id: int, area: str) -> None:
    """Put the shown item in the URL (a shared link reopens it) and remember it was written."""
    st.query_params["item"] = str(item_id)
    st.query_params["area"] = area
    st.session_state[WRITTEN_KEY] = str(item_id)


def answered_note(row, answered: set[int], has_humans: bool) -> str:
    """What the item picker adds to an item's label when nobody, or only one side, of the
    selection answered it (``row`` is a row of ``area_items``, ``answered`` the items the
    selected runs answered)."""
    runs = int(row.item_id) in answered
    humans = pd.notna(row.n) and row.n > 0
    if not runs and not humans:
        return " · nobody answered it"
    if answered and not runs:
        return " · no runs"
    if has_humans and not humans:
        return " · no candidates"
    return ""


def item_labels(items: pd.DataFrame, answered: set[int], has_humans: bool) -> dict[int, str]:
    """The picker's label of each item of ``items`` (``area_items``): first position, item id,
    foreign language, b (or 'abandoned') and who did not answer it."""
    labels = {}
    for row in items.itertuples():
        language = ("" if pd.isna(row.item_language)
                    else f" ({LANGUAGE_NAMES[int(row.item_language)]})")
        b = "abandoned" if row.abandoned else f"b = {row.b:.2f}"
        labels[int(row.item_id)] = (f"position {row.first_position} · item {row.item_id}"
                                    f"{language} · {b}{answered_note(row, answered, has_humans)}")
    return labels


def opening_item(year: int, items: pd.DataFrame, booklet: int | None, answered: set[int]) -> int:
    """The item the page opens on: the first item of ``booklet`` (booklet order) that the
    selected runs or the candidates answered, else the area's first such item, else its
    first item."""
    taken = set(items.loc[items["n"].fillna(0) > 0, "item_id"].astype(int)) | answered
    listed = [int(item) for item in items["item_id"]]
    in_booklet = ([] if booklet is None else
                  [int(item) for item in queries.form_items(year, booklet, None)["item_id"]
                   if int(item) in listed])
    for candidates in (in_booklet, listed):
        for item in candidates:
            if item in taken:
                return item
    return in_booklet[0] if in_booklet else listed[0]


def keep_or_open(labels: dict[int, str], default: int) -> None:
    """Before the item picker is drawn: the item a link asked for, else the picker's item when
    this area lists it, else ``default``."""
    wanted = st.session_state.pop(WANTED_KEY, None)
    if wanted in labels:
        st.session_state[ITEM_KEY] = wanted
    elif st.session_state.get(ITEM_KEY) not in labels:
        st.session_state[ITEM_KEY] = default


def unanswered_message(filters: Filters, item_id: int, area: str) -> str:
    """The empty state of an item the selected runs did not answer while they did answer
    other items of its area: which booklets hold it and which one the runs answered."""
    holders = sorted(int(b) for b in queries.item_record(filters.year, item_id)["booklet_id"])
    took = queries.model_booklet(filters.year, area, filters.language, filters.shots,
                                 filters.models)
    held = (f"booklet {holders[0]}" if len(holders) == 1 else
            "booklets " + ", ".join(str(b) for b in holders))
    where = (f"booklet {took}, which holds it, but stored no answer to it" if took in holders
             else f"booklet {took}, which does not hold it")
    return (f"No selected model run answered item {item_id} ({held}): the runs of "
            f"{filters.year} {area} ({filters.prompt_label}) answered {where}. Items marked "
            "“no runs” or “nobody answered it” in the picker have no model answers; the others "
            "do.")
