"""What the database holds for the sidebar's selection: the queries that take a Filters.

These were methods of the selection once; kept apart, :class:`~dashboard.state.filters.Filters`
stays a plain value and every database read of a page goes through ``dashboard.queries``.
"""

from __future__ import annotations

import pandas as pd

from dashboard import queries
from dashboard.state.filters import Filters


def information_booklet(filters: Filters, area: str) -> int | None:
    """The booklet whose items give ``area``'s test information: the chosen one, else the one
    the selected runs took most, else the one most candidates took (None: none)."""
    return (filters.booklet_for(area)
            or queries.model_booklet(filters.year, area, filters.language, filters.shots,
                                     filters.models)
            or queries.main_booklet(filters.year, area))


def selected_model_points(filters: Filters) -> pd.DataFrame:
    """Every scored shuffle of the selected models in the selected areas (one row per pattern)."""
    return pd.concat(
        [queries.model_points(filters.year, area, filters.booklet_for(area), filters.language,
                              filters.shots, filters.models, filters.pooled)
         for area in filters.areas],
        ignore_index=True,
    )
