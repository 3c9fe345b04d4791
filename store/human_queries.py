"""The humans' backgrounds the pages draw, from the pre-aggregated tables (``agg_theta_ctt``,
``agg_theta_lz``, ``agg_theta_lz_star``), never from ``scores`` row by row, so a full-size year
(about 4M candidates) costs the same as the demo. Filters (``booklet``, ``group_kind`` /
``group_value``) as ``store.model_sql`` states them. Read-only; every value is a bound
parameter."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from store.connection import one_row
from store.histograms import PERSON_FIT_TABLES
from store.queries import table_names


def _human_histogram(con: duckdb.DuckDBPyConnection, table: str, bins: str, year: int,
                     area: str, booklet: int | None, group_kind: str, group_value: str,
                     exclude: Sequence[int] = (), include_blank: bool = True,
                     measures: str = "sum(n)::BIGINT AS n") -> pd.DataFrame:
    """Counts (or other ``measures``) of a pre-aggregated table summed over booklets, by the
    ``bins`` columns.

    ``exclude`` lists booklets left out of the sum (those whose notas are not reproduced);
    ``include_blank`` False leaves out all-blank tests (files built before the ``blank``
    column have none marked). ``table``, ``bins`` and ``measures`` are constants of this
    module, never user input.
    """
    return con.execute(
        f"""SELECT {bins}, {measures} FROM {table}
            WHERE year = $year AND area = $area AND ($booklet IS NULL OR booklet_id = $booklet)
              AND NOT list_contains($exclude, booklet_id)
              AND group_kind = $kind AND group_value = $value
              AND ($include_blank OR NOT coalesce(blank, false))
            GROUP BY {bins} ORDER BY {bins}""",
        {"year": int(year), "area": area, "booklet": booklet, "kind": group_kind,
         "value": group_value, "exclude": [int(b) for b in exclude],
         "include_blank": bool(include_blank)},
    ).df()


def human_theta_ctt(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    group_kind: str, group_value: str, exclude: Sequence[int] = (), include_blank: bool = True,
) -> pd.DataFrame:
    """2-D histogram of (θ bin, CTT): theta_bin (lower edge), ctt, n; booklets summed."""
    return _human_histogram(con, "agg_theta_ctt", "theta_bin, ctt", year, area, booklet,
                            group_kind, group_value, exclude, include_blank)


def human_theta_lz(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    group_kind: str, group_value: str, exclude: Sequence[int] = (), include_blank: bool = True,
    statistic: str = "lz",
) -> pd.DataFrame:
    """2-D histogram of (θ bin, person-fit bin): theta_bin, lz_bin (lower edges), n; booklets
    summed. ``statistic``: 'lz' (l_z, ``agg_theta_lz``) or 'lz_star' (Snijders' l_z*,
    ``agg_theta_lz_star``; ``lz_bin`` then holds the l_z* bin). Empty, with these columns, when
    the store has no table for the statistic (made before ``agg_theta_lz_star`` existed).

    Raises
    ------
    ValueError
        If ``statistic`` is neither 'lz' nor 'lz_star'.
    """
    table = _person_fit_table(statistic)
    if table not in table_names(con):
        return pd.DataFrame({"theta_bin": pd.Series(dtype="float64"),
                             "lz_bin": pd.Series(dtype="float64"),
                             "n": pd.Series(dtype="int64")})
    return _human_histogram(con, table, "theta_bin, lz_bin", year, area, booklet,
                            group_kind, group_value, exclude, include_blank)


def lz_star_missing(con: duckdb.DuckDBPyConnection, year: int) -> bool:
    """True when ``year`` has the humans' l_z histogram but no l_z* one: the year was ingested
    before ``agg_theta_lz_star`` existed (ingesting it again fills it). False when both are
    there, and for a year with no human histogram at all (nothing to miss)."""
    has_lz = one_row(con.execute("SELECT count(*) > 0 FROM agg_theta_lz WHERE year = ?",
                                 [int(year)]))[0]
    if not has_lz:
        return False
    if PERSON_FIT_TABLES["lz_star"] not in table_names(con):
        return True
    return not one_row(con.execute(
        "SELECT count(*) > 0 FROM agg_theta_lz_star WHERE year = ?", [int(year)]))[0]


def _person_fit_table(statistic: str) -> str:
    """The histogram table of a person-fit statistic, from a fixed mapping (never formatted
    from the caller's text)."""
    try:
        return PERSON_FIT_TABLES[statistic]
    except KeyError:
        raise ValueError(f"unknown person-fit statistic {statistic!r}: "
                         f"use one of {', '.join(PERSON_FIT_TABLES)}") from None


def human_theta_histogram(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    group_kind: str, group_value: str, exclude: Sequence[int] = (), include_blank: bool = True,
) -> pd.DataFrame:
    """Marginal θ histogram: theta_bin (lower edge), n."""
    return _human_histogram(con, "agg_theta_ctt", "theta_bin", year, area, booklet,
                            group_kind, group_value, exclude, include_blank)


def human_theta_se(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    group_kind: str, group_value: str, exclude: Sequence[int] = (), include_blank: bool = True,
) -> pd.DataFrame:
    """The humans' mean SE(θ) per θ bin: theta_bin (lower edge), n, mean_se (NaN in files
    built before the SE sums were kept)."""
    return _human_histogram(con, "agg_theta_ctt", "theta_bin", year, area, booklet, group_kind,
                            group_value, exclude, include_blank,
                            measures="sum(n)::BIGINT AS n, sum(se_sum) / sum(n) AS mean_se")


def human_count(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    group_kind: str, group_value: str, exclude: Sequence[int] = (), include_blank: bool = True,
) -> int:
    """How many candidates the human histograms of these filters hold (0: the filters leave
    no human to draw)."""
    counts = _human_histogram(con, "agg_theta_ctt", "area", year, area, booklet, group_kind,
                              group_value, exclude, include_blank)
    return int(counts["n"].sum()) if len(counts) else 0


def blank_tests(con: duckdb.DuckDBPyConnection, year: int) -> pd.DataFrame:
    """All-blank tests per area of a year: area, blank, candidates (every scored one)."""
    return con.execute(
        """SELECT area, sum(CASE WHEN coalesce(blank, false) THEN n ELSE 0 END)::BIGINT AS blank,
                  sum(n)::BIGINT AS candidates
           FROM agg_theta_ctt WHERE year = $year AND group_kind = 'all'
           GROUP BY area ORDER BY area""",
        {"year": int(year)},
    ).df()
