"""The Years page's numbers: per exam year and area the humans' and each series' mean θ and
mean percent correct, and per difficulty band their percent correct, from the rows of
:mod:`store.trend_queries`.

**The band rule** (:func:`difficulty_bands`), defined here once: within one year and area, the
usable items (a difficulty b, not abandoned; LC with both foreign-language blocks) of the
reference form (the booklet most candidates took; without candidates, the one the runs answered:
``store.trend_queries.year_items``) are sorted by b (ties by item id) and cut into thirds by
rank: the item at rank r (0-based) of n goes to band ⌊3r/n⌋. Each band holds n/3 items (sizes differ
by at most one, the larger first), whatever the year's spread of b, so every year has an easiest, a
middle and a hardest third; a band is relative to its own exam, and its b range (in the table) says
where it lies on the θ scale.

**Means** (:func:`year_means`, :func:`band_means`): a model series' value is the plain mean over
its repetitions (response patterns) with the interval mean ± 1.96·SD/√n
(``analytics.conditions.level_mean``). The humans' year values are the stored aggregates of
every scored candidate (mean ± 1.96·SE, SE = SD/√n); their band value is the mean over the
band's items of each item's percent correct, with no interval (each item's share is over the
whole population).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from analytics.conditions import level_mean
from analytics.populations import normal_interval
from enem.areas import AREA_NAMES

#: The series name of the human candidates.
HUMANS = "Humans (all candidates)"
#: How many bands the items of a year and area are cut into, and their names, easiest first.
N_BANDS = 3
BAND_NAMES: tuple[str, ...] = ("easiest third", "middle third", "hardest third")
#: What a year row averages: key → (column in the tables, words for captions).
STATISTICS: dict[str, str] = {
    "θ": "mean θ (EAP, logits)",
    "% correct": "mean percent correct (100 · items right / items counted)",
}

YEAR_COLUMNS = ("year", "area", "series", "statistic", "n", "n_of", "mean", "sd", "ci_low",
                "ci_high")
BAND_COLUMNS = ("year", "area", "band", "band_name", "items", "b_min", "b_max", "series", "n",
                "n_of", "mean", "sd", "ci_low", "ci_high")


def difficulty_bands(b: ArrayLike, item_ids: ArrayLike, n_bands: int = N_BANDS) -> np.ndarray:
    """The band (0 = easiest … ``n_bands`` − 1 = hardest) of each item of one year and area.

    ``b``: the items' difficulties (shape (n,), logits, finite); ``item_ids``: their ids (shape
    (n,)), which break ties in b. Items are ranked by (b, item id); rank r of n goes to band
    ⌊n_bands·r/n⌋. Returns an int array of shape (n,)."""
    b = np.asarray(b, dtype=np.float64).ravel()
    ids = np.asarray(item_ids).ravel()
    if b.shape != ids.shape:
        raise ValueError(f"{b.size} difficulties and {ids.size} item ids")
    if not np.isfinite(b).all():
        raise ValueError("every banded item needs a finite difficulty b")
    n = b.size
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((ids, b))] = np.arange(n)  # lexsort: last key first
    return (n_bands * rank) // max(n, 1)


def banded_items(items: pd.DataFrame) -> pd.DataFrame:
    """``items`` (rows of ``store.trend_queries.year_items``) with the column band, cut per
    year and area by :func:`difficulty_bands`."""
    banded = items.copy()
    banded["band"] = pd.Series(dtype="int64")
    for _, group in items.groupby(["year", "area"], sort=False):
        banded.loc[group.index, "band"] = difficulty_bands(group["b"], group["item_id"])
    return banded.astype({"band": "int64"})


def band_keys(banded: pd.DataFrame) -> tuple[tuple[int, str, int, int], ...]:
    """(year, area, item_id, band) per banded item, what ``store.trend_queries.band_answers``
    joins the models' answers with."""
    return tuple((int(r.year), str(r.area), int(r.item_id), int(r.band))
                 for r in banded.itertuples())


def pattern_values(patterns: pd.DataFrame) -> pd.DataFrame:
    """Per response pattern (rows of ``store.trend_queries.year_patterns``): series, year,
    area and its value under each statistic (θ; % correct = 100 · ctt / n_scored)."""
    return pd.DataFrame({
        "series": patterns["series"].astype(str),
        "year": patterns["year"].astype(int),
        "area": patterns["area"].astype(str),
        "θ": patterns["theta"].astype(float),
        "% correct": 100.0 * patterns["ctt"].astype(float)
        / patterns["n_scored"].astype(float).where(patterns["n_scored"] > 0),
    })


