"""Item gaps page and ``enem-llm items``: the residuals on screen against a hand computation from
the stored answers, the same numbers on the command line, the DIF and fit tables of the booklet,
the link from the Item explorer, and the empty states."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cli.main import main as cli_main
from store.connection import open_reader, writing
from store.layout import copy_store
from tests.page_support import assert_clean, decoded, messages, run_page

PAGE = "pages/Item_gaps.py"
#: The demo's random-baseline run (backend 'random') and its SmolLM2 run.
BASELINE = "random-baseline · 0-shot · 30 shuffles"
SMOLLM = "SmolLM2-135M-Instruct · 0-shot · 30 shuffles"


def _figure(app, name: str) -> dict:
    for element in app.get("plotly_chart"):
        spec = json.loads(element.proto.spec)
        if (spec["layout"].get("meta") or {}).get("figure") == name:
            return spec
    raise AssertionError(f"no figure {name}")


def _table(app, *columns: str) -> pd.DataFrame:
    """The page's table whose first columns are ``columns``."""
    return next(frame.value for frame in app.dataframe
                if list(frame.value.columns)[:len(columns)] == list(columns))


def _booklet(app) -> int:
    heading = next(s.value for s in app.subheader if s.value.startswith("DIF"))
    return int(re.search(r"booklet (\d+)", heading).group(1))


def _hand_residuals(db, year: int, area: str, booklet: int) -> dict[int, float]:
    """z per item of the booklet over every pt, 0-shot repetition of the year's runs (the
    page's default selection) but the random baseline's (backend 'random': no machine), each
    at its stored θ, with the 3PL written out here."""
    con = open_reader(db)
    try:
        form = con.execute(
            "SELECT item_id, a, b, c FROM items WHERE year = ? AND booklet_id = ? "
            "AND a IS NOT NULL", [year, booklet]).df().drop_duplicates("item_id")
        rows = con.execute(
            """SELECT m.item_id, CASE WHEN m.correct THEN 1.0 ELSE 0.0 END AS x, s.theta
               FROM model_responses m JOIN model_scores s
                 ON s.run_id = m.run_id AND s.year = m.year AND s.area = m.area
                AND s.booklet_id = m.booklet_id AND s.prompt_language = m.prompt_language
                AND s.shots IS NOT DISTINCT FROM m.shots AND s.shuffle = m.shuffle
               JOIN model_runs r ON r.run_id = m.run_id
               WHERE m.year = ? AND m.area = ? AND m.prompt_language = 'pt' AND m.shots = 0
                 AND m.correct IS NOT NULL AND isfinite(s.theta)
                 AND r.backend <> 'random'""", [year, area]).df()
    finally:
        con.close()
    params = form.set_index("item_id")
    rows = rows[rows["item_id"].isin(params.index)]
    z = {}
    for item, answers in rows.groupby("item_id"):
        a, b, c = params.loc[item, ["a", "b", "c"]]
        p = c + (1 - c) / (1 + np.exp(-a * (answers["theta"].to_numpy() - b)))
        z[int(item)] = float((answers["x"].sum() - p.sum()) / np.sqrt((p * (1 - p)).sum()))
    return z


