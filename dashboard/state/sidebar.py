"""The shared sidebar: the filters every page reads, drawn once per script run.

:func:`draw_sidebar` (called by the frame, :mod:`dashboard.state.frame`) draws the year, area,
booklet, prompt, run and human-reference pickers, keeps each value across pages and in the URL
through the table of :mod:`dashboard.state.url`, and leaves the resulting
:class:`~dashboard.state.filters.Filters` in session state for the page's ``open_page``.

A *run* is what the sidebar selects (the URL carries run ids; links naming a run by its label
with ``model=`` still open). Each run is its own series on every page unless the pool switch is
on: then the selected runs of each model form one series, named by the model id, and every
caption lists what was pooled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard import queries
from dashboard.data import database_state
from dashboard.runs.picker import (
    UNCOUNTED_PROMPT_TYPE,
    run_choice_labels,
    shots_words,
)
from dashboard.state.filters import Filters, group_label
from dashboard.state.url import ALL_BOOKLETS, keep, read_url_once, runs_from_url, seed, write_url
from enem.areas import AREA_NAMES, AREAS
from enem.codebook import SCHOOL_TYPES
from enem.score_batches import reproduced_share_text
from inference.protocol import PROMPT_LANGUAGE_NAMES, PROMPT_LANGUAGES, SHOT_SETTINGS
from store.model_sql import UNCOUNTED_SHOTS

TUNING: dict[str, str] = {"all": "all", "instruct": "instruction-tuned", "base": "base"}
IMAGE_FORMATS: tuple[str, ...] = ("png", "svg")

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

#: Session key of the Filters that ``draw_sidebar`` computed in this run (None: no database).
CURRENT_FILTERS = "filter._current"


def draw_sidebar() -> Filters | None:
    """Draw the shared sidebar and keep the selection for the page's ``open_page``; None,
    and no sidebar, when the database cannot be shown."""
    st.session_state[CURRENT_FILTERS] = None
    state = database_state()
    if not state.usable or not state.has_humans:
        return None
    filters = _sidebar()
    st.session_state[CURRENT_FILTERS] = filters
    return filters


def _sidebar() -> Filters:
    read_url_once()
    side = st.sidebar
    side.header("Filters")

    years = queries.loaded_years()
    key = seed("year", years, years[-1])
    year = int(side.selectbox("Year", years, key=key, help="ENEM edition"))
    keep("year")

    key = seed("area", list(AREAS))
    side.multiselect("Areas", list(AREAS), key=key,
                     format_func=lambda a: f"{a} — {AREA_NAMES[a]}",
                     help="Empty means every area")
    areas = tuple(a for a in AREAS if a in keep("area")) or AREAS

    booklets = queries.booklet_catalogue(year)
    booklets = booklets[booklets["area"].isin(areas)]
    labels: dict[int, str] = {ALL_BOOKLETS: "All booklets"}
    for row in booklets.itertuples():
        labels[int(row.booklet_id)] = (f"{row.booklet_id} · {row.area} · {row.colour or '?'} "
                                       f"({row.candidates:,} candidates)")
    key = seed("booklet", list(labels))
    chosen_booklet = side.selectbox("Booklet", list(labels), key=key,
                                    format_func=lambda booklet: labels[booklet],
                                    help="One booklet of one area; the other areas keep every "
                                         "booklet")
    keep("booklet")
    booklet = None if chosen_booklet == ALL_BOOKLETS else int(cast(int, chosen_booklet))
    booklet_area = None
    if booklet is not None:
        booklet_area = str(booklets.loc[booklets["booklet_id"] == booklet, "area"].iloc[0])

    key = seed("lang", PROMPT_LANGUAGES)
    language = side.radio("Prompt language", PROMPT_LANGUAGES, key=key, horizontal=True,
                          format_func=PROMPT_LANGUAGE_NAMES.get)
    keep("lang")
    shots, uncounted = _shots_filter(side, year)

    models, pooled = _run_filters(side, year)
    group_kind, group_value = _group_filter(side, year)
    audit = queries.booklet_audit(year)
    excluded = _reproduced_filter(side, audit)
    include_blank = _blank_filter(side, year)
    profile = queries.year_profile(year)

    side.divider()
    key = seed("image", list(IMAGE_FORMATS))
    image_format = side.radio("Camera button saves", IMAGE_FORMATS, key=key, horizontal=True,
                              format_func=str.upper,
                              help="Format of the image saved by each chart's camera icon")
    keep("image")
    write_url()
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


def _shots_filter(side: DeltaGenerator, year: int) -> tuple[int, str]:
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
    key = seed("shots", options, default)
    shots = int(side.radio(
        "Prompt shots", options, key=key, horizontal=True,
        format_func=lambda s: shots_words(s, uncounted),
        help="Runs imported with a prompt type that gives no count (the paper's few-shot) "
             "have a setting of their own, named after that prompt type; they are never shown "
             "as 0-, 1- or 4-shot."))
    keep("shots")
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


def _run_filters(side: DeltaGenerator, year: int) -> tuple[list[str], bool]:
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
    key = seed("family", families)
    side.multiselect("Families", families, key=key, placeholder="All families")
    chosen_families = keep("family") or families
    key = seed("tuning", list(TUNING))
    tuning = side.radio("Instruction tuning", list(TUNING), key=key, horizontal=True,
                        format_func=TUNING.get)
    keep("tuning")
    pool = in_year[in_year["family"].isin(chosen_families)]
    if tuning != "all":
        pool = pool[pool["instruction_tuned"].fillna(False).astype(bool) == (tuning == "instruct")]
    labels = run_choice_labels(pool)
    side.html(WRAPPED_CHOICES)
    runs_from_url(catalogue)
    key = seed("model", list(labels))
    side.multiselect("Runs", list(labels), key=key, format_func=lambda run: labels[run],
                     placeholder="All runs above",
                     help="Grouped by model; each run shows the settings that tell it apart "
                          "from the model's other runs. Empty means all.")
    chosen = keep("model")
    key = seed("pool", [True, False])
    pooled = side.toggle("Pool the runs of each model", key=key,
                         help="Off: every run is its own series. On: the selected runs of one "
                              "model are drawn as one series named by the model, and captions "
                              "list the runs pooled.")
    keep("pool")
    return (list(chosen) if chosen else list(labels)), bool(pooled)


def _group_filter(side: DeltaGenerator, year: int) -> tuple[str, str]:
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

    key = seed("group", options)
    choice = side.selectbox("Human subgroup", options, key=key, format_func=label,
                            help=f"The human background drawn on every page. {TESTS_HELP}")
    keep("group")
    kind, value = choice.split(":", 1)
    return kind, value


def _reproduced_filter(side: DeltaGenerator, audit: pd.DataFrame) -> tuple[int, ...]:
    """The switch that leaves flagged booklets out of the human reference; returns them."""
    flagged = tuple(int(b) for b in audit.loc[audit["flagged"], "booklet_id"]) \
        if len(audit) else ()
    key = seed("reproduced", [True, False])
    if not flagged:
        keep("reproduced")
        return ()
    only = side.toggle(f"{REPRODUCED_SWITCH} ({len(flagged)} left out)", key=key,
                       help="Booklets where the published item parameters reproduce fewer than "
                            f"{reproduced_share_text()} of INEP's official notas; the Data "
                            "page lists them")
    keep("reproduced")
    return flagged if only else ()


def _blank_filter(side: DeltaGenerator, year: int) -> bool:
    """The switch that leaves all-blank tests out of the human reference; returns whether
    they count (they do by default, as in INEP's own population). A year without candidates
    (its item file only) has no human reference, and no switch."""
    key = seed("blank", [True, False])
    counts = queries.blank_tests(year)
    blank = int(counts["blank"].sum()) if len(counts) else 0
    total = int(counts["candidates"].sum()) if len(counts) else 0
    if not total:
        return True
    share = f"{blank / total:.1%}"
    out = side.toggle(f"Humans: leave out all-blank tests ({share} of {TESTS_WORD})", key=key,
                      help="Candidates present who marked no answer in an area: θ at the floor "
                           "of the scale and l_z near 3. They are part of INEP's population, "
                           f"so they count unless this is on. {TESTS_HELP}")
    keep("blank")
    return not out
