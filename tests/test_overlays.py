"""Overlays on Accuracy vs ability and Person fit: a second prompt language or shots setting of
the same runs drawn beside the sidebar's, as open markers of the series' colour and symbol.

The overlay's markers sit at the θ (and CTT, l_z) stored for those patterns, read here from the
store with duckdb; the sidebar's level is drawn exactly as without an overlay; only levels the
runs answered are offered, and a run without the overlay's level is named in one line."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from store.connection import open_reader
from store.overlay_queries import overlay_levels
from tests.browser_support import ARTIFACTS, open_and_settle, tall_page
from tests.page_support import assert_clean, charts, decoded, messages, run_page

ACCURACY = "pages/Accuracy_vs_ability.py"
FIT = "pages/Person_fit.py"
STRONG = "test-strong-it"
SMOLLM = "SmolLM2-135M-Instruct · 0-shot · 30 shuffles"
ENGLISH = {"overlay": "prompt language", "overlay_level": "en"}


def stored_patterns(db: Path, label: str, area: str, language: str, shots: int) -> pd.DataFrame:
    """theta, ctt and lz of one run's stored patterns (2023), read with duckdb directly."""
    con = open_reader(db)
    try:
        return con.execute(
            """SELECT s.theta, s.ctt, s.lz FROM model_scores s JOIN model_runs r USING (run_id)
               WHERE coalesce(r.label, r.model_id) = ? AND s.year = 2023 AND s.area = ?
                 AND s.prompt_language = ? AND s.shots = ? ORDER BY s.shuffle""",
            [label, area, language, shots]).df()
    finally:
        con.close()


def trace(figure: dict, name: str) -> dict:
    """The one marker trace of a single-panel figure named ``name``."""
    found = [t for t in figure["data"] if t.get("name") == name and t.get("mode") == "markers"]
    assert len(found) == 1, [t.get("name") for t in figure["data"]]
    return found[0]


def pairs(x, y) -> np.ndarray:
    """(x, y) rows sorted, so markers compare whatever order they were drawn in."""
    rows = np.column_stack([decoded(x), decoded(y)]).astype(float)
    return rows[np.lexsort((rows[:, 1], rows[:, 0]))]


def rgb(colour: str) -> str:
    """The colour of an 'rgba(r, g, b, a)' marker without its opacity."""
    match = re.fullmatch(r"rgba\((\d+), *(\d+), *(\d+), *[\d.]+\)", colour)
    assert match, colour
    return ",".join(match.groups())


def test_language_overlay_draws_the_english_patterns_open_at_their_stored_theta(models_db):
    app = run_page(ACCURACY, {"area": "MT", **ENGLISH})
    assert_clean(app)
    figure = charts(app)[0]
    english = trace(figure, f"{STRONG} (English)")
    portuguese = trace(figure, f"{STRONG} (Portuguese)")
    en = stored_patterns(models_db, STRONG, "MT", "en", 0)
    pt = stored_patterns(models_db, STRONG, "MT", "pt", 0)
    assert len(en) == 8 and not np.allclose(np.sort(en["theta"]), np.sort(pt["theta"]))
    np.testing.assert_allclose(pairs(english["x"], english["y"]),
                               pairs(en["theta"], en["ctt"]), rtol=0, atol=1e-9)
    np.testing.assert_allclose(pairs(portuguese["x"], portuguese["y"]),
                               pairs(pt["theta"], pt["ctt"]), rtol=0, atol=1e-9)
    # Same colour and symbol, told apart by fill: the overlay's markers are the open variant.
    assert english["marker"]["symbol"] == portuguese["marker"]["symbol"] + "-open"
    assert not portuguese["marker"]["symbol"].endswith("-open")
    assert rgb(english["marker"]["color"]) == rgb(portuguese["marker"]["color"])
    assert english["showlegend"] and portuguese["showlegend"]
    # Every legend entry of a model names its level; the curve belongs to the filled markers.
    shown = {t["name"] for t in figure["data"] if t.get("showlegend", True)
             and t.get("type") == "scatter"}
    assert {f"{SMOLLM} (English)", f"{SMOLLM} (Portuguese)"} <= shown
    assert [t["name"] for t in figure["data"] if t.get("mode") == "lines"
            and t["name"].startswith(STRONG)] == [f"{STRONG}: 90% highest-density region"]
    caption = app.caption[0].value
    assert "filled markers: pt, 0-shot" in caption
    assert "open markers of the same colour and symbol: the same runs under en, 0-shot" in caption
    table = app.dataframe[0].value
    assert list(table.columns[:3]) == ["model", "level", "area"]
    rows = table.set_index(["model", "level"])
    assert rows.loc[(STRONG, "English"), "mean_theta"] == pytest.approx(en["theta"].mean())
    assert rows.loc[(STRONG, "Portuguese"), "mean_theta"] == pytest.approx(pt["theta"].mean())
    assert rows.loc[(STRONG, "English"), "patterns"] == len(en)
    assert app.query_params["overlay"] == "prompt language"
    assert app.query_params["overlay_level"] == "en"


