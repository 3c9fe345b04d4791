"""The pages' cached queries (dashboard/queries.py) return exactly what the store returns."""

from __future__ import annotations

import importlib

import pandas as pd
import streamlit as st

from dashboard import queries as cached
from store import catalogue_queries, data_queries, queries
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
                                          catalogue_queries.model_catalogue(con))
            pd.testing.assert_frame_equal(cached.model_run_table(),
                                          data_queries.model_run_table(con))
            assert cached.loaded_years() == catalogue_queries.loaded_years(con)
            pd.testing.assert_frame_equal(cached.human_groups(2023),
                                          catalogue_queries.human_groups(con, 2023))
            pd.testing.assert_frame_equal(cached.booklet_catalogue(2023),
                                          catalogue_queries.booklet_catalogue(con, 2023))
    finally:
        con.close()


def test_every_cached_query_is_named_after_its_store_query():
    wrapped = {name: value for name, value in vars(cached).items()
               if callable(value) and hasattr(value, "__wrapped__")
               and str(getattr(value, "__module__", "")).startswith("store.")}
    assert len(wrapped) >= 25
    for name, value in wrapped.items():
        source = getattr(importlib.import_module(value.__module__), name)
        assert value.__wrapped__ is source
