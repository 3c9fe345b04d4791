"""``bench.store_writes`` on a tiny store, in both layouts: the N-year store really holds N
copies of the year, each measured operation does what it says, a publish leaves the year files
of a per-year store alone, and the command prints a table per layout (no timing is asserted)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest

from bench import store_writes as bench
from store.catalogue_queries import loaded_years
from store.connection import open_reader, writing
from store.layout import years_folder
from store.migration import store_bytes, write_single_file

N_YEARS = 5


def year_file_inodes(db: Path) -> dict[str, int]:
    """{file name: inode} of the files in the store's year folder ({} when it has none)."""
    folder = years_folder(db)
    if not folder.is_dir():
        return {}
    return {path.name: os.stat(path).st_ino for path in folder.iterdir()}


def stored_parts(db: Path) -> dict[int, str]:
    con = open_reader(db)
    try:
        return {int(year): str(name) for year, name in con.execute(
            "SELECT year, file FROM core.main.store_parts ORDER BY year").fetchall()}
    finally:
        con.close()


@pytest.fixture
def source_db(demo_db) -> Path:
    """The demo store with two rejected lines and three items' attributes in 2023 (the demo
    has none), so that their copies are tested too."""
    with writing(demo_db, year=2023) as con:
        con.execute("""INSERT INTO rejects (ingest_id, year, kind, line, reason)
                       SELECT max(ingest_id), 2023, 'line', unnest([7, 9]), 'malformed'
                       FROM ingests WHERE year = 2023""")
        con.execute("""INSERT INTO item_attributes
                       SELECT DISTINCT year, item_id, false, true, false, 'derived'
                       FROM question_texts WHERE year = 2023 ORDER BY item_id LIMIT 3""")
    return demo_db


@pytest.fixture(params=bench.LAYOUTS)
def stores(request, tmp_path, source_db) -> tuple[str, dict[str, Path]]:
    return request.param, bench.build_stores(source_db, tmp_path / "stores", N_YEARS,
                                             request.param)


def test_the_n_year_store_holds_n_equal_copies_of_the_year(stores, source_db, tmp_path):
    store_layout, made = stores
    one, many = made["one-year"], made[f"{N_YEARS}-year"]
    assert set(made) == {"one-year", f"{N_YEARS}-year"}
    assert one == tmp_path / "stores" / store_layout / "one-year" / "store" / "enem.duckdb"
    assert many == (tmp_path / "stores" / store_layout / f"{N_YEARS}-year" / "store"
                    / "enem.duckdb")
    assert bench.layout_of(one) == bench.layout_of(many) == store_layout
    years = bench.candidate_years(many)
    assert len(years) == N_YEARS and years[-1] == 2023
    assert not set(years) & set(bench.RESULTS_YEARS)
    source = bench.rows_per_year(source_db)
    for name in ("examinees", "scores", "items", "rejects", "question_texts", "item_attributes"):
        assert source[name].get(2023, 0) > 0, name  # the copy is tested on rows that exist
    copied = bench.rows_per_year(many)
    assert set(copied) == set(bench.COPIED_TABLES)
    for table, counts in copied.items():
        if not source[table]:
            assert counts == {}, table
            continue
        assert counts == {year: source[table][2023] for year in years}, table
    with open_reader(many) as con:
        assert loaded_years(con) == years  # the dashboard lists every copied year
        for year in years[:-1]:  # the same rows, not just as many
            assert con.execute(
                "SELECT count(*) FROM (SELECT * EXCLUDE (year) FROM examinees WHERE year = ? "
                "EXCEPT ALL SELECT * EXCLUDE (year) FROM examinees WHERE year = 2023)",
                [year]).fetchone() == (0,)
    assert bench.candidate_years(one) == [2023]
    if store_layout == "per-year":  # a file per year, each named by the main file
        parts = stored_parts(many)
        assert list(parts) == years
        assert set(year_file_inodes(many)) == set(parts.values())
    else:
        assert not years_folder(many).exists() and not years_folder(one).exists()
    assert store_bytes(many) > store_bytes(one)