def test_no_overlay_leaves_the_figure_and_table_as_they_were(models_db):
    plain = run_page(ACCURACY, {"area": "MT"})
    assert_clean(plain)
    before = charts(plain)[0]
    table = plain.dataframe[0].value
    assert "level" not in table.columns
    assert "overlay" not in plain.query_params and "overlay_level" not in plain.query_params
    named = run_page(ACCURACY, {"area": "MT", "overlay": "none"})
    assert charts(named)[0] == before
    pd.testing.assert_frame_equal(named.dataframe[0].value, table)

    plain.selectbox(key="accuracy.overlay").set_value("prompt language").run()
    assert_clean(plain)
    overlaid = charts(plain)[0]
    assert overlaid != before
    # The sidebar's level is drawn as before: the same markers and the same curves.
    for old in before["data"]:
        if old.get("mode") == "markers":
            new = trace(overlaid, f"{old['name']} (Portuguese)")
            np.testing.assert_array_equal(pairs(new["x"], new["y"]), pairs(old["x"], old["y"]))
            assert new["marker"]["symbol"] == old["marker"]["symbol"]
            assert new["marker"]["color"] == old["marker"]["color"]
    assert ([t for t in overlaid["data"] if t.get("mode") == "lines"]
            == [t for t in before["data"] if t.get("mode") == "lines"])
    assert plain.query_params["overlay_level"] == "en"

    plain.selectbox(key="accuracy.overlay").set_value("none").run()
    assert charts(plain)[0] == before
    pd.testing.assert_frame_equal(plain.dataframe[0].value, table)
    assert "overlay" not in plain.query_params and "overlay_level" not in plain.query_params


def test_person_fit_overlays_lz_against_theta_and_the_trust_table(models_db):
    plain = run_page(FIT, {"area": "MT"})
    app = run_page(FIT, {"area": "MT", **ENGLISH})
    assert_clean(app)
    figure = charts(app)[0]
    en = stored_patterns(models_db, "test-odd-base", "MT", "en", 0)
    english = trace(figure, "test-odd-base (English)")
    assert english["marker"]["symbol"].endswith("-open")
    np.testing.assert_allclose(pairs(english["x"], english["y"]),
                               pairs(en["theta"], en["lz"]), rtol=0, atol=1e-9)
    assert "open markers" in app.caption[0].value
    # The lanes stay the sidebar's level, and say so.
    assert charts(app)[1] == charts(plain)[1]
    assert "The lanes show the sidebar's level only (Portuguese)" in app.caption[1].value
    table = app.dataframe[0].value
    assert list(table.columns[:3]) == ["model", "level", "area"]
    levels = table.groupby("model")["level"].apply(list)
    assert levels["test-odd-base"] == ["Portuguese", "English"]
    rows = table.set_index(["model", "level"])
    assert rows.loc[("test-odd-base", "English"), "mean_theta"] == pytest.approx(
        en["theta"].mean())
    # The sidebar's rows are the table without an overlay.
    sidebar_rows = table[table["level"] == "Portuguese"].drop(columns="level")
    pd.testing.assert_frame_equal(sidebar_rows.reset_index(drop=True),
                                  plain.dataframe[0].value.reset_index(drop=True))


