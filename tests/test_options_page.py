"""The Options and traps page under AppTest on the page fixtures, its numbers checked against
counts made here straight from the store's rows (Python loops, scipy's tests), and its empty
states; plus the page's table builders on constructed rows."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dashboard.item_explorer.picker import explorer_link
from dashboard.options.data import answer_table, human_items, theta_cube
from dashboard.options.pairs import choice_agreement, pair_table
from dashboard.options.queries import RunSelection, all_area_inputs, area_inputs
from dashboard.state.url import SECTION_PARAM
from store.connection import connected, open_reader, recent_reader, writing
from store.layout import copy_store
from store.option_queries import model_option_answers
from tests.page_support import (
    assert_clean,
    charts,
    decoded,
    messages,
    open_section,
    run_page,
    run_via_home,
)
from workflows.ingest import ingest_items

PAGE = "pages/Options_and_traps.py"
SECTIONS = ["Traps", "Two runs", "Position bias", "Key position", "Difficulty", "Lengths"]
LETTERS = "ABCDE"





def _table(app, first_column: str, second_column: str) -> pd.DataFrame:
    """The page's dataframe whose first two columns are the ones named."""
    for frame in app.dataframe:
        columns = list(frame.value.columns)
        if columns[:2] == [first_column, second_column]:
            return frame.value
    raise AssertionError(f"no table starting with {first_column}, {second_column}")


def _store_rows(db):
    con = open_reader(db)
    try:
        counts = con.execute("SELECT item_id, option, sum(n) FROM option_counts WHERE year = 2023 "
                             "GROUP BY ALL").fetchall()
        keys = dict(con.execute("SELECT item_id, any_value(key) FROM items WHERE year = 2023 "
                                "GROUP BY item_id").fetchall())
        p_values = con.execute("SELECT item_id, p_value FROM item_stats WHERE year = 2023") \
            .fetchall()
        answers = con.execute(
            """SELECT coalesce(r.label, r.model_id), m.item_id, m.permutation, m.choice
               FROM model_responses m JOIN model_runs r USING (run_id)
               WHERE m.year = 2023 AND m.prompt_language = 'pt'
                 AND (m.shots = 0 OR m.shots IS NULL)""").fetchall()
    finally:
        con.close()
    by_item = {}
    for item, option, n in counts:
        by_item.setdefault(int(item), Counter())[option] = int(n)
    return by_item, keys, dict(p_values), answers


def _lure(counts: Counter, key: str) -> str | None:
    wrong = [letter for letter in LETTERS if letter != key]
    best = max(wrong, key=lambda letter: (counts[letter], -LETTERS.index(letter)))
    return best if sum(counts[letter] for letter in LETTERS) else None


def _figure_names(app) -> list:
    return [(figure["layout"].get("meta") or {}).get("figure") for figure in charts(app)]


def test_page_draws_its_figures_and_tables_with_model_runs(models_db):
    app = run_via_home(PAGE)
    assert_clean(app)
    assert app.title[0].value == "Options and traps"
    assert "a **trap** when" in " ".join(m.value for m in app.markdown)
    assert [tab.label for tab in app.tabs] == list(SECTIONS)
    # The first tab (traps): the trap table and the distractor figure, nothing of the others.
    assert len(charts(app)) == 1 and charts(app)[0]["data"]
    traps = _table(app, "series", "x/y")
    assert traps["series"].iloc[0] == "humans"
    assert {"test-strong-it", "test-odd-base"} <= set(traps["series"])
    assert len(app.get("download_button")) >= 3
    assert "No model runs" not in messages(app)
    # Each other tab draws its own figures only: positions; the picked area's key positions
    # item by item and their dependence (every area); the bands.
    expected = {"Position bias": 1, "Key position": 2, "Difficulty": 1, "Two runs": 0,
                "Lengths": 0}
    for label, figures in expected.items():
        app = open_section(app, label)
        assert_clean(app)
        assert len(charts(app)) == figures, label
        assert all(figure["data"] for figure in charts(app)), label
        if label == "Key position":
            assert _figure_names(app) == ["key-positions", "key-dependence"]
            assert len(app.segmented_control(key="options.keypos.area").options) == 4


def test_a_section_named_in_the_url_is_the_one_drawn(models_db):
    app = run_page(PAGE, {SECTION_PARAM: "Difficulty"})
    assert_clean(app)
    assert len(charts(app)) == 1
    assert "Each area's items with a b are split into thirds" in " ".join(
        caption.value for caption in app.caption)
    assert not any(frame.value.columns[:2].tolist() == ["series", "x/y"]
                   for frame in app.dataframe)