def test_building_never_writes_the_source(tmp_path, demo_db):
    parts_before, inodes_before = stored_parts(demo_db), year_file_inodes(demo_db)
    main_before = os.stat(demo_db)
    for store_layout in bench.LAYOUTS:
        bench.build_stores(demo_db, tmp_path / "stores", 3, store_layout)
    after = os.stat(demo_db)
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (
        main_before.st_ino, main_before.st_mtime_ns, main_before.st_size)
    assert stored_parts(demo_db) == parts_before
    assert year_file_inodes(demo_db) == inodes_before


def test_a_single_file_source_gives_a_per_year_store_of_the_same_rows(tmp_path, demo_db):
    flat = write_single_file(demo_db, tmp_path / "flat.duckdb")
    assert bench.layout_of(flat) == "single"
    made = bench.build_stores(flat, tmp_path / "stores", 2, "per-year")
    assert bench.layout_of(made["one-year"]) == "per-year"
    assert bench.rows_per_year(made["one-year"]) == bench.rows_per_year(demo_db)
    assert list(stored_parts(made["2-year"])) == bench.candidate_years(made["2-year"])


def test_each_measured_operation_does_what_it_says(stores, real_data):
    store_layout, made = stores
    db = made[f"{N_YEARS}-year"]
    items, publish, imports, removal = (bench.Measured() for _ in range(4))
    for year in bench.RESULTS_YEARS:
        bench.measure(db, lambda year=year: bench.store_items(db, year), items)
    with open_reader(db) as con:
        assert {row[0] for row in con.execute(
            "SELECT DISTINCT year FROM items").fetchall()} >= set(bench.RESULTS_YEARS)
    for year, written in zip(bench.RESULTS_YEARS, items.written, strict=True):
        if store_layout == "per-year":  # the main file and the year's new file
            assert set(written) == {"enem.duckdb",
                                    f"enem.duckdb.years/{stored_parts(db)[year]}"}
        else:
            assert set(written) == {"enem.duckdb"}

    inodes = year_file_inodes(db)
    run_id = bench.measure(db, lambda: bench.publish_run(db, 2023, 0), publish)
    assert run_id in bench.stored_run_ids(db)
    with open_reader(db) as con:
        assert con.execute("SELECT count(DISTINCT item_id), count(*) FROM model_responses "
                           "WHERE run_id = ?", [run_id]).fetchone() == (45, 45 * 30)
    assert set(publish.written[0]) == {"enem.duckdb"}
    if store_layout == "per-year":  # a publish leaves every year file as it was
        assert len(inodes) == N_YEARS + len(bench.RESULTS_YEARS)
        assert year_file_inodes(db) == inodes

    imported = bench.measure(db, lambda: bench.import_results(db), imports)
    assert imported and set(imported) <= bench.stored_run_ids(db)
    bench.unpublish(db, str(run_id))
    said = bench.measure(db, lambda: bench.remove_run(db, str(run_id)), removal)
    assert str(said).startswith(f"removed run {run_id}")
    assert run_id not in bench.stored_run_ids(db)
    assert set(imported) <= bench.stored_run_ids(db)
    if store_layout == "per-year":
        assert year_file_inodes(db) == inodes

    assert items.summary()["samples"] == 4 and publish.summary()["samples"] == 1
    for samples in (items, publish, imports, removal):
        summary = samples.summary()
        assert summary["peak_extra_bytes"] >= 0 and summary["largest_written_bytes"] > 0
    if store_layout == "single":
        # The single file's writer copies the whole store: extra disk is seen during a write.
        assert max(max(samples.folder_extra) for samples in
                   (items, publish, imports, removal)) > 0


def test_written_files_are_the_new_the_renamed_and_the_modified():
    before = {"main": (1, 10, 100), "kept": (2, 20, 200), "grown": (3, 30, 300),
              "gone": (4, 40, 400)}
    after = {"main": (9, 11, 80), "kept": (2, 20, 200), "grown": (3, 31, 350),
             "new": (5, 50, 500)}
    assert bench.written_files(before, after) == {"main": 100, "grown": 350, "new": 500}


