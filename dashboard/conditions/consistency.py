"""The Conditions page's consistency table: per run and area, how often its repetitions chose
the same option on an item (``analytics.consistency``), from
:func:`store.condition_queries.condition_choices`."""

from __future__ import annotations

import pandas as pd

from analytics.consistency import item_consistency, run_consistency

CONSISTENCY_COLUMNS = ("series", "area", "repetitions", "items", "mean_modal_share",
                       "share_changed", "mean_entropy")


def consistency_table(choices: pd.DataFrame) -> pd.DataFrame:
    """One row per run and area: repetitions, items with two or more choices, the mean share
    of the modal choice, the share of items answered differently at least once, and the mean
    entropy of the choices (bits)."""
    records = []
    for (run, area), group in choices.groupby(["run", "area"], sort=False):
        matrix = group.pivot_table(index="position", columns="shuffle", values="choice",
                                   aggfunc="first", fill_value="")
        summary = run_consistency(item_consistency(matrix.to_numpy(dtype=str)))
        records.append((run, area, matrix.shape[1], summary.items, summary.mean_modal_share,
                        summary.share_changed, summary.mean_entropy))
    return pd.DataFrame.from_records(records, columns=list(CONSISTENCY_COLUMNS))
