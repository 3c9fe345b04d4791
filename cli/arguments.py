"""Flags that several commands share, declared once."""

from __future__ import annotations

import argparse

from analytics import ESTIMATOR_METHODS
from enem.scoring import SCALES
from store.connection import DB_ENV_VAR


def add_db(parser: argparse.ArgumentParser) -> None:
    """``--db``: the DuckDB file."""
    parser.add_argument("--db", help=f"DuckDB file (default: ${DB_ENV_VAR} or data/enem.duckdb)")


def add_runs_dir(parser: argparse.ArgumentParser) -> None:
    """``--runs-dir``: where run folders live."""
    parser.add_argument("--runs-dir", help="where run folders live (default: runs/ beside the db)")


def add_scoring_overrides(parser: argparse.ArgumentParser) -> None:
    """Scoring flags with no defaults: each one given overrides that setting only, on top of
    the settings stored for the year (see ``scoring_overrides``)."""
    group = parser.add_argument_group(
        "scoring (default: the settings stored for each year, INEP's recipe when none)")
    group.add_argument("--method", choices=ESTIMATOR_METHODS, help="ability estimator")
    group.add_argument("--grid-points", type=int,
                       help="EAP quadrature points (INEP 40; the paper 121)")
    group.add_argument("--grid-range", type=float, nargs=2, metavar=("LOW", "HIGH"),
                       help="EAP grid range (INEP -4 4; the paper -6 6)")
    group.add_argument("--scaling", type=float,
                       help="scaling constant D of the item bank (ENEM 1; TIMSS-style 1.7)")
    group.add_argument("--scale", choices=SCALES,
                       help="NOTA scale: enem = round(k·θ+d, 1) per area; paper = 100·θ+500")


def scoring_overrides(args: argparse.Namespace) -> dict:
    """The scoring flags given, as ``ScoringOptions.as_dict`` keys (empty when none was)."""
    given = {"method": args.method, "n_quadrature": args.grid_points,
             "theta_range": args.grid_range, "scaling": args.scaling, "scale": args.scale}
    overrides = {key: value for key, value in given.items() if value is not None}
    low, high = overrides.get("theta_range", (0.0, 1.0))
    if overrides.get("n_quadrature", 2) < 2 or low >= high:
        raise SystemExit("error: --grid-points must be ≥ 2 and --grid-range LOW < HIGH")
    return overrides
