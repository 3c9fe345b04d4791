"""The Response patterns page draws the paper's Fig. 2 (*Beyond accuracy*): rows model × prompt
language, items sorted by b with the b curve above, each row's mean l_z (SD) at its right, the
humans' share correct on top, a fixed 0–1 colour scale, one row per repetition on request, the
sidebar's booklet honoured by item id, and a message for every empty panel.

Every expected value is computed here straight from the store's tables with pandas, never with
the page's own queries.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.patterns.data import HUMAN_ROW, short_labels
from store.connection import open_reader, writing
from store.layout import copy_store
from testbed.fake_runs import add_test_model_runs
from tests.page_support import assert_clean, charts, decoded, messages, run_page
from workflows.ingest import ingest_items

PAGE = "pages/Response_patterns.py"
YEAR = 2023


def _read(db: Path, sql: str, params: list | None = None) -> pd.DataFrame:
    con = open_reader(db)
    try:
        return con.execute(sql, params or []).df()
    finally:
        con.close()


def _responses(db: Path, area: str) -> pd.DataFrame:
    """Every response row of 0-shot (or shot-less) runs in ``area`` with its series."""
    frame = _read(db, """SELECT coalesce(r.label, r.model_id) AS series, m.*
                         FROM model_responses m JOIN model_runs r USING (run_id)
                         WHERE m.year = ? AND m.area = ?""", [YEAR, area])
    return frame[frame["shots"].isna() | (frame["shots"] == 0)]


def _scores(db: Path, area: str) -> pd.DataFrame:
    frame = _read(db, """SELECT coalesce(r.label, r.model_id) AS series, m.*
                         FROM model_scores m JOIN model_runs r USING (run_id)
                         WHERE m.year = ? AND m.area = ?""", [YEAR, area])
    return frame[frame["shots"].isna() | (frame["shots"] == 0)]


def _figure(app) -> dict:
    figures = charts(app)
    assert len(figures) == 1, "one area selected, one figure"
    return figures[0]


def _trace(figure: dict, name: str) -> dict:
    found = [t for t in figure["data"] if t.get("name") == name]
    assert found, f"no trace named {name!r}"
    return found[0]


def _heatmap(figure: dict) -> pd.DataFrame:
    """The share-correct heatmap as a frame: index = row labels, columns = item ids."""
    trace = _trace(figure, "share correct")
    assert trace["type"] == "heatmap"
    z = decoded(trace["z"]).astype(float)
    return pd.DataFrame(z, index=list(trace["y"]), columns=[int(x) for x in trace["x"]])


def _label(series: str, language: str) -> str:
    """Row label of a series × language in the test database (no shared tail there)."""
    return f"{series} · {language}"


def _booklets(db: Path, area: str) -> tuple[int, int]:
    """(the booklet the runs took most in ``area``, another valid booklet of the area)."""
    scores = _scores(db, area)
    took = int(scores["booklet_id"].value_counts().sort_index().idxmax())
    booklets = _read(db, "SELECT booklet_id FROM booklets WHERE year = ? AND area = ? AND valid "
                         "ORDER BY booklet_id", [YEAR, area])["booklet_id"].astype(int)
    return took, int(next(b for b in booklets if b != took))


def _sorted_items(db: Path, booklet: int) -> pd.DataFrame:
    """A booklet's items sorted by b ascending (items without b last, ties by item id)."""
    items = _read(db, "SELECT DISTINCT item_id, item_language, co_posicao, b FROM items "
                      "WHERE year = ? AND booklet_id = ? AND position IS NOT NULL",
                  [YEAR, booklet])
    return items.sort_values(["b", "item_id"], na_position="last").reset_index(drop=True)



def test_cells_are_the_share_correct_per_model_language_and_item(models_db):
    app = run_page(PAGE, {"area": "CN"})
    assert_clean(app)
    grid = _heatmap(_figure(app))
    responses = _responses(models_db, "CN")
    expected = (responses.assign(correct=responses["correct"].astype(float))
                .groupby(["series", "prompt_language", "item_id"])["correct"].mean())
    rows = {_label(s, lang) for s, lang, _ in expected.index}
    assert set(grid.index) == rows | {HUMAN_ROW}
    for (series, language, item), share in expected.items():
        assert grid.at[_label(series, language), int(item)] == pytest.approx(share, abs=1e-12)
    # Rows are model × prompt language: both languages of one model, never one pooled row.
    assert {_label("test-strong-it", "pt"), _label("test-strong-it", "en")} <= set(grid.index)