def test_shots_overlay_offers_only_answered_levels_and_names_runs_without_them(models_db):
    app = run_page(ACCURACY, {"area": "MT", "overlay": "shots", "overlay_level": "4"})
    assert_clean(app)
    picker = app.selectbox(key="accuracy.overlay_level")
    assert picker.options == ["1-shot", "4-shot"] and picker.value == "4"
    four = stored_patterns(models_db, STRONG, "MT", "pt", 4)
    overlaid = trace(charts(app)[0], f"{STRONG} (4-shot)")
    np.testing.assert_allclose(pairs(overlaid["x"], overlaid["y"]),
                               pairs(four["theta"], four["ctt"]), rtol=0, atol=1e-9)
    # The demo's own runs answered 0-shot only: one line names them.
    assert f"No patterns under pt, 4-shot for: {SMOLLM} (MT)" in messages(app)
    assert not any(t.get("name") == f"{SMOLLM} (4-shot)" for t in charts(app)[0]["data"])
    assert "level" in app.dataframe[0].value.columns

    # A level the runs never answered is not offered; the first answered one is taken.
    other = run_page(ACCURACY, {"area": "MT", "overlay": "shots", "overlay_level": "7"})
    assert other.selectbox(key="accuracy.overlay_level").value == "1"
    english_sidebar = run_page(ACCURACY, {"area": "MT", "lang": "en",
                                          "overlay": "prompt language"})
    assert english_sidebar.selectbox(key="accuracy.overlay_level").options == ["Portuguese"]


def test_a_run_with_no_other_level_gets_no_overlay(models_db):
    con = open_reader(models_db)
    run_id = con.execute("SELECT run_id FROM model_runs WHERE label = ?", [SMOLLM]).fetchone()[0]
    con.close()
    plain = run_page(FIT, {"area": "CN", "run": run_id})
    app = run_page(FIT, {"area": "CN", "run": run_id, "overlay": "shots"})
    assert_clean(app)
    assert any("no other shots in Portuguese in 2023: nothing to overlay" in c.value
               for c in app.caption)
    assert charts(app)[0] == charts(plain)[0]
    assert "overlay_level" not in app.query_params


def test_overlay_levels_are_what_the_runs_answered(pages_models_db):
    con = open_reader(pages_models_db)
    try:
        levels = overlay_levels(con, 2023, ["MT"], [STRONG, SMOLLM])
        by_hand = con.execute(
            """SELECT DISTINCT s.prompt_language, s.shots FROM model_scores s
               WHERE s.year = 2023 AND s.area = 'MT' AND s.run_id IN (
                   SELECT run_id FROM model_runs WHERE coalesce(label, model_id) IN (?, ?))""",
            [STRONG, SMOLLM]).fetchall()
        smollm = overlay_levels(con, 2023, ["MT"], [SMOLLM])
        nothing = overlay_levels(con, 2023, ["MT"], ["no such run"])
    finally:
        con.close()
    assert sorted(zip(levels["prompt_language"], levels["shots"], strict=True)) == sorted(by_hand)
    assert set(levels["shots"]) == {0, 1, 4}
    both = levels.set_index(["prompt_language", "shots"])
    assert both.loc[("pt", 0), "runs"] == 2 and both.loc[("pt", 4), "runs"] == 1
    settings = set(zip(smollm["prompt_language"], smollm["shots"], strict=True))
    assert settings <= {("pt", 0), ("en", 0)}
    assert nothing.empty


def test_overlay_in_the_browser_keeps_the_legend_off_the_panels(server, browser):
    page = tall_page(browser)
    try:
        for name, path, figures in (
                ("overlay_accuracy",
                 "Accuracy_vs_ability?overlay=prompt+language&overlay_level=en", 1),
                ("overlay_person_fit", "Person_fit?overlay=shots&overlay_level=4", 2)):
            open_and_settle(page, f"{server}/{path}", figures)
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
            figure = page.locator(".js-plotly-plot").first
            legend = figure.locator(".legend .bg").bounding_box()
            texts = figure.locator(".legend .legendtext").all_text_contents()
            assert any(t.endswith("(English)" if "language" in path else "(4-shot)")
                       for t in texts), texts
            titles = figure.locator(".annotation-text")
            assert titles.count() >= 4
            for index in range(titles.count()):
                title = titles.nth(index).bounding_box()
                assert legend["y"] + legend["height"] <= title["y"], (
                    f"{name}: the legend covers {titles.nth(index).text_content()}")
    finally:
        page.close()
    assert not page.errors
