"""The sidebar filters every page shares, kept across pages and mirrored in the URL.

How the state works:

- ``app.py`` draws the sidebar once per script run, before the page (:func:`run_page`); the
  page then gets the selection from :func:`open_page` (the Filters computed in this same run,
  handed over in session state), so no page draws it again.
- Each filter has a *persistent* session key (``filter.<name>``) and a *widget* key
  (``sidebar.<name>``). Before a widget is drawn its key is seeded from the persistent value
  (checked against the options this database offers, which change with the year), and after it
  is drawn the persistent value is updated from it.
- On the first run of a browser session the persistent values are read from the URL's query
  parameters; after every run the current filters are written back to the URL, so copying the
  address shares the view (e.g. ``?year=2023&area=CN&area=MT&lang=en&shots=4&run=<run id>``;
  ``shots=published`` is the setting of runs imported without a shot count).
- A *run* is what the sidebar selects (the URL carries run ids; links naming a run by its
  label with ``model=`` still open). Each run is its own series on every page unless the pool
  switch is on: then the selected runs of each model form one series, named by the model id,
  and every caption lists what was pooled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.navigation.page import StreamlitPage

from dashboard import queries
from dashboard.data import DatabaseState, database_state
from dashboard.navigation import navigation
from dashboard.run_picker import (
    UNCOUNTED_PROMPT_TYPE,
    pooling_sentence,
    run_choice_labels,
    shots_words,
)
from dashboard.summaries import scoring_words
from enem.areas import AREA_NAMES, AREAS
from inference.protocol import PROMPT_LANGUAGE_NAMES, PROMPT_LANGUAGES, SHOT_SETTINGS
from store.dashboard_queries import UNCOUNTED_SHOTS, shots_from_url, shots_to_url

TUNING: dict[str, str] = {"all": "all", "instruct": "instruction-tuned", "base": "base"}
SCHOOL_TYPES: dict[str, str] = {"1": "not answered", "2": "public", "3": "private",
                                "4": "abroad", "?": "unknown"}
IMAGE_FORMATS: tuple[str, ...] = ("png", "svg")
#: The booklet picker's value for "every booklet" (a real CO_PROVA is never 0).
ALL_BOOKLETS = 0

#: Run labels are long and their last words tell runs of one model apart ("… · 30 seeds",
#: "… · 30 shuffles"), so the sidebar's chosen runs and every picker's options wrap instead of
#: being cut to "llama2-13b · few-sh…" (Streamlit cuts both to one line).
WRAPPED_CHOICES = """<style>
[data-testid="stSidebar"] [data-testid="stMultiSelectTagsContainer"] [data-tag] {
  max-width: 100%; height: auto; }
[data-testid="stSidebar"] [data-testid="stMultiSelectTagsContainer"] [data-tag] > span[title] {
  white-space: normal; overflow: visible; text-overflow: clip; overflow-wrap: anywhere; }
[role="option"] { height: auto; min-height: 2.5rem; }
[role="option"] > div { white-space: normal; overflow: visible; text-overflow: clip;
  overflow-wrap: anywhere; }
