"""Runs are what the sidebar selects: one series each, run ids in the URL, pooling on request.

The scenario of the report: a 10-repetition random run added beside the demo's 30-repetition
random run used to be pooled silently into one "random-baseline" row.
"""

from __future__ import annotations

import pandas as pd
import pytest

from dashboard.runs.picker import pooling_sentence, run_choice_labels
from inference.plan import RunSpec
from store.catalogue_queries import loaded_years, model_catalogue
from store.connection import open_reader
from store.layout import copy_store
from store.model_queries import model_points
from tests.page_support import assert_clean, run_page
from workflows.runs.execution import execute_run

ACCURACY = "pages/Accuracy_vs_ability.py"


@pytest.fixture(scope="module")
def two_random_runs_db(tmp_path_factory, pages_models_db):
    """The page fixture's runs plus a second random-baseline run (10 repetitions, seed 7)."""
    folder = tmp_path_factory.mktemp("two_random_runs")
    db = folder / "runs.duckdb"
    copy_store(pages_models_db, db)
    con = open_reader(db)
    year = loaded_years(con)[-1]
    con.close()
    execute_run(RunSpec(model="random-baseline", backend="random", year=year, n_shuffles=10,
                        seed=7, family="baseline"), db, folder / "runs")
    return db


def _random_runs(db) -> pd.DataFrame:
    con = open_reader(db)
    catalogue = model_catalogue(con)
    con.close()
    return catalogue[catalogue["model_id"] == "random-baseline"]


def _patterns(db, run_id: str, area: str) -> int:
    con = open_reader(db)
    count = con.execute("SELECT count(*) FROM model_scores WHERE run_id = ? AND area = ? AND "
                        "prompt_language = 'pt' AND shots = 0", [run_id, area]).fetchone()[0]
    con.close()
    return int(count)


def test_picker_names_each_run_by_its_stored_label_grouped_by_model():
    catalogue = pd.DataFrame({
        "model": ["solo · 0-shot · 30 shuffles", "rb · 4-shot · 10 shuffles",
                  "rb · 0-shot · 30 shuffles", "rb · 0-shot · 10 shuffles"],
        "model_id": ["solo", "rb", "rb", "rb"], "family": ["b", "a", "a", "a"],
    })
    labels = run_choice_labels(catalogue)
    # The picker reads as the legends do (issue 24: it used to say "rb · over seeds · file").
    assert labels == {label: label for label in catalogue["model"]}
    assert list(labels) == ["rb · 0-shot · 10 shuffles", "rb · 0-shot · 30 shuffles",
                            "rb · 4-shot · 10 shuffles", "solo · 0-shot · 30 shuffles"]


def test_pooling_is_named_and_sums_the_runs(two_random_runs_db):
    runs = _random_runs(two_random_runs_db)
    assert len(runs) == 2 and runs["model"].is_unique
    sentence = pooling_sentence(runs, runs["model"].tolist())
    assert sentence.startswith(" Runs pooled per model: random-baseline = 2 runs (")
    con = open_reader(two_random_runs_db)
    year = loaded_years(con)[-1]
    apart = model_points(con, year, "CN", None, "pt", 0, runs["model"].tolist())
    pooled = model_points(con, year, "CN", None, "pt", 0, runs["model"].tolist(), True)
    con.close()
    sizes = {label: _patterns(two_random_runs_db, ids[0], "CN")
             for label, ids in zip(runs["model"], runs["run_ids"], strict=True)}
    assert apart.groupby("model").size().to_dict() == sizes
    assert pooled.groupby("model").size().to_dict() == {"random-baseline": sum(sizes.values())}
    assert sorted(sizes.values()) == [10, 30]


def test_accuracy_table_keeps_runs_apart_and_pools_on_request(monkeypatch, two_random_runs_db):
    monkeypatch.setenv("ENEM_DB", str(two_random_runs_db))
    runs = _random_runs(two_random_runs_db)
    app = run_page(ACCURACY, query={"area": "CN"})
    assert_clean(app)
    table = app.dataframe[0].value
    random_rows = table[table["model"].str.startswith("random-baseline")]
    assert set(random_rows["model"]) == set(runs["model"])

    app.sidebar.toggle(key="sidebar.pool").set_value(True).run()
    assert_clean(app)
    table = app.dataframe[0].value
    pooled = table[table["model"].str.startswith("random-baseline")]
    assert pooled["model"].tolist() == ["random-baseline"]
    assert app.query_params["pool"] == "model"
    assert any("Runs pooled per model: random-baseline = 2 runs" in c.value for c in app.caption)


def test_url_carries_run_ids(monkeypatch, two_random_runs_db):
    monkeypatch.setenv("ENEM_DB", str(two_random_runs_db))
    runs = _random_runs(two_random_runs_db)
    ten = runs.loc[runs["n_shuffles"] == 10].iloc[0]
    app = run_page(ACCURACY, query={"area": "CN", "run": str(ten["run_ids"][0])})
    assert_clean(app)
    assert app.sidebar.multiselect(key="sidebar.model").value == [ten["model"]]
    assert app.query_params["run"] == str(ten["run_ids"][0])
    table = app.dataframe[0].value
    assert table["model"].tolist() == [ten["model"]]
