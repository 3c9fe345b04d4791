"""Discrimination page: one model population per run on request, and clicks that select the bar
that was clicked (the pickers follow the click)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from store.catalogue_queries import loaded_years, model_catalogue
from store.connection import open_reader
from store.model_queries import model_pattern_matrix
from tests.page_support import assert_clean, run_page

PAGE = "pages/Discrimination.py"


def _brute_force_di(rows) -> dict[int, float]:
    """DI per item: share correct among the top ⌈25%⌉ minus the bottom ⌈25%⌉ of patterns by θ
    (ties as a stable ascending sort orders them)."""
    patterns = rows.drop_duplicates("pattern").sort_values(["theta"], kind="stable")
    order = list(patterns.sort_values(["pattern"]).pipe(
        lambda p: p.iloc[np.argsort(p["theta"].to_numpy(), kind="stable")])["pattern"])
    size = math.ceil(0.25 * len(order))
    low, high = set(order[:size]), set(order[-size:])
    result = {}
    for item, answers in rows.groupby("item_id"):
        top = answers[answers["pattern"].isin(high)]["correct"].mean()
        bottom = answers[answers["pattern"].isin(low)]["correct"].mean()
        result[int(item)] = top - bottom
    return result


def test_each_run_gets_its_own_discrimination_index(monkeypatch, pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = run_page(PAGE, {"area": "MT"})
    assert_clean(app)
    assert not [c for c in app.dataframe[1].value if c.startswith("DI · ")]
    app.toggle(key="discrimination.per_run").set_value(True).run()
    assert_clean(app)
    table = app.dataframe[1].value.set_index("item_id")
    con = open_reader(pages_models_db)
    year = loaded_years(con)[-1]
    labels = model_catalogue(con)["model"].tolist()
    long = model_pattern_matrix(con, year, "MT", None, "pt", 0, labels)
    con.close()
    series = "test-strong-it"
    expected = _brute_force_di(long[long["model"] == series])
    for item, value in expected.items():
        assert table.loc[item, f"DI · {series}"] == pytest.approx(value, abs=1e-12)
    names = {t["name"] for t in json.loads(app.get("plotly_chart")[0].proto.spec)["data"]}
    assert {"humans", series} <= names and "models" not in names


def test_bar_pickers_offer_each_run_and_filter_by_its_index(monkeypatch, pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = run_page(PAGE, {"area": "MT"})
    app.toggle(key="discrimination.per_run").set_value(True).run()
    picker = app.selectbox(key="discrimination.population")
    assert "test-strong-it" in picker.options and "humans" in picker.options
    picker.set_value("test-strong-it").run()
    app.selectbox(key="discrimination.bin").set_value("0.0").run()
    assert_clean(app)
    shown = app.dataframe[1].value
    assert len(shown) and ((shown["DI · test-strong-it"] >= -1e-9)
                           & (shown["DI · test-strong-it"] < 0.1)).all()


def test_random_baseline_is_its_own_population_not_a_model(monkeypatch, pages_models_db):
    """The models' DI ranks the selected real models' patterns only; the random baseline
    (backend random) gets its own DI and its own bars, and the caption says so."""
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = run_page(PAGE, {"area": "MT"})
    assert_clean(app)
    table = app.dataframe[1].value.set_index("item_id")
    con = open_reader(pages_models_db)
    year = loaded_years(con)[-1]
    labels = model_catalogue(con)["model"].tolist()
    random = [row[0] for row in con.execute(
        "SELECT coalesce(label, model_id) FROM model_runs WHERE backend = 'random'").fetchall()]
    long = model_pattern_matrix(con, year, "MT", None, "pt", 0, labels)
    con.close()
    assert random and set(random) < set(long["model"])
    models = _brute_force_di(long[~long["model"].isin(random)])
    baseline = _brute_force_di(long[long["model"].isin(random)])
    for item in models:
        assert table.loc[item, "model_di"] == pytest.approx(models[item], abs=1e-12)
        assert table.loc[item, "random_di"] == pytest.approx(baseline[item], abs=1e-12)
    names = {t["name"] for t in json.loads(app.get("plotly_chart")[0].proto.spec)["data"]}
    assert {"humans", "models", "random baseline"} <= names
    caption = " ".join(c.value for c in app.caption)
    assert "random baseline" in caption and "not pooled with the models" in caption
    # One population per run: the random run is still marked as the baseline, not a model.
    app.toggle(key="discrimination.per_run").set_value(True).run()
    assert_clean(app)
    names = {t["name"] for t in json.loads(app.get("plotly_chart")[0].proto.spec)["data"]}
    assert "random baseline" in names and not names & set(random)