</style>"""

#: What the sidebar's human counts count: one scored test is one candidate's answers in one area.
TESTS_WORD = "tests taken"
TESTS_HELP = ("Counts are tests taken: one per candidate and area, so a candidate who sat all "
              "four areas counts four times.")

#: The sidebar switch that leaves booklets whose notas are not reproduced out of the humans.
REPRODUCED_SWITCH = "Humans: only booklets whose notas are reproduced"

#: Query-parameter names of the shared filters (pages may add their own, e.g. ``item``).
URL_KEYS: tuple[str, ...] = ("year", "area", "booklet", "lang", "shots", "family", "tuning",
                             "model", "run", "pool", "group", "reproduced", "blank")
_INITIALISED = "filter._from_url"
#: Session key of the Filters that ``draw_sidebar`` computed in this run (None: no database).
_CURRENT = "filter._current"


@dataclass(frozen=True)
class Filters:
    """What the sidebar selected. ``models`` are the selected runs' labels, already resolved
    (never 'all'); ``pooled`` asks for the runs of each model to be pooled into one series."""

    year: int
    areas: tuple[str, ...]
    booklet: int | None
    booklet_area: str | None
    language: str
    shots: int
    models: tuple[str, ...]
    group_kind: str
    group_value: str
    image_format: str = "png"
    catalogue: pd.DataFrame = field(default_factory=pd.DataFrame, compare=False, repr=False)
    #: Booklets left out of the human reference (their notas are not reproduced).
    excluded: tuple[int, ...] = ()
    #: False: all-blank tests (no answer marked) are left out of the human reference.
    include_blank: bool = True
    #: True: the selected runs of each model form one series named by the model id.
    pooled: bool = False
    #: The year's booklet audit (``store.dashboard_queries.booklet_audit``).
    audit: pd.DataFrame = field(default_factory=pd.DataFrame, compare=False, repr=False)
    #: The year's live ingest (``store.dashboard_queries.year_profile``).
    profile: dict = field(default_factory=dict, compare=False, repr=False)
    #: (area, why) for each chosen area where the human filters leave no candidate to draw.
    no_humans: tuple[tuple[str, str], ...] = ()
    #: The prompt types of the year's runs stored without a shot count ('few-shot').
    uncounted_prompt_types: str = UNCOUNTED_PROMPT_TYPE

    @property
    def series(self) -> tuple[str, ...]:
        """The series names pages draw: the run labels, or the model ids when pooled."""
        if not self.pooled or self.catalogue.empty:
            return self.models
        chosen = self.catalogue[self.catalogue["model"].isin(self.models)]
        return tuple(dict.fromkeys(chosen["model_id"].astype(str)))

    @property
    def series_order(self) -> list[str]:
        """Every series name of the database in catalogue order (stable colours)."""
        if self.catalogue.empty:
            return []
        column = "model_id" if self.pooled else "model"
        return list(dict.fromkeys(self.catalogue[column].astype(str)))

    def human_args(self, area: str) -> tuple:
        """The arguments every human-histogram query takes for ``area``: year, area, booklet,
        subgroup kind and value, booklets left out, whether all-blank tests count."""
        return (self.year, area, self.booklet_for(area), self.group_kind, self.group_value,
                self.excluded, self.include_blank)

    @property
    def has_humans(self) -> bool:
        """False for a year stored from its item file alone (no candidates)."""
        return not self.profile.get("items_only", False)

    @property
    def provenance(self) -> str:
        """The sentence every figure caption ends with: how θ was scored, which humans."""
        humans = ("no candidates (item file only)" if not self.has_humans else
                  f"{len(self.excluded)} booklet(s) whose notas are not reproduced left out"
                  if self.excluded else "every scored booklet")
        if self.has_humans:
            humans += ("" if self.include_blank else ", all-blank tests left out")
            if self.no_humans:
                humans += ("; none drawn in " + "; ".join(f"{area} ({why})"
                                                         for area, why in self.no_humans))
        runs = self._run_scorings() - {self.scoring}
        models = (f" Model runs scored otherwise: {'; '.join(sorted(runs))}." if runs else "")
        pooled = pooling_sentence(self.catalogue, self.models) if self.pooled else ""
        return f" θ: {self.scoring}. Humans: {humans}.{models}{pooled}"

    def _run_scorings(self) -> set[str]:
        """The scoring settings (in words) of the selected series' runs."""
        if self.catalogue.empty or "scorings" not in self.catalogue:
            return set()
        chosen = self.catalogue[self.catalogue["model"].isin(self.models)]
        # A series whose runs stored no settings has a missing (NA) list.
        return {scoring_words(stored) for stored_list in chosen["scorings"]
                if isinstance(stored_list, (list, tuple, np.ndarray)) for stored in stored_list}

    @property
    def scoring(self) -> str:
        """The year's scoring settings in words, for captions."""
        return scoring_words(self.profile.get("scoring"))

    def booklet_for(self, area: str) -> int | None:
        """The chosen booklet when it belongs to ``area``, else None (every booklet)."""
        return self.booklet if self.booklet_area == area else None

    def information_booklet(self, area: str) -> int | None:
        """The booklet whose items give ``area``'s test information: the chosen one, else the
        one the selected runs took most, else the one most candidates took (None: none)."""
        return (self.booklet_for(area)
                or queries.model_booklet(self.year, area, self.language, self.shots, self.models)
                or queries.main_booklet(self.year, area))

    @property
    def group_label(self) -> str:
        """Words for the human subgroup, e.g. 'candidates in SP'."""
        return group_label(self.group_kind, self.group_value)

    @property
    def shots_words(self) -> str:
        """The shots setting in words: '0-shot', or 'few-shot (no count given)' for runs
        imported with a prompt type that names no count."""
        return shots_words(self.shots, self.uncounted_prompt_types)

    @property
    def prompt_label(self) -> str:
        """Words for the prompt variant, e.g. 'pt, 0-shot' or 'pt, few-shot (no count
        given)'."""
        return f"{self.language}, {self.shots_words}"

    def no_runs_message(self, area: str | None = None, language: str | None = None) -> str:
        """The empty-state sentence for a selection without model runs."""
        where = f"{self.year} {area}" if area else f"{self.year}"
        lang = language or self.language
        if self.catalogue.empty:
            return f"No model runs for {where} yet — launch one on the Runs page."
        if not self.models:
            return (f"No model runs for {where} match the sidebar's families, tuning and "
                    "runs — launch one on the Runs page or widen the run filters.")
        if self.booklet is not None and (area is None or area == self.booklet_area):
            took = queries.model_booklet(self.year, self.booklet_area, lang, self.shots,
                                         self.models)
            if took is not None:
                return (f"The selected models took booklet {took}, which holds other items than "
                        f"booklet {self.booklet}: pick booklet {took}, or every booklet, to see "
                        "them.")
        return (f"No model runs for {where} ({lang}, {self.shots_words}) yet — launch one on "
                "the Runs page or pick another prompt language or number of shots.")


