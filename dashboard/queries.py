"""The store queries the pages run, one cached function each, named as in the store.

Each is made by :func:`cached_query` from the store function of the same name: it runs that one
query on a cursor of the file's shared read-only view (:func:`dashboard.data.shared_reader`, one
per version of the file: opening the file per query cost more than most queries). Writers
never touch the live file (they swap a new one in), so a model run in another process can
publish between two queries. Results are cached with ``st.cache_data`` under the
file's version token (:func:`dashboard.data.version_token`): reruns are served from memory until
something writes the file. Each function takes the store function's arguments minus the
connection, so its signature and types are the store's.

A new query: write it in ``store/`` (SQL lives only there), then add one line here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

import duckdb
import streamlit as st

from dashboard.data import Token, shared_reader, version_token
from store import (
    audit_queries,
    catalogue_queries,
    data_queries,
    human_queries,
    item_queries,
    layout,
    model_queries,
    queries,
)

P = ParamSpec("P")
R = TypeVar("R")

#: Cached results kept per query (every (token, arguments) pair is one entry).
_ENTRIES = 128


def cached_query(query: Callable[Concatenate[duckdb.DuckDBPyConnection, P], R]
                 ) -> Callable[P, R]:
    """``query`` on a read-only connection to the current file, cached under its version."""

    def run(token: Token, *args: P.args, **kwargs: P.kwargs) -> R:
        with shared_reader(token).cursor() as con:
            return query(con, *args, **kwargs)

    # st.cache_data tells functions apart by module, qualified name and source; every ``run``
    # has the same source, so each takes its query's name to keep the caches apart.
    run.__qualname__ = f"cached_query.{query.__module__}.{query.__qualname__}"
    cached = st.cache_data(show_spinner=False, max_entries=_ENTRIES)(run)

    @functools.wraps(query)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return cached(version_token(), *args, **kwargs)

    return call


# What is loaded
overview = cached_query(queries.overview)
is_synthetic = cached_query(queries.is_synthetic)
loaded_years = cached_query(catalogue_queries.loaded_years)
booklet_catalogue = cached_query(catalogue_queries.booklet_catalogue)
human_groups = cached_query(catalogue_queries.human_groups)
model_catalogue = cached_query(catalogue_queries.model_catalogue)
shot_settings = cached_query(catalogue_queries.shot_settings)
table_counts = cached_query(data_queries.table_counts)
store_files = cached_query(layout.store_files)
ingest_history = cached_query(data_queries.ingest_history)
reject_summary = cached_query(data_queries.reject_summary)
reject_sample = cached_query(data_queries.reject_sample)
model_run_table = cached_query(data_queries.model_run_table)
year_profile = cached_query(catalogue_queries.year_profile)
booklet_audit = cached_query(audit_queries.booklet_audit)

# Humans (pre-aggregated)
human_theta_ctt = cached_query(human_queries.human_theta_ctt)
human_theta_lz = cached_query(human_queries.human_theta_lz)
lz_star_missing = cached_query(human_queries.lz_star_missing)
human_theta_histogram = cached_query(human_queries.human_theta_histogram)
blank_tests = cached_query(human_queries.blank_tests)
human_theta_se = cached_query(human_queries.human_theta_se)
human_count = cached_query(human_queries.human_count)

# Items
main_booklet = cached_query(item_queries.main_booklet)
model_booklet = cached_query(model_queries.model_booklet)
form_items = cached_query(item_queries.form_items)
area_items = cached_query(item_queries.area_items)
item_record = cached_query(item_queries.item_record)
item_texts = cached_query(item_queries.item_texts)
item_icc = cached_query(item_queries.item_icc)
item_option_counts = cached_query(item_queries.item_option_counts)
area_stems = cached_query(item_queries.area_stems)
booklet_theta_moments = cached_query(item_queries.booklet_theta_moments)
item_option_theta_counts = cached_query(item_queries.item_option_theta_counts)

# Models
model_points = cached_query(model_queries.model_points)
baseline_series = cached_query(model_queries.baseline_series)
model_item_correct = cached_query(model_queries.model_item_correct)
model_pattern_matrix = cached_query(model_queries.model_pattern_matrix)
model_item_choices = cached_query(model_queries.model_item_choices)
model_item_theta = cached_query(model_queries.model_item_theta)