def test_the_residuals_on_screen_equal_a_hand_computation(models_db):
    app = run_page(PAGE, {"gap_area": "MT"})
    assert_clean(app)
    assert app.segmented_control(key="items.area").value == "MT"
    figure = _figure(app, "item-residuals")
    bars = figure["data"][0]
    items = [int(row[0]) for row in decoded(bars["customdata"])]
    shown = dict(zip(items, decoded(bars["y"]), strict=True))
    expected = _hand_residuals(models_db, 2023, "MT", _booklet(app))
    assert set(shown) == set(expected)
    for item, z in expected.items():
        assert shown[item] == pytest.approx(z, rel=1e-9, abs=1e-12)
    # with several series, the pooled rows are marked where the series agree: a one-sample t
    # over the series' observed − expected (scipy here), BH q < 0.05
    every = _table(app, "series", "item_id")
    pooled = every[every["series"] == "all selected runs"].set_index("item_id")
    runs = every[every["series"] != "all selected runs"]
    assert runs["series"].nunique() >= 3
    for item, rows in runs.groupby("item_id"):
        reference = stats.ttest_1samp(rows["observed"] - rows["expected"], 0.0)
        assert pooled.loc[item, "series_t"] == pytest.approx(reference.statistic, rel=1e-9)
    marked = pooled[pooled["direction"].isin(["easier", "harder"])]
    assert (marked["series_q"] < 0.05).all()
    assert ((pooled["direction"] == "easier") == ((pooled["series_q"] < 0.05)
                                                 & (pooled["series_t"] > 0))).all()
    lists = [frame.value for frame in app.dataframe if "question" in frame.value.columns]
    listed = {int(i) for frame in lists for i in frame["item_id"]}
    assert listed == set(marked.index)


