"""The Paper tables page and the workflows behind it, on the demo with synthetic test runs.

Table 1 is checked against the random runs' patterns read straight from the store, Table 2
against scipy's χ² on the page's own counts and against a brute-force count of the items,
Table 3 against scipy's Pearson r on the store's rows, and the attribute correction round trip
against a re-derivation. The launch button starts real random runs in a copy of the store.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analytics.ctt import discrimination_index
from store.catalogue_queries import model_catalogue
from store.connection import connected, open_reader, writing
from store.layout import copy_store
from store.model_queries import model_pattern_matrix
from store.paper_table_queries import area_item_attributes, random_series
from tests.page_support import assert_clean, charts, run_page
from workflows.paper_tables import (
    changed_attributes,
    derive_year_attributes,
    r_p_text,
    save_attribute_corrections,
)
from workflows.question_import import derive_item_attributes
from workflows.runs.service import list_runs

PAGE = "pages/Paper_tables.py"
YEAR = 2023
#: Min-K% values are made to follow this test model's 4-shot accuracy (r near 1) and to be
#: unrelated to the other's.
CORRELATED, UNRELATED = "test-strong-it", "test-odd-base"


def _add_min_k(path: Path) -> None:
    """Min-K% rows for two test models: one a linear function of its 4-shot accuracy per item
    (plus small noise), the other noise made exactly uncorrelated with its accuracy (r = 0 in
    every area and language, so its p is 1 whatever the noise draws)."""
    rng = np.random.default_rng(0)
    with writing(path) as con:
        accuracy = con.execute(
            """SELECT r.model_id, m.area, m.item_id, m.prompt_language AS language,
                      avg(CASE WHEN m.correct THEN 1.0 ELSE 0.0 END) AS accuracy
               FROM model_responses m JOIN model_runs r USING (run_id)
               WHERE m.shots = 4 AND r.model_id IN (?, ?) GROUP BY ALL
               ORDER BY ALL""",
            [CORRELATED, UNRELATED]).df()
        noise = rng.normal(0, 0.05, len(accuracy))
        unrelated = rng.normal(0, 0.5, len(accuracy))
        for rows in accuracy.groupby(["model_id", "area", "language"]).groups.values():
            values = accuracy.loc[rows, "accuracy"]
            centred = values.to_numpy() - values.mean()
            part = unrelated[rows]
            if centred @ centred > 0:  # remove the noise's projection on the accuracies
                unrelated[rows] = part - (part @ centred) / (centred @ centred) * centred
        # Eq. 4's sign (≥ 0): lower Min-K% where the model answers better, as for seen texts.
        accuracy["value"] = np.where(accuracy["model_id"] == CORRELATED,
                                     4 - 2 * accuracy["accuracy"] + noise, 4 + unrelated)
        accuracy["year"], accuracy["k_percent"] = YEAR, 20.0
        con.register("incoming", accuracy[["model_id", "year", "item_id", "language",
                                           "k_percent", "value"]])
        con.execute("INSERT INTO min_k_prob SELECT * FROM incoming")


@pytest.fixture(scope="module")
def paper_db(tmp_path_factory, pages_models_db) -> Path:
    """The demo with test runs, Min-K% values and item attributes derived from its texts."""
    path = tmp_path_factory.mktemp("paper") / "paper.duckdb"
    copy_store(pages_models_db, path)
    _add_min_k(path)
    derive_year_attributes(path, YEAR)
    return path


@pytest.fixture
def page_db(monkeypatch, paper_db):
    monkeypatch.setenv("ENEM_DB", str(paper_db))
    return paper_db


def _frame(app, columns: set[str]) -> pd.DataFrame:
    """The first dataframe of the page holding ``columns``."""
    for element in app.dataframe:
        if columns <= set(element.value.columns):
            return element.value
    raise AssertionError(f"no table with {columns}")


def test_table1_is_mean_and_sd_over_the_random_runs_repetitions(page_db):
    app = run_page(PAGE)
    assert_clean(app)
    table = _frame(app, {"CTT (%)", "θ", "l_z"})
    con = open_reader(page_db)
    raw = con.execute(
        """SELECT m.prompt_language, m.ctt, m.n_scored, m.theta, m.lz FROM model_scores m
           JOIN model_runs r USING (run_id)
           WHERE r.backend = 'random' AND m.area = 'MT' AND m.year = 2023""").df()
    con.close()
    for language in ("pt", "en"):
        part = raw[raw["prompt_language"] == language]
        percent = 100 * part["ctt"] / part["n_scored"]
        row = table[(table["language"] == language) & (table["area"] == "MT")].iloc[0]
        assert row["repetitions"] == len(part) == 30
        # Sample SD by hand: sqrt(Σ (x − mean)² / (n − 1)).
        sd = np.sqrt(((percent - percent.mean()) ** 2).sum() / (len(percent) - 1))
        assert row["CTT (%)"] == f"{percent.mean():.1f} ± {sd:.1f}"
        assert row["θ"] == f"{part['theta'].mean():.2f} ± {part['theta'].std(ddof=1):.2f}"
        assert row["l_z"] == f"{part['lz'].mean():.2f} ± {part['lz'].std(ddof=1):.2f}"
    assert len(charts(app)) >= 2


def test_table2_counts_every_item_and_matches_scipy(page_db):
    app = run_page(PAGE)
    table = _frame(app, {"χ²", "p", "attribute"})
    assert set(table["area"]) == {"CN", "CH", "LC", "MT"}
    with connected(page_db, read_only=True) as con:
        attributes = area_item_attributes(con, YEAR, "CN")
    counted = ["with · DI ≥ 0.2", "with · DI < 0.2", "without · DI ≥ 0.2", "without · DI < 0.2"]
    for _, row in table.iterrows():
        counts = row[counted].to_numpy(int).reshape(2, 2)
        assert counts.sum() == row["items"]
        if np.all(counts.sum(axis=0)) and np.all(counts.sum(axis=1)):
            statistic, p_value, _, _ = stats.chi2_contingency(counts, correction=True)
            assert row["χ²"] == pytest.approx(round(statistic, 3))
            assert row["p"] == pytest.approx(round(p_value, 3))
    images = table[(table["area"] == "CN") & (table["attribute"] == "contains images")].iloc[0]
    assert images[counted[0]] + images[counted[1]] == int(attributes["has_image"].sum())
    # Discriminating items: DI ≥ 0.2 over the non-random runs' patterns (pt, 0-shot).
    with connected(page_db, read_only=True) as con:
        labels = [m for m in model_catalogue(con)["model"] if m not in random_series(con)]
        long = model_pattern_matrix(con, YEAR, "CN", None, "pt", 0, labels)
    matrix = long.pivot_table(index="pattern", columns="item_id", values="correct")
    theta = long.drop_duplicates("pattern").set_index("pattern")["theta"][matrix.index]
    di = discrimination_index(matrix.to_numpy(float), theta.to_numpy(float))
    known = pd.Series(di, index=matrix.columns).reindex(attributes["item_id"]).dropna()
    assert images[counted[0]] + images[counted[2]] == int((known >= 0.2).sum())
    assert images["items"] == len(known)


def test_yates_toggle_changes_the_statistic(page_db):
    app = run_page(PAGE)
    with_yates = _frame(app, {"χ²"})["χ²"].to_numpy(float)
    app.toggle(key="paper.yates").set_value(False).run()
    assert_clean(app)
    without = _frame(app, {"χ²"})["χ²"].to_numpy(float)
    finite = np.isfinite(with_yates)
    assert finite.any()
    # Yates moves each count toward its expectation: the statistic never grows.
    assert np.all(with_yates[finite] <= without[finite] + 1e-9)
    assert np.any(with_yates[finite] < without[finite])


def test_table3_r_and_p_match_scipy_and_bold_marks_p_below_005(page_db):
    app = run_page(PAGE)
    assert_clean(app)
    markdown = next(m.value for m in app.markdown if m.value.startswith("| series"))
    con = open_reader(page_db)
    pairs = con.execute(
        """SELECT r.model_id, avg(CASE WHEN m.correct THEN 1.0 ELSE 0.0 END) AS accuracy,
                  any_value(k.value) AS min_k
           FROM model_responses m JOIN model_runs r USING (run_id)
           JOIN min_k_prob k ON k.model_id = r.model_id AND k.item_id = m.item_id
                AND k.language = m.prompt_language
           WHERE m.shots = 4 AND m.area = 'CN' AND m.prompt_language = 'pt'
           GROUP BY r.model_id, m.item_id""").df()
    con.close()
    lines = {line.split(" | ")[0].strip("| ").split(" · ")[0]: line
             for line in markdown.splitlines()[2:] if " | pt | " in line}
    for model, bold in ((CORRELATED, True), (UNRELATED, False)):
        part = pairs[pairs["model_id"] == model]
        expected = stats.pearsonr(part["min_k"], part["accuracy"])
        cell = lines[model].split(" | ")[2]  # CN is the first area column
        # † marks a cell that also survives Benjamini–Hochberg over the table (q >= p: only
        # bold cells can carry it; the correlated model's p is far below 0.05)
        assert ("†" in cell) is bold
        r = round(expected.statistic, 2) + 0.0
        assert cell.strip("*† ") == f"{r:.2f} ({expected.pvalue:.3f})"
        assert cell.startswith("**") is bold
    figure = next(c for c in charts(app) if any("least-squares" in (t.get("name") or "")
                                                for t in c["data"]))
    assert any(t.get("name") == CORRELATED for t in figure["data"])
    # The correlated model is the one the direction reads as contamination: r < 0.
    assert lines[CORRELATED].split(" | ")[2].strip("* ").startswith("-")
    # Figure and Table 3 say which way means "seen".
    direction = ("lower Min-K% = the text's least likely tokens are likely to the model, as for "
                 "a text it may have seen; the paper reads a negative r between accuracy and "
                 "Min-K% as evidence of contamination")
    captions = [c.value for c in app.caption]
    assert any("Eq. 4" in c and direction in c for c in captions)  # the figure's
    assert any(c.startswith("Pearson's r") and direction in c for c in captions)  # Table 3's
    assert "lower: text more familiar" in figure["layout"]["xaxis"]["title"]["text"]


def test_attribute_correction_survives_rederivation(tmp_path, paper_db):
    db = tmp_path / "corrected.duckdb"
    copy_store(paper_db, db)
    with connected(db, read_only=True) as con:
        original = area_item_attributes(con, YEAR, "MT")
    edited = original.copy()
    item = int(edited["item_id"].iloc[0])
    flipped = not bool(edited["has_image"].iloc[0])
    edited.loc[0, "has_image"] = flipped
    changes = changed_attributes(original, edited)
    assert [change[0] for change in changes] == [item]
    assert save_attribute_corrections(db, YEAR, changes) == 1
    assert derive_year_attributes(db, YEAR)[1] == 1
    with connected(db) as con:  # deriving this item alone again keeps it too
        assert derive_item_attributes(con, [(YEAR, item)]) == (0, 1)
    with connected(db, read_only=True) as con:
        after = area_item_attributes(con, YEAR, "MT").set_index("item_id")
    assert bool(after.loc[item, "has_image"]) is flipped
    assert after.loc[item, "source"] == "user"
    # A second correction of the same item replaces the first.
    edited.loc[0, "has_image"] = not flipped
    assert save_attribute_corrections(db, YEAR, changed_attributes(original.assign(
        has_image=original["has_image"].where(original["item_id"] != item, flipped)),
        edited)) == 1
    with connected(db, read_only=True) as con:
        again = area_item_attributes(con, YEAR, "MT").set_index("item_id")
    assert bool(again.loc[item, "has_image"]) is (not flipped)


def test_empty_states_without_runs_or_attributes(monkeypatch, pages_no_runs_db):
    monkeypatch.setenv("ENEM_DB", str(pages_no_runs_db))
    app = run_page(PAGE)
    assert_clean(app)
    text = " | ".join(e.value for e in app.info)
    assert "No random-baseline run for 2023" in text
    assert "No item attributes are stored for 2023" in text
    assert "Min-K% Prob values" in text


def test_launch_button_starts_the_missing_random_runs(monkeypatch, tmp_path, pages_no_runs_db,
                                                      as_operator):
    db = tmp_path / "launch.duckdb"
    copy_store(pages_no_runs_db, db)
    monkeypatch.setenv("ENEM_DB", str(db))
    app = run_page(PAGE, {"area": "MT"})
    app.multiselect(key="paper.languages").set_value(["en"]).run()
    app.button(key="paper.launch").click().run()
    assert_clean(app)
    assert "Started" in app.success[0].value
    runs = list_runs(tmp_path / "runs")
    assert [(r.spec["areas"], r.spec["languages"], r.spec["backend"]) for r in runs] == [
        (["MT"], ["en"], "random")]
    deadline = time.time() + 120
    while time.time() < deadline and list_runs(tmp_path / "runs")[0].state != "finished":
        time.sleep(1)
    app = run_page(PAGE, {"area": "MT"})
    table = _frame(app, {"CTT (%)"})
    assert table[["language", "area"]].values.tolist() == [["en", "MT"]]


def test_empty_and_missing_database_are_explained(monkeypatch, tmp_path, pages_empty_db):
    monkeypatch.setenv("ENEM_DB", str(pages_empty_db))
    app = run_page(PAGE)
    assert_clean(app)
    assert "is empty: nothing has been ingested yet" in " ".join(e.value for e in app.info)
    monkeypatch.setenv("ENEM_DB", str(tmp_path / "nothing.duckdb"))
    app = run_page(PAGE)
    assert_clean(app)
    # A viewer (AppTest shows no operator link) is told who builds it, without the path.
    shown = " ".join(e.value for e in app.info)
    assert "There is no store to show yet" in shown and str(tmp_path) not in shown


def test_r_p_text_prints_the_papers_format_and_no_negative_zero():
    assert r_p_text(0.3149, 0.0042) == "0.31 (0.004)"
    assert r_p_text(-1e-17, 1.0) == "0.00 (1.000)"
    assert r_p_text(-0.304, 0.0421) == "-0.30 (0.042)"
    assert r_p_text(float("nan"), float("nan")) == "—"
