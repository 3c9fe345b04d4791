"""The model runs and booklet an item-level check is about, and their response patterns as
matrices."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class ItemSelection:
    """One area of one year, the booklet whose items are compared, and the model runs.

    ``booklet``: a ``CO_PROVA`` (humans who took it; runs on any booklet with the same items),
    ``item_language``: the LC foreign-language version of that booklet (0 English, 1 Spanish),
    None outside LC. ``language``, ``shots``, ``models`` and ``pooled`` select runs as the
    dashboard's sidebar does (``store.model_sql`` states their meaning).
    """

    year: int
    area: str
    booklet: int | None
    item_language: int | None
    language: str | None
    shots: int | None
    models: tuple[str, ...]
    pooled: bool = False

    def model_args(self) -> tuple:
        """The arguments of the store's model-pattern queries after the connection."""
        return (self.year, self.area, self.booklet, self.language, self.shots,
                list(self.models), self.pooled)


def pattern_matrix(patterns: pd.DataFrame, item_ids: Sequence[int] | np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Long pattern rows (pattern, model, theta, item_id, correct, as
    ``store.model_queries.model_pattern_matrix``) as arrays.

    Returns
    -------
    (correct, theta, series)
        correct (n_patterns, len(item_ids)): 1.0 / 0.0, NaN where the pattern has no answer to
        the item; theta (n_patterns,); series (n_patterns,) the run series of each pattern.
        Patterns are in the order of their keys.
    """
    ids = np.asarray(item_ids, dtype=np.int64)
    if patterns.empty:
        return (np.zeros((0, len(ids))), np.zeros(0), np.zeros(0, dtype=object))
    keys, rows = np.unique(patterns["pattern"].to_numpy(dtype=object), return_inverse=True)
    column_of = pd.Series(np.arange(len(ids)), index=ids)
    columns = column_of.reindex(patterns["item_id"].to_numpy(np.int64)).to_numpy()
    kept = ~np.isnan(columns)
    correct = np.full((len(keys), len(ids)), np.nan)
    correct[rows[kept], columns[kept].astype(np.int64)] = \
        patterns["correct"].to_numpy(np.float64)[kept]
    first = pd.DataFrame({"row": rows, "theta": patterns["theta"].to_numpy(np.float64),
                          "model": patterns["model"].to_numpy(dtype=object)}
                         ).drop_duplicates("row").sort_values("row")
    return correct, first["theta"].to_numpy(np.float64), first["model"].to_numpy(dtype=object)
