"""Everything the Options and traps page shows, fetched for the sidebar's selection and put
together (each area's store reads in, :mod:`dashboard.options.queries`; the tables of
:mod:`dashboard.options.data` and :mod:`dashboard.options.comparisons` out), each table computed
when a section first shows it, and kept."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.data import Token, shared_reader, version_token
from dashboard.options.comparisons import band_accuracy, item_distances, length_tests
from dashboard.options.data import (
    answer_table,
    distractor_table,
    human_items,
    position_table,
    theta_cube,
    trap_table,
)
from dashboard.options.queries import AreaInputs, RunSelection, all_area_inputs
from dashboard.state.filters import Filters
from workflows.key_positions import (
    dependence_correlations,
    key_dependence,
    key_position_counts,
    rescored_items,
)


class OptionResults:
    """Every table of the page for one selection, areas concatenated, each computed the first
    time it is asked for (the page draws one section at a time, so a first visit computes only
    the tables of the section shown).

    ``items``: :func:`dashboard.options.data.human_items` rows; ``answers``:
    :func:`dashboard.options.data.answer_table` rows; ``series``: the series answering, in order;
    ``model_theta[(series, area)]``: the series' mean θ there;
    ``without_theta_counts``: areas whose store lacks the humans' option counts per θ bin;
    ``has_lengths``: whether any question text is stored. The rest are the tables of
    :mod:`dashboard.options.data` and :mod:`dashboard.options.comparisons` (``distances`` is
    ``item_distances``; ``positions``/``chi_square`` the two tables of ``position_table``),
    and of :mod:`workflows.key_positions` (``key_counts``: ``key_position_counts``,
    ``key_dependence``, ``key_correlations``: ``dependence_correlations``, ``rescored``: the
    items left out of those by ``rescored_items``). Shared by every session (never change a
    table in place).
    """

    def __init__(self, areas: Sequence[str], fetched: Sequence[AreaInputs]):
        items, answers, lengths_pt, lengths_model = [], [], [], []
        self._cubes: dict = {}
        self.model_theta: dict = {}
        self.without_theta_counts: list = []
        for area, inputs in zip(areas, fetched, strict=True):
            theta_counts = inputs.option_theta_counts
            table = human_items(area, inputs.items, inputs.option_counts, theta_counts)
            items.append(table)
            self._cubes[area] = theta_cube(theta_counts, table["item_id"].to_numpy())
            if theta_counts.empty:
                self.without_theta_counts.append(area)
            answers.append(answer_table(inputs.answers, table))
            for series, theta in inputs.points.groupby("model")["theta"].mean().items():
                self.model_theta[series, area] = float(theta)
            lengths_pt.append(inputs.human_lengths)
            lengths_model.append(inputs.model_lengths)
        self.items = pd.concat(items, ignore_index=True)
        self.answers = pd.concat(answers, ignore_index=True)
        self.series = list(dict.fromkeys(self.answers["model"]))
        self._human_lengths = pd.concat(lengths_pt, ignore_index=True)
        self._model_lengths = pd.concat(lengths_model, ignore_index=True)
        self.has_lengths = bool(len(self._human_lengths) or len(self._model_lengths))

    @property
    def has_option_counts(self) -> bool:
        """Whether any human chose an option in the selection (False: items-only years)."""
        return bool(len(self.items)) and bool(self.items["humans_with_a_letter"].sum() > 0)

    @cached_property
    def traps(self) -> pd.DataFrame:
        return trap_table(self.items, self.answers)

    @cached_property
    def agreement(self) -> pd.DataFrame:
        return distractor_table(self.answers)

    @cached_property
    def distances(self) -> pd.DataFrame:
        return item_distances(self.items, self.answers, self._cubes, self.model_theta)

    @cached_property
    def _position_tables(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        return position_table(self.answers)

    @property
    def positions(self) -> pd.DataFrame:
        return self._position_tables[0]

    @property
    def chi_square(self) -> pd.DataFrame:
        return self._position_tables[1]

    @cached_property
    def bands(self) -> pd.DataFrame:
        if not self.items["band"].notna().any():
            return pd.DataFrame()
        return band_accuracy(self.items, self.answers)

    @cached_property
    def lengths(self) -> pd.DataFrame:
        return length_tests(self.items, self.answers, self._human_lengths, self._model_lengths)

    @cached_property
    def key_counts(self) -> pd.DataFrame:
        return key_position_counts(self.answers, self.items)

    @cached_property
    def key_dependence(self) -> pd.DataFrame:
        return key_dependence(self.key_counts)

    @cached_property
    def key_correlations(self) -> pd.DataFrame:
        return dependence_correlations(self.key_dependence)

    @cached_property
    def uniformity_correlations(self) -> pd.DataFrame:
        return dependence_correlations(self.key_dependence, "uniformity")

    @cached_property
    def rescored(self) -> pd.DataFrame:
        return rescored_items(self.answers)


def option_results(filters: Filters) -> OptionResults:
    """The page's tables for the sidebar's selection, one object per selection and store
    version (warm reruns, and other sessions, reuse it and the tables it has computed)."""
    areas = tuple(filters.areas)
    return _results(version_token(), filters.year, areas,
                    tuple(filters.booklet_for(area) for area in areas), filters.language,
                    filters.shots, tuple(filters.models), bool(filters.pooled))


# A resource, not data: st.cache_data would hand out a copy per run, dropping the tables
# computed since; the object is shared and its tables are never changed in place.
@st.cache_resource(show_spinner=False, max_entries=16)
def _results(token: Token, year: int, areas: tuple, booklets: tuple, language: str, shots: int,
             models: tuple, pooled: bool) -> OptionResults:
    """``token``: the store's version, read (its shared reader) and keying the cache."""
    fetched = all_area_inputs(shared_reader(token), year, areas, booklets,
                              RunSelection(language, shots, models, pooled))
    return OptionResults(areas, fetched)


def runs_without_order(answers: pd.DataFrame) -> list[str]:
    """Series none of whose answers recorded the option order (their positions are unknown)."""
    if answers.empty:
        return []
    known = answers.groupby("model")["permutation"].apply(lambda v: v.notna().any())
    return sorted(known.index[~known.to_numpy(bool)])


def item_words(row: Mapping[str, Any]) -> str:
    """'MT · item 123456 · b = 1.23 · trap' for the item picker (a table row as a mapping)."""
    b = f"b = {row['b']:.2f}" if pd.notna(row.get("b")) else "no b"
    trap = " · trap" if row.get("trap") == 1 else ""
    return f"{row['area']} · item {int(row['item_id'])} · {b}{trap}"
