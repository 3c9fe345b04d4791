"""The overlay of Accuracy vs ability and Person fit: a second level of one prompt condition
(prompt language or shots) drawn beside the sidebar's, so a run's pt and en (or 0- and 4-shot)
patterns sit in one picture.

The sidebar holds every other condition. The page control (:func:`overlay_control`) offers only
the levels the selected runs were answered under (``store.overlay_queries.overlay_levels``) and
keeps the choice in the URL (``overlay=``, ``overlay_level=``; left out when the overlay is
off, as the shared filters leave out their defaults). The overlay's patterns are those the page
would show with the sidebar set to the overlay's level (:attr:`Overlay.filters`), drawn in the
same colour and symbol as the sidebar's but as open markers (``dashboard.figures``): the palette
gives colour to the model and symbol and dash to its runs, so fill is the channel left free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pandas as pd
import streamlit as st

from dashboard.figures import REGION_RULE
from dashboard.queries import cached_query
from dashboard.runs.picker import shots_words
from dashboard.state.filters import Filters
from dashboard.state.selection import selected_model_points
from dashboard.state.url import (
    leave_page_choice_out,
    seed_page_choice,
    write_page_choice,
)
from inference.protocol import PROMPT_LANGUAGE_NAMES, PROMPT_LANGUAGES
from store import overlay_queries
from store.model_sql import UNCOUNTED_SHOTS
from workflows.views import shots_from_url, shots_to_url

overlay_levels = cached_query(overlay_queries.overlay_levels)

NONE = "none"
LANGUAGE = "prompt language"
SHOTS = "shots"
#: The overlay picker's options, in order (the first is the default: no overlay).
DIMENSIONS: tuple[str, ...] = (NONE, LANGUAGE, SHOTS)
#: The query parameters of the two pickers.
DIMENSION_PARAM = "overlay"
LEVEL_PARAM = "overlay_level"


def language_words(code: str) -> str:
    """A prompt language in a word for legends: 'English' for 'en' (the code itself when
    unknown)."""
    return PROMPT_LANGUAGE_NAMES.get(code, code).split(" (")[0]


@dataclass(frozen=True)
class Overlay:
    """A second level of one condition, drawn beside the sidebar's.

    Attributes
    ----------
    dimension
        :data:`LANGUAGE` or :data:`SHOTS`.
    base, level
        The sidebar's level and the overlay's in words, as legends name them ('Portuguese' and
        'English'; '0-shot' and '4-shot').
    filters
        The sidebar's selection with the overlay's level in place of the sidebar's: every query
        of the overlay's patterns takes it.
    points
        The overlay level's patterns of the selected runs (``selected_model_points`` of
        ``filters``: one row per pattern; empty when they answered none there).
    """

    dimension: str
    base: str
    level: str
    filters: Filters
    points: pd.DataFrame = field(default_factory=pd.DataFrame, compare=False, repr=False)

    @property
    def levels(self) -> tuple[str, str]:
        """(the sidebar's level, the overlay's) in words, for the figures' legends."""
        return self.base, self.level

    @property
    def stem(self) -> str:
        """The file-name suffix of figures and tables drawn with the overlay, e.g. '_vs_en'."""
        if self.dimension == LANGUAGE:
            return f"_vs_{self.filters.language}"
        return f"_vs_{shots_to_url(self.filters.shots)}shot"

    def marker_words(self, base_label: str) -> str:
        """How the figure tells the levels apart, for captions: ``base_label`` is the
        sidebar's prompt in words (``filters.prompt_label``)."""
        return (f"filled markers: {base_label}; open markers of the same colour and symbol: "
                f"the same runs under {self.filters.prompt_label} (no curve around them)")

    def missing_line(self, series: Sequence[str], areas: Sequence[str]) -> str:
        """One sentence naming the series of ``series`` without patterns at the overlay's level
        in some of ``areas``; '' when every one has some in every area."""
        missing = []
        points = self.points
        for name in series:
            present = set(points.loc[points["model"] == name, "area"]) if len(points) else set()
            absent = [area for area in areas if area not in present]
            if absent:
                where = ("any chosen area" if len(absent) == len(areas) > 1
                         else ", ".join(absent))
                missing.append(f"{name} ({where})")
        if not missing:
            return ""
        return (f"No patterns under {self.filters.prompt_label} for: " + "; ".join(missing)
                + ". Only the sidebar's level is drawn for them.")

    def note_missing(self, series: Sequence[str], areas: Sequence[str]) -> None:
        """The overlay's empty state: :meth:`missing_line` in an info box, when not empty."""
        line = self.missing_line(series, areas)
        if line:
            st.info(line)

    def tagged(self, points: pd.DataFrame) -> pd.DataFrame:
        """The sidebar level's ``points`` and the overlay's, one frame with a ``level``
        column (words, as in the legend) after ``model``: what a figure's CSV holds."""
        return pd.concat([with_level(points, self.base), with_level(self.points, self.level)],
                         ignore_index=True)

    def per_level(self, first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
        """Two per-(model, area) tables, of the sidebar level's patterns and of the overlay's
        (:attr:`points`), as one with a ``level`` column (see :func:`level_rows`)."""
        return level_rows(first, second, self.levels)


def offered_levels(filters: Filters, dimension: str) -> list[str]:
    """The overlay levels the selected runs answered in the chosen year and areas, other than
    the sidebar's, as the URL writes them: prompt-language codes in the sidebar's order, or
    shots settings (``shots_to_url``: '4', 'published') ascending with the uncounted last.
    The other condition is held where the sidebar sets it."""
    if dimension == NONE or not filters.models:
        return []
    found = overlay_levels(filters.year, list(filters.areas), list(filters.models))
    if found.empty:
        return []
    if dimension == LANGUAGE:
        codes = set(found.loc[found["shots"] == filters.shots, "prompt_language"])
        codes.discard(filters.language)
        known = [code for code in PROMPT_LANGUAGES if code in codes]
        return known + sorted(codes - set(known))
    settings = {int(s) for s in found.loc[found["prompt_language"] == filters.language, "shots"]}
    settings.discard(filters.shots)
    # The uncounted setting (-1) after every counted one, as the sidebar orders them.
    ordered = sorted(settings, key=lambda s: (s == UNCOUNTED_SHOTS, s))
    return [shots_to_url(s) for s in ordered]


def level_words(filters: Filters, dimension: str, level: str) -> str:
    """A level as :func:`offered_levels` gives it, in words ('English', '4-shot')."""
    if dimension == LANGUAGE:
        return language_words(level)
    return shots_words(shots_from_url(level), filters.uncounted_prompt_types)


def overlay_of(filters: Filters, dimension: str, level: str) -> Overlay:
    """The overlay of ``level`` (as :func:`offered_levels` gives it) along ``dimension``."""
    if dimension == LANGUAGE:
        base, held = language_words(filters.language), replace(filters, language=level)
    else:
        base, held = filters.shots_words, replace(filters, shots=shots_from_url(level))
    return Overlay(dimension, base, level_words(filters, dimension, level), held,
                   selected_model_points(held))


def overlay_control(filters: Filters, page: str) -> Overlay | None:
    """Draw the overlay pickers at the top of a page (session keys ``<page>.overlay`` and
    ``<page>.overlay_level``); returns the chosen overlay, None when it is off or the selected
    runs have no other level (said in one line beside the picker)."""
    dimension_key, level_key = f"{page}.overlay", f"{page}.overlay_level"
    top = st.columns(4)
    seed_page_choice(DIMENSION_PARAM, list(DIMENSIONS), dimension_key, NONE)
    dimension = top[0].selectbox(
        "Overlay", list(DIMENSIONS), key=dimension_key,
        help="Draw a second level of a prompt condition beside the sidebar's, as open markers "
             "in each run's colour and symbol; the sidebar holds every other condition.")
    if dimension == NONE:
        leave_page_choice_out(DIMENSION_PARAM, dimension_key)
        leave_page_choice_out(LEVEL_PARAM, level_key)
        return None
    write_page_choice(DIMENSION_PARAM, dimension_key)
    levels = offered_levels(filters, dimension)
    if not levels:
        held = (f"at {filters.shots_words}" if dimension == LANGUAGE
                else f"in {language_words(filters.language)}")
        top[1].caption(f"The selected runs have no other {dimension} {held} in "
                       f"{filters.year}: nothing to overlay.")
        leave_page_choice_out(LEVEL_PARAM, level_key)
        return None
    seed_page_choice(LEVEL_PARAM, levels, level_key, levels[0])
    base = (language_words(filters.language) if dimension == LANGUAGE else filters.shots_words)
    level = top[1].selectbox(
        f"Beside the sidebar's {base}", levels, key=level_key,
        format_func=lambda value: level_words(filters, dimension, value),
        help="Only the levels the selected runs were answered under are offered.")
    write_page_choice(LEVEL_PARAM, level_key)
    return overlay_of(filters, dimension, level)


def with_level(frame: pd.DataFrame, level: str) -> pd.DataFrame:
    """``frame`` with a ``level`` column (the level in words) right after ``model``."""
    frame = frame.assign(level=level)
    columns = [c for c in frame.columns if c != "level"]
    at = columns.index("model") + 1 if "model" in columns else 0
    return frame[[*columns[:at], "level", *columns[at:]]]


def level_rows(first: pd.DataFrame, second: pd.DataFrame,
               levels: tuple[str, str]) -> pd.DataFrame:
    """Two per-(model, area) tables of the two levels as one, with a ``level`` column (see
    :func:`with_level`), each model's and area's rows together, the sidebar's level first."""
    frames = [with_level(frame, level) for frame, level in zip((first, second), levels, strict=True)
              if len(frame)]
    if not frames:
        return with_level(first, levels[0])
    joined = pd.concat(frames, ignore_index=True)
    order = {level: rank for rank, level in enumerate(levels)}
    keys = [c for c in ("model", "area") if c in joined.columns]
    joined = joined.assign(_rank=joined["level"].map(order))
    return (joined.sort_values([*keys, "_rank"], kind="stable").drop(columns="_rank")
            .reset_index(drop=True))


def model_caption(filters: Filters, overlay: Overlay | None, repetition: str) -> str:
    """The model part of a humans-and-models figure's caption: one marker per ``repetition``
    (its words, e.g. 'shuffle or seed'), the sidebar's prompt, the density rule, and with an
    ``overlay`` which markers are which level."""
    if overlay is None:
        return (f"coloured: one marker per model repetition ({repetition}; "
                f"{filters.prompt_label}); {REGION_RULE}")
    return (f"coloured: one marker per model repetition ({repetition}), a colour per model and "
            f"a symbol per run; {overlay.marker_words(filters.prompt_label)}; {REGION_RULE} "
            "(filled markers)")


def no_runs_words(filters: Filters, overlay: Overlay | None) -> str:
    """The caption's words when neither level has model patterns."""
    return (f"no model runs in this selection ({filters.prompt_label}"
            + (f" or {overlay.filters.prompt_label}" if overlay else "") + ")")