def test_trap_table_and_distractor_agreement_equal_counts_from_the_store(models_db,
                                                                         pages_models_db):
    app = run_via_home(PAGE)
    by_item, keys, p_values, answers = _store_rows(pages_models_db)
    traps = _table(app, "series", "x/y").set_index("series")
    trap_items = {item for item, counts in by_item.items() if keys.get(item) in tuple(LETTERS)
                  and _lure(counts, keys[item]) is not None
                  and counts[_lure(counts, keys[item])] >= counts[keys[item]]}
    scored = [p for item, p in p_values.items() if p is not None and not np.isnan(p)]
    assert traps.loc["humans", "accuracy_all"] == pytest.approx(np.mean(scored))
    assert traps.loc["humans", "trap_items"] == len(trap_items)
    assert traps.loc["humans", "accuracy_trap"] == pytest.approx(
        np.mean([p_values[item] for item in trap_items]))
    # Distractor agreement of one run, counted answer by answer.
    wrong = agreed = 0
    for series, item, _, choice in answers:
        key = keys.get(item)
        if series != "test-odd-base" or choice not in tuple(LETTERS) or choice == key:
            continue
        wrong += 1
        agreed += choice == _lure(by_item[item], key)
    bars = {trace["y"][0]: trace for trace in charts(app)[0]["data"]}
    assert bars["test-odd-base"]["x"][0] == pytest.approx(agreed / wrong)
    p = stats.binomtest(agreed, wrong, 0.25).pvalue
    assert bars["test-odd-base"]["text"][0].startswith(f"{agreed}/{wrong} · ")
    assert f"p = {p:.3f}" in bars["test-odd-base"]["text"][0] or p < 0.001


def test_position_bias_equals_positions_read_from_each_prompt_order(models_db, pages_models_db):
    app = open_section(run_via_home(PAGE), "Position bias")
    *_, answers = _store_rows(pages_models_db)
    smollm = "SmolLM2-135M-Instruct · 0-shot · 30 shuffles"
    shown = Counter(permutation.index(choice) for series, _, permutation, choice in answers
                    if series == smollm and permutation and choice in tuple(LETTERS))
    counts = [shown[d] for d in range(5)]
    tests = _table(app, "series", "answers").set_index("series")
    expected = stats.chisquare(counts)
    assert tests.loc[smollm, "chi2"] == pytest.approx(expected.statistic)
    assert tests.loc[smollm, "answers"] == sum(counts)
    bars = next(t for t in charts(app)[0]["data"] if t["name"].startswith(smollm))
    np.testing.assert_allclose(decoded(bars["y"]), np.array(counts) / sum(counts))


def test_the_item_table_opens_the_item_explorer(models_db):
    app = run_via_home(PAGE)
    items = _table(app, "area", "item_id")
    row = items.iloc[app.selectbox(key="options.item").value]
    assert row["explorer"] == explorer_link(row["item_id"], row["area"], 2023)
    app.button(key="options.open").click().run()
    assert_clean(app)
    assert app.title[0].value == "Item explorer"
    assert app.query_params["item"] == str(int(row["item_id"]))
    assert app.selectbox(key="explorer.item").value == int(row["item_id"])


def test_without_runs_the_humans_are_still_shown(no_runs_db):
    app = run_via_home(PAGE)
    assert_clean(app)
    assert "No model runs for 2023" in messages(app)
    assert _table(app, "series", "x/y")["series"].tolist() == ["humans"]
    assert not charts(app)  # no run: no distractor agreement
    app = open_section(app, "Difficulty")
    assert len(charts(app)) == 1  # accuracy by difficulty, humans only


def test_an_empty_database_is_explained(empty_db):
    app = run_page(PAGE)
    assert_clean(app)
    assert "is empty: nothing has been ingested yet" in messages(app)
    assert not charts(app)


def test_a_year_without_candidates_says_so(monkeypatch, tmp_path, pages_demo_db):
    path = tmp_path / "items_only.duckdb"
    items_file = next((pages_demo_db.parent / "files").rglob("ITENS_PROVA_2023.csv"))
    ingest_items(path, 2023, items_file)
    monkeypatch.setenv("ENEM_DB", str(path))
    app = run_page(PAGE)
    assert_clean(app)
    assert "holds no candidates' answers" in messages(app)


def test_human_items_flag_traps_in_total_and_near_b_by_hand():
    items = pd.DataFrame({"item_id": [1, 2], "key": ["A", "B"], "b": [0.0, 2.0],
                          "p_value": [0.4, 0.2], "n": [100, 100]})
    counts = pd.DataFrame({"item_id": [1, 1, 1, 2, 2], "option": ["A", "B", ".", "B", "C"],
                           "n": [40, 45, 15, 20, 80]})
    # Near b = 0 (bins −0.5 … 0.25, centres within 0.5): A 30 vs B 10 → no trap there.
    theta = pd.DataFrame({"item_id": [1, 1, 1, 1, 2, 2], "theta_bin": [0.0, 0.0, -2.0, -2.0,
                                                                       2.0, 2.0],
                          "option": ["A", "B", "A", "B", "B", "C"], "n": [30, 10, 10, 35, 9, 9]})
    table = human_items("MT", items, counts, theta)
    assert table["trap"].tolist() == [1.0, 1.0]
    assert table["trap_near_b"].tolist() == [0.0, 1.0]  # a tie at b = 2 is a trap
    assert table["candidates_near_b"].tolist() == [40.0, 18.0]
    assert table["distractor"].tolist() == ["B", "C"]
    cube, bins = theta_cube(theta, np.array([1, 2]))
    assert bins.tolist() == [-2.0, 0.0, 2.0] and cube.sum() == 103


