"""The pages' cached queries (dashboard/queries.py) return exactly what the store returns."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import queries as cached
from store import dashboard_queries, queries
from store.connection import DB_ENV_VAR, open_reader


def test_queries_with_the_same_arguments_keep_their_own_results(pages_demo_db, monkeypatch):
    monkeypatch.setenv(DB_ENV_VAR, str(pages_demo_db))
    st.cache_data.clear()
    con = open_reader(pages_demo_db)
    try:
        # Called twice each, in turn: a shared cache would hand one query the other's rows.
        for _ in range(2):
            pd.testing.assert_frame_equal(cached.overview(), queries.overview(con))
            pd.testing.assert_frame_equal(cached.model_catalogue(),
                                          dashboard_queries.model_catalogue(con))
            pd.testing.assert_frame_equal(cached.model_run_table(),
                                          dashboard_queries.model_run_table(con))
            assert cached.loaded_years() == dashboard_queries.loaded_years(con)
            pd.testing.assert_frame_equal(cached.human_groups(2023),
                                          dashboard_queries.human_groups(con, 2023))
            pd.testing.assert_frame_equal(cached.booklet_catalogue(2023),
                                          dashboard_queries.booklet_catalogue(con, 2023))
    finally:
        con.close()


def test_every_cached_query_is_named_after_its_store_query():
    store_modules = (queries.__name__, dashboard_queries.__name__)
    names = [name for name, value in vars(cached).items()
             if callable(value) and getattr(value, "__module__", None) in store_modules]
    assert len(names) >= 25
    for name in names:
        source = getattr(dashboard_queries, name, None) or getattr(queries, name)
        assert getattr(cached, name).__wrapped__ is source
