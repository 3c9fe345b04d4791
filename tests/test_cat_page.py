"""The Adaptive testing page under AppTest: simulation, variable length, noise curves, live
paths, overlap, the report by skill and post-hoc sections on the demo, with and without live CAT
runs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from store.connection import connected
from store.layout import copy_store
from tests.page_support import assert_clean, charts, decoded, open_section, run_page
from workflows.cat.live import CatRunSpec, execute_live_cat

PAGE = "pages/Adaptive_testing.py"


@pytest.fixture(scope="module")
def cat_db(tmp_path_factory, pages_demo_db):
    """The pages' demo with two live CATs of the random baseline on CN."""
    db = tmp_path_factory.mktemp("cat_page") / "cat.duckdb"
    copy_store(pages_demo_db, db)
    for seed in (1, 2):
        execute_live_cat(CatRunSpec(model="", backend="random", year=2023, areas=("CN",),
                                    n_paths=2, seed=seed), db, db.parent / "runs")
    return db


def test_page_draws_every_section_with_live_runs(monkeypatch, cat_db):
    monkeypatch.setenv("ENEM_DB", str(cat_db))
    app = run_page(PAGE)
    assert_clean(app)
    assert [tab.label for tab in app.tabs] == ["Simulation", "Live CAT", "Skills", "Post-hoc"]
    figures, downloads = {}, 0
    # Each tab draws its own figures only: the simulation, variable length and noise; the
    # paths and their overlap; the levels and accuracy by skill; the post-hoc replay, which
    # runs only when asked.
    for label, drawn in (("Simulation", 3), ("Live CAT", 2), ("Skills", 2), ("Post-hoc", 0)):
        app = open_section(app, label)
        assert_clean(app)
        assert len(charts(app)) == drawn, label
        if label == "Simulation":
            assert "nearest guess" in " ".join(m.value for m in app.markdown)
        if label == "Live CAT":
            [table] = [frame.value for frame in app.dataframe if "full-exam θ" in frame.value]
        if label == "Post-hoc":
            app.toggle(key="cat.replay").set_value(True).run()
            assert_clean(app)
            assert len(charts(app)) == 1
        figures |= {f["layout"]["title"]["text"]: f for f in charts(app)}
        downloads += len(app.get("download_button"))
    assert len(figures) == 8, list(figures)
    replayed = next(f for t, f in figures.items() if "items a CAT needed" in t)
    assert decoded(replayed["data"][0]["y"]).sum() == pytest.approx(100.0)
    mse = next(f for t, f in figures.items() if "mean squared error" in t)
    cat_mse = decoded(mse["data"][0]["y"])
    with connected(cat_db, read_only=True) as con:
        n_items = con.execute("SELECT count(DISTINCT item_id) FROM items WHERE year = 2023 "
                              "AND area = 'CN' AND a IS NOT NULL").fetchone()[0]
    # Random forms run through the whole bank; the CAT stops at the sidebar's 20 items.
    assert cat_mse.shape == (n_items,)
    assert np.isfinite(cat_mse[:20]).all() and np.isnan(cat_mse[20:]).all()
    jaccard = next(f for t, f in figures.items() if "overlap" in t)
    matrix = decoded(jaccard["data"][0]["z"])
    assert matrix.shape == (4, 4)
    np.testing.assert_allclose(np.diag(matrix), 1.0)
    with connected(cat_db, read_only=True) as con:
        sets = con.execute("SELECT run_id, path, list(item_id) FROM cat_paths "
                           "GROUP BY ALL ORDER BY run_id, path").fetchall()
    first, second = set(sets[0][2]), set(sets[1][2])
    assert matrix[0, 1] == pytest.approx(len(first & second) / len(first | second))
    # Two runs share a label: each is its own series, named by the end of its run id.
    names = list(jaccard["data"][0]["x"])
    assert all(" · run " in name for name in names)
    # Against the full exam: each path's last θ̂, the random baseline's full runs (pt, 0-shot).
    with connected(cat_db, read_only=True) as con:
        full = con.execute("SELECT avg(m.theta), avg(m.theta_se) FROM model_scores m "
                           "JOIN model_runs r USING (run_id) WHERE r.model_id = "
                           "'random-baseline' AND m.area = 'CN' AND m.prompt_language = 'pt' "
                           "AND m.shots = 0").fetchone()
        last = con.execute("SELECT theta FROM cat_paths QUALIFY step = max(step) OVER "
                           "(PARTITION BY run_id, path) ORDER BY run_id, path").fetchall()
    assert len(table) == 4
    np.testing.assert_allclose(table["full-exam θ"], full[0])
    np.testing.assert_allclose(table["full-exam SE"], full[1])
    assert sorted(table["CAT θ̂"]) == sorted(theta for (theta,) in last)
    assert downloads == 19
    assert json.dumps(figures)  # every figure serialises


def test_page_explains_missing_live_runs(monkeypatch, pages_demo_db):
    monkeypatch.setenv("ENEM_DB", str(pages_demo_db))
    app = run_page(PAGE)
    assert_clean(app)
    assert "No live CAT run for this year and area" in " | ".join(i.value for i in app.info)
    assert len(charts(app)) == 3  # simulation, variable length, noise
    app = open_section(app, "Live CAT")
    text = " | ".join(i.value for i in app.info)
    assert "No live CAT of a model" in text and "enem-llm cat-run" in text
    assert not charts(app)
    # The demo's own full runs still get their reports by skill: levels, accuracy by skill.
    app = open_section(app, "Skills")
    assert len(charts(app)) == 2
