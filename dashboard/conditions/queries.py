"""The Conditions page's store queries, cached (see ``dashboard.queries``), and the consistency
tables made from the runs' choices, cached the same way: computed once per selection and
store version (they cost about 0.3 s, which every rerun of the page paid)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from dashboard.conditions.consistency import consistency_table, item_table
from dashboard.data import Token, version_token
from dashboard.queries import cached_query
from store import condition_queries

condition_patterns = cached_query(condition_queries.condition_patterns)
condition_choices = cached_query(condition_queries.condition_choices)


def consistency_tables(year: int, areas: Sequence[str], models: Sequence[str], language: str,
                       shots: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(:func:`~dashboard.conditions.consistency.consistency_table`,
    :func:`~dashboard.conditions.consistency.item_table`) of the selected runs' choices."""
    return _consistency_tables(version_token(), year, tuple(areas), tuple(models), language,
                               shots)


@st.cache_data(show_spinner=False, max_entries=16)
def _consistency_tables(token: Token, year: int, areas: tuple[str, ...],
                        models: tuple[str, ...], language: str, shots: int
                        ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``token``: the store's version, keying the cache (the choices are read through it)."""
    choices = condition_choices(year, list(areas), list(models), language, shots)
    return consistency_table(choices), item_table(choices)
