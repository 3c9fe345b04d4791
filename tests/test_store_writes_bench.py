"""``bench.store_writes`` on a tiny store: the ten-year store really holds ten copies of the
year, and each measured operation does what it says (no timing is asserted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import store_writes as bench
from store.connection import open_reader
from store.dashboard_queries import loaded_years
from store.schema import YEAR_TABLES


@pytest.fixture
def stores(tmp_path, demo_db) -> dict[str, Path]:
    return bench.build_stores(demo_db, tmp_path / "stores", 10)


def test_the_ten_year_store_holds_ten_equal_copies_of_the_year(stores, demo_db):
    ten = stores["10-year"]
    years = bench.candidate_years(ten)
    assert len(years) == 10 and 2023 in years
    assert not set(years) & set(bench.RESULTS_YEARS)
    source = bench.rows_per_year(demo_db)
    for table, counts in bench.rows_per_year(ten).items():
        assert table in YEAR_TABLES
        if not source[table]:
            assert counts == {}, table
            continue
        assert counts == {year: source[table][2023] for year in years}, table
    assert source["examinees"][2023] > 0 and source["scores"][2023] > 0
    con = open_reader(ten)
    try:
        assert loaded_years(con) == years  # the dashboard lists every copied year
    finally:
        con.close()
    assert bench.candidate_years(stores["one-year"]) == [2023]


def test_each_measured_operation_does_what_it_says(stores, real_data):
    db = stores["10-year"]
    samples = bench.Measured()
    for year in bench.RESULTS_YEARS:
        bench.measure(db, lambda year=year: bench.store_items(db, year), samples)
    run_id = bench.measure(db, lambda: bench.publish_run(db, 2023, 0), samples)
    assert run_id in bench.stored_run_ids(db)
    with open_reader(db) as con:
        assert con.execute("SELECT count(DISTINCT item_id), count(*) FROM model_responses "
                           "WHERE run_id = ?", [run_id]).fetchone() == (45, 45 * 30)
    imported = bench.measure(db, lambda: bench.import_results(db), samples)
    assert imported and set(imported) <= bench.stored_run_ids(db)
    bench.unpublish(db, str(run_id))
    said = bench.measure(db, lambda: bench.remove_run(db, str(run_id)), samples)
    assert str(said).startswith(f"removed run {run_id}")
    assert run_id not in bench.stored_run_ids(db)
    assert set(imported) <= bench.stored_run_ids(db)
    summary = samples.summary()
    assert summary["samples"] == 7 and summary["peak_extra_bytes"] >= 0
    # Today's writer copies the whole store: some extra disk is seen during a write.
    assert max(samples.folder_extra) > 0


def test_the_command_prints_the_table_and_writes_the_json(tmp_path, demo_db, real_data,
                                                          capsys):
    output = tmp_path / "store_writes.json"
    scratch = tmp_path / "stores"
    assert bench.main(["--source", str(demo_db), "--years", "2", "--repeat", "1",
                       "--scratch", str(scratch), "--output", str(output)]) == 0
    printed = capsys.readouterr().out
    for operation in ("ingest items", "publish run", "import results", "remove run"):
        assert operation in printed
    record = json.loads(output.read_text())
    assert set(record["results"]) == {"one-year", "2-year"}
    assert record["results"]["2-year"]["publish run"]["samples"] == 1
    assert not scratch.exists()  # the stores are removed without --keep