def selected_model_points(filters: Filters) -> pd.DataFrame:
    """Every scored shuffle of the selected models in the selected areas (one row per pattern)."""
    return pd.concat(
        [queries.model_points(filters.year, area, filters.booklet_for(area), filters.language,
                              filters.shots, filters.models, filters.pooled)
         for area in filters.areas],
        ignore_index=True,
    )


def note_missing_runs(filters: Filters, points: pd.DataFrame,
                      areas: tuple[str, ...] | None = None, language: str | None = None) -> None:
    """One info box naming the selected areas that have no model response pattern."""
    areas = areas or filters.areas
    present = set(points["area"]) if len(points) else set()
    missing = [area for area in areas if area not in present]
    if missing:
        st.info(filters.no_runs_message(", ".join(missing), language))


def group_label(kind: str, value: str) -> str:
    """Words for a human subgroup."""
    if kind == "state":
        return f"candidates in {value}"
    if kind == "school_type":
        return f"{SCHOOL_TYPES.get(value, value)} school candidates"
    return "all candidates"


def model_label(row: pd.Series) -> str:
    """'family · run series (instruction-tuned)' for the model pickers."""
    tuned = row.get("instruction_tuned")
    kind = "" if pd.isna(tuned) else (" (instruction-tuned)" if tuned else " (base)")
    return f"{row['family']} · {row['model']}{kind}"


def require_database() -> DatabaseState:
    """Stop the page with an explanation when there is no usable database or no year loaded."""
    state = database_state()
    if not state.usable:
        st.info(state.problem)
        st.stop()
    if not state.has_humans:
        st.info(f"The database `{state.path.name}` is empty: nothing has been ingested yet. Build the "
                "demo with `enem-llm demo`, or ingest a year with `enem-llm "
                "ingest-enem --year … --microdata … --items …`; the Data page will then list it.")
        st.stop()
    return state


