"""Pre-aggregated 2-D histograms of (θ, CTT), (θ, l_z) and (θ, l_z*) for the human density
backgrounds.

One row per (area, booklet, subgroup, bin, blank) with a count, so a page draws millions of
candidates from a few thousand rows. Subgroups: everyone ('all'), each state and each school type.
Each (θ, CTT) cell also keeps the sum of its candidates' SE(θ), so the humans' mean SE at a θ
is read without the candidates' rows (summed as 12-decimal fixed point, exactly, so the result
does not depend on the order in which parallel threads add the rows). ``blank`` separates all-blank
tests (no answer marked: θ at the floor, l_z near 3), which the dashboard can leave out of the human
reference. The l_z and l_z* histograms share their columns (the person-fit bin is ``lz_bin`` in
both) and their bins, so one query and one figure serve either (:data:`PERSON_FIT_TABLES`).

The ingest counts each area's rows in its scoring worker, from the score rows it has in memory
(:func:`histogram_frames`, numpy); :func:`build_histograms` computes the same rows in SQL from
the stored ``scores`` (the reference the tests hold the numpy counts to). The workers sum the
SEs as doubles in the order DuckDB hands the area's records over (fixed for a small year; a
full-size year's parallel scan may vary it, and with it the last bits); they agree with the
SQL's fixed-point sums to about 1e-12 (relative).
"""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

THETA_BIN_WIDTH = 0.1
LZ_BIN_WIDTH = 0.1
#: l_z (and l_z*) values beyond these are counted in the edge bins.
LZ_RANGE = (-10.0, 5.0)
#: The (θ, person fit) histogram of each person-fit statistic: the ``scores`` column it counts
#: → its table. Both tables bin the statistic into ``lz_bin``.
PERSON_FIT_TABLES: dict[str, str] = {"lz": "agg_theta_lz", "lz_star": "agg_theta_lz_star"}

