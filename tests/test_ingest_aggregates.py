"""The histograms and populations the ingest's scoring workers count from the score rows in
memory equal the SQL that rebuilds them from the stored tables (``store.histograms.
build_histograms``, ``store.populations.build_populations``), on an ingested year and on hand-made
rows with every edge: θ, l_z or l_z* not a number, l_z and l_z* beyond their range, empty state and
school type, a booklet whose notas are not reproduced."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from enem.score_batches import SCORE_SCHEMA, BookletAudit
from store import populations
from store.connection import insert_rows, open_reader, writing
from store.histograms import build_histograms, histogram_frames
from store.layout import copy_store
from store.schema import ensure_schema
from workflows.ingest import ingest_year

AGGREGATES = ("agg_theta_ctt", "agg_theta_lz", "agg_theta_lz_star", "agg_populations")
_LZ_KEYS = ["area", "booklet_id", "group_kind", "group_value", "theta_bin", "lz_bin", "blank"]
KEYS = {"agg_theta_ctt": ["area", "booklet_id", "group_kind", "group_value", "theta_bin", "ctt",
                          "blank"],
        "agg_theta_lz": _LZ_KEYS, "agg_theta_lz_star": _LZ_KEYS,
        "agg_populations": ["area", "booklets", "group_kind", "group_value"]}


#: The SQL sums the SEs in 12-decimal fixed point (each SE rounded to 1e-12 first), the workers
#: sum the doubles themselves: they agree to a few 1e-12 (relative), so SE sums are held to
#: 1e-10 here; a candidate too many or too few would change a sum by far more.
SUM_TOLERANCE = {"se_sum": 1e-10}


def _sorted(frame: pd.DataFrame, table: str) -> pd.DataFrame:
    return frame.sort_values(KEYS[table]).reset_index(drop=True)


def _assert_same(found: pd.DataFrame, expected: pd.DataFrame, table: str) -> None:
    """Equal row for row: keys and counts exactly, floating-point values to 1e-12 (sums of
    the same terms in another order), lists element by element."""
    found, expected = _sorted(found, table), _sorted(expected[list(found.columns)], table)
    assert len(found) == len(expected) > 0
    for column in found.columns:
        a, b = found[column].to_numpy(), expected[column].to_numpy()
        if a.dtype == object and isinstance(a[0], (list, np.ndarray)):
            a, b = np.concatenate([np.asarray(v, float) for v in a]), \
                np.concatenate([np.asarray(v, float) for v in b])
        if a.dtype.kind == "f" and column not in KEYS[table]:
            np.testing.assert_allclose(a, b, rtol=SUM_TOLERANCE.get(column, 1e-12), atol=0,
                                       err_msg=column)
        else:
            assert list(a) == list(b) or np.array_equal(a, b, equal_nan=True), column


def _stored(db, table: str) -> pd.DataFrame:
    con = open_reader(db)
    try:
        return con.execute(f"SELECT * FROM {table} WHERE year = 2023").df()
    finally:
        con.close()


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, demo_files_2023):
    """The small year ingested in batches of 700 records (so score rows and records are
    matched across batches), and a copy whose aggregates the SQL rebuilt from its stored
    scores and examinees."""
    folder = tmp_path_factory.mktemp("aggregates")
    db, rebuilt = folder / "ingested.duckdb", folder / "rebuilt.duckdb"
    ingest_year(db, 2023, demo_files_2023.microdata, demo_files_2023.items, progress=False,
                batch_rows=700)
    copy_store(db, rebuilt)
    with writing(rebuilt, year=2023) as con:
        for table in AGGREGATES:
            con.execute(f"DELETE FROM {table}")
        build_histograms(con, 2023)
        populations.build_populations(con, 2023)
    return db, rebuilt


@pytest.mark.parametrize("table", AGGREGATES)
def test_the_ingest_stores_what_the_sql_rebuilds(ingested, table):
    db, rebuilt = ingested
    _assert_same(_stored(db, table), _stored(rebuilt, table), table)


def _edge_scores() -> pa.Table:
    """Score rows of two areas with NaN θ, l_z and l_z*, l_z and l_z* beyond both ends, all-blank
    tests, empty states and school types, θ on bin edges (ties of the rounding). l_z* is not
    l_z: NaN on more rows, at the edges on others, elsewhere l_z shifted and widened."""
    rng = np.random.default_rng(3)
    n = 4000
    theta = np.round(rng.normal(0, 1.2, n), 1)  # many values exactly on bin edges
    theta[::7] = rng.normal(0, 1, theta[::7].size)
    theta[::97] = np.nan
    lz = rng.normal(0, 3, n)
    lz[::11] = np.nan
    lz[5::13] = rng.choice([-25.0, 12.0, -10.0, 4.95, 5.0], lz[5::13].size)
    lz_star = 1.2 * lz + 0.3
    lz_star[3::17] = np.nan
    lz_star[8::19] = rng.choice([-40.0, 30.0, -10.0, 4.95, 5.0], lz_star[8::19].size)
    states = np.array(["SP", "RJ", None, "", "BA"], dtype=object)
    school = pa.array(rng.choice([1, 2, 3, -1], n), pa.int16())
    school = pa.array([None if i % 9 == 0 else v for i, v in enumerate(school.to_pylist())],
                      pa.int16())
    n_scored = rng.choice([0, 44, 45], n, p=[0.02, 0.18, 0.8]).astype(np.int16)
    ctt = np.minimum(rng.integers(0, 46, n), n_scored).astype(np.int16)
    return pa.Table.from_pydict({
        "year": pa.array(np.full(n, 2023, np.int32)),
        "examinee_id": pa.array([f"{100000 + i}" for i in range(n)]),
        "area": pa.array(np.where(np.arange(n) < n // 2, "CN", "MT")),
        "booklet_id": pa.array(rng.choice([501, 502, 503], n).astype(np.int32)),
        "item_language": pa.nulls(n, pa.int16()),
        "theta": pa.array(theta), "theta_se": pa.array(rng.uniform(0.2, 0.9, n)),
        "lz": pa.array(lz), "lz_star": pa.array(lz_star), "ctt": pa.array(ctt),
        "n_scored": pa.array(n_scored),
        "nota": pa.array(np.round(500 + 100 * np.nan_to_num(theta), 1)),
        "blank": pa.array(rng.random(n) < 0.05),
        "state": pa.array(rng.choice(states, n), pa.string()), "school_type": school,
    }, schema=SCORE_SCHEMA)


def _groupings(scores: pa.Table) -> pa.Table:
    """Examinee grouping columns for the rows of ``scores`` (some empty)."""
    rng = np.random.default_rng(4)
    n = scores.num_rows
    columns = {"state": scores.column("state"), "school_type": scores.column("school_type")}
    for column in populations.GROUPINGS.values():
        if column not in columns:
            values = pa.array(rng.choice(["A", "B", "C", None], n), pa.string())
            if column in ("race", "age_band", "school_admin"):
                values = pa.array(rng.choice([1, 2, 3, None], n), pa.int16())
            columns[column] = values
    return pa.table(columns)


def _reference_db(scores: pa.Table, groupings: pa.Table) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    ensure_schema(con)
    insert_rows(con, "scores", scores)
    examinees = groupings.append_column("examinee_id", scores.column("examinee_id")) \
        .append_column("year", scores.column("year"))
    insert_rows(con, "examinees", examinees)
    return con


def test_histograms_of_edge_rows_equal_the_sql():
    scores = _edge_scores()
    con = _reference_db(scores, _groupings(scores))
    build_histograms(con, 2023)
    for area in ("CN", "MT"):
        frames = histogram_frames(scores.filter(pa.compute.equal(scores.column("area"), area)))
        for table, found in frames.items():
            expected = con.execute(f"SELECT * FROM {table} WHERE area = ?", [area]).df()
            assert found.schema.names == list(expected.columns)
            _assert_same(found.to_pandas(), expected, table)
    assert set(frames) == {"agg_theta_ctt", "agg_theta_lz", "agg_theta_lz_star"}
    in_mt = scores.filter(pa.compute.equal(scores.column("area"), "MT"))
    for table, column in (("agg_theta_lz", "lz"), ("agg_theta_lz_star", "lz_star")):
        edges = frames[table].column("lz_bin").to_numpy()
        assert edges.min() == -10.0 and edges.max() == pytest.approx(4.9)
        assert np.isnan(frames[table].column("theta_bin").to_numpy()).any()
        # Everyone's rows count each MT row whose statistic is a number, once.
        everyone = pa.compute.equal(frames[table].column("group_kind"), "all")
        counted = int(pa.compute.sum(frames[table].filter(everyone).column("n")).as_py())
        assert counted == int((~np.isnan(in_mt.column(column).to_numpy())).sum())
    assert not frames["agg_theta_lz"].equals(frames["agg_theta_lz_star"])


def test_populations_with_a_flagged_booklet_equal_the_sql():
    scores = _edge_scores()
    groupings = _groupings(scores)
    con = _reference_db(scores, groupings)
    audits = [BookletAudit(501, "CN", nota_checked=100, nota_matched=98),   # flagged
              BookletAudit(502, "CN", nota_checked=100, nota_matched=99),   # reproduced
              BookletAudit(503, "CN", nota_checked=0, nota_matched=0)]      # not checked
    insert_rows(con, "booklet_audit", pd.DataFrame(
        [{"year": 2023, "booklet_id": a.booklet_id, "area": a.area,
          "nota_checked": a.nota_checked, "nota_matched": a.nota_matched} for a in audits]))
    assert populations.reproduced_below_share(audits) == [501] == \
        populations.flagged_booklets(con, 2023)
    populations.build_populations(con, 2023)
    for area in ("CN", "MT"):
        chosen = pa.compute.equal(scores.column("area"), area)
        found = populations.population_frame(2023, area, scores.filter(chosen),
                                             groupings.filter(chosen), [501])
        expected = con.execute("SELECT * FROM agg_populations WHERE area = ?", [area]).df()
        assert set(found["booklets"]) == {populations.ALL_BOOKLETS,
                                          populations.REPRODUCED_BOOKLETS}
        _assert_same(found.assign(year=np.int32(2023)), expected, "agg_populations")


def test_an_area_whose_every_theta_is_missing_has_no_rows():
    """Scored records without θ or l_z (no item counted) give no histogram or population
    rows, as the SQL gives none, instead of failing the ingest."""
    scores = _edge_scores()
    nothing = pa.array(np.full(scores.num_rows, np.nan))
    for name in ("theta", "lz", "lz_star"):
        scores = scores.set_column(scores.schema.get_field_index(name), name, nothing)
    con = _reference_db(scores, _groupings(scores))
    build_histograms(con, 2023)
    populations.build_populations(con, 2023)
    for table, rows in histogram_frames(scores).items():
        assert rows.num_rows == 0 == con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    assert populations.population_frame(2023, "CN", scores, _groupings(scores), []) is None
    assert con.execute("SELECT count(*) FROM agg_populations").fetchone()[0] == 0