def _read_url_once() -> None:
    """Seed the persistent filter values from the URL on the session's first run."""
    if st.session_state.get(_INITIALISED):
        return
    params = st.query_params
    for key in URL_KEYS:
        values = params.get_all(key)
        if values:
            st.session_state[f"filter.{key}"] = values
    st.session_state[_INITIALISED] = True


def _url_value(name: str) -> list[str] | None:
    value = st.session_state.get(f"filter.{name}")
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def _seed(name: str, options: Sequence[Any], default: Any, parse: Callable[[list[str]], Any],
          multi: bool = False) -> str:
    """Put a valid value into the widget key of ``name`` before it is drawn; returns the key."""
    widget = f"sidebar.{name}"
    persistent = f"filter.{name}"
    if widget in st.session_state:
        current = st.session_state[widget]
    elif _url_value(name) is not None:
        try:
            current = parse(_url_value(name))
        except (TypeError, ValueError):
            current = default
    else:
        current = st.session_state.get(persistent, default)
    if multi:
        current = [v for v in (current or []) if v in options]
    elif current not in options:
        current = default
    st.session_state[widget] = current
    return widget


def _keep(name: str) -> Any:
    value = st.session_state[f"sidebar.{name}"]
    st.session_state[f"filter.{name}"] = value
    return value


def open_page(title: str) -> Filters:
    """Start a page: draw its title and return the sidebar's selection of this run. Stops the
    page (with an explanation under the title) when the database is missing or empty, in which
    case ``app.py`` drew no sidebar."""
    if _CURRENT not in st.session_state:
        # app.py did not run: when the first request a fresh server gets is a deep link,
        # Streamlit runs the page file on its own (the legacy meaning of a pages/ folder, given
        # up once st.navigation has been called). Run the frame from here, with the page inside
        # it, in this same run (a rerun would drop a button's click), then end this outer run.
        run_page(navigation())
        st.stop()
    st.title(title)
    # Taken, not read: each run's page must find the filters of that run or none.
    filters = st.session_state.pop(_CURRENT)
    if filters is None:
        require_database()
    _note_human_reference(filters)
    _note_model_booklet(filters)
    return filters


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
               f"{more}: fewer than 99% of their candidates' official notas come out to the "
               f"decimal.{left_out}")


def run_page(page: StreamlitPage) -> None:
    """The frame's last steps (``app.py``): draw the shared sidebar once, then run ``page``."""
    draw_sidebar()
    page.run()


def draw_sidebar() -> Filters | None:
    """Draw the shared sidebar and keep the selection for the page's :func:`open_page`; None,
    and no sidebar, when the database cannot be shown."""
    st.session_state[_CURRENT] = None
    state = database_state()
    if not state.usable or not state.has_humans:
        return None
    filters = _sidebar()
    st.session_state[_CURRENT] = filters
    return filters