def test_columns_follow_b_and_the_curve_above_draws_it(models_db):
    app = run_page(PAGE, {"area": "MT"})
    assert_clean(app)
    figure = _figure(app)
    took, _ = _booklets(models_db, "MT")
    items = _sorted_items(models_db, took)
    assert [int(x) for x in _trace(figure, "share correct")["x"]] == items["item_id"].tolist()
    curve = _trace(figure, "b (difficulty)")
    assert [int(x) for x in curve["x"]] == items["item_id"].tolist()
    np.testing.assert_allclose(decoded(curve["y"]).astype(float), items["b"].to_numpy(float))
    # The curve sits above the heatmap and shares its x axis.
    layout = figure["layout"]
    heat_axis = "yaxis" if _trace(figure, "share correct").get("yaxis", "y") == "y" else None
    curve_axis = "yaxis" + curve["yaxis"].removeprefix("y")
    assert heat_axis and layout[curve_axis]["domain"][0] > layout[heat_axis]["domain"][1]
    assert layout["xaxis" + curve["xaxis"].removeprefix("x")].get("matches") == "x"


def test_each_row_shows_its_mean_lz_and_sd(models_db):
    app = run_page(PAGE, {"area": "CH"})
    assert_clean(app)
    figure = _figure(app)
    scores = _scores(models_db, "CH")
    shown = {}
    for trace in figure["data"]:
        if trace.get("mode") == "text":
            shown.update(zip(trace["y"], trace["text"], strict=True))
    for (series, language), group in scores.groupby(["series", "prompt_language"]):
        lz = group["lz"].astype(float)
        lz = lz[np.isfinite(lz)]
        assert shown[_label(series, language)] == f"{lz.mean():.2f} ({lz.std(ddof=1):.2f})"
    assert len(shown) == scores.groupby(["series", "prompt_language"]).ngroups


def test_the_human_row_is_the_share_of_candidates_correct(models_db):
    app = run_page(PAGE, {"area": "LC"})
    assert_clean(app)
    grid = _heatmap(_figure(app))
    assert grid.index[0] == HUMAN_ROW
    stats = _read(models_db, "SELECT item_id, p_value FROM item_stats WHERE year = ? "
                             "AND area = 'LC'", [YEAR]).set_index("item_id")["p_value"]
    np.testing.assert_allclose(grid.loc[HUMAN_ROW].to_numpy(float),
                               stats.reindex(grid.columns).to_numpy(float))
    # LC: the foreign-language block the runs answered (Spanish, item_language 1) and the
    # common items, never the English block nobody answered.
    took, _ = _booklets(models_db, "LC")
    items = _sorted_items(models_db, took)
    expected = items[items["item_language"].isna() | (items["item_language"] == 1)]
    assert grid.columns.tolist() == expected["item_id"].tolist()


def test_another_booklet_shows_the_same_answers_in_its_own_positions(models_db):
    took, other = _booklets(models_db, "CN")
    on_took = run_page(PAGE, {"area": "CN", "booklet": str(took)})
    on_other = run_page(PAGE, {"area": "CN", "booklet": str(other)})
    assert_clean(on_other)
    assert "No model runs" not in messages(on_other)
    first, second = _heatmap(_figure(on_took)), _heatmap(_figure(on_other))
    pd.testing.assert_frame_equal(first, second)
    # Hover positions are the chosen booklet's question numbers.
    positions = _sorted_items(models_db, other).set_index("item_id")["co_posicao"]
    humans = _trace(_figure(on_other), "Humans")
    shown = {int(row[0]): int(row[1]) for row in humans["customdata"]}
    assert shown == {int(k): int(v) for k, v in positions.items()}
    assert shown != {int(k): int(v) for k, v in
                     _sorted_items(models_db, took).set_index("item_id")["co_posicao"].items()}
    captions = " | ".join(c.value for c in on_other.caption)
    assert f"The models took booklet {took}; their answers are placed on booklet {other}" \
        in captions


