"""Flags that several commands share, declared once."""

from __future__ import annotations

import argparse

from store.connection import DB_ENV_VAR


def add_db(parser: argparse.ArgumentParser) -> None:
    """``--db``: the DuckDB file."""
    parser.add_argument("--db", help=f"DuckDB file (default: ${DB_ENV_VAR} or data/enem.duckdb)")


def add_runs_dir(parser: argparse.ArgumentParser) -> None:
    """``--runs-dir``: where run folders live."""
    parser.add_argument("--runs-dir", help="where run folders live (default: runs/ beside the db)")
