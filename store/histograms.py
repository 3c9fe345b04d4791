"""Pre-aggregated 2-D histograms of (θ, CTT) and (θ, l_z) for the human density backgrounds.

One row per (area, booklet, subgroup, bin, blank) with a count, so a page draws millions of
candidates from a few thousand rows. Subgroups: everyone ('all'), each state and each school type.
Each (θ, CTT) cell also keeps the sum of its candidates' SE(θ), so the humans' mean SE at a θ
is read without the candidates' rows. ``blank`` separates all-blank tests (no answer marked: θ
at the floor, l_z near 3), which the dashboard can leave out of the human reference.
"""

from __future__ import annotations

import duckdb

THETA_BIN_WIDTH = 0.1
LZ_BIN_WIDTH = 0.1
#: l_z values beyond these are counted in the edge bins.
LZ_RANGE = (-10.0, 5.0)

_GROUPED = """
    SELECT s.area, s.booklet_id,
           CASE WHEN grouping(s.state) = 0 THEN 'state'
                WHEN grouping(s.school_type) = 0 THEN 'school_type' ELSE 'all' END AS group_kind,
           CASE WHEN grouping(s.state) = 0 THEN coalesce(s.state, '?')
                WHEN grouping(s.school_type) = 0 THEN coalesce(CAST(s.school_type AS VARCHAR), '?')
                ELSE 'all' END AS group_value,
           {bins}, coalesce(s.blank, false) AS blank, count(*) AS n, sum(s.theta_se) AS se_sum
    FROM scores s
    WHERE s.year = $year {extra}
    GROUP BY GROUPING SETS (
        (s.area, s.booklet_id, blank, {keys}),
        (s.area, s.booklet_id, blank, s.state, {keys}),
        (s.area, s.booklet_id, blank, s.school_type, {keys}))
"""


def theta_bin_sql(column: str = "s.theta") -> str:
    """SQL for the lower edge of a θ value's bin."""
    return f"round(floor({column} / {THETA_BIN_WIDTH}) * {THETA_BIN_WIDTH}, 6)"


def build_histograms(con: duckdb.DuckDBPyConnection, year: int) -> None:
    """Insert the year's histogram rows from ``scores`` (the caller removed the old ones)."""
    theta_bin = theta_bin_sql()
    lz_clipped = f"least(greatest(s.lz, {LZ_RANGE[0]}), {LZ_RANGE[1] - LZ_BIN_WIDTH / 2})"
    lz_bin = f"round(floor({lz_clipped} / {LZ_BIN_WIDTH}) * {LZ_BIN_WIDTH}, 6)"
    ctt = _GROUPED.format(bins=f"{theta_bin} AS theta_bin, s.ctt AS ctt", keys="theta_bin, ctt",
                          extra="AND NOT isnan(s.theta)")
    con.execute(
        f"INSERT INTO agg_theta_ctt SELECT $year, area, booklet_id, group_kind, group_value, "
        f"theta_bin, ctt, n, blank, se_sum FROM ({ctt})",
        {"year": year},
    )
    lz = _GROUPED.format(bins=f"{theta_bin} AS theta_bin, {lz_bin} AS lz_bin",
                         keys="theta_bin, lz_bin", extra="AND NOT isnan(s.lz)")
    con.execute(
        f"INSERT INTO agg_theta_lz SELECT $year, area, booklet_id, group_kind, group_value, "
        f"theta_bin, lz_bin, n, blank FROM ({lz})",
        {"year": year},
    )