def _sidebar() -> Filters:
    _read_url_once()
    side = st.sidebar
    side.header("Filters")

    years = queries.loaded_years()
    key = _seed("year", years, years[-1], lambda v: int(v[0]))
    year = int(side.selectbox("Year", years, key=key, help="ENEM edition"))
    _keep("year")

    key = _seed("area", list(AREAS), list(AREAS), lambda v: [a.upper() for a in v], multi=True)
    side.multiselect("Areas", list(AREAS), key=key,
                     format_func=lambda a: f"{a} — {AREA_NAMES[a]}",
                     help="Empty means every area")
    areas = tuple(a for a in AREAS if a in _keep("area")) or AREAS

    booklets = queries.booklet_catalogue(year)
    booklets = booklets[booklets["area"].isin(areas)]
    labels = {ALL_BOOKLETS: "All booklets"}
    for row in booklets.itertuples():
        labels[int(row.booklet_id)] = (f"{row.booklet_id} · {row.area} · {row.colour or '?'} "
                                       f"({row.candidates:,} candidates)")
    key = _seed("booklet", list(labels), ALL_BOOKLETS, lambda v: int(v[0]))
    chosen_booklet = side.selectbox("Booklet", list(labels), key=key, format_func=labels.get,
                             help="One booklet of one area; the other areas keep every booklet")
    _keep("booklet")
    booklet = None if chosen_booklet == ALL_BOOKLETS else int(chosen_booklet)
    booklet_area = None
    if booklet is not None:
        booklet_area = str(booklets.loc[booklets["booklet_id"] == booklet, "area"].iloc[0])

    key = _seed("lang", PROMPT_LANGUAGES, PROMPT_LANGUAGES[0], lambda v: v[0])
    language = side.radio("Prompt language", PROMPT_LANGUAGES, key=key, horizontal=True,
                          format_func=PROMPT_LANGUAGE_NAMES.get)
    _keep("lang")
    shots, uncounted = _shots_filter(side, year)

    models, pooled = _run_filters(side, year)
    group_kind, group_value = _group_filter(side, year)
    audit = queries.booklet_audit(year)
    excluded = _reproduced_filter(side, audit)
    include_blank = _blank_filter(side, year)
    profile = queries.year_profile(year)

    side.divider()
    key = _seed("image", list(IMAGE_FORMATS), "png", lambda v: v[0])
    image_format = side.radio("Camera button saves", IMAGE_FORMATS, key=key, horizontal=True,
                              format_func=str.upper,
                              help="Format of the image saved by each chart's camera icon")
    _keep("image")
    _write_url()
    return Filters(year=year, areas=tuple(areas), booklet=booklet, booklet_area=booklet_area,
                   language=language, shots=shots, models=tuple(models), pooled=pooled,
                   group_kind=group_kind,
                   group_value=group_value, image_format=image_format,
                   catalogue=queries.model_catalogue(), excluded=excluded,
                   include_blank=include_blank, audit=audit, profile=profile,
                   no_humans=() if profile.get("items_only") else _empty_human_areas(
                       year, areas, booklet, booklet_area, group_kind, group_value, excluded,
                       include_blank, audit),
                   uncounted_prompt_types=uncounted)


def _shots_filter(side, year: int) -> tuple[int, str]:
    """The shots picker: 0, 1 and 4, and, when the year has runs imported with a prompt type
    that names no count (the paper's few-shot), a setting of their own named after it; returns
    (the setting, those prompt types). The default is 0 unless the year's runs have none."""
    settings = queries.shot_settings(year)
    answered = {int(s) for s in settings["shots"]} if len(settings) else set()
    uncounted_rows = settings[settings["shots"] == UNCOUNTED_SHOTS] if len(settings) else settings
    uncounted = (str(uncounted_rows["prompt_types"].iloc[0] or UNCOUNTED_PROMPT_TYPE)
                 if len(uncounted_rows) else UNCOUNTED_PROMPT_TYPE)
    options = list(SHOT_SETTINGS) + ([UNCOUNTED_SHOTS] if UNCOUNTED_SHOTS in answered else [])
    # 0-shot, unless the year's runs answered none at 0 shots: then the first they answered.
    first = next((s for s in options if s in answered), SHOT_SETTINGS[0])
    default = SHOT_SETTINGS[0] if SHOT_SETTINGS[0] in answered else first
    key = _seed("shots", options, default, lambda v: shots_from_url(v[0]))
    shots = int(side.radio(
        "Prompt shots", options, key=key, horizontal=True,
        format_func=lambda s: shots_words(s, uncounted),
        help="Runs imported with a prompt type that gives no count (the paper's few-shot) "
             "have a setting of their own, named after that prompt type; they are never shown "
             "as 0-, 1- or 4-shot."))
    _keep("shots")
    return shots, uncounted


