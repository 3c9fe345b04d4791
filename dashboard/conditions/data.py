"""The Conditions page's numbers: each series' mean under every level of one dimension, per area
and over the areas, and the difference between two levels, from the patterns of
:func:`store.condition_queries.condition_patterns`.

A *dimension* is what tells conditions apart (prompt language, shots, kind of repetition,
temperature, answer method, prompt variant, year). Every other condition is held where the
sidebar sets it (one prompt language and one shots setting), so a comparison never pools
languages or shot settings silently. Dimensions a run varies inside itself (language, shots,
year) compare the levels of one run: a series is a run, and for language and shots its
repetitions pair across levels (seed 7 in Portuguese with seed 7 in English). Dimensions fixed
per run (repetition kind, temperature, answer method, prompt variant) compare different runs of
one model: a series is the model, and the levels are independent; years are independent too
(other items).

"All areas" is the mean over the chosen areas of each repetition's values (repetitions present
in every chosen area only), so its interval keeps the pairing too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analytics.conditions import level_mean, paired_difference, welch_difference
from analytics.multiple_testing import benjamini_hochberg
from dashboard.runs.picker import shots_words
from enem.areas import AREA_NAMES
from inference.prompt_variants import BASE_VARIANT
from inference.protocol import PROMPT_LANGUAGE_NAMES

#: The area label of the rows averaged over the chosen areas.
ALL_AREAS = "all areas"


@dataclass(frozen=True)
class Dimension:
    """One way conditions differ: its pattern column, what a series is (a run, whose levels it
    answered itself, or a model, whose levels are different runs), whether two levels pair by
    repetition, and a short description for captions."""

    column: str
    series_column: str
    paired: bool
    about: str


#: Runs vary prompt language and shots inside themselves, with the same repetition numbers, so
#: those levels pair; a year's items differ from another's, so its repetitions do not.
DIMENSIONS: dict[str, Dimension] = {
    "prompt language": Dimension("prompt_language", "run", True,
                                 "the language the questions were asked in"),
    "shots": Dimension("shots", "run", True, "worked examples shown before each question"),
    "repetition": Dimension("repetition", "model_id", False,
                            "sampling seeds (options in their order) or option shuffles"),
    "temperature": Dimension("temperature", "model_id", False, "the sampling temperature"),
    "answer method": Dimension("answer_method", "model_id", False,
                               "how the chosen option was read from the model"),
    "prompt variant": Dimension("prompt_variant", "model_id", False,
                                "the prompt's instruction (the paper's, a perturbation of it, "
                                "another wording, chain of thought)"),
    "year": Dimension("year", "run", False, "the exam's year"),
}
DEFAULT_DIMENSION = "prompt language"

#: What is averaged: label → how it is read from a pattern.
STATISTICS: dict[str, str] = {
    "published θ": "θ as published in the imported results file (the paper's EAP)",
    "θ (EAP)": "θ estimated here (EAP, the scoring settings of the run)",
    "% correct": "percent of the counted items answered right (CTT)",
}

LEVEL_COLUMNS = ("series", "area", "level", "n", "mean", "sd", "ci_low", "ci_high")
DIFFERENCE_COLUMNS = ("series", "area", "first", "second", "difference", "ci_low", "ci_high",
                      "p", "q", "n_first", "n_second", "paired")


def level_label(dimension: str, value: object) -> str:
    """How a level reads on screen: 'Portuguese', '4-shot', 'option shuffles', 'T = 0.6'; a run
    that recorded no prompt variant used the base prompt (it was made before variants)."""
    missing = value is None or (isinstance(value, float) and np.isnan(value))
    if dimension == "prompt variant":
        return BASE_VARIANT if missing else str(value)
    if missing:
        return "not recorded"
    if dimension == "prompt language":
        return PROMPT_LANGUAGE_NAMES.get(str(value), str(value))
    if dimension == "shots":
        return shots_words(value)
    if dimension == "repetition":
        return {"seed": "sampling seeds", "shuffle": "option shuffles"}.get(str(value),
                                                                           str(value))
    if dimension == "temperature":
        return f"T = {value:g}"
    return str(value)


def statistics_offered(patterns: pd.DataFrame) -> list[str]:
    """The statistics the patterns can give: published θ only when every pattern has one."""
    offered = list(STATISTICS)
    if patterns.empty or patterns["published_theta"].isna().any():
        offered.remove("published θ")
    return offered


def statistic_values(patterns: pd.DataFrame, statistic: str) -> pd.Series:
    """The value of ``statistic`` (a key of :data:`STATISTICS`) per pattern."""
    if statistic == "published θ":
        return patterns["published_theta"].astype(float)
    if statistic == "θ (EAP)":
        return patterns["theta"].astype(float)
    if statistic == "% correct":
        return 100.0 * patterns["ctt"].astype(float) / patterns["n_scored"].astype(float)
    raise ValueError(f"unknown statistic {statistic!r}; choose from {', '.join(STATISTICS)}")


def compared_patterns(patterns: pd.DataFrame, dimension: str, statistic: str, *,
                      language: str, shots: int, year: int) -> pd.DataFrame:
    """The patterns of the comparison: every condition other than ``dimension`` held at the
    sidebar's prompt ``language``, ``shots`` and ``year``; columns series, area, level (the
    dimension's value as on screen), year, shuffle and value (``statistic``)."""
    held = {"prompt_language": language, "shots": shots, "year": year}
    chosen = DIMENSIONS[dimension]
    keep = pd.Series(True, index=patterns.index)
    for column, value in held.items():
        if column != chosen.column:
            keep &= patterns[column] == value
    rows = patterns[keep]
    return pd.DataFrame({
        "series": rows[chosen.series_column].astype(str),
        "area": rows["area"].astype(str),
        "level": [level_label(dimension, v) for v in rows[chosen.column]],
        "year": rows["year"].astype(int),
        "shuffle": rows["shuffle"].astype(int),
        "value": statistic_values(rows, statistic),
    })


