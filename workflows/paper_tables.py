"""The paper's appendix tables built from store rows, and the writes behind their buttons.

- Table 1, the random-choice baseline: mean ± SD over repetitions of CTT (%), θ and l_z per
  prompt language and area (:func:`random_baseline_table`); the runs still missing for a
  selection are launched through the runs service (:func:`launch_random_baseline`).
- Table 2, item attributes against poor discrimination: per area and attribute the 2×2 counts
  and the χ² test of independence (:func:`attribute_tests`); the attributes are derived from the
  stored texts (:func:`derive_year_attributes`) and can be corrected by hand
  (:func:`save_attribute_corrections`; a correction survives every later derivation).
- Fig 6 / Table 3, the contamination probe: Pearson's r of Min-K% Prob against accuracy per
  series and prompt language (:func:`min_k_correlations`).

The frames come from ``store.paper_table_queries`` (and ``store.model_queries`` for the
discrimination indices); the statistics from ``analytics.paper_tables``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from analytics.paper_tables import (
    YATES_DEFAULT,
    chi2_independence,
    contingency_2x2,
    least_squares_line,
    mean_sd,
    pearson,
)
from inference.plan import RANDOM_BASELINE, RunSpec
from store.connection import connected
from store.paper_table_queries import (
    ATTRIBUTE_COLUMNS,
    items_with_texts,
    save_corrected_attributes,
)
from workflows.demo_build import RANDOM_BASELINE_SHUFFLES
from workflows.question_import import derive_item_attributes
from workflows.runs.service import LaunchedRun, start_in_background

#: An item discriminates for the models when its DI over their patterns is at least this.
GOOD_DI = 0.2
#: The attributes of Table 2, in the paper's words.
ATTRIBUTE_NAMES: dict[str, str] = {
    "has_image": "contains images",
    "numbers_in_options": "numbers in the answers",
    "numbers_in_statement": "numbers in the statement",
}
BASELINE_COLUMNS = ["prompt_language", "area", "runs", "repetitions", "ctt_percent_mean",
                    "ctt_percent_sd", "theta_mean", "theta_sd", "lz_mean", "lz_sd"]
ATTRIBUTE_TEST_COLUMNS = ["attribute", "items", "with_discriminating", "with_not",
                          "without_discriminating", "without_not", "chi2", "p_value", "dof",
                          "yates"]
CORRELATION_COLUMNS = ["model", "prompt_language", "items", "r", "p_value", "slope",
                       "intercept"]


# ---------------------------------------------------------------------------------------------
# Table 1: the random-choice baseline


def random_baseline_table(patterns: pd.DataFrame) -> pd.DataFrame:
    """Mean and SD over repetitions per (prompt language, area) of the random baseline.

    ``patterns``: one row per scored pattern (``random_baseline_patterns``: run_id, area,
    prompt_language, ctt, n_scored, theta, lz). Every random run covering a cell is pooled: its
    answers ignore the prompt, so repetitions of different runs are draws of one process.
    CTT % = 100 · ctt / n_scored of each pattern. Columns: :data:`BASELINE_COLUMNS`.
    """
    rows = []
    if patterns.empty:
        return pd.DataFrame(columns=BASELINE_COLUMNS)
    percent = 100.0 * patterns["ctt"].astype(float) / patterns["n_scored"].astype(float)
    frame = patterns.assign(ctt_percent=percent)
    for (language, area), group in frame.groupby(["prompt_language", "area"], sort=True):
        ctt, theta, lz = (mean_sd(group[c].to_numpy(float))
                          for c in ("ctt_percent", "theta", "lz"))
        rows.append({"prompt_language": language, "area": area,
                     "runs": int(group["run_id"].nunique()), "repetitions": len(group),
                     "ctt_percent_mean": ctt.mean, "ctt_percent_sd": ctt.sd,
                     "theta_mean": theta.mean, "theta_sd": theta.sd,
                     "lz_mean": lz.mean, "lz_sd": lz.sd})
    return pd.DataFrame(rows, columns=BASELINE_COLUMNS)


def plus_minus(mean: float, sd: float, decimals: int = 2, unit: str = "") -> str:
    """'29.5 ± 10.7 %' (mean ± SD to ``decimals``), '—' when the mean is missing."""
    if not np.isfinite(mean):
        return "—"
    spread = f"{sd:.{decimals}f}" if np.isfinite(sd) else "—"
    return f"{mean:.{decimals}f} ± {spread}{unit}"


def baseline_display(table: pd.DataFrame) -> pd.DataFrame:
    """Table 1 as the paper prints it: language, area, repetitions, 'mean ± SD' per score."""
    return pd.DataFrame({
        "language": table["prompt_language"], "area": table["area"],
        "repetitions": table["repetitions"],
        "CTT (%)": [plus_minus(m, s, 1) for m, s in zip(table["ctt_percent_mean"],
                                                          table["ctt_percent_sd"], strict=True)],
        "θ": [plus_minus(m, s)
              for m, s in zip(table["theta_mean"], table["theta_sd"], strict=True)],
        "l_z": [plus_minus(m, s) for m, s in zip(table["lz_mean"], table["lz_sd"], strict=True)],
    })


def missing_cells(patterns: pd.DataFrame, areas: Sequence[str],
                  languages: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Prompt language → areas (in the given order) without any random-baseline pattern."""
    have = (set(zip(patterns["prompt_language"], patterns["area"], strict=True))
            if len(patterns) else set())
    missing = {language: tuple(a for a in areas if (language, a) not in have)
               for language in languages}
    return {language: found for language, found in missing.items() if found}