def _empty_human_areas(year: int, areas: Sequence[str], booklet: int | None,
                       booklet_area: str | None, group_kind: str, group_value: str,
                       excluded: tuple[int, ...], include_blank: bool,
                       audit: pd.DataFrame) -> tuple[tuple[str, str], ...]:
    """(area, why) for each area whose human histograms these filters leave empty, the reason
    naming the filter that emptied them."""
    empty = []
    for area in areas:
        chosen = booklet if booklet_area == area else None
        if queries.human_count(year, area, chosen, group_kind, group_value, excluded,
                               include_blank):
            continue
        scored = audit.loc[(audit["area"] == area) & (audit["scored"] > 0), "booklet_id"] \
            if len(audit) else pd.Series(dtype=int)
        if chosen is not None:
            scored = scored[scored == chosen]
        if len(scored) and {int(b) for b in scored} <= set(excluded):
            which = f"booklet {chosen}" if chosen is not None else "every booklet"
            why = f"the switch \"{REPRODUCED_SWITCH}\" leaves out {which} of {area}"
        elif group_kind != "all":
            why = f"no {group_label(group_kind, group_value)} in the chosen booklets"
        elif not include_blank:
            why = "every test left is all-blank and all-blank tests are left out"
        else:
            why = "no scored candidate in the chosen booklets"
        empty.append((area, why))
    return tuple(empty)


def _run_filters(side, year: int) -> tuple[list[str], bool]:
    """Family, tuning and run pickers and the pool switch; returns the selected run labels
    (empty when no run exists) and whether runs of one model are pooled.

    A run is one model run under one setting (``llama2-13b · few-shot · 30 seeds``); each is
    its own series on every page unless the pool switch is on."""
    catalogue = queries.model_catalogue()
    side.subheader("Model runs")
    if catalogue.empty:
        side.caption("No model runs in the database yet.")
        return [], False
    in_year = catalogue[catalogue["years"].fillna("").str.split(", ").map(
        lambda years: str(year) in years)]
    families = sorted(in_year["family"].unique())
    key = _seed("family", families, [], lambda v: v, multi=True)
    side.multiselect("Families", families, key=key, placeholder="All families")
    chosen_families = _keep("family") or families
    key = _seed("tuning", list(TUNING), "all", lambda v: v[0])
    tuning = side.radio("Instruction tuning", list(TUNING), key=key, horizontal=True,
                        format_func=TUNING.get)
    _keep("tuning")
    pool = in_year[in_year["family"].isin(chosen_families)]
    if tuning != "all":
        pool = pool[pool["instruction_tuned"].fillna(False).astype(bool) == (tuning == "instruct")]
    labels = run_choice_labels(pool)
    side.html(WRAPPED_CHOICES)
    _runs_from_url(catalogue)
    key = _seed("model", list(labels), [], lambda v: v, multi=True)
    side.multiselect("Runs", list(labels), key=key, format_func=labels.get,
                     placeholder="All runs above",
                     help="Grouped by model; each run shows the settings that tell it apart "
                          "from the model's other runs. Empty means all.")
    chosen = _keep("model")
    key = _seed("pool", [True, False], False, lambda v: v[0] == "model")
    pooled = side.toggle("Pool the runs of each model", key=key,
                         help="Off: every run is its own series. On: the selected runs of one "
                              "model are drawn as one series named by the model, and captions "
                              "list the runs pooled.")
    _keep("pool")
    return (list(chosen) if chosen else list(labels)), bool(pooled)


def _runs_from_url(catalogue: pd.DataFrame) -> None:
    """Turn the run ids of a shared URL (``run=``) into the run picker's labels, once."""
    ids = _url_value("run")
    st.session_state.pop("filter.run", None)
    if ids is None or "sidebar.model" in st.session_state:
        return
    wanted = set(ids)
    st.session_state["filter.model"] = [
        label for label, run_ids in zip(catalogue["model"], catalogue["run_ids"])
        if wanted & {str(run_id) for run_id in run_ids}]


