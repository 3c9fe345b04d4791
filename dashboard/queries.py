"""The store queries the pages run, one cached function each, named as in the store.

Each function opens the DuckDB file read-only, runs one query from :mod:`store.dashboard_queries`
or :mod:`store.queries` and closes the file again, so a model run in another process can write
it between two queries. Results are cached with ``st.cache_data`` under the file's version token
(:func:`dashboard.data.version_token`), which :func:`current_version` passes in: reruns are
served from memory until something writes the file.

A new query: write it in ``store/`` (SQL lives only there), then add its cached function here
with the same name, signature and types, minus the connection.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

import duckdb
import pandas as pd
import streamlit as st

from dashboard.data import Token, version_token
from store import dashboard_queries, queries
from store.connection import connected

P = ParamSpec("P")
R = TypeVar("R")

#: Cached results kept per query (every (token, arguments) pair is one entry).
_ENTRIES = 128


def current_version(cached: Callable[Concatenate[Token, P], R]) -> Callable[P, R]:
    """The cached function called with the current version token as its first argument."""

    @functools.wraps(cached)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return cached(version_token(), *args, **kwargs)

    return call


@contextmanager
def _reading(token: Token) -> Iterator[duckdb.DuckDBPyConnection]:
    with connected(Path(token[0]), read_only=True) as con:
        yield con


# What is loaded ------------------------------------------------------------------------------

@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def overview(token: Token) -> pd.DataFrame:
    with _reading(token) as con:
        return queries.overview(con)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def is_synthetic(token: Token) -> bool:
    with _reading(token) as con:
        return queries.is_synthetic(con)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def loaded_years(token: Token) -> list[int]:
    with _reading(token) as con:
        return dashboard_queries.loaded_years(con)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def booklet_catalogue(token: Token, year: int) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.booklet_catalogue(con, year)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def human_groups(token: Token, year: int) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.human_groups(con, year)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def model_catalogue(token: Token) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.model_catalogue(con)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def table_counts(token: Token, tables: Sequence[str]) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.table_counts(con, tables)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def ingest_history(token: Token) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.ingest_history(con)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def reject_summary(token: Token) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.reject_summary(con)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def reject_sample(token: Token, year: int, reason: str | None, limit: int = 200) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.reject_sample(con, year, reason, limit)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def model_run_table(token: Token) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.model_run_table(con)


# Humans (pre-aggregated) ---------------------------------------------------------------------

@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def human_theta_ctt(token: Token, year: int, area: str, booklet: int | None, group_kind: str,
                    group_value: str) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.human_theta_ctt(con, year, area, booklet, group_kind,
                                                 group_value)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def human_theta_lz(token: Token, year: int, area: str, booklet: int | None, group_kind: str,
                   group_value: str) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.human_theta_lz(con, year, area, booklet, group_kind,
                                                group_value)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def human_theta_histogram(token: Token, year: int, area: str, booklet: int | None,
                          group_kind: str, group_value: str) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.human_theta_histogram(con, year, area, booklet, group_kind,
                                                       group_value)


# Items ---------------------------------------------------------------------------------------

@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def main_booklet(token: Token, year: int, area: str) -> int | None:
    with _reading(token) as con:
        return dashboard_queries.main_booklet(con, year, area)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def form_items(token: Token, year: int, booklet: int, item_language: int | None) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.form_items(con, year, booklet, item_language)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def area_items(token: Token, year: int, area: str) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.area_items(con, year, area)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def item_texts(token: Token, year: int, item_id: int) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.item_texts(con, year, item_id)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def item_icc(token: Token, year: int, item_id: int) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.item_icc(con, year, item_id)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def item_option_counts(token: Token, year: int, item_id: int) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.item_option_counts(con, year, item_id)


# Models --------------------------------------------------------------------------------------

@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def model_points(token: Token, year: int, area: str | None, booklet: int | None,
                 language: str | None, shots: int | None,
                 models: Sequence[str]) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.model_points(con, year, area, booklet, language, shots, models)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def model_item_correct(token: Token, year: int, area: str, language: str | None,
                       shots: int | None, models: Sequence[str]) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.model_item_correct(con, year, area, language, shots, models)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def model_pattern_matrix(token: Token, year: int, area: str, booklet: int | None,
                         language: str | None, shots: int | None,
                         models: Sequence[str]) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.model_pattern_matrix(con, year, area, booklet, language, shots,
                                                      models)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def model_item_choices(token: Token, year: int, item_id: int, language: str | None,
                       shots: int | None, models: Sequence[str]) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.model_item_choices(con, year, item_id, language, shots, models)


@current_version
@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def model_item_theta(token: Token, year: int, item_id: int, language: str | None,
                     shots: int | None, models: Sequence[str]) -> pd.DataFrame:
    with _reading(token) as con:
        return dashboard_queries.model_item_theta(con, year, item_id, language, shots, models)