def test_the_command_line_prints_the_numbers_of_the_page(models_db, capsys):
    app = run_page(PAGE, {"gap_area": "MT"})
    every = _table(app, "series", "item_id")
    pooled = every[every["series"] == "all selected runs"].set_index("item_id")
    assert cli_main(["--db", str(models_db), "items", "--year", "2023", "--area", "MT"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("item_id")
    assert printed["residual"].is_monotonic_decreasing
    assert set(printed.index) == set(pooled.index)
    np.testing.assert_allclose(printed.loc[pooled.index, "residual"], pooled["residual"],
                               rtol=1e-9)
    np.testing.assert_allclose(printed.loc[pooled.index, "humans_near"].fillna(-1),
                               pooled["humans_near"].fillna(-1), rtol=1e-9)
    dif_page = _table(app, "item_id", "position", "mh_odds_ratio")
    assert cli_main(["--db", str(models_db), "items", "--year", "2023", "--area", "MT",
                     "--table", "dif", "--booklet", str(_booklet(app))]) == 0
    dif_cli = pd.read_csv(io.StringIO(capsys.readouterr().out))
    np.testing.assert_allclose(dif_cli["mh_delta"], dif_page["mh_delta"], rtol=1e-9)
    assert set(dif_page["ets_class"]) <= {"A", "B", "C", ""}


def _machine_patterns(db, area: str) -> dict[str, int]:
    """pt, 0-shot response patterns of 2023 ``area`` per run label, the baseline's included."""
    con = open_reader(db)
    try:
        rows = con.execute(
            """SELECT coalesce(r.label, r.model_id), count(*) FROM model_scores s
               JOIN model_runs r USING (run_id)
               WHERE s.year = 2023 AND s.area = ? AND s.prompt_language = 'pt'
                 AND s.shots = 0 GROUP BY ALL""", [area]).fetchall()
    finally:
        con.close()
    return dict(rows)


def test_the_random_baseline_is_not_pooled_with_the_machines(models_db):
    app = run_page(PAGE, {"gap_area": "MT"})
    assert_clean(app)
    every = _table(app, "series", "item_id")
    series = set(every["series"]) - {"all selected runs"}
    patterns = _machine_patterns(models_db, "MT")
    assert BASELINE in patterns and SMOLLM in series
    # Every selected run is a series of its own but the baseline, which is no series at all.
    assert series == set(patterns) - {BASELINE}
    pooled = every[every["series"] == "all selected runs"].set_index("item_id")
    runs = every[every["series"] != "all selected runs"]
    np.testing.assert_array_equal(runs.groupby("item_id")["answers"].sum()[pooled.index],
                                  pooled["answers"])
    assert pooled["answers"].max() == sum(patterns.values()) - patterns[BASELINE]
    # The calibration counts the machines' patterns only.
    machines = sum(patterns.values()) - patterns[BASELINE]
    captions = " ".join(c.value for c in app.caption)
    assert f"on the {machines} response patterns of the selected runs" in captions
    assert f"Left out as a baseline: {BASELINE} (random answers, not a model)" in captions


def test_the_command_line_pools_no_baseline_and_needs_three_series_for_t(models_db, capsys):
    args = ["--db", str(models_db), "items", "--year", "2023", "--area", "MT"]
    assert cli_main([*args, "--every-series"]) == 0
    out = capsys.readouterr()
    printed = pd.read_csv(io.StringIO(out.out))
    patterns = _machine_patterns(models_db, "MT")
    assert set(printed["series"]) == set(patterns) - {BASELINE} | {"all selected runs"}
    pooled = printed[printed["series"] == "all selected runs"]
    assert pooled["answers"].max() == sum(patterns.values()) - patterns[BASELINE]
    assert pooled["series_t"].notna().any()  # four model series: a t over them
    assert f"note: left out as a baseline (random answers, not a model; never pooled with " \
           f"the machines): {BASELINE}" in out.err
    # SmolLM2 and one test model, with the baseline: two series, no t over series ("—").
    assert cli_main([*args, "--models", SMOLLM, BASELINE, "test-strong-it"]) == 0
    out = capsys.readouterr()
    printed = pd.read_csv(io.StringIO(out.out))
    assert (printed["series_count"] == 2).all()
    assert printed["series_t"].isna().all() and printed["series_q"].isna().all()
    assert printed["answers"].max() == patterns[SMOLLM] + patterns["test-strong-it"]
    assert ("series_t and series_q are empty: a t over series needs at least 3 series and "
            "the selection has 2") in out.err
    # The baseline alone: nothing to pool.
    assert cli_main([*args, "--models", BASELINE]) == 0
    out = capsys.readouterr()
    assert pd.read_csv(io.StringIO(out.out)).empty
    assert "no model response pattern in the selection" in out.err
    assert BASELINE in out.err


def test_dif_and_item_fit_cover_the_counted_items_of_the_booklet(models_db):
    app = run_page(PAGE, {"gap_area": "CN"})
    assert_clean(app)
    booklet = _booklet(app)
    con = open_reader(models_db)
    counted = con.execute(
        "SELECT count(DISTINCT item_id) FROM item_score_counts WHERE year = 2023 "
        "AND booklet_id = ?", [booklet]).fetchone()[0]
    con.close()
    dif = _table(app, "item_id", "position", "mh_odds_ratio")
    fit = _table(app, "item_id", "position", "sx2")
    assert len(dif) == len(fit) == counted > 0
    assert (dif["machines"] > 0).all()
    assert ((fit["q"] >= fit["p"] - 1e-15) | fit["p"].isna()).all()
    assert fit["rmsea"].min() >= 0


def test_the_item_explorer_links_to_the_page_with_its_area(models_db):
    app = run_page("pages/Item_explorer.py")
    assert_clean(app)
    links = [link for link in app.get("page_link") if "Item gaps" in link.proto.label]
    assert links and links[0].proto.page == "Item_gaps"
    assert links[0].proto.query_string == "gap_area=CN"


def test_without_runs_the_page_says_so(no_runs_db):
    app = run_page(PAGE)
    assert_clean(app)
    assert "No model runs" in messages(app)
    assert not app.get("plotly_chart")


def test_a_store_without_score_tables_asks_for_a_new_ingest(pages_models_db, tmp_path,
                                                            monkeypatch):
    copy = tmp_path / "older.duckdb"
    copy_store(pages_models_db, copy)
    with writing(copy, year=2023) as con:
        con.execute("DROP TABLE item_score_counts")
    monkeypatch.setenv("ENEM_DB", str(copy))
    app = run_page(PAGE)
    assert_clean(app)
    assert "ingest the year again" in messages(app)
    assert len(app.get("plotly_chart")) == 2  # the residuals and the calibration still draw
