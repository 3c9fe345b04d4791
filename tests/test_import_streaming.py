"""import-results streams its file: the rows it stores do not depend on how many rows it reads
at a time, its run ids are the whole file's content digest, and a bad value anywhere in the file
is one clear error (column, value and row) that leaves the store as it was.

Files are generated in the paper's published layout (``testbed.paper_results``, the columns of the
real files in ``../shared/data/real/paper-results``) on the small demo year's booklets. Memory
itself is measured by ``python -m bench.import_memory``, not here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cli.main import main
from store.connection import connected, open_reader
from store.layout import copy_store
from testbed.paper_results import paper_forms, paper_results_table
from workflows import paper_results
from workflows.results_io import import_results_summary

TABLES = ("model_runs", "model_scores", "model_responses", "models")
#: Score columns computed in floating point: scoring a pattern among other rows than before
#: may move its last bits (BLAS), so they are compared to 1e-12; every other value exactly.
FLOAT_SCORES = ("theta", "theta_se", "lz", "lz_star")


@pytest.fixture(scope="module")
def store(tmp_path_factory, ingested_2023):
    db = tmp_path_factory.mktemp("streaming") / "enem.duckdb"
    copy_store(ingested_2023[0], db)
    with connected(db, read_only=True) as con:
        forms = paper_forms(con)
    return db, forms


def _file(forms, tmp_path, name="results.parquet", rows=150, **kwargs) -> object:
    table = paper_results_table(forms, rows, **kwargs)
    path = tmp_path / name
    pq.write_table(table, path)
    return path


def _tables(db) -> dict[str, pd.DataFrame]:
    con = open_reader(db)
    try:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").df() for t in TABLES}
    finally:
        con.close()


def _import(store, tmp_path, path, name, **kwargs):
    db = tmp_path / f"{name}.duckdb"
    copy_store(store[0], db)
    with connected(db) as con:
        summary = import_results_summary(con, path, **kwargs)
    return summary, _tables(db)


def _assert_same_rows(one: dict, other: dict) -> None:
    for table in TABLES:
        left, right = one[table], other[table]
        if table == "model_scores":
            for column in FLOAT_SCORES:
                assert np.allclose(left[column], right[column], rtol=0, atol=1e-12), column
            left, right = left.drop(columns=list(FLOAT_SCORES)), right.drop(
                columns=list(FLOAT_SCORES))
        pd.testing.assert_frame_equal(left, right, check_exact=True, obj=table)


@pytest.mark.parametrize("shuffle", [False, True])
def test_rows_read_seven_at_a_time_store_what_one_batch_stores(store, tmp_path, shuffle):
    """One batch holding the whole file is the import as it was before streaming."""
    temperatures = [0.6 if i % 4 else None for i in range(150)]
    table = paper_results_table(store[1], 150, seed=5, shuffle=shuffle)
    table = table.set_column(table.schema.get_field_index("TEMPERATURE"), "TEMPERATURE",
                             pa.array(temperatures, pa.float64()))
    path = tmp_path / "results.parquet"
    pq.write_table(table, path)
    whole, whole_rows = _import(store, tmp_path, path, "whole", batch_rows=10**9)
    streamed, streamed_rows = _import(store, tmp_path, path, "streamed", batch_rows=7)
    assert streamed.lines() == whole.lines()
    assert streamed.rows == 150 and len(streamed.runs) == 4  # 2 models × 2 temperatures
    assert len(streamed_rows["model_responses"]) == 150 * 45
    _assert_same_rows(streamed_rows, whole_rows)
    # A seed (or shuffle) number is the same repetition in every booklet and language.
    scores = streamed_rows["model_scores"]
    assert (scores.groupby(["run_id", "shuffle"])["sampling_seed"].nunique() == 1).all()


def test_the_digest_of_batches_is_the_digest_of_the_whole_file(store, tmp_path):
    """Run ids come from the content digest; read in batches it must stay the whole table's
    (an integer column with a null in one batch only, pandas' index and Int64 columns)."""
    frame = paper_results_table(store[1], 60, seed=2).to_pandas().iloc[::-2]
    frame["EXTRA"] = pd.array([None if i % 9 == 0 else i for i in range(len(frame))],
                              dtype="Int64")
    pandas_file = tmp_path / "pandas.parquet"
    frame.to_parquet(pandas_file)  # with its (non-range) index as a column
    table = pa.Table.from_pandas(frame, preserve_index=False)
    late_null = pa.array([None if i == len(frame) - 1 else i for i in range(len(frame))],
                         pa.int64())
    plain_file = tmp_path / "plain.parquet"
    pq.write_table(table.append_column("LATE_NULL", late_null), plain_file)
    for path in (pandas_file, plain_file):
        whole = paper_results.content_digest(pq.read_table(path).to_pandas())
        for batch_rows in (1, 7, 1000):
            assert paper_results.PaperTable(pq.ParquetFile(path), batch_rows).digest() == whole


def _hostile(store, tmp_path, change) -> pd.DataFrame:
    frame = paper_results_table(store[1], 40, seed=3).to_pandas()
    change(frame)
    return frame


HOSTILE = {
    "temperature": (lambda f: f.__setitem__("TEMPERATURE", ["0.6"] * 39 + ["hot"]),
                    ["TEMPERATURE", "'hot'", "row 40"]),
    "negative temperature": (lambda f: f.__setitem__("TEMPERATURE", [0.6] * 12 + [-1.0] * 28),
                             ["TEMPERATURE", "-1.0", "row 13"]),
    "nan score": (lambda f: f.__setitem__("IRT_SCORE", [0.1] * 20 + [np.nan] * 20),
                  ["IRT_SCORE", "row 21"]),
    "inf score": (lambda f: f.__setitem__("LZ_SCORE", [0.1] * 5 + [np.inf] * 35),
                  ["LZ_SCORE", "inf", "row 6"]),
    "string nan score": (lambda f: f.__setitem__("IRT_SCORE_SE", ["0.3"] * 2 + ["nan"] * 38),
                         ["IRT_SCORE_SE", "'nan'", "row 3"]),
    "null model": (lambda f: f.__setitem__("MODEL_NAME", ["m"] * 30 + [None] * 10),
                   ["MODEL_NAME", "null", "row 31"]),
    "blank model": (lambda f: f.__setitem__("MODEL_NAME", ["m"] * 30 + ["  "] * 10),
                    ["MODEL_NAME", "row 31"]),
    "year": (lambda f: f.__setitem__("EXAM_YEAR", ["2023"] * 3 + ["abc"] * 37),
             ["EXAM_YEAR", "'abc'", "row 4"]),
    "fractional booklet": (lambda f: f.__setitem__("CO_PROVA", f["CO_PROVA"].where(
        f.index != 8, "2341.6")), ["CO_PROVA", "'2341.6'", "row 9"]),
    "huge booklet": (lambda f: f.__setitem__("CO_PROVA", f["CO_PROVA"].where(
        f.index != 0, "99999999999")), ["CO_PROVA", "row 1"]),
    "fractional seed": (lambda f: f.__setitem__("SEED", [1.5] * 40), ["SEED", "1.5", "row 1"]),
    "language": (lambda f: f.__setitem__("LANGUAGE", ["en"] * 39 + ["xx"]),
                 ["LANGUAGE", "'xx'", "row 40"]),
    "pattern": (lambda f: f.__setitem__("RESPONSE_PATTERN", f["RESPONSE_PATTERN"].where(
        f.index != 39, "01")), ["RESPONSE_PATTERN", "'01'", "row 40"]),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_bad_value_is_one_error_line_naming_column_value_and_row(store, tmp_path, capsys,
                                                                   case):
    change, fragments = HOSTILE[case]
    path = tmp_path / "bad.parquet"
    _hostile(store, tmp_path, change).to_parquet(path, index=False)
    db = tmp_path / "enem.duckdb"
    copy_store(store[0], db)
    before = _tables(db)
    code = main(["import-results", str(path), "--db", str(db)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert len(err) == 1 and err[0].startswith("error: "), err
    for fragment in fragments:
        assert fragment in err[0], (fragment, err[0])
    after = _tables(db)
    for table in TABLES:
        pd.testing.assert_frame_equal(after[table], before[table])


def test_an_empty_file_is_one_clear_error(store, tmp_path, capsys):
    path = tmp_path / "empty.parquet"
    paper_results_table(store[1], 16).slice(0, 0).to_pandas().to_parquet(path)
    code = main(["import-results", str(path), "--db", str(store[0])])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0] == f"error: {path}: the file has no rows"


def test_a_bad_row_after_many_batches_leaves_nothing_stored(store, tmp_path):
    table = paper_results_table(store[1], 100, seed=4)
    patterns = table["RESPONSE_PATTERN"].to_pylist()
    patterns[-1] = patterns[-1][:-1]
    path = tmp_path / "late.parquet"
    pq.write_table(table.set_column(table.schema.get_field_index("RESPONSE_PATTERN"),
                                    "RESPONSE_PATTERN", pa.array(patterns)), path)
    db = tmp_path / "enem.duckdb"
    copy_store(store[0], db)
    before = _tables(db)
    with connected(db) as con:
        with pytest.raises(ValueError, match="row 100 is not 45 characters"):
            import_results_summary(con, path, batch_rows=7)
        # The refused import left nothing in the session either.
        assert con.execute("SELECT count(*) FROM model_responses").fetchone()[0] == len(
            before["model_responses"])
    for table_name in TABLES:
        pd.testing.assert_frame_equal(_tables(db)[table_name], before[table_name])