def with_all_areas(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (from :func:`compared_patterns`) plus, when they hold several areas, the rows of
    :data:`ALL_AREAS`: per series, level, year and repetition the mean over the areas, kept
    only where every area has that repetition."""
    areas = rows["area"].unique()
    if len(areas) < 2:
        return rows
    keys = ["series", "level", "year", "shuffle"]
    grouped = rows.groupby(keys, sort=False)["value"].agg(["mean", "count"]).reset_index()
    complete = grouped[grouped["count"] == len(areas)]
    pooled = complete[keys].assign(area=ALL_AREAS, value=complete["mean"].to_numpy())
    return pd.concat([rows, pooled[rows.columns]], ignore_index=True)


def level_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per series, area and level: n, mean, SD and the 95% interval of the mean
    (``analytics.conditions.level_mean``)."""
    records = []
    for (series, area, level), group in rows.groupby(["series", "area", "level"], sort=False):
        summary = level_mean(group["value"].to_numpy())
        records.append((series, area, level, summary.n, summary.mean, summary.sd,
                        summary.ci_low, summary.ci_high))
    return pd.DataFrame.from_records(records, columns=list(LEVEL_COLUMNS))


def difference_table(rows: pd.DataFrame, first: str, second: str,
                     paired: bool) -> pd.DataFrame:
    """Per series and area: the mean under level ``second`` minus the mean under ``first``
    with its 95% t interval, p-value and the Benjamini–Hochberg q over the table's rows;
    ``paired``: from the repetitions present under both (matched on year and repetition
    number), else Welch's test of independent groups."""
    records = []
    for (series, area), group in rows.groupby(["series", "area"], sort=False):
        one = group[group["level"] == first]
        two = group[group["level"] == second]
        if one.empty or two.empty:
            continue
        if paired:
            matched = one.merge(two, on=["year", "shuffle"], suffixes=("_1", "_2"))
            result = paired_difference(matched["value_1"], matched["value_2"])
        else:
            result = welch_difference(one["value"], two["value"])
        records.append((series, area, first, second, result.difference, result.ci_low,
                        result.ci_high, result.p, np.nan, result.n_first, result.n_second,
                        result.paired))
    table = pd.DataFrame.from_records(records, columns=list(DIFFERENCE_COLUMNS))
    # Every series and area is a test of its own: q controls the false discoveries among them.
    table["q"] = benjamini_hochberg(table["p"].to_numpy(np.float64))
    return table


def level_order(levels: Iterable[str]) -> list[str]:
    """The levels found, in reading order: the labels of :func:`level_label` sort as their
    values do (English before Portuguese, 0- before 4-shot, years and temperatures rising),
    the base prompt first, 'not recorded' last."""
    found = sorted(set(levels), key=lambda level: (level != BASE_VARIANT, level))
    return [level for level in found if level != "not recorded"] + (
        ["not recorded"] if "not recorded" in found else [])


def area_order(areas: list[str]) -> list[str]:
    """The chosen areas in the project's order, then :data:`ALL_AREAS` when there are several."""
    ordered = [a for a in AREA_NAMES if a in areas]
    return ordered + ([ALL_AREAS] if len(ordered) > 1 else [])