def random_baseline_specs(year: int, missing: dict[str, tuple[str, ...]],
                          n_shuffles: int = RANDOM_BASELINE_SHUFFLES) -> list[RunSpec]:
    """One random-baseline run per prompt language with missing areas, 0-shot, the demo's
    settings (seed = year, ``n_shuffles`` shuffles, family 'baseline')."""
    return [RunSpec(model=RANDOM_BASELINE, backend="random", year=int(year), areas=areas,
                    languages=(language,), shots=(0,), n_shuffles=int(n_shuffles),
                    seed=int(year), family="baseline", instruction_tuned=False)
            for language, areas in sorted(missing.items())]


def launch_random_baseline(db_path: Path, runs_dir: Path, year: int,
                           missing: dict[str, tuple[str, ...]],
                           slots: int | None = None) -> list[LaunchedRun]:
    """Start the missing random-baseline runs in the background (the runs service, as the
    Runs page and ``enem-llm run --background`` do; queued for ``slots`` when given);
    returns the launched runs."""
    return [start_in_background(spec, Path(db_path), Path(runs_dir), slots=slots)
            for spec in random_baseline_specs(year, missing)]


# ---------------------------------------------------------------------------------------------
# Table 2: item attributes against poor discrimination


def attribute_tests(attributes: pd.DataFrame, model_di: pd.Series,
                    correction: bool = YATES_DEFAULT, threshold: float = GOOD_DI
                    ) -> pd.DataFrame:
    """The 2×2 counts and χ² test of each attribute against discrimination for the models.

    ``attributes``: item_id and the :data:`ATTRIBUTE_COLUMNS` (missing where not derived);
    ``model_di``: DI indexed by item_id (NaN or absent: not answered). An item counts when both
    are known; it discriminates when DI ≥ ``threshold``. Columns:
    :data:`ATTRIBUTE_TEST_COLUMNS` (counts of items with / without the attribute that do / do
    not discriminate; χ², p, dof; whether Yates' correction was applied).
    """
    di = model_di.reindex(attributes["item_id"]).to_numpy(float)
    good = np.where(np.isfinite(di), di >= threshold, np.nan)
    rows = []
    for column in ATTRIBUTE_COLUMNS:
        table = contingency_2x2(_flags(attributes[column]), good)
        result = chi2_independence(table, correction=correction)
        rows.append({"attribute": ATTRIBUTE_NAMES[column], "items": int(table.sum()),
                     "with_discriminating": int(table[0, 0]), "with_not": int(table[0, 1]),
                     "without_discriminating": int(table[1, 0]), "without_not": int(table[1, 1]),
                     "chi2": result.statistic, "p_value": result.p_value, "dof": result.dof,
                     "yates": result.corrected})
    return pd.DataFrame(rows, columns=ATTRIBUTE_TEST_COLUMNS)


