"""The Conditions page's consistency table: per run and area, how often its repetitions chose
the same option on an item (``analytics.consistency``), from
:func:`store.condition_queries.condition_choices`."""

from __future__ import annotations

import pandas as pd

from analytics.consistency import item_consistency, run_consistency

CONSISTENCY_COLUMNS = ("series", "area", "repetitions", "items", "mean_modal_share",
                       "share_changed", "mean_entropy")
ITEM_COLUMNS = ("series", "area", "position", "item_id", "answered", "modal_choice",
                "modal_share", "entropy", "changed")


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


def item_table(choices: pd.DataFrame) -> pd.DataFrame:
    """One row per run, area and item: the repetitions that chose an option, the most frequent
    choice (original letter), its share, the entropy of the choices (bits) and whether they
    differ; the least consistent items first (entropy descending, then run, area, position)."""
    frames = []
    for (run, area), group in choices.groupby(["run", "area"], sort=False):
        matrix = group.pivot_table(index=["position", "item_id"], columns="shuffle",
                                   values="choice", aggfunc="first", fill_value="")
        found = item_consistency(matrix.to_numpy(dtype=str))
        frames.append(pd.DataFrame({
            "series": run, "area": area,
            "position": matrix.index.get_level_values("position").astype(int),
            "item_id": matrix.index.get_level_values("item_id").astype("int64"),
            "answered": found.answered, "modal_choice": found.modal_choice,
            "modal_share": found.modal_share, "entropy": found.entropy,
            "changed": found.changed}))
    if not frames:
        return pd.DataFrame(columns=list(ITEM_COLUMNS))
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["entropy", "series", "area", "position"],
                           ascending=[False, True, True, True],
                           na_position="last").reset_index(drop=True)
