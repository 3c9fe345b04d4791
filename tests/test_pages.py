"""Every dashboard page under Streamlit's AppTest: on the demo with synthetic test model runs,
on the demo without runs, on an empty database and with no database; and the shared filters
(sidebar, URL, page switches) change what is shown. Every page is run through the app's frame
(``app.py``: navigation and the sidebar drawn once), as a browser would."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from store.connection import open_reader
from store.layout import copy_store
from tests.page_support import (
    HOME,
    MODEL_PAGES,
    MODEL_SECTIONS,
    PAGES,
    PER_MODEL_PAGES,
    RUNS,
    assert_clean,
    charts,
    decoded,
    messages,
    open_section,
    run_page,
    run_via_home,
    series_names,
)
from workflows.ingest import ingest_items
from workflows.runs.service import list_runs


@pytest.fixture
def demo_db(monkeypatch, pages_demo_db):
    monkeypatch.setenv("ENEM_DB", str(pages_demo_db))
    return pages_demo_db




@pytest.mark.parametrize("page", list(PAGES))
def test_page_renders_with_model_runs(models_db, page):
    title, n_charts, n_tables = PAGES[page]
    app = run_via_home(page)
    assert_clean(app)
    assert app.title[0].value.startswith(title)
    figures = charts(app)
    assert len(figures) >= n_charts
    assert all(figure["data"] for figure in figures), "a chart without traces"
    assert len(app.dataframe) >= n_tables
    assert "No model runs" not in messages(app)
    if page in MODEL_SECTIONS:
        app = open_section(app, MODEL_SECTIONS[page])
        assert_clean(app)
    if page in PER_MODEL_PAGES:
        names = series_names(app)
        assert "test-strong-it" in names


@pytest.mark.parametrize("page", list(PAGES))
def test_page_explains_missing_model_runs(no_runs_db, page):
    app = run_via_home(page)
    assert_clean(app)
    assert app.title
    # Conditions and Item gaps compare models: nothing to draw without runs; the first tab
    # of Options and traps draws the runs' distractor agreement (its trap table shows the
    # humans; its Difficulty tab draws them, tests/test_options_page.py)
    if page not in ("pages/Data.py", "pages/Response_patterns.py", "pages/Paper_tables.py",
                    "pages/Conditions.py", "pages/Item_gaps.py",
                    "pages/Options_and_traps.py"):
        assert charts(app), "human views still draw without model runs"
    if page in MODEL_SECTIONS:
        app = open_section(app, MODEL_SECTIONS[page])
        assert_clean(app)
    if page in MODEL_PAGES or page == HOME:
        assert "No model runs for 2023" in messages(app)
        assert "launch one on the Runs page" in messages(app)


@pytest.mark.parametrize("page", list(PAGES))
def test_page_explains_an_empty_database(empty_db, page):
    app = run_page(page)
    assert_clean(app)
    assert "is empty: nothing has been ingested yet" in messages(app)
    assert not charts(app)


@pytest.mark.parametrize("page", [p for p in PAGES if p != HOME])
def test_page_explains_a_missing_database(monkeypatch, tmp_path, page):
    """A viewer (AppTest has no operator link) is told the operator builds the store, with no
    path of the server."""
    monkeypatch.setenv("ENEM_DB", str(tmp_path / "nothing-here.duckdb"))
    app = run_page(page)
    assert_clean(app)
    assert "There is no store to show yet" in messages(app)
    assert str(tmp_path) not in messages(app)


def test_the_operator_is_told_where_the_missing_database_should_be(monkeypatch, tmp_path,
                                                                    as_operator):
    monkeypatch.setenv("ENEM_DB", str(tmp_path / "nothing-here.duckdb"))
    app = run_page("pages/Data.py")
    assert_clean(app)
    assert f"No database at `{tmp_path / 'nothing-here.duckdb'}`" in messages(app)


def test_area_filter_changes_panels_and_table(models_db):
    app = run_page("pages/Accuracy_vs_ability.py")
    titles = [a["text"] for a in charts(app)[0]["layout"]["annotations"]]
    assert sum(t.startswith(("CN", "CH", "LC", "MT")) for t in titles) == 4
    app.sidebar.multiselect(key="sidebar.area").set_value(["MT"]).run()
    assert_clean(app)
    titles = [a["text"] for a in charts(app)[0]["layout"]["annotations"]]
    assert [t for t in titles if t.startswith(("CN", "CH", "LC", "MT"))] == ["MT — Mathematics"]
    assert set(app.dataframe[0].value["area"]) == {"MT"}
    assert app.query_params["area"] == "MT"


def test_language_and_shots_change_model_points(models_db):
    app = run_page("pages/Accuracy_vs_ability.py")
    portuguese = app.dataframe[0].value.set_index(["model", "area"])["mean_theta"]
    app.sidebar.radio(key="sidebar.lang").set_value("en").run()
    english = app.dataframe[0].value.set_index(["model", "area"])["mean_theta"]
    assert_clean(app)
    assert not portuguese.equals(english)
    assert app.query_params["lang"] == "en"
    app.sidebar.radio(key="sidebar.shots").set_value(4).run()
    four_shot = app.dataframe[0].value.set_index(["model", "area"])["mean_theta"]
    assert not four_shot.equals(english)


def test_model_family_and_tuning_filters(models_db):
    app = run_page("pages/Person_fit.py")
    # The demo ships a real SmolLM2-135M-Instruct run (demo/runs) beside the test runs.
    # Pages compare run series, named model · prompt type · repetitions.
    smollm = "SmolLM2-135M-Instruct · 0-shot · 30 shuffles"
    assert set(app.dataframe[0].value["model"]) == {"test-strong-it", "test-odd-base",
                                                     "test-random-baseline",
                                                     "random-baseline · 0-shot · 30 shuffles",
                                                     smollm}
    app.sidebar.radio(key="sidebar.tuning").set_value("instruct").run()
    assert set(app.dataframe[0].value["model"]) == {"test-strong-it", smollm}
    app.sidebar.radio(key="sidebar.tuning").set_value("all").run()
    app.sidebar.multiselect(key="sidebar.family").set_value(["testfam-beta"]).run()
    assert set(app.dataframe[0].value["model"]) == {"test-odd-base"}
    app.sidebar.multiselect(key="sidebar.family").set_value([]).run()
    app.sidebar.multiselect(key="sidebar.model").set_value(["test-random-baseline"]).run()
    assert_clean(app)
    assert set(app.dataframe[0].value["model"]) == {"test-random-baseline"}
    # The URL names the run by its id (labels can change; ids cannot).
    con = open_reader(models_db)
    run_id = con.execute("SELECT run_id FROM model_runs WHERE coalesce(label, model_id) = "
                         "'test-random-baseline'").fetchone()[0]
    con.close()
    assert app.query_params["run"] == run_id and "model" not in app.query_params


def test_subgroup_and_booklet_change_the_human_background(models_db):
    def humans_total(app: AppTest) -> float:
        heatmaps = [t for t in charts(app)[0]["data"] if t.get("type") == "heatmap"]
        return float(sum(np.nansum(decoded(t["customdata"])) for t in heatmaps))

    app = run_page("pages/Accuracy_vs_ability.py")
    everyone = humans_total(app)
    app.sidebar.selectbox(key="sidebar.group").set_value("school_type:3").run()
    assert_clean(app)
    private = humans_total(app)
    assert 0 < private < everyone
    assert app.query_params["group"] == "school_type:3"
    app.sidebar.selectbox(key="sidebar.group").set_value("all:all").run()
    options = app.sidebar.selectbox(key="sidebar.booklet").options
    assert len(options) > 1
    app.sidebar.selectbox(key="sidebar.booklet").set_value(
        int(app.sidebar.selectbox(key="sidebar.booklet").options[1].split(" ")[0])).run()
    assert_clean(app)
    assert 0 < humans_total(app) < everyone


def test_filters_are_read_from_the_url(models_db):
    app = run_page("pages/Person_fit.py", query={
        "area": ["CH", "LC"], "lang": "en", "shots": "4", "model": "test-odd-base"})
    assert_clean(app)
    assert app.sidebar.multiselect(key="sidebar.area").value == ["CH", "LC"]
    assert app.sidebar.radio(key="sidebar.lang").value == "en"
    assert app.sidebar.radio(key="sidebar.shots").value == 4
    table = app.dataframe[0].value
    assert set(table["model"]) == {"test-odd-base"}
    assert set(table["area"]) == {"CH", "LC"}


def test_bad_url_values_fall_back_to_defaults(models_db):
    app = run_page("pages/Accuracy_vs_ability.py", query={
        "year": "1999", "area": "XX", "shots": "seven", "booklet": "12", "model": "nope"})
    assert_clean(app)
    assert app.sidebar.selectbox(key="sidebar.year").value == 2023
    assert app.sidebar.radio(key="sidebar.shots").value == 0


def test_filters_survive_moving_between_pages(models_db):
    app = run_via_home("pages/Accuracy_vs_ability.py")
    app.sidebar.multiselect(key="sidebar.area").set_value(["LC"]).run()
    app.sidebar.radio(key="sidebar.lang").set_value("en").run()
    app.switch_page("pages/Test_information.py").run()
    assert_clean(app)
    assert app.sidebar.multiselect(key="sidebar.area").value == ["LC"]
    assert app.sidebar.radio(key="sidebar.lang").value == "en"
    assert set(app.dataframe[0].value["area"]) == {"LC"}
    assert app.query_params["lang"] == "en"


def test_response_patterns_open_the_item_explorer(models_db):
    app = run_via_home("pages/Response_patterns.py")
    item, area = app.selectbox(key="patterns.item").value[1], app.selectbox(
        key="patterns.item").value[0]
    app.button(key="patterns.open").click().run()
    assert_clean(app)
    assert app.title[0].value == "Item explorer"
    assert app.selectbox(key="explorer.item").value == item
    assert app.selectbox(key="explorer.area").value == area
    assert app.query_params["item"] == str(item)


def test_item_explorer_shows_the_item_from_the_url(models_db, pages_models_db):
    con = open_reader(pages_models_db)
    item_id, key = con.execute(
        "SELECT item_id, key FROM items WHERE area = 'MT' AND NOT abandoned ORDER BY item_id "
        "LIMIT 1").fetchall()[0]
    con.close()
    app = run_page("pages/Item_explorer.py", query={"item": str(item_id), "area": "MT"})
    assert_clean(app)
    assert app.selectbox(key="explorer.item").value == item_id
    text = " ".join(m.value for m in app.markdown)
    assert "Portuguese" in text and "English" in text and "(key)" in text
    assert any(metric.value == key for metric in app.metric)
    option_chart = charts(app)[1]
    assert {t["name"] for t in option_chart["data"]} >= {"humans", "test-strong-it"}


def test_person_fit_flags_the_incoherent_model(models_db):
    app = run_page("pages/Person_fit.py")
    table = app.dataframe[0].value.set_index(["model", "area"])
    assert table.loc["test-odd-base", "theta_trusted"].str.startswith("no: fails person fit").all()
    assert (table.loc["test-strong-it", "theta_trusted"] == "yes").all()


def test_information_page_gives_a_verdict_per_model(models_db):
    app = run_page("pages/Test_information.py")
    table = app.dataframe[0].value
    assert len(table) == 4 * table["model"].nunique() and table["model"].nunique() >= 3
    assert table["verdict"].str.contains("θ falls").all()


def test_discrimination_page_lists_items_of_a_bar(models_db):
    app = run_page("pages/Discrimination.py")
    items = app.dataframe[1].value
    assert len(items) == 45 and items["model_di"].notna().all()
    app.selectbox(key="discrimination.bin").set_value("0.5").run()
    assert_clean(app)
    shown = app.dataframe[1].value
    assert len(shown) < 45
    assert ((shown["human_di"] >= 0.5 - 1e-9) & (shown["human_di"] < 0.6)).all()


def test_data_page_lists_ingests_counts_and_runs(models_db):
    app = run_page("pages/Data.py")
    assert_clean(app)
    frames = [frame.value for frame in app.dataframe]
    ingests = next(f for f in frames if "ingest_id" in f)
    counts = next(f for f in frames if "table" in f)
    runs = next(f for f in frames if "run_id" in f)
    assert list(ingests["year"]) == [2023] and bool(ingests["is_synthetic"].iloc[0])
    assert list(ingests["scoring"]) == ["EAP, 40 points on [-4, 4], D = 1, ENEM nota"]
    assert int(counts.set_index("table").loc["examinees", "rows"]) == 5000
    assert set(runs["model_id"]) >= {"test-strong-it", "test-odd-base", "test-random-baseline"}
    assert "Nothing was rejected" in messages(app)


def test_data_page_shows_a_viewer_the_file_names_of_a_store_with_an_items_only_year(
        monkeypatch, tmp_path, pages_models_db, demo_files_2023):
    """A year stored from its item file alone has no microdata file (NULL beside the
    candidates' year's name): a viewer still sees every ingest, each file by its name only."""
    db = tmp_path / "enem.duckdb"
    copy_store(pages_models_db, db)
    ingest_items(db, 2022, demo_files_2023.items)
    monkeypatch.setenv("ENEM_DB", str(db))
    app = run_page("pages/Data.py")
    assert_clean(app)
    ingests = next(f.value for f in app.dataframe if "ingest_id" in f.value).set_index("year")
    assert ingests.loc[2023, "microdata_file"] == demo_files_2023.microdata.name
    assert ingests.loc[2022, "items_file"] == demo_files_2023.items.name
    assert pd.isna(ingests.loc[2022, "microdata_file"])


def test_home_page_says_it_is_the_synthetic_demo(models_db):
    app = run_page(HOME)
    assert "synthetic demo" in messages(app)
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Candidates"] == "5,000" and int(metrics["Models"]) >= 3


def test_the_demo_own_runs_are_shown(demo_db):
    app = run_page("pages/Accuracy_vs_ability.py")
    assert_clean(app)
    series = "random-baseline · 0-shot · 30 shuffles"
    assert series in set(app.dataframe[0].value["model"])
    names = {trace.get("name") for trace in charts(app)[0]["data"]}
    assert series in names


def _labelled(widgets, label: str):
    """The one widget of a list with this label (the Runs form's widgets have no keys)."""
    [widget] = [w for w in widgets if w.label == label]
    return widget


def test_runs_page_launches_follows_and_lists_a_run(monkeypatch, tmp_path, pages_demo_db,
                                                   as_operator):
    db = tmp_path / "runs_page.duckdb"
    copy_store(pages_demo_db, db)
    monkeypatch.setenv("ENEM_DB", str(db))
    app = run_page(RUNS)
    assert_clean(app)
    assert app.title[0].value == "Model runs"
    command, prompt = app.code[0].value, app.code[1].value
    enem_llm = str(Path(sys.executable).parent / "enem-llm")
    assert command.startswith(f"{enem_llm} --db {db} run --backend ")
    assert prompt.rstrip().endswith("(")
    assert "No runs launched from this machine yet" in messages(app)

    _labelled(app.main.selectbox, "Backend").set_value("random")
    _labelled(app.main.multiselect, "Areas").set_value(["MT"])
    _labelled(app.main.number_input, "Option shuffles per item").set_value(2)
    _labelled(app.button, "Launch").click().run()
    assert_clean(app)
    assert "Run **random-baseline-random-2023-" in messages(app)
    assert app.code[0].value.startswith(
        f"{enem_llm} --db {db} run --backend random --year 2023 --areas MT --languages pt "
        "--shots 0 --shuffles 2 --seed 0")

    runs_dir = db.parent / "runs"
    deadline = time.monotonic() + 120
    while not [run for run in list_runs(runs_dir) if run.state == "finished" and not run.alive]:
        assert time.monotonic() < deadline, [run.summary() for run in list_runs(runs_dir)]
        time.sleep(0.2)
    [run] = list_runs(runs_dir)
    app.run()
    assert_clean(app)
    assert any(f"**{run.run_id}** — finished" in m.value for m in app.markdown)
    stored = app.dataframe[0].value
    assert run.run_id in set(stored["run_id"])
