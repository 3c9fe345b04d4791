"""Flags that several commands share, declared once, and the checked types of flag values."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path

from analytics import ESTIMATOR_METHODS
from cli.errors import UsageError
from enem.csvfiles import UnusableFileError
from enem.pattern_files import check_output
from enem.scoring import SCALES
from inference.plan import SEED_MAX, check_seed, check_temperature
from store.connection import DB_ENV_VAR, database_path


def add_db(parser: argparse.ArgumentParser, global_option: bool = False) -> None:
    """``--db``: the DuckDB file. It is a global option (``global_option`` on the main parser)
    that each command takes too, so it goes before or after the command; given in both places,
    the one after the command wins."""
    parser.add_argument("--db", default=None if global_option else argparse.SUPPRESS,
                        help=f"DuckDB file (default: ${DB_ENV_VAR} or data/enem.duckdb)")


def db_path(args: argparse.Namespace) -> Path:
    """The database the parsed ``args`` name: ``--db``, else $ENEM_DB, else the default."""
    return database_path(getattr(args, "db", None))


def whole_number_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum``."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return whole_number


#: An argparse type: a whole number above 0.
positive_int = whole_number_at_least(1)


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def run_seed(text: str) -> int:
    """An argparse type: a run's seed, a whole number from 0 to ``SEED_MAX`` (the store keeps
    it as a BIGINT), checked before any work (``inference.plan.check_seed``)."""
    try:
        return check_seed(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a whole number from 0 to {SEED_MAX:,} (2**63 - 1), got {text!r}") from None


def temperature(text: str) -> float:
    """An argparse type: a sampling temperature, a finite number ≥ 0 (``1e309`` is infinity;
    ``inference.plan.check_temperature``)."""
    try:
        return check_temperature(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a finite number of at least 0, got {text!r}") from None


def named_path(text: str) -> Path:
    """An argparse type: a path that names something. An empty one would silently mean the
    current folder; ``.`` says so when that is meant."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; name a folder (. for the current one)")
    return Path(text)


def output_file(path: str | os.PathLike) -> Path:
    """``path`` as a file to write: UsageError unless its folder exists and it is no folder."""
    try:
        return check_output(path)
    except UnusableFileError as error:
        raise UsageError(str(error)) from error


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
    if overrides.get("n_quadrature", 2) < 2 or not low < high:
        raise UsageError("--grid-points must be ≥ 2 and --grid-range LOW < HIGH")
    return overrides