def _flags(values: pd.Series) -> np.ndarray:
    """Booleans as 1.0 / 0.0, missing values as NaN, shape (n,)."""
    return np.array([np.nan if pd.isna(v) else float(bool(v)) for v in values], dtype=float)


def derive_year_attributes(db_path: Path, year: int) -> tuple[int, int]:
    """Derive the attributes of every item of ``year`` with a stored text (rules in
    ``inference.item_attributes``); user corrections are kept. Returns (written, kept)."""
    with connected(Path(db_path)) as con:
        return derive_item_attributes(con, items_with_texts(con, year))


def changed_attributes(original: pd.DataFrame, edited: pd.DataFrame
                       ) -> list[tuple[int, bool, bool, bool]]:
    """(item_id, has_image, numbers_in_statement, numbers_in_options) of every row of
    ``edited`` whose attributes differ from ``original`` (same item_id order); a missing value
    is read as False once the user touched the row."""
    before = original.set_index("item_id")[list(ATTRIBUTE_COLUMNS)]
    after = edited.set_index("item_id")[list(ATTRIBUTE_COLUMNS)]
    changed = []
    for item_id, row in after.iterrows():
        old = before.loc[item_id]
        new = tuple(bool(row[c]) if pd.notna(row[c]) else False for c in ATTRIBUTE_COLUMNS)
        previous = tuple(None if pd.isna(old[c]) else bool(old[c]) for c in ATTRIBUTE_COLUMNS)
        if new != previous:
            has_image, in_statement, in_options = new  # the three ATTRIBUTE_COLUMNS
            changed.append((int(item_id), has_image, in_statement, in_options))
    return changed


def save_attribute_corrections(db_path: Path, year: int,
                               changes: Sequence[tuple[int, bool, bool, bool]]) -> int:
    """Store ``changes`` (item_id and the three attributes) as a user's corrections of
    ``year``; returns the rows written."""
    if not changes:
        return 0
    with connected(Path(db_path)) as con:
        return save_corrected_attributes(con, [(int(year), *change) for change in changes])


# ---------------------------------------------------------------------------------------------
# Fig 6 / Table 3: Min-K% Prob against accuracy


def min_k_correlations(frame: pd.DataFrame) -> pd.DataFrame:
    """Pearson's r (and two-sided p) of Min-K% Prob against accuracy over items, with the
    least-squares line (accuracy = slope · Min-K% + intercept), per series and prompt language.

    ``frame``: ``min_k_accuracy`` rows (model, prompt_language, item_id, accuracy, min_k).
    Columns: :data:`CORRELATION_COLUMNS`.
    """
    rows = []
    for (model, language), group in frame.groupby(["model", "prompt_language"], sort=True):
        x, y = group["min_k"].to_numpy(float), group["accuracy"].to_numpy(float)
        correlation = pearson(x, y)
        slope, intercept = least_squares_line(x, y)
        rows.append({"model": model, "prompt_language": language, "items": correlation.n,
                     "r": correlation.r, "p_value": correlation.p_value, "slope": slope,
                     "intercept": intercept})
    return pd.DataFrame(rows, columns=CORRELATION_COLUMNS)


def r_p_text(r: float, p_value: float) -> str:
    """'0.31 (0.004)' as the paper's Table 3 prints r (p); '—' when undefined."""
    if not np.isfinite(r):
        return "—"
    return f"{round(r, 2) + 0.0:.2f} ({p_value:.3f})"  # + 0.0: no "-0.00" for r ≈ 0
