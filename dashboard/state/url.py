"""The sidebar's state kept across pages and mirrored in the URL, as one table.

Each row of :data:`FIELDS` is one shared filter: its query parameter, how a value read from the
URL is parsed, how the kept value is written back, and the default the widget starts from. The
same rows drive the three steps of every script run:

1. :func:`read_url_once` copies the query parameters, as lists of text, into the persistent
   session keys (``filter.<name>``) on the first run of a browser session;
2. :func:`seed` puts a valid value into the widget key (``sidebar.<name>``) before the sidebar
   draws the widget (the widget's own value, else the URL's parsed, else the kept one, else the
   default), and :func:`keep` copies the widget's value back to the persistent key;
3. :func:`write_url` writes every row's kept value back to the query string (values the URL
   leaves out, such as every area or every booklet, are removed from it).

Two rows are not one widget each: the URL names runs by id (``run=``, translated into the run
picker's labels by :func:`runs_from_url`, and written from those labels by their ids), while
``model=`` (runs named by their labels, as older links did) is still read but never written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import queries
from enem.areas import AREAS
from inference.protocol import PROMPT_LANGUAGES
from workflows.views import shots_from_url, shots_to_url

#: The booklet picker's value for "every booklet" (a real CO_PROVA is never 0).
ALL_BOOKLETS = 0

#: Session key set once the URL has been read in this browser session.
_INITIALISED = "filter._from_url"


def run_ids(labels: Sequence[str]) -> list[str]:
    """The run ids of the chosen run labels, for the URL (sorted; [] when none is chosen)."""
    catalogue = queries.model_catalogue()
    if catalogue.empty or not labels:
        return []
    chosen = catalogue[catalogue["model"].isin(list(labels))]
    return sorted(str(run_id) for run_ids in chosen["run_ids"] for run_id in run_ids)


@dataclass(frozen=True)
class StateField:
    """One shared filter: a row of the URL-state table.

    Attributes
    ----------
    name
        The filter's name: the query parameter, and the suffix of its persistent
        (``filter.<name>``) and widget (``sidebar.<name>``) session keys.
    parse
        A query parameter's values (list of text, as in the URL) → the widget's value. May
        raise TypeError or ValueError, in which case the default is used.
    format
        The kept value → the query parameter's values; [] leaves the parameter out.
    default
        The widget's value when neither the widget, the URL nor an earlier page gave one.
        None where the sidebar derives it from the options of the loaded year (year, shots).
    multi
        True for a multiselect: the value is a list, filtered to the options offered.
    in_url
        False for a filter kept across pages but not shared through the address.
    written_from
        The filter whose kept value ``format`` writes, when not this one's own (``run``).
    """

    name: str
    parse: Callable[[list[str]], Any]
    format: Callable[[Any], list[str]]
    default: Any = None
    multi: bool = False
    in_url: bool = True
    written_from: str | None = None

    @property
    def widget_key(self) -> str:
        """The session key of the sidebar widget."""
        return f"sidebar.{self.name}"

    @property
    def persistent_key(self) -> str:
        """The session key that outlives the widget (pages that draw no sidebar, URL reads)."""
        return f"filter.{self.name}"


def _first(values: list[str]) -> str:
    return values[0]


def _omitted_when(default: Any) -> Callable[[Any], list[str]]:
    """A format writing ``[str(value)]``, or nothing when the value is ``default``."""
    return lambda value: [] if value == default else [str(value)]


#: The URL-state table, in the order the query string lists the parameters.
FIELDS: tuple[StateField, ...] = (
    StateField("year", lambda v: int(v[0]), lambda year: [str(year)]),
    StateField("area", lambda v: [a.upper() for a in v],
               lambda areas: [] if len(areas) in (0, len(AREAS)) else list(areas),
               default=list(AREAS), multi=True),
    StateField("booklet", lambda v: int(v[0]), _omitted_when(ALL_BOOKLETS),
               default=ALL_BOOKLETS),
    StateField("lang", _first, lambda lang: [lang], default=PROMPT_LANGUAGES[0]),
    StateField("shots", lambda v: shots_from_url(v[0]), lambda shots: [shots_to_url(shots)]),
    StateField("family", lambda v: v, lambda families: list(families or []), default=[],
               multi=True),
    StateField("tuning", _first, _omitted_when("all"), default="all"),
    # Runs named by their labels (links made before runs had ids): read, never written.
    StateField("model", lambda v: v, lambda labels: [], default=[], multi=True),
    StateField("run", lambda v: v, lambda labels: run_ids(labels or []),
               written_from="model"),
    StateField("pool", lambda v: v[0] == "model", lambda pool: ["model"] if pool else [],
               default=False),
    StateField("group", _first, _omitted_when("all:all"), default="all:all"),
    StateField("reproduced", lambda v: v[0] == "only", lambda only: ["only"] if only else [],
               default=False),
    StateField("blank", lambda v: v[0] == "out", lambda out: ["out"] if out else [],
               default=False),
    StateField("image", _first, lambda image: [image], default="png", in_url=False),
)
_BY_NAME: dict[str, StateField] = {field.name: field for field in FIELDS}

#: Query-parameter names of the shared filters (pages may add their own, e.g. ``item``).
URL_KEYS: tuple[str, ...] = tuple(field.name for field in FIELDS if field.in_url)


def read_url_once() -> None:
    """Seed the persistent filter values from the URL on the session's first run."""
    if st.session_state.get(_INITIALISED):
        return
    params = st.query_params
    for key in URL_KEYS:
        values = params.get_all(key)
        if values:
            st.session_state[f"filter.{key}"] = values
    st.session_state[_INITIALISED] = True