_GROUPED = """
    SELECT s.area, s.booklet_id,
           CASE WHEN grouping(s.state) = 0 THEN 'state'
                WHEN grouping(s.school_type) = 0 THEN 'school_type' ELSE 'all' END AS group_kind,
           CASE WHEN grouping(s.state) = 0 THEN coalesce(s.state, '?')
                WHEN grouping(s.school_type) = 0 THEN coalesce(CAST(s.school_type AS VARCHAR), '?')
                ELSE 'all' END AS group_value,
           {bins}, coalesce(s.blank, false) AS blank, count(*) AS n,
           CAST(sum(CAST(s.theta_se AS DECIMAL(18, 12))) AS DOUBLE) AS se_sum
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
    ctt = _GROUPED.format(bins=f"{theta_bin} AS theta_bin, s.ctt AS ctt", keys="theta_bin, ctt",
                          extra="AND NOT isnan(s.theta)")
    con.execute(
        f"INSERT INTO agg_theta_ctt SELECT $year, area, booklet_id, group_kind, group_value, "
        f"theta_bin, ctt, n, blank, se_sum FROM ({ctt})",
        {"year": year},
    )
    for column, table in PERSON_FIT_TABLES.items():  # constants: no user text in the SQL
        clipped = (f"least(greatest(s.{column}, {LZ_RANGE[0]}), "
                   f"{LZ_RANGE[1] - LZ_BIN_WIDTH / 2})")
        lz_bin = f"round(floor({clipped} / {LZ_BIN_WIDTH}) * {LZ_BIN_WIDTH}, 6)"
        lz = _GROUPED.format(bins=f"{theta_bin} AS theta_bin, {lz_bin} AS lz_bin",
                             keys="theta_bin, lz_bin", extra=f"AND NOT isnan(s.{column})")
        con.execute(
            f"INSERT INTO {table} SELECT $year, area, booklet_id, group_kind, group_value, "
            f"theta_bin, lz_bin, n, blank FROM ({lz})",
            {"year": year},
        )


#: The group_value of rows whose state or school type is empty.
MISSING = "?"
#: Cell spaces up to this size are compacted with a count per cell instead of a sort.
_DENSE_CELLS = 1 << 24


def histogram_frames(scores: pa.Table) -> dict[str, pa.Table]:
    """The ``agg_theta_ctt``, ``agg_theta_lz`` and ``agg_theta_lz_star`` rows of some score
    rows (an Arrow table with the ``scores`` columns, typically one area's): the rows
    :func:`build_histograms` derives from the same rows in SQL (SE sums equal up to their order
    of summation)."""
    columns = {name: scores.column(name).to_numpy() for name in
               ("booklet_id", "theta", "theta_se", "ctt", *PERSON_FIT_TABLES)}
    columns["blank"] = scores.column("blank").to_numpy(zero_copy_only=False)
    labels = {name: scores.column(name) for name in ("year", "area")}
    # Every row has a state (or MISSING): the counts of everyone are the states' summed.
    state = _group_codes("state", scores.column("state"))
    school = _group_codes("school_type", scores.column("school_type"))
    theta = _bins(columns["theta"], THETA_BIN_WIDTH)
    ctt = columns["ctt"]
    frames = {"agg_theta_ctt": _grouped(columns, labels, state, school,
                                        ~np.isnan(columns["theta"]),
                                        {"theta_bin": theta,
                                         "ctt": (ctt - ctt.min(initial=0), ctt)},
                                        se=columns["theta_se"])}
    for column, table in PERSON_FIT_TABLES.items():
        values = columns[column]
        clipped = np.minimum(np.maximum(values, LZ_RANGE[0]), LZ_RANGE[1] - LZ_BIN_WIDTH / 2)
        frames[table] = _grouped(columns, labels, state, school, ~np.isnan(values),
                                 {"theta_bin": theta, "lz_bin": _bins(clipped, LZ_BIN_WIDTH)})
    return frames


def _group_codes(kind: str, column: pa.ChunkedArray) -> tuple[str, np.ndarray, np.ndarray]:
    """(kind, each row's code, the value of each code as text; MISSING for empty)."""
    text = pc.fill_null(column.cast(pa.string()), MISSING)
    encoded = pc.dictionary_encode(text).combine_chunks()
    return (kind, encoded.indices.to_numpy().astype(np.int64),
            np.array(encoded.dictionary.to_pylist(), dtype=object))


def _bins(values: np.ndarray, width: float) -> tuple[np.ndarray, np.ndarray]:
    """Each value's bin as a non-negative integer key, and the bin's lower edge as SQL's
    ``round(floor(v / width) * width, 6)`` gives it (DuckDB rounds x·10⁶ half away from zero;
    the edges lie far from halves, where rint agrees). NaN values get key 0, edge NaN."""
    with np.errstate(invalid="ignore"):
        index = np.floor(values / width)
    finite = ~np.isnan(index)
    low = index[finite].min(initial=0.0)
    key = np.where(finite, index - low + 1, 0).astype(np.int64)
    return key, np.rint(index * width * 1e6) / 1e6


def _grouped(columns: dict[str, np.ndarray], labels: dict[str, pa.ChunkedArray], state: tuple,
             school: tuple, kept: np.ndarray, bins: dict[str, tuple[np.ndarray, np.ndarray]],
             se: np.ndarray | None = None) -> pa.Table:
    """Rows of one table: per (booklet, blank, bins…) cell of the ``kept`` rows, one row per
    state, one per school type and one for everyone, with its count (and SE sum)."""
    booklet = columns["booklet_id"][kept].astype(np.int64)
    cell = _compact((booklet - booklet.min(initial=0)) * 2 + columns["blank"][kept])[0]
    for bin_key, _ in bins.values():
        chosen = bin_key[kept]
        cell, member = _compact(cell * (int(chosen.max(initial=0)) + 1) + chosen)
    member = np.flatnonzero(kept)[member]  # one row of each cell, to read its values from
    n_cells = member.size
    weights = None if se is None else se[kept]
    tables = []
    def rows(kind: str, labels_of: np.ndarray, counts: np.ndarray, sums) -> None:
        """The non-empty (group, cell) entries of ``counts`` (flat, group-major)."""
        used = np.flatnonzero(counts)
        at = member[used % n_cells]
        table = {name: column.take(at) for name, column in labels.items()}
        table |= {"booklet_id": columns["booklet_id"][at],
                  "group_kind": pa.repeat(pa.scalar(kind), used.size),
                  "group_value": pa.array(labels_of[used // n_cells], pa.string())}
        table |= {name: edges[at] for name, (_, edges) in bins.items()}
        table |= {"n": counts[used], "blank": columns["blank"][at].astype(bool)}
        if sums is not None:
            table["se_sum"] = sums[used]
        tables.append(pa.table(table))

    if not n_cells:  # nothing to count (e.g. no θ at all): no rows
        rows("all", np.array([], dtype=object), np.zeros(0, np.int64),
             None if weights is None else np.zeros(0))
        return tables[0]
    everyone: tuple[np.ndarray, np.ndarray | None] | None = None
    for kind, codes, labels_of in (state, school):
        size = labels_of.size * n_cells
        combined = codes[kept] * n_cells + cell
        counts = np.bincount(combined, minlength=size)
        sums = None if weights is None else np.bincount(combined, weights, size)
        rows(kind, labels_of, counts, sums)
        if everyone is None:  # from the states
            everyone = (counts.reshape(-1, n_cells).sum(axis=0),
                        None if sums is None else sums.reshape(-1, n_cells).sum(axis=0))
    assert everyone is not None  # the loop's first pass (the states) set it
    rows("all", np.array(["all"], dtype=object), *everyone)
    return pa.concat_tables(tables)


def _compact(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Number the distinct keys 0, 1, … in ascending order: (each entry's number, the index of
    one entry holding each number)."""
    size = int(key.max(initial=-1)) + 1
    if size <= _DENSE_CELLS:  # a count per possible key beats a sort
        present = np.zeros(size, bool)
        present[key] = True
        used = np.flatnonzero(present)
        lookup = np.zeros(size, np.int64)
        lookup[used] = np.arange(used.size)
        cell = lookup[key]
    else:
        used, cell = np.unique(key, return_inverse=True)
    member = np.zeros(used.size, np.int64)
    member[cell] = np.arange(key.size)
    return cell, member