def test_one_row_per_repetition_on_request(models_db):
    app = run_page(PAGE, {"area": "MT", "model": "test-odd-base"})
    assert_clean(app)
    assert len(_heatmap(_figure(app))) == 1 + 2  # humans + pt + en
    app.toggle(key="patterns.expand").set_value(True).run()
    assert_clean(app)
    grid = _heatmap(_figure(app))
    responses = _responses(models_db, "MT")
    responses = responses[responses["series"] == "test-odd-base"]
    patterns = responses.groupby(["prompt_language", "run_id", "shots", "shuffle"])
    assert len(grid) == 1 + patterns.ngroups
    values = grid.drop(index=HUMAN_ROW).to_numpy()
    assert set(np.unique(values[np.isfinite(values)])) <= {0.0, 1.0}
    # A row is one repetition's right/wrong answers (the fixture has one shot setting at 0).
    first = responses[(responses["prompt_language"] == "pt") & (responses["shuffle"] == 0)]
    row = grid.loc[_label("test-odd-base", "pt") + " · shuffle 0"]
    expected = first.set_index("item_id")["correct"].astype(float)
    np.testing.assert_array_equal(row[expected.index.astype(int)].to_numpy(), expected.to_numpy())


def test_one_model_keeps_a_fixed_readable_colour_bar(models_db):
    app = run_page(PAGE, {"area": "CN", "model": "test-strong-it"})
    assert_clean(app)
    heatmap = _trace(_figure(app), "share correct")
    assert (heatmap["zmin"], heatmap["zmax"]) == (0, 1)
    assert heatmap["showscale"] is True
    bar = heatmap["colorbar"]
    assert "share" in bar["title"]["text"] and "correct" in bar["title"]["text"]
    assert bar["lenmode"] == "pixels" and bar["len"] >= 140
    assert list(bar["tickvals"]) == [0, 0.25, 0.5, 0.75, 1]
    hover = next(t for t in _figure(app)["data"] if t.get("name") == "test-strong-it"
                 and t.get("mode") == "markers")["hovertemplate"]
    assert "item" in hover and "question" in hover and "b =" in hover and "correct in" in hover


def test_no_runs_says_so_per_area(monkeypatch, pages_no_runs_db):
    monkeypatch.setenv("ENEM_DB", str(pages_no_runs_db))
    app = run_page(PAGE, {"area": ["CN", "MT"]})
    assert_clean(app)
    assert not charts(app)
    assert "No model runs for 2023 CN" in messages(app)
    # The other area, picked (the page shows one area at a time), says the same of itself.
    app.segmented_control(key="patterns.area").set_value("MT").run()
    assert_clean(app)
    assert not charts(app)
    assert "No model runs for 2023 MT" in messages(app)


def test_a_missing_prompt_language_is_said(monkeypatch, tmp_path, pages_models_db):
    db = tmp_path / "no_english.duckdb"
    copy_store(pages_models_db, db)
    with writing(db) as con:
        for table in ("model_responses", "model_scores"):
            con.execute(f"DELETE FROM {table} WHERE prompt_language = 'en'")
    monkeypatch.setenv("ENEM_DB", str(db))
    app = run_page(PAGE, {"area": "CN"})
    assert_clean(app)
    assert "with English (en) prompts" in messages(app)
    assert not any(label.endswith(" · en") for label in _heatmap(_figure(app)).index)


@pytest.fixture(scope="module")
def items_only_db(tmp_path_factory, demo_files_2023) -> Path:
    """A year stored from its item file alone, with synthetic test runs on it."""
    db = tmp_path_factory.mktemp("items_only_patterns") / "items_only.duckdb"
    ingest_items(db, YEAR, demo_files_2023.items)
    add_test_model_runs(db, shuffles=2, shots=(0,))
    return db


def test_an_items_only_year_has_no_human_row_and_says_so(monkeypatch, items_only_db):
    monkeypatch.setenv("ENEM_DB", str(items_only_db))
    app = run_page(PAGE, {"area": "MT"})
    assert_clean(app)
    assert "No human row" in messages(app)
    grid = _heatmap(_figure(app))
    assert HUMAN_ROW not in grid.index
    assert _label("test-strong-it", "pt") in grid.index


def test_short_labels_drop_only_the_tail_every_series_shares():
    names, tail = short_labels(["SmolLM2 · 0-shot · 30 shuffles",
                                "random · 0-shot · 30 shuffles"])
    assert names == {"SmolLM2 · 0-shot · 30 shuffles": "SmolLM2",
                     "random · 0-shot · 30 shuffles": "random"}
    assert tail == "0-shot · 30 shuffles"
    names, tail = short_labels(["a · few-shot · 30 seeds", "a · 0-shot · 30 seeds"])
    assert set(names.values()) == {"a · few-shot", "a · 0-shot"} and tail == "30 seeds"
    assert short_labels(["test-strong-it", "x · 0-shot"]) == (
        {"test-strong-it": "test-strong-it", "x · 0-shot": "x · 0-shot"}, "")
    assert short_labels(["only · 0-shot"]) == ({"only · 0-shot": "only"}, "0-shot")