def summary(seconds: float, extra: int, written: int) -> dict:
    return {"seconds": seconds, "peak_extra_bytes": extra, "largest_written_bytes": written,
            "samples": 1}


def test_the_goal_names_what_misses_it():
    one = {operation: summary(1.0, 100, 100) for operation in
           ("ingest items", "publish run", "import results", "remove run")}
    fine = {**one, "ingest items": summary(9.0, 105, 100)}  # ingest items' time is not bound
    assert bench.goal({"one-year": one, "10-year": fine})["holds"]
    slow = {**one, "publish run": summary(1.6, 100, 100),
            "remove run": summary(1.0, 120, 100)}
    verdict = bench.goal({"one-year": one, "10-year": slow})
    assert not verdict["holds"]
    assert verdict["missed"] == [
        "publish run 1.60× in time",
        "10-year remove run 1.20× the largest file written in extra disk"]
    lines = bench.table_lines("per-year", {"one-year": one, "10-year": slow},
                              {"one-year": 10**6, "10-year": 10**7})
    assert lines[0] == "per-year layout"
    assert lines[-1].startswith("per-year layout: the goal does not hold: publish run 1.60×")


def test_the_results_years_are_the_exams_of_the_results_file(real_data, tmp_path):
    assert bench.results_years() == bench.RESULTS_YEARS
    assert bench.results_years(_results_of_2022(tmp_path)) == (2022,)


def _results_of_2022(folder: Path) -> Path:
    """The paper's results of one model on the 2022 exams (240 of its 4,800 rows): what the
    command imports in the test (the whole file is ``make bench``'s)."""
    path = folder / "results_2022.parquet"
    con = duckdb.connect()
    try:
        con.execute(f"""COPY (SELECT * FROM read_parquet('{bench.RESULTS_FILE}')
                              WHERE EXAM_YEAR = 2022 AND MODEL_NAME = 'gpt-3.5-turbo-0613')
                        TO '{path}' (FORMAT parquet)""")
    finally:
        con.close()
    return path


def test_the_command_prints_a_table_per_layout_and_writes_the_json(tmp_path, demo_db,
                                                                   real_data, capsys):
    """The whole command on the demo store, importing one model's 2022 results (so one
    items-only year to store first): ``make bench`` runs it at full size."""
    output = tmp_path / "store_writes.json"
    scratch = tmp_path / "stores"
    results = _results_of_2022(tmp_path)
    assert bench.main(["--source", str(demo_db), "--years", "2", "--repeat", "1",
                       "--scratch", str(scratch), "--output", str(output),
                       "--results", str(results)]) == 0
    printed = capsys.readouterr().out
    record = json.loads(output.read_text())
    assert list(record["layouts"]) == ["per-year", "single"]
    for store_layout, layout_record in record["layouts"].items():
        table = layout_record["table"]
        assert "\n".join(table) in printed  # printed whole, as recorded
        assert table[0] == f"{store_layout} layout"
        assert table[-1].startswith(f"{store_layout} layout: the goal ")
        for operation in ("ingest items", "publish run", "import results", "remove run"):
            assert any(line.startswith(operation) for line in table), operation
        assert set(layout_record["results"]) == {"one-year", "2-year"}
        assert layout_record["results"]["2-year"]["publish run"]["samples"] == 1
        # one sample per exam year of the results file (the paper's whole file: four)
        assert layout_record["results"]["one-year"]["ingest items"]["samples"] == 1
        assert layout_record["results"]["2-year"]["import results"]["samples"] == 1
        sizes = layout_record["store_bytes"]
        assert 0 < sizes["one-year"] < sizes["2-year"]
        assert layout_record["goal"]["holds"] == table[-1].endswith("holds")
        assert (Path(layout_record["stores"]["2-year"])
                == scratch / store_layout / "2-year" / "store" / "enem.duckdb")
    assert not scratch.exists()  # the stores are removed without --keep