def _group_filter(side, year: int) -> tuple[str, str]:
    """The human subgroup picker; returns (group_kind, group_value)."""
    groups = queries.human_groups(year)
    options = ["all:all"] + [f"{r.group_kind}:{r.group_value}" for r in groups.itertuples()]
    sizes = {f"{r.group_kind}:{r.group_value}": int(r.candidates) for r in groups.itertuples()}

    def label(option: str) -> str:
        kind, value = option.split(":", 1)
        if kind == "all":
            return "All candidates"
        name = "State" if kind == "state" else "School type"
        shown = SCHOOL_TYPES.get(value, value) if kind == "school_type" else value
        return f"{name}: {shown} ({sizes.get(option, 0):,} {TESTS_WORD})"

    key = _seed("group", options, "all:all", lambda v: v[0])
    choice = side.selectbox("Human subgroup", options, key=key, format_func=label,
                            help=f"The human background drawn on every page. {TESTS_HELP}")
    _keep("group")
    kind, value = choice.split(":", 1)
    return kind, value


def _reproduced_filter(side, audit: pd.DataFrame) -> tuple[int, ...]:
    """The switch that leaves flagged booklets out of the human reference; returns them."""
    flagged = tuple(int(b) for b in audit.loc[audit["flagged"], "booklet_id"]) \
        if len(audit) else ()
    key = _seed("reproduced", [True, False], False, lambda v: v[0] == "only")
    if not flagged:
        _keep("reproduced")
        return ()
    only = side.toggle(f"{REPRODUCED_SWITCH} ({len(flagged)} left out)", key=key,
                       help="Booklets where the published item parameters reproduce fewer than "
                            "99% of INEP's official notas; the Data page lists them")
    _keep("reproduced")
    return flagged if only else ()


def _blank_filter(side, year: int) -> bool:
    """The switch that leaves all-blank tests out of the human reference; returns whether
    they count (they do by default, as in INEP's own population)."""
    key = _seed("blank", [True, False], False, lambda v: v[0] == "out")
    counts = queries.blank_tests(year)
    blank = int(counts["blank"].sum()) if len(counts) else 0
    total = int(counts["candidates"].sum()) if len(counts) else 0
    share = f"{blank / total:.1%}" if total else "none"
    out = side.toggle(f"Humans: leave out all-blank tests ({share} of {TESTS_WORD})", key=key,
                      help="Candidates present who marked no answer in an area: θ at the floor "
                           "of the scale and l_z near 3. They are part of INEP's population, "
                           f"so they count unless this is on. {TESTS_HELP}")
    _keep("blank")
    return not out


def _run_ids(labels: Sequence[str]) -> list[str]:
    """The run ids of the chosen run labels, for the URL."""
    catalogue = queries.model_catalogue()
    if catalogue.empty or not labels:
        return []
    chosen = catalogue[catalogue["model"].isin(list(labels))]
    return sorted(str(run_id) for run_ids in chosen["run_ids"] for run_id in run_ids)


def _write_url() -> None:
    """Mirror the shared filters into the query string (defaults left out)."""
    state = st.session_state
    wanted: dict[str, list[str]] = {
        "year": [str(state["filter.year"])],
        "area": [] if len(state["filter.area"]) in (0, len(AREAS)) else list(state["filter.area"]),
        "booklet": ([] if state["filter.booklet"] == ALL_BOOKLETS
                    else [str(state["filter.booklet"])]),
        "lang": [state["filter.lang"]],
        "shots": [shots_to_url(state["filter.shots"])],
        "family": list(state.get("filter.family") or []),
        "tuning": [] if state.get("filter.tuning", "all") == "all" else [state["filter.tuning"]],
        "model": [],
        "run": _run_ids(state.get("filter.model") or []),
        "pool": ["model"] if state.get("filter.pool") else [],
        "group": [] if state["filter.group"] == "all:all" else [state["filter.group"]],
        "reproduced": ["only"] if state.get("filter.reproduced") else [],
        "blank": ["out"] if state.get("filter.blank") else [],
    }
    params = st.query_params
    for key, values in wanted.items():
        if params.get_all(key) == values:
            continue
        if values:
            params[key] = values if len(values) > 1 else values[0]
        elif key in params:
            del params[key]
