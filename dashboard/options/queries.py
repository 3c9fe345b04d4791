"""The Options and traps page's store queries: every area's inputs, fetched two areas at a time
(:func:`dashboard.threads.map_in_threads`).

The page needs seven queries per area (:mod:`store.option_queries` and two of
:mod:`store.item_queries` and :mod:`store.model_queries`). The results are kept with the page's
tables (:func:`dashboard.options.loading.option_results`), not query by query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from dashboard.threads import map_in_threads
from store import item_queries, model_queries, option_queries
from store.connection import SharedReader

#: Humans answered the Portuguese exam; their length tests use the Portuguese texts.
HUMAN_TEXT_LANGUAGE = "pt"


@dataclass(frozen=True)
class AreaInputs:
    """What the page reads of one area: the humans' option counts (overall and per θ bin,
    ``store.option_queries``), the area's items, the selected runs' answers and response
    patterns, and the question lengths in Portuguese (the humans') and the runs' language."""

    option_counts: pd.DataFrame
    option_theta_counts: pd.DataFrame
    items: pd.DataFrame
    answers: pd.DataFrame
    points: pd.DataFrame
    human_lengths: pd.DataFrame
    model_lengths: pd.DataFrame


@dataclass(frozen=True)
class RunSelection:
    """The sidebar's runs: prompt language, shots, series (run labels) and pooling."""

    language: str
    shots: int
    models: tuple[str, ...]
    pooled: bool


def area_inputs(reader: SharedReader, year: int, area: str, booklet: int | None,
                runs: RunSelection) -> AreaInputs:
    """One area's :class:`AreaInputs`, read on a connection of its own."""
    models = list(runs.models)
    with reader.cursor() as con:
        return AreaInputs(
            option_counts=option_queries.human_option_counts(con, year, area),
            option_theta_counts=option_queries.human_option_theta_counts(con, year, area),
            items=item_queries.area_items(con, year, area),
            answers=option_queries.model_option_answers(
                con, year, area, booklet, runs.language, runs.shots, models, runs.pooled),
            points=model_queries.model_points(
                con, year, area, booklet, runs.language, runs.shots, models, runs.pooled),
            human_lengths=option_queries.question_lengths(con, year, area,
                                                          HUMAN_TEXT_LANGUAGE),
            model_lengths=option_queries.question_lengths(con, year, area, runs.language))


def all_area_inputs(reader: SharedReader, year: int, areas: Sequence[str],
                    booklets: Sequence[int | None], runs: RunSelection) -> list[AreaInputs]:
    """:func:`area_inputs` of each area (with its booklet), in order, two areas at a time."""
    return map_in_threads(lambda pair: area_inputs(reader, year, pair[0], pair[1], runs),
                          list(zip(areas, booklets, strict=True)))