def test_answer_table_reads_shown_positions_from_the_stored_order():
    items = human_items("MT", pd.DataFrame({"item_id": [7], "key": ["C"], "b": [0.1],
                                            "p_value": [0.5], "n": [10]}),
                        pd.DataFrame({"item_id": [7], "option": ["D"], "n": [3]}),
                        pd.DataFrame(columns=["item_id", "theta_bin", "option", "n"]))
    answers = pd.DataFrame({"model": "m", "item_id": 7, "permutation": ["CAEBD", None, "CAEBD"],
                            "choice": ["A", "A", "."], "correct": False})
    table = answer_table(answers, items)
    # "CAEBD": original A is shown under B, the key C under A.
    assert table["shown"].tolist() == [1, -1, -1]
    assert table["key_shown"].tolist() == [0, -1, 0]
    assert table["chosen"].tolist() == [0, 0, -1]


def test_the_selection_query_reads_one_run_per_series(pages_models_db):
    with connected(pages_models_db, read_only=True) as con:
        rows = model_option_answers(con, 2023, "MT", None, "pt", 0, ["test-strong-it"])
    assert set(rows["model"]) == {"test-strong-it"}
    assert rows.groupby("item_id").size().eq(8).all()  # 8 shuffles per item


def test_a_store_made_before_the_per_bin_counts_still_shows_the_page(monkeypatch, tmp_path,
                                                                     pages_models_db):
    path = tmp_path / "older.duckdb"
    copy_store(pages_models_db, path)
    with writing(path, year=2023) as con:
        con.execute("DROP TABLE option_theta_counts")
    monkeypatch.setenv("ENEM_DB", str(path))
    app = run_page(PAGE)
    assert_clean(app)
    assert "re-ingest 2023" in messages(app)
    traps = _table(app, "series", "x/y")
    assert (traps["trap_near_b_items"] == 0).all() and (traps["trap_items"] > 0).all()


def test_two_runs_are_compared_answer_by_answer():
    rows = []
    for model, chosen, correct in (("m1", [0, 1, 2, -1], [1.0, 0.0, 0.0, np.nan]),
                                   ("m2", [0, 2, 2, 3], [1.0, 0.0, 0.0, 0.0])):
        for shuffle, (c, ok) in enumerate(zip(chosen, correct, strict=True)):
            rows.append({"model": model, "item_id": 5 + shuffle // 2, "prompt_language": "pt",
                         "shots": 0, "shuffle": shuffle % 2, "chosen": c, "correct": ok})
    answers = pd.DataFrame(rows)
    # Pairs with a choice on both sides: shuffles (5,0), (5,1), (6,0); the same choice in 2.
    assert choice_agreement(answers, "m1", "m2") == {"pairs": 3, "agreeing": 2,
                                                     "agreement": 2 / 3}
    table = pair_table(answers, "m1", "m2", {("m1", "MT"): 0.5, ("m2", "MT"): 1.0,
                                             ("m2", "CN"): 2.0}).set_index("series")
    # m1: item 5 → 1/2, item 6 → 0/1 (its unread answer left out) → mean 0.25.
    assert table.loc["m1", "accuracy"] == pytest.approx(0.25)
    assert table.loc["m1", "unanswered"] == 1
    assert table.loc["m2", "accuracy"] == pytest.approx(0.25)
    assert table.loc["m2", "mean_theta"] == pytest.approx(1.5)


def test_the_page_compares_two_selected_runs(models_db):
    app = open_section(run_via_home(PAGE), "Two runs")
    pair = _table(app, "series", "accuracy")
    assert len(pair) == 2 and "unanswered" in pair.columns
    first = app.selectbox(key="options.pair.first").value
    assert pair["series"].iloc[0] == first


def test_areas_fetched_two_at_a_time_equal_each_area_read_alone(pages_models_db):
    reader = recent_reader(pages_models_db)
    with open_reader(pages_models_db) as con:
        models = tuple(con.execute("SELECT DISTINCT label FROM model_runs ORDER BY label")
                       .fetchall()[i][0] for i in range(3))
    runs = RunSelection("pt", 0, models, False)
    areas, booklets = ["MT", "CN", "LC", "CH"], [None] * 4
    together = all_area_inputs(reader, 2023, areas, booklets, runs)
    assert len(together) == 4
    for area, fetched in zip(areas, together, strict=True):
        alone = area_inputs(reader, 2023, area, None, runs)
        assert len(fetched.answers) and len(fetched.items) and len(fetched.points)
        for field in ("option_counts", "option_theta_counts", "items", "answers", "points",
                      "human_lengths", "model_lengths"):
            pd.testing.assert_frame_equal(getattr(fetched, field), getattr(alone, field))
    # Each area got its own items, in the order asked.
    item_sets = [set(inputs.items["item_id"]) for inputs in together]
    assert sum(len(items) for items in item_sets) == len(set().union(*item_sets))
    assert [set(inputs.points["area"]) for inputs in together] == [{area} for area in areas]
