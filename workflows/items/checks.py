"""Every item-level check of one selection, read from the store in one go: the gap table, DIF
and human item fit on the booklet form, and the machine calibration. The Item gaps page caches
the result; ``enem-llm items`` prints its tables."""

from __future__ import annotations

from dataclasses import dataclass, replace

import duckdb
import pandas as pd

from analytics.items.fit import DEFAULT_POOLING
from store import item_queries, model_queries
from store.model_runs import year_scoring_options
from workflows.items.calibration import MachineCalibration, machine_calibration
from workflows.items.dif import human_machine_dif
from workflows.items.form_fit import form_item_fit
from workflows.items.gaps import gap_table
from workflows.items.selection import ItemSelection, pattern_matrix


@dataclass(frozen=True, eq=False)
class ItemChecks:
    """The selection, its gap table (``workflows.items.gaps.gap_table``), the DIF and human
    item-fit tables of the booklet form (empty without a booklet, or when the store has no
    score tables for it: ``score_tables_missing``), and the machine calibration. ``baselines``:
    the selected series that are baselines (``store.model_queries.baseline_series``), left
    out of every check: a random answerer is no machine to pool, compare or calibrate."""

    selection: ItemSelection
    gaps: pd.DataFrame
    dif: pd.DataFrame
    fit: pd.DataFrame
    calibration: MachineCalibration
    score_tables_missing: bool
    baselines: tuple[str, ...] = ()


def default_booklet(con: duckdb.DuckDBPyConnection, year: int, area: str,
                    language: str | None, shots: int | None, models: list[str]) -> int | None:
    """The booklet the selected runs took most, else the one most candidates took."""
    return (model_queries.model_booklet(con, year, area, language, shots, models)
            or item_queries.main_booklet(con, year, area))


def runs_item_language(con: duckdb.DuckDBPyConnection, selection: ItemSelection) -> int | None:
    """LC: the foreign language the selected runs answered most (0 English when none);
    None in the other areas."""
    if selection.area != "LC":
        return None
    points = model_queries.model_points(con, *selection.model_args())
    languages = points["item_language"].dropna() if len(points) else pd.Series(dtype=float)
    return int(languages.mode().iloc[0]) if len(languages) else 0


def item_checks(con: duckdb.DuckDBPyConnection, selection: ItemSelection,
                scaling: float | None = None, sx2_pooling: str = DEFAULT_POOLING) -> ItemChecks:
    """Run every check of ``selection``; ``scaling``: D of the items (default the year's);
    ``sx2_pooling``: the item fit's pooling rule (mirt's by default).

    With a booklet, every check is about that form's items, numbered as in it; without one
    (a year without booklets), the gaps and the calibration take every item of the area."""
    if scaling is None:
        scaling = year_scoring_options(con, selection.year).scaling
    items = item_queries.area_items(con, selection.year, selection.area)
    form = pd.DataFrame()
    if selection.booklet is not None:
        form = item_queries.form_items(con, selection.year, selection.booklet,
                                            selection.item_language)
        items = _form_order(items, form)
    known = set(model_queries.baseline_series(con))
    baselines = tuple(m for m in selection.models if m in known)
    machines = replace(selection, models=tuple(m for m in selection.models if m not in known))
    patterns = model_queries.model_pattern_matrix(con, *machines.model_args())
    gaps = gap_table(patterns, items,
                     item_queries.item_icc_bins(con, selection.year, selection.area), scaling)
    calibration = machine_calibration(patterns, items[items["a"].notna()], scaling)
    dif = fit = pd.DataFrame()
    missing = False
    if selection.booklet is not None:
        ids, counts, by_score = item_queries.score_tables(
            con, selection.year, selection.area, selection.booklet, selection.item_language)
        missing = not len(ids) or counts.sum() == 0
        if not missing:
            params = form.drop_duplicates("item_id").set_index("item_id").reindex(ids)
            positions = params["co_posicao"].to_numpy()
            correct, _, _ = pattern_matrix(patterns, ids)
            dif = human_machine_dif(ids, positions, counts, by_score, correct)
            fit = form_item_fit(con, selection.year, selection.area, selection.booklet,
                                selection.item_language, scaling, sx2_pooling)
    return ItemChecks(selection, gaps, dif, fit, calibration, missing, baselines)


def _form_order(items: pd.DataFrame, form: pd.DataFrame) -> pd.DataFrame:
    """The area's items that the booklet form holds, numbered as in that booklet
    (``first_position`` = its ``CO_POSICAO`` there), so every table and figure of the checks
    is about the same items under the same numbers."""
    numbers = form.drop_duplicates("item_id").set_index("item_id")["co_posicao"]
    kept = items[items["item_id"].isin(numbers.index)].copy()
    kept["first_position"] = numbers.reindex(kept["item_id"]).to_numpy()
    return kept