def _summary_row(keys: tuple, values: ArrayLike, n_of: str) -> tuple:
    summary = level_mean(values)
    return (*keys, summary.n, n_of, summary.mean, summary.sd, summary.ci_low, summary.ci_high)


def year_means(humans: pd.DataFrame, patterns: pd.DataFrame) -> pd.DataFrame:
    """Per year, area, series and statistic (:data:`STATISTICS`): n, what n counts, mean, SD
    and the 95% interval of the mean. Humans from ``store.trend_queries.year_humans`` (n
    candidates, mean ± 1.96·SE), models from the patterns of
    ``store.trend_queries.year_patterns`` (n repetitions, ``level_mean``). Columns
    :data:`YEAR_COLUMNS`; humans first, then the series in the order found."""
    records = []
    for row in humans.itertuples():
        for statistic, prefix in (("θ", "theta"), ("% correct", "pct")):
            mean, sd, se = (float(getattr(row, f"{prefix}_{part}"))
                            for part in ("mean", "sd", "se"))
            low, high = normal_interval(mean, se)
            records.append((int(row.year), str(row.area), HUMANS, statistic, int(row.n),
                            "candidates", mean, sd, float(low), float(high)))
    values = pattern_values(patterns)
    for (series, year, area), group in values.groupby(["series", "year", "area"], sort=False):
        for statistic in STATISTICS:
            records.append(_summary_row((int(year), str(area), str(series), statistic),
                                        group[statistic].to_numpy(), "repetitions"))
    return pd.DataFrame.from_records(records, columns=list(YEAR_COLUMNS))


def band_means(banded: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """Per year, area, band and series: percent correct on the band's items. Columns
    :data:`BAND_COLUMNS` (items, b_min and b_max describe the band).

    Humans (``banded``: :func:`banded_items` of ``store.trend_queries.year_items``): the mean
    over the band's items of 100 · p_value, n = items with a p-value, no interval; none in a
    year without candidates. Models (``answers``: ``store.trend_queries.band_answers``): per
    repetition 100 · correct / answered over the band's items it answered, then the mean over
    repetitions with ``level_mean``'s interval."""
    bands = banded.groupby(["year", "area", "band"], sort=True).agg(
        items=("item_id", "size"), b_min=("b", "min"), b_max=("b", "max"),
        p_sum=("p_value", lambda p: float(np.nansum(p))),
        p_n=("p_value", lambda p: int(np.isfinite(p.astype(float)).sum())))
    records = []
    for (year, area, band), row in bands.iterrows():
        if row["p_n"] > 0:
            records.append((int(year), str(area), int(band), int(row["items"]),
                            float(row["b_min"]), float(row["b_max"]), HUMANS, int(row["p_n"]),
                            "items", 100.0 * row["p_sum"] / row["p_n"], np.nan, np.nan, np.nan))
    if len(answers):
        rates = answers.assign(value=100.0 * answers["correct"].astype(float)
                               / answers["answered"].astype(float))
        for (series, year, area, band), group in rates.groupby(
                ["series", "year", "area", "band"], sort=False):
            described = bands.loc[(year, area, band)]
            keys = (int(year), str(area), int(band), int(described["items"]),
                    float(described["b_min"]), float(described["b_max"]), str(series))
            records.append(_summary_row(keys, group["value"].to_numpy(), "repetitions"))
    table = pd.DataFrame.from_records(
        [(*r[:3], BAND_NAMES[r[2]], *r[3:]) for r in records], columns=list(BAND_COLUMNS))
    return table.sort_values(["year", "area", "band"], kind="stable", ignore_index=True)


def series_order(series: Sequence[str], found: Sequence[str]) -> list[str]:
    """The humans first, then the series of ``found`` in the order of ``series`` (the
    sidebar's), then any other found."""
    present = set(found)
    ordered = [s for s in series if s in present]
    ordered += [s for s in dict.fromkeys(found) if s not in ordered and s != HUMANS]
    return ([HUMANS] if HUMANS in present else []) + ordered


def area_order(areas: Sequence[str]) -> list[str]:
    """The chosen areas in the project's order."""
    return [a for a in AREA_NAMES if a in areas]


def human_years(humans: pd.DataFrame) -> list[int]:
    """The years with a human aggregate in ``humans`` (rows of ``year_humans``), sorted."""
    return sorted({int(y) for y in humans["year"]}) if len(humans) else []
