"""Everything the Options and traps page shows, fetched for the sidebar's selection and put
together (each area's store reads in, :mod:`dashboard.options.queries`; the tables of
:mod:`dashboard.options.data` and :mod:`dashboard.options.comparisons` out), cached as one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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
from dashboard.options.key_positions import (
    dependence_correlations,
    key_dependence,
    key_position_counts,
    rescored_items,
)
from dashboard.options.queries import RunSelection, all_area_inputs
from dashboard.state.filters import Filters


@dataclass
class OptionResults:
    """Every table of the page for one selection, areas concatenated.

    ``items``: :func:`dashboard.options.data.human_items` rows; ``answers``:
    :func:`dashboard.options.data.answer_table` rows; ``series``: the series answering, in order;
    ``model_theta[(series, area)]``: the series' mean θ there;
    ``without_theta_counts``: areas whose store lacks the humans' option counts per θ bin;
    ``has_lengths``: whether any question text is stored. The rest are the tables of
    :mod:`dashboard.options.data` and :mod:`dashboard.options.comparisons` (``distances`` is
    ``item_distances``; ``positions``/``chi_square`` the two tables of ``position_table``),
    and of :mod:`dashboard.options.key_positions` (``key_counts``: ``key_position_counts``,
    ``key_dependence``, ``key_correlations``: ``dependence_correlations``, ``rescored``: the
    items left out of those by ``rescored_items``).
    """

    items: pd.DataFrame
    answers: pd.DataFrame
    series: list
    model_theta: dict
    without_theta_counts: list
    has_lengths: bool
    traps: pd.DataFrame
    agreement: pd.DataFrame
    distances: pd.DataFrame
    positions: pd.DataFrame
    chi_square: pd.DataFrame
    bands: pd.DataFrame
    lengths: pd.DataFrame
    key_counts: pd.DataFrame
    key_dependence: pd.DataFrame
    key_correlations: pd.DataFrame
    rescored: pd.DataFrame

    @property
    def has_option_counts(self) -> bool:
        """Whether any human chose an option in the selection (False: items-only years)."""
        return bool(len(self.items)) and bool(self.items["humans_with_a_letter"].sum() > 0)


def option_results(filters: Filters) -> OptionResults:
    """The page's tables for the sidebar's selection, computed once per selection and store
    version (warm reruns are served from memory, as the queries are)."""
    areas = tuple(filters.areas)
    return _results(version_token(), filters.year, areas,
                    tuple(filters.booklet_for(area) for area in areas), filters.language,
                    filters.shots, tuple(filters.models), bool(filters.pooled))


@st.cache_data(show_spinner=False, max_entries=16)
def _results(token: Token, year: int, areas: tuple, booklets: tuple, language: str, shots: int,
             models: tuple, pooled: bool) -> OptionResults:
    """``token``: the store's version, read (its shared reader) and keying the cache."""
    items, answers, lengths_pt, lengths_model = [], [], [], []
    cubes, model_theta, without = {}, {}, []
    fetched = all_area_inputs(shared_reader(token), year, areas, booklets,
                              RunSelection(language, shots, models, pooled))
    for area, inputs in zip(areas, fetched, strict=True):
        theta_counts = inputs.option_theta_counts
        table = human_items(area, inputs.items, inputs.option_counts, theta_counts)
        items.append(table)
        cubes[area] = theta_cube(theta_counts, table["item_id"].to_numpy())
        if theta_counts.empty:
            without.append(area)
        answers.append(answer_table(inputs.answers, table))
        for series, theta in inputs.points.groupby("model")["theta"].mean().items():
            model_theta[series, area] = float(theta)
        lengths_pt.append(inputs.human_lengths)
        lengths_model.append(inputs.model_lengths)
    items = pd.concat(items, ignore_index=True)
    answers = pd.concat(answers, ignore_index=True)
    human_lengths = pd.concat(lengths_pt, ignore_index=True)
    model_lengths = pd.concat(lengths_model, ignore_index=True)
    positions, chi_square = position_table(answers)
    key_counts = key_position_counts(answers, items)
    dependence = key_dependence(key_counts)
    return OptionResults(
        items=items, answers=answers, series=list(dict.fromkeys(answers["model"])),
        model_theta=model_theta,
        without_theta_counts=without,
        has_lengths=bool(len(human_lengths) or len(model_lengths)),
        traps=trap_table(items, answers), agreement=distractor_table(answers),
        distances=item_distances(items, answers, cubes, model_theta),
        positions=positions, chi_square=chi_square,
        bands=(band_accuracy(items, answers) if items["band"].notna().any()
               else pd.DataFrame()),
        lengths=length_tests(items, answers, human_lengths, model_lengths),
        key_counts=key_counts, key_dependence=dependence,
        key_correlations=dependence_correlations(dependence),
        rescored=rescored_items(answers))


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