def url_value(name: str) -> list[str] | None:
    """The persistent value of ``name`` when it is a list of text (as read from the URL)."""
    value = st.session_state.get(f"filter.{name}")
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def seed(name: str, options: Sequence[Any], default: Any = None) -> str:
    """Put a valid value into the widget key of ``name`` before it is drawn; returns the key.

    ``default`` replaces the table's default (for the filters whose default depends on the
    options of the loaded year)."""
    field = _BY_NAME[name]
    default = field.default if default is None else default
    widget = field.widget_key
    from_url = url_value(name)
    if widget in st.session_state:
        current = st.session_state[widget]
    elif from_url is not None:
        try:
            current = field.parse(from_url)
        except (TypeError, ValueError):
            current = default
    else:
        current = st.session_state.get(field.persistent_key, default)
    if field.multi:
        current = [v for v in (current or []) if v in options]
    elif current not in options:
        current = default
    st.session_state[widget] = current
    return widget


def keep(name: str) -> Any:
    """Copy the drawn widget's value of ``name`` to its persistent key; returns the value."""
    field = _BY_NAME[name]
    value = st.session_state[field.widget_key]
    st.session_state[field.persistent_key] = value
    return value


def runs_from_url(catalogue: pd.DataFrame) -> None:
    """Turn the run ids of a shared URL (``run=``) into the run picker's labels, once."""
    ids = url_value("run")
    st.session_state.pop("filter.run", None)
    if ids is None or "sidebar.model" in st.session_state:
        return
    wanted = set(ids)
    st.session_state["filter.model"] = [
        label for label, run_ids in zip(catalogue["model"], catalogue["run_ids"], strict=True)
        if wanted & {str(run_id) for run_id in run_ids}]


def write_url() -> None:
    """Mirror the shared filters into the query string (defaults left out)."""
    state = st.session_state
    params = st.query_params
    for field in FIELDS:
        if not field.in_url:
            continue
        source = _BY_NAME[field.written_from or field.name]
        values = field.format(state.get(source.persistent_key, source.default))
        if params.get_all(field.name) == values:
            continue
        if values:
            params[field.name] = values if len(values) > 1 else values[0]
        elif field.name in params:
            del params[field.name]


def seed_page_choice(param: str, options: Sequence[Any], key: str,
                     default: Any = None) -> None:
    """Before a page's own picker (session key ``key``) is drawn: take the choice the URL's
    ``param`` names when it is one of ``options`` and not what this page last wrote there (a
    shared link, an edited address); otherwise the picker keeps its own value, or starts from
    ``default`` (when given) where it has none among ``options``. Pickers seeded here are drawn
    without an index of their own."""
    from_url = st.query_params.get(param)
    if from_url in options and from_url != st.session_state.get(f"{key}.written"):
        st.session_state[key] = from_url
    elif default is not None and st.session_state.get(key) not in options:
        st.session_state[key] = default


def write_page_choice(param: str, key: str) -> None:
    """After the picker of :func:`seed_page_choice` is drawn: its value into the URL's
    ``param``, so that a shared link reopens it."""
    value = str(st.session_state[key])
    st.query_params[param] = value
    st.session_state[f"{key}.written"] = value


def leave_page_choice_out(param: str, key: str) -> None:
    """Remove ``param`` from the URL (a choice at its default, none made, or a picker not
    drawn), and forget that this page wrote it, so a link naming it later is taken again."""
    if param in st.query_params:
        del st.query_params[param]
    st.session_state.pop(f"{key}.written", None)


#: The query parameter naming the open tab of a page whose parts are tabs.
SECTION_PARAM = "section"


def section_tabs(labels: Sequence[str]) -> Sequence[Any]:
    """A page's parts as tabs, the open one kept in the URL's :data:`SECTION_PARAM` (its label,
    so a shared link reopens it). A tab's ``.open`` says whether it is shown: the page draws,
    and computes, only the open part."""
    return st.tabs(list(labels), key=SECTION_PARAM, bind="query-params")
