"""Correctness by the key's shown position on the Options and traps page: the tables on
constructed answers (by hand and against scipy), the page's two figures and its table against
counts made here from the store's rows, its empty states, and the paper's shuffle runs imported
from the real file, checked against the file itself."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from scipy import stats

from dashboard.options.data import answer_table, human_items
from enem.areas import AREAS
from store.connection import connected, open_reader, writing
from store.layout import copy_store
from tests.page_support import (
    assert_clean,
    charts,
    decoded,
    messages,
    open_section,
    run_page,
    run_via_home,
)
from workflows.key_positions import (
    dependence_correlations,
    key_dependence,
    key_position_counts,
    rescored_items,
    shuffled_series,
)
from workflows.results_io import import_results_summary

PAGE = "pages/Options_and_traps.py"
#: The page's tab of these figures.
SECTION = "Key position"
LETTERS = "ABCDE"
SHUFFLE_FILE = "enem-experiments-results-shuffle-processed-with-irt-lz.parquet"
MAIN_FILE = "enem-experiments-results-processed-with-irt-lz.parquet"
PAPER_BOOKLETS_2022 = {"CN": 1092, "CH": 1062, "LC": 1072, "MT": 1082}


def _dependence_by_scipy(answers: np.ndarray, correct: np.ndarray) -> float:
    """χ² of (correct, wrong) × positions that held the key by scipy; 0 when correctness never
    varies (scipy refuses a table with an empty row), NaN with fewer than two positions."""
    shown = answers > 0
    if shown.sum() < 2:
        return float("nan")
    if correct.sum() in (0, answers.sum()):
        return 0.0
    table = np.array([correct[shown], (answers - correct)[shown]])
    return float(stats.chi2_contingency(table, correction=False).statistic)


def _pearson_by_scipy(x, y) -> tuple[float, float, int]:
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y)
    result = stats.pearsonr(x[keep], y[keep])
    return float(result.statistic), float(result.pvalue), int(keep.sum())


# --- the tables, on constructed answers ---------------------------------------------------------

def _items(rows: list[tuple[int, str, float]]) -> pd.DataFrame:
    items = pd.DataFrame(rows, columns=["item_id", "key", "b"]).assign(p_value=0.5, n=10)
    return human_items("MT", items, pd.DataFrame(columns=["item_id", "option", "n"]),
                       pd.DataFrame(columns=["item_id", "theta_bin", "option", "n"]))


def test_answer_table_reads_positions_from_a_partial_order():
    items = _items([(7, "A", 0.1)])
    answers = pd.DataFrame({"model": "m", "item_id": 7, "position": 3,
                            "permutation": ["?C??A", "?C??A", "?C??A", None],
                            "choice": ["C", "A", "B", "A"], "correct": [0, 1, 0, 1]})
    table = answer_table(answers, items)
    # "?C??A": the original C is shown under B and the key A under E; B's place is unknown.
    assert table["shown"].tolist() == [1, 4, -1, -1]
    assert table["key_shown"].tolist() == [4, 4, 4, -1]


def _answers(spec: dict[int, list[tuple[str, int]]], series: str = "m", position0: int = 1,
             keys: dict[int, str] | None = None) -> pd.DataFrame:
    """answer_table-like rows: per item a list of (letter the key was shown at, correct)."""
    rows = []
    for offset, (item, answers) in enumerate(spec.items()):
        key = (keys or {}).get(item, "A")
        for shown, correct in answers:
            chosen = LETTERS.index(key) if correct else (LETTERS.index(key) + 1) % 5
            rows.append({"model": series, "area": "MT", "item_id": item,
                         "position": position0 + offset, "key_shown": LETTERS.index(shown),
                         "correct": float(correct), "chosen": chosen,
                         "key_index": LETTERS.index(key)})
    return pd.DataFrame(rows)


def test_correct_rates_by_key_position_and_the_dependence_by_hand_and_by_scipy():
    rng = np.random.default_rng(5)
    spec = {item: [(LETTERS[rng.integers(5)], int(rng.random() < 0.2 + 0.12 * item))
                   for _ in range(30)] for item in range(1, 7)}
    spec[7] = [("A", 1), ("A", 1), ("C", 0), ("C", 0)]  # right at A only: χ² = 4, its maximum
    spec[8] = [("B", 1), ("B", 0)]  # the key always at B: nothing to compare
    spec[9] = [("B", 1), ("D", 1)]  # always right: 0
    b = {item: 0.3 * item - 1.0 for item in spec}
    items = _items([(item, "A", b[item]) for item in spec])
    answers = _answers(spec)
    counts = key_position_counts(answers, items)
    assert counts["key_position"].tolist()[:5] == list(LETTERS)
    assert counts["item_id"].unique().tolist() == list(spec)  # booklet order
    for item, given in spec.items():
        mine = counts[counts["item_id"] == item].set_index("key_position")
        for letter in LETTERS:
            asked = [ok for shown, ok in given if shown == letter]
            assert mine.loc[letter, "answers"] == len(asked)
            assert mine.loc[letter, "correct"] == sum(asked)
            if asked:
                assert mine.loc[letter, "accuracy"] == pytest.approx(sum(asked) / len(asked))
            else:
                assert np.isnan(mine.loc[letter, "accuracy"])
    dependence = key_dependence(counts).set_index("item_id")
    for item in spec:
        mine = counts[counts["item_id"] == item]
        expected = _dependence_by_scipy(mine["answers"].to_numpy(float),
                                        mine["correct"].to_numpy(float))
        got = dependence.loc[item, "dependence"]
        assert (np.isnan(got) and np.isnan(expected)) or got == pytest.approx(expected,
                                                                              rel=1e-12)
    assert dependence.loc[7, "dependence"] == pytest.approx(4.0)
    assert dependence.loc[9, "dependence"] == 0.0 and np.isnan(dependence.loc[8, "dependence"])
    correlation = dependence_correlations(dependence.reset_index()).iloc[0]
    r, p, n = _pearson_by_scipy(dependence["dependence"], dependence["b"])
    assert (correlation["series"], correlation["area"], correlation["items"]) == ("m", "MT", n)
    assert n == 8  # item 8 has no dependence
    assert correlation["r"] == pytest.approx(r, rel=1e-10)
    assert correlation["p_value"] == pytest.approx(p, rel=1e-8)
    assert shuffled_series(dependence.reset_index()) == ["m"]


def test_items_scored_against_another_key_are_left_out_and_named():
    """The paper scored one 2019 item with another key than INEP's: its correctness does not
    follow the stored key, so where that key was shown says nothing about it."""
    answers = _answers({1: [("A", 1), ("B", 0)], 2: [("A", 1), ("C", 0)]})
    answers.loc[answers["item_id"] == 2, "correct"] = 1 - answers["correct"]
    items = _items([(1, "A", 0.0), (2, "A", 1.0)])
    assert rescored_items(answers).to_dict("records") == [
        {"series": "m", "area": "MT", "item_id": 2, "position": 2}]
    assert set(key_position_counts(answers, items)["item_id"]) == {1}


def test_runs_that_never_moved_the_key_have_no_dependence():
    answers = _answers({1: [("A", 1), ("A", 0)], 2: [("C", 1), ("C", 1)]},
                       keys={1: "A", 2: "C"})
    counts = key_position_counts(answers, _items([(1, "A", 0.0), (2, "C", 1.0)]))
    dependence = key_dependence(counts)
    assert dependence["dependence"].isna().all()
    assert shuffled_series(dependence) == []
    assert np.isnan(dependence_correlations(dependence)["r"]).all()


# --- the page, on the synthetic test runs -------------------------------------------------------

def _figure(app, name: str, area: str | None = None) -> dict:
    for figure in charts(app):
        meta = figure["layout"].get("meta") or {}
        if meta.get("figure") == name and (area is None or meta.get("area") == area):
            return figure
    raise AssertionError(f"no figure {name} {area or ''}")


def _store_key_counts(db, series: str, area: str) -> dict[int, dict[str, list[int]]]:
    """Per item, per letter the key was shown under: [answers, correct], counted answer by
    answer from the stored option orders (pt, 0-shot, the page's default selection)."""
    con = open_reader(db)
    try:
        rows = con.execute(
            """SELECT m.item_id, m.permutation, m.correct, i.key FROM model_responses m
               JOIN model_runs r USING (run_id)
               JOIN (SELECT DISTINCT item_id, key FROM items WHERE year = 2023) i USING (item_id)
               WHERE m.year = 2023 AND m.area = ? AND m.prompt_language = 'pt'
                 AND m.shots = 0 AND coalesce(r.label, r.model_id) = ?""",
            [area, series]).fetchall()
    finally:
        con.close()
    counts: dict[int, dict[str, list[int]]] = defaultdict(lambda: {x: [0, 0] for x in LETTERS})
    for item, permutation, correct, key in rows:
        if key in LETTERS and permutation and correct is not None:
            cell = counts[int(item)][LETTERS[permutation.index(key)]]
            cell[0] += 1
            cell[1] += int(correct)
    return counts


def _share_trace(figure: dict) -> dict:
    """The trace of the shares correct (the figure draws every item's with one trace)."""
    found = [trace for trace in figure["data"]
             if (trace.get("meta") or {}).get("trace") == "share correct"]
    assert len(found) == 1
    return found[0]


def _item_bars(figure: dict) -> dict[int, dict[str, tuple[float, int, int]]]:
    """Per item, per letter the key was shown under: (bar height, answers, correct), read from
    the shares' trace (customdata rows: position, item_id, letter, correct, answers, accuracy)."""
    trace = _share_trace(figure)
    assert trace["meta"]["customdata"][:5] == ["position", "item_id", "key_position",
                                               "correct", "answers"]
    heights = decoded(trace["y"])
    bars: dict[int, dict[str, tuple[float, int, int]]] = defaultdict(dict)
    for (_, item, letter, correct, answers, accuracy), height in zip(trace["customdata"],
                                                                     heights, strict=True):
        assert height == pytest.approx(accuracy)
        bars[int(item)][letter] = (float(height), int(answers), int(correct))
    return dict(bars)


def _panel_positions(figure: dict) -> dict[int, tuple[float, float]]:
    """Per item's place in the booklet (Q): its panel's lower-left corner (the lowest x and
    the base of its bars)."""
    trace = _share_trace(figure)
    corners: dict[int, tuple[float, float]] = {}
    for row, x, base in zip(trace["customdata"], decoded(trace["x"]), decoded(trace["base"]),
                            strict=True):
        position, letter = int(row[0]), row[2]
        left, panel_base = corners.get(position, (np.inf, base))
        assert panel_base == base  # one panel, one base
        corners[position] = (min(left, x - LETTERS.index(letter)), base)
    return corners


def test_the_page_draws_correct_rates_by_key_position_item_by_item(models_db, pages_models_db):
    app = open_section(run_via_home(PAGE), SECTION)
    assert_clean(app)
    app.selectbox(key="options.keypos.series").set_value("test-odd-base").run()
    assert_clean(app)
    # one area's figure at a time, the first by default
    drawn = [figure["layout"]["meta"]["area"] for figure in charts(app)
             if (figure["layout"].get("meta") or {}).get("figure") == "key-positions"]
    assert len(drawn) == 1 and drawn != ["MT"]
    app.segmented_control(key="options.keypos.area").set_value("MT").run()
    assert_clean(app)
    expected = _store_key_counts(pages_models_db, "test-odd-base", "MT")
    figure = _figure(app, "key-positions", "MT")
    go.Figure(figure)  # plotly's own validation: the page builds it without
    bars = _item_bars(figure)
    assert len(bars) == len(expected) == 45
    for item, cells in bars.items():
        for letter, (height, answers, correct) in cells.items():
            assert (answers, correct) == tuple(expected[item][letter])
            assert answers > 0 and height == pytest.approx(correct / answers)
        assert len(cells) == sum(1 for a, _ in expected[item].values() if a)
    # items in booklet order: the panels are filled position by position, left to right and
    # top to bottom (one pair of axes: a panel is a window of it)
    panels = _panel_positions(figure)
    assert list(panels) == sorted(panels)
    assert [corner for _, corner in sorted(panels.items())] == sorted(
        panels.values(), key=lambda corner: (-corner[1], corner[0]))


#: The page shows p-values to three significant digits: at most half a unit of the third off.
SHOWN_P_REL = 5e-3


def _shown_p(text: str) -> float:
    """The number a p-value cell shows ('< 1e-300', an underflow, reads as 0)."""
    return 0.0 if str(text).startswith("<") else float(text)

def test_the_dependence_on_the_key_position_against_b_equals_scipy(models_db, pages_models_db):
    app = open_section(run_via_home(PAGE), SECTION)
    table = next(frame.value for frame in app.dataframe
                 if list(frame.value.columns)[:3] == ["series", "area", "items"])
    con = open_reader(pages_models_db)
    b = dict(con.execute("SELECT item_id, any_value(b) FROM items WHERE year = 2023 "
                         "GROUP BY item_id").fetchall())
    con.close()
    for series in ("test-strong-it", "test-odd-base"):
        for area in ("CN", "MT"):
            counts = _store_key_counts(pages_models_db, series, area)
            measure = {item: _dependence_by_scipy(
                np.array([cells[x][0] for x in LETTERS], float),
                np.array([cells[x][1] for x in LETTERS], float))
                for item, cells in counts.items()}
            items = sorted(measure)
            r, p, n = _pearson_by_scipy([measure[i] for i in items],
                                        [np.nan if b[i] is None else b[i] for i in items])
            row = table[(table["series"] == series) & (table["area"] == area)].iloc[0]
            assert row["items"] == n
            assert row["r"] == pytest.approx(r, rel=1e-9)
            assert _shown_p(row["p_value"]) == pytest.approx(p, rel=SHOWN_P_REL, abs=1e-300)
    scatter = _figure(app, "key-dependence")
    titles = " ".join(a["text"] for a in scatter["layout"]["annotations"])
    assert "r = " in titles and "p " in titles


def test_runs_that_never_moved_the_key_are_explained(monkeypatch, tmp_path, pages_models_db):
    path = tmp_path / "unshuffled.duckdb"
    copy_store(pages_models_db, path)
    with writing(path) as con:
        con.execute("UPDATE model_responses SET permutation = 'ABCDE'")
    monkeypatch.setenv("ENEM_DB", str(path))
    app = run_page(PAGE, {"section": SECTION})
    assert_clean(app)
    assert "showed no item's key at more than one position" in messages(app)
    assert not [f for f in charts(app) if (f["layout"].get("meta") or {}).get("figure")
                in ("key-positions", "key-dependence")]


def test_without_runs_the_key_position_section_says_so(no_runs_db):
    app = open_section(run_via_home(PAGE), SECTION)
    assert_clean(app)
    assert "No model runs for 2023" in messages(app)
    assert not [f for f in charts(app) if (f["layout"].get("meta") or {}).get("figure")
                in ("key-positions", "key-dependence")]


# --- the paper's shuffle runs, from the real file -----------------------------------------------

@pytest.fixture(scope="module")
def paper_store(tmp_path_factory, real_items_db, real_data):
    path = tmp_path_factory.mktemp("paper_key_positions") / "paper.duckdb"
    copy_store(real_items_db, path)
    with connected(path) as con:
        for name in (MAIN_FILE, SHUFFLE_FILE):
            import_results_summary(con, real_data / "paper-results" / name)
    return path


def _file_dependence(real_data, language: str) -> pd.DataFrame:
    """Per model, area and item of 2022, straight from the shuffle file and INEP's item file:
    the χ² of correct × key position (TX_GABARITO_SHUFFLE) and the item's b."""
    rows = pd.read_parquet(real_data / "paper-results" / SHUFFLE_FILE)
    rows = rows[(rows["EXAM_YEAR"].astype(int) == 2022) & (rows["LANGUAGE"] == language)]
    items = pd.read_csv(real_data / "items" / "ITENS_PROVA_2022.csv", sep=";",
                        encoding="latin-1")
    out = []
    for (name, size, area), group in rows.groupby(["MODEL_NAME", "MODEL_SIZE", "EXAM_SUBJECT"],
                                                  dropna=False):
        form = items[items["CO_PROVA"] == PAPER_BOOKLETS_2022[area]]
        if area == "LC":
            form = form[form["TP_LINGUA"].isna() | (form["TP_LINGUA"] == 1)]
        form = form.sort_values("CO_POSICAO")
        model = f"{name}-{size}" if isinstance(size, str) and size else name
        for index, (key, b) in enumerate(zip(form["TX_GABARITO"], form["NU_PARAM_B"], strict=True)):
            if key not in tuple(LETTERS):
                continue
            answers, correct = np.zeros(5), np.zeros(5)
            for shown, pattern in zip(group["TX_GABARITO_SHUFFLE"], group["RESPONSE_PATTERN"],
                                      strict=True):
                answers[LETTERS.index(shown[index])] += 1
                correct[LETTERS.index(shown[index])] += pattern[index] == "1"
            out.append({"series": f"{model} · few-shot · 30 shuffles", "area": area,
                        "dependence": _dependence_by_scipy(answers, correct), "b": b})
    return pd.DataFrame(out)


@pytest.mark.parametrize("language", ["pt", "en"])
def test_the_paper_shuffle_runs_on_the_real_2022_items_equal_the_file(monkeypatch, paper_store,
                                                                      real_data, language):
    monkeypatch.setenv("ENEM_DB", str(paper_store))
    app = run_page(PAGE, {"year": "2022", "lang": language, "area": list(AREAS),
                          "section": "Position bias"})
    assert_clean(app)
    left_out = " ".join(caption.value for caption in app.caption
                        if caption.value.startswith("Left out"))
    assert "30 shuffles" not in left_out and "30 seeds" not in left_out
    positions = next(frame.value for frame in app.dataframe
                     if list(frame.value.columns)[:2] == ["series", "answers"])
    assert (positions["answers"] > 0).all() and len(positions) == 9  # seeds and shuffles
    app = open_section(app, SECTION)
    assert_clean(app)
    table = next(frame.value for frame in app.dataframe
                 if list(frame.value.columns)[:3] == ["series", "area", "items"])
    expected = _file_dependence(real_data, "pt-br" if language == "pt" else "en")
    assert set(table["series"]) == set(expected["series"])  # the seed runs never moved a key
    for (series, area), group in expected.groupby(["series", "area"]):
        r, p, n = _pearson_by_scipy(group["dependence"], group["b"])
        row = table[(table["series"] == series) & (table["area"] == area)].iloc[0]
        assert row["items"] == n
        assert row["r"] == pytest.approx(r, rel=1e-9)
        assert _shown_p(row["p_value"]) == pytest.approx(p, rel=SHOWN_P_REL, abs=1e-300)


def test_the_item_the_paper_scored_with_its_own_key_is_left_out_and_named(monkeypatch,
                                                                         paper_store):
    """2019 MT booklet 522 position 16: the paper's key E, INEP's D (docs/methods.md)."""
    monkeypatch.setenv("ENEM_DB", str(paper_store))
    app = run_page(PAGE, {"year": "2019", "area": "MT", "section": SECTION})
    assert_clean(app)
    named = " ".join(caption.value for caption in app.caption)
    assert "MT Q16 (item " in named and "4 runs)" in named  # the four shuffle runs
    figure = _figure(app, "key-positions", "MT")
    positions = _panel_positions(figure)
    assert 16 not in positions and len(positions) == 44
