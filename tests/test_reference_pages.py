"""Pages over years without humans (item file only) and with booklets whose notas INEP's
published parameters do not reproduce; and the upgrade of a schema-1 database file."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from store.connection import insert_rows, open_reader, writing
from store.layout import copy_store
from store.schema import SCHEMA_VERSION, TABLES, ensure_schema
from testbed.fake_runs import add_test_model_runs
from tests.page_support import PAGES, RUNS, assert_clean, charts, decoded, messages, run_page

ITEMS_ONLY_NOTE = "holds only its item file"


@pytest.fixture(scope="module")
def real_items_with_runs(tmp_path_factory, real_items_db):
    """The real 2019–2022 item files (no candidates) with synthetic test runs on 2022."""
    path = tmp_path_factory.mktemp("items_only_pages") / "items_only.duckdb"
    copy_store(real_items_db, path)
    add_test_model_runs(path, year=2022, shuffles=4)
    return path


@pytest.mark.parametrize("page", [*PAGES, RUNS])
def test_items_only_year_shows_models_and_says_humans_are_missing(monkeypatch,
                                                                  real_items_with_runs, page):
    monkeypatch.setenv("ENEM_DB", str(real_items_with_runs))
    app = run_page(page, {"year": "2022"})
    assert_clean(app)
    assert ITEMS_ONLY_NOTE in messages(app)
    if page in ("pages/Accuracy_vs_ability.py", "pages/Person_fit.py",
                "pages/Test_information.py", "pages/home.py"):
        names = {trace.get("name") for figure in charts(app) for trace in figure["data"]}
        assert "test-strong-it" in names
        heatmaps = [t for f in charts(app) for t in f["data"] if t.get("type") == "heatmap"]
        assert all(np.nansum(decoded(t.get("z", []))) == 0 for t in heatmaps)
    if page == "pages/Person_fit.py":
        # Without humans there is no 5th percentile of l_z and no humans' SE: those checks
        # are not made, so no θ is trusted (a model can still fail the other two).
        verdicts = next(f.value for f in app.dataframe if "theta_trusted" in f.value)
        assert verdicts["theta_trusted"].str.contains(
            "cannot check person fit, SE like humans'").all()
        assert not verdicts["theta_trusted"].eq("yes").any()


def _flag_one_booklet(path) -> tuple[int, int]:
    """Write a booklet audit where one CN booklet reproduces 50% of its notas; returns
    (that booklet, its candidates in the θ histogram)."""
    with writing(path, year=2023) as con:
        counts = con.execute(
            """SELECT booklet_id, area, sum(n)::BIGINT AS n FROM agg_theta_ctt
               WHERE group_kind = 'all' GROUP BY ALL ORDER BY area, booklet_id""").df()
        con.execute("DELETE FROM booklet_audit")
        audit = pd.DataFrame({"year": 2023, "booklet_id": counts["booklet_id"],
                              "area": counts["area"], "present": counts["n"],
                              "scored": counts["n"], "nota_checked": counts["n"],
                              "nota_matched": counts["n"]})
        flagged = counts[counts["area"] == "CN"].iloc[0]
        audit.loc[audit["booklet_id"] == flagged["booklet_id"], "nota_matched"] = flagged["n"] // 2
        insert_rows(con, "booklet_audit", audit)
    return int(flagged["booklet_id"]), int(flagged["n"])


def test_unreproduced_booklet_is_flagged_and_can_leave_the_human_reference(
        monkeypatch, tmp_path, pages_models_db):
    path = tmp_path / "flagged.duckdb"
    copy_store(pages_models_db, path)
    booklet, candidates = _flag_one_booklet(path)
    monkeypatch.setenv("ENEM_DB", str(path))

    def humans_total(app) -> float:
        heatmaps = [t for t in charts(app)[0]["data"] if t.get("type") == "heatmap"]
        return float(sum(np.nansum(decoded(t["customdata"])) for t in heatmaps))

    app = run_page("pages/Accuracy_vs_ability.py", {"area": "CN"})
    assert_clean(app)
    assert f"booklet(s) {booklet} (CN, 50% reproduced)" in messages(app)
    everyone = humans_total(app)
    app.sidebar.toggle(key="sidebar.reproduced").set_value(True).run()
    assert_clean(app)
    assert humans_total(app) == everyone - candidates
    assert app.query_params["reproduced"] == "only"
    assert "left out of the human reference" in messages(app)
    # Another area's page has nothing flagged to warn about.
    other = run_page("pages/Accuracy_vs_ability.py", {"area": "MT"})
    assert "do not reproduce" not in messages(other)

    data = run_page("pages/Data.py")
    audit = next(f.value for f in data.dataframe if "flagged" in f.value)
    assert audit.set_index("booklet_id").loc[booklet, "flagged"]
    assert int(audit["flagged"].sum()) == 1


def test_leaving_every_booklet_of_an_area_out_says_no_human_is_drawn(
        monkeypatch, tmp_path, pages_models_db):
    path = tmp_path / "all_flagged.duckdb"
    copy_store(pages_models_db, path)
    with writing(path, year=2023) as con:
        con.execute("UPDATE booklet_audit SET nota_matched = 0 WHERE area = 'CN'")
    monkeypatch.setenv("ENEM_DB", str(path))
    app = run_page("pages/Accuracy_vs_ability.py", {"area": ["CN", "MT"]})
    assert_clean(app)
    assert "leave no human" not in messages(app)
    app.sidebar.toggle(key="sidebar.reproduced").set_value(True).run()
    assert_clean(app)
    humans = {t["xaxis"]: np.nansum(decoded(t.get("customdata", [])))
              for t in charts(app)[0]["data"] if t.get("type") == "heatmap"}
    assert list(humans) == ["x2"] and humans["x2"] > 0  # CN (x) draws none, MT (x2) some
    why = ('the switch "Humans: only booklets whose notas are reproduced" leaves out every '
           "booklet of CN")
    assert f"The sidebar's filters leave no human to draw in CN: {why}" in messages(app)
    captions = " ".join(c.value for c in app.caption)
    assert f"none drawn in CN ({why})" in captions
    assert "MT (" not in captions  # MT keeps its humans


def test_a_schema_1_file_is_upgraded_in_place(tmp_path):
    path = tmp_path / "old.duckdb"
    added = {"ingests": ["scoring", "items_only", "audit_scoring"], "booklets": ["note"],
             "items": ["version"],
             "model_runs": ["years", "repetition", "prompt_type", "temperature", "source",
                            "scoring", "label"],
             "model_scores": ["sampling_seed", "published_theta", "published_se",
                              "published_lz"]}
    with duckdb.connect(str(path)) as con:  # one file, as stores were before per-year files
        ensure_schema(con)
    with writing(path) as con:  # a current file, taken back to what schema 1 made
        for table, columns in added.items():
            for column in columns:
                con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        con.execute("DROP TABLE booklet_audit")
        con.execute("DROP TABLE item_attributes")
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    old = open_reader(path)
    assert "label" not in [row[0] for row in old.execute("DESCRIBE model_runs").fetchall()]
    old.close()

    with writing(path) as con:
        check_upgraded(con, added)


def check_upgraded(con, added: dict[str, list[str]]) -> None:
    """The schema-1 file opened for writing has every column of today's schema, in order."""
    version = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert int(version) == SCHEMA_VERSION
    for table, columns in added.items():
        have = [row[0] for row in con.execute(f"DESCRIBE {table}").fetchall()]
        assert have[-len(columns):] == columns
        fresh = duckdb.connect()
        fresh.execute(f"CREATE TABLE t ({TABLES[table]})")
        assert have == [row[0] for row in fresh.execute("DESCRIBE t").fetchall()]
    insert_rows(con, "model_runs", pd.DataFrame({"run_id": ["r"], "model_id": ["m"],
                                                 "label": ["m · 0-shot · 1 shuffles"]}))
    assert con.execute("SELECT label, years FROM model_runs").fetchall() == [
        ("m · 0-shot · 1 shuffles", None)]
