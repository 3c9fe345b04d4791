"""Years: the band rule on hand-made difficulties; the page's numbers against plain SQL over
the same store (the humans' mean θ and percent correct from the candidates' score rows, each
run's mean θ per year from its patterns, the per-band humans' percent correct from the item
statistics and the runs' correct rate per band from their answers, with the thirds cut by
DuckDB's ``ntile``); the page with one year, two years, and a year stored from its item file
alone, under AppTest and in Chromium (screenshots under test-artifacts/browser/years_*.png); and
the paper's published runs: each run's θ per year is the plain mean of ``IRT_SCORE``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.years import data as yd
from dashboard.years.figure import ROW_PER_YEAR_MAX, band_figure
from enem.areas import AREAS
from store import trend_queries as tq
from store.connection import connected, open_reader, writing
from store.item_queries import main_booklet
from store.layout import copy_store
from store.model_sql import UNCOUNTED_SHOTS
from testbed.fake_runs import add_test_model_runs
from tests.browser_support import (
    ARTIFACTS,
    BROWSER_ARGS,
    CHROMIUM,
    new_page,
    require_browser,
    serving,
    wait_until_rendered,
)
from tests.page_support import assert_clean, charts, messages, open_section, run_page
from tests.paper_db_support import RESULT_FILES
from workflows.ingest import ingest_items, ingest_year

PAGE = "pages/Years.py"
STRONG = "test-strong-it"
#: The test runs' labels (testbed/fake_runs.py labels each run by its model id).
TEST_RUNS = ["test-strong-it", "test-odd-base", "test-random-baseline"]


def _runs_in_another_year(path: Path, year: int, seed: int) -> None:
    """Synthetic test runs on ``year``, stored as further years of the 2023 test runs (one run
    answering several exams, as the paper's imported runs do): same run id and label."""
    add_test_model_runs(path, year=year, shuffles=4, seed=seed, shots=(0,))
    with writing(path) as con:
        for label in TEST_RUNS:
            added, kept = f"{label}-{year}-fixture", f"{label}-2023-fixture"
            for table in ("model_scores", "model_responses"):
                con.execute(f"UPDATE {table} SET run_id = ? WHERE run_id = ?", [kept, added])
            con.execute("DELETE FROM model_runs WHERE run_id = ?", [added])
            con.execute("UPDATE model_runs SET years = years || ',' || ? WHERE run_id = ?",
                        [str(year), kept])


@pytest.fixture(scope="module")
def two_years_db(tmp_path_factory, pages_models_db, demo_files_2019) -> Path:
    """The page tests' 2023 demo with test runs, plus a 2019 demo year with candidates and the
    test runs' answers to it."""
    path = tmp_path_factory.mktemp("years") / "two_years.duckdb"
    copy_store(pages_models_db, path)
    ingest_year(path, 2019, demo_files_2019.microdata, demo_files_2019.items, progress=False,
                source="demo", is_synthetic=True)
    _runs_in_another_year(path, 2019, seed=19)
    return path


@pytest.fixture(scope="module")
def items_only_db(tmp_path_factory, two_years_db, demo_files_2024) -> Path:
    """``two_years_db`` plus 2024 stored from its item file alone, answered by the test runs."""
    path = tmp_path_factory.mktemp("years_items_only") / "items_only.duckdb"
    copy_store(two_years_db, path)
    ingest_items(path, 2024, demo_files_2024.items)
    _runs_in_another_year(path, 2024, seed=24)
    return path


def _sql(path: Path, query: str, params: dict | list | None = None) -> pd.DataFrame:
    con = open_reader(path)
    try:
        return con.execute(query, params or []).df()
    finally:
        con.close()


def _page_numbers(path: Path, years: list[int], language: str = "pt", shots: int = 0,
                  runs: list[str] = TEST_RUNS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The page's two tables, computed from the store as the page does."""
    with connected(path, read_only=True) as con:
        humans = tq.year_humans(con, years, AREAS)
        patterns = tq.year_patterns(con, years, AREAS, runs, language, shots)
        banded = yd.banded_items(tq.year_items(con, years, AREAS, runs, language, shots))
        answers = tq.band_answers(con, years, AREAS, runs, language, shots, False,
                                  yd.band_keys(banded))
    return yd.year_means(humans, patterns), yd.band_means(banded, answers)


# ---------------------------------------------------------------------------------------------
# The band rule


def test_band_rule_on_hand_made_difficulties():
    b = [0.5, -1.0, 2.0, 0.1, 3.0, -0.2]
    assert yd.difficulty_bands(b, [10, 11, 12, 13, 14, 15]).tolist() == [1, 0, 2, 1, 2, 0]
    # Seven items: thirds of 3, 2 and 2 (the larger first); equal b are ordered by item id.
    assert yd.difficulty_bands([0.0] * 7, [70, 10, 60, 20, 50, 30, 40]).tolist() == \
        [2, 0, 2, 0, 1, 0, 1]
    assert yd.difficulty_bands([1.3], [5]).tolist() == [0]
    assert yd.difficulty_bands([1.0, -1.0], [1, 2]).tolist() == [1, 0]
    assert yd.difficulty_bands([], []).tolist() == []
    with pytest.raises(ValueError, match="finite"):
        yd.difficulty_bands([0.1, np.nan, 0.3], [1, 2, 3])


@pytest.mark.parametrize("n", range(1, 61))
def test_thirds_are_equal_in_size_and_ordered_by_difficulty(n):
    rng = np.random.default_rng(n)
    b = np.round(rng.normal(1.0, 1.0, n), 1)  # rounded: ties happen
    ids = rng.permutation(n) + 1000
    bands = yd.difficulty_bands(b, ids)
    sizes = np.bincount(bands, minlength=3)
    assert sizes.sum() == n and sizes.max() - sizes.min() <= 1
    assert list(sizes) == sorted(sizes, reverse=True)  # the larger thirds first
    order = np.lexsort((ids, b))
    assert (np.diff(bands[order]) >= 0).all()  # an easier item never lands in a harder third


def test_banded_items_cut_each_year_and_area_on_its_own():
    items = pd.DataFrame({"year": [2019] * 3 + [2023] * 3, "area": ["MT"] * 6,
                          "item_id": [1, 2, 3, 4, 5, 6],
                          "b": [3.0, 2.0, 1.0, -3.0, -2.0, -1.0]})
    # Every 2023 item is easier than every 2019 item, yet each year has its own three thirds.
    assert yd.banded_items(items)["band"].tolist() == [2, 1, 0, 0, 1, 2]


# ---------------------------------------------------------------------------------------------
# The numbers, against plain SQL over the same store


def test_year_means_are_the_plain_means_of_the_store(two_years_db):
    means, _ = _page_numbers(two_years_db, [2019, 2023])
    humans = _sql(two_years_db, """
        SELECT year, area, count(*) AS n, avg(theta) AS theta,
               avg(100.0 * ctt / n_scored) AS pct, stddev_samp(theta) AS theta_sd
        FROM scores WHERE n_scored > 0 AND isfinite(theta) GROUP BY year, area""")
    assert len(humans) == 8  # two years × four areas
    for row in humans.itertuples():
        shown = means[(means["year"] == row.year) & (means["area"] == row.area)
                      & (means["series"] == yd.HUMANS)].set_index("statistic")
        assert shown.loc["θ", "n"] == row.n and shown.loc["θ", "n_of"] == "candidates"
        assert shown.loc["θ", "mean"] == pytest.approx(row.theta, abs=1e-9)
        assert shown.loc["% correct", "mean"] == pytest.approx(row.pct, abs=1e-9)
        half = 1.96 * row.theta_sd / np.sqrt(row.n)
        assert shown.loc["θ", "ci_high"] == pytest.approx(row.theta + half, abs=1e-9)

    models = _sql(two_years_db, """
        SELECT coalesce(r.label, r.model_id) AS series, m.year, m.area, count(*) AS n,
               avg(m.theta) AS theta, stddev_samp(m.theta) AS theta_sd,
               avg(100.0 * m.ctt / m.n_scored) AS pct, stddev_samp(100.0 * m.ctt / m.n_scored)
                   AS pct_sd
        FROM model_scores m JOIN model_runs r USING (run_id)
        WHERE m.prompt_language = 'pt' AND m.shots = 0
          AND coalesce(r.label, r.model_id) IN ('test-strong-it', 'test-odd-base',
                                                'test-random-baseline')
        GROUP BY ALL""")
    assert len(models) == 3 * 2 * 4
    shown = means[means["series"] != yd.HUMANS]
    assert len(shown) == 2 * len(models)
    for row in models.itertuples():
        own = shown[(shown["series"] == row.series) & (shown["year"] == row.year)
                    & (shown["area"] == row.area)].set_index("statistic")
        assert own.loc["θ", "n"] == row.n == (8 if row.year == 2023 else 4)
        assert own.loc["θ", "mean"] == pytest.approx(row.theta, abs=1e-9)
        assert own.loc["% correct", "mean"] == pytest.approx(row.pct, abs=1e-9)
        half = 1.96 * row.pct_sd / np.sqrt(row.n)
        assert own.loc["% correct", "ci_low"] == pytest.approx(row.pct - half, abs=1e-9)
        assert own.loc["% correct", "ci_high"] == pytest.approx(row.pct + half, abs=1e-9)
    # The strong model is well above the candidates' mean θ in both years.
    strong = shown[(shown["series"] == STRONG) & (shown["statistic"] == "θ")]
    assert set(strong["year"]) == {2019, 2023} and (strong["mean"] > 1.0).all()


def _independent_bands(path: Path, year: int, area: str) -> pd.DataFrame:
    """The reference form's usable items with their third, cut by DuckDB's ntile(3) (equal
    sizes, the larger first, in order of b then item id) rather than by the page's rule."""
    with connected(path, read_only=True) as con:
        booklet = main_booklet(con, year, area)
    return _sql(path, """
        SELECT item_id, b, ntile(3) OVER (ORDER BY b, item_id) - 1 AS band
        FROM (SELECT item_id, any_value(b) AS b FROM items
              WHERE year = $year AND booklet_id = $booklet AND position IS NOT NULL
              GROUP BY item_id
              HAVING NOT bool_or(coalesce(abandoned, false)) AND any_value(b) IS NOT NULL)""",
                {"year": year, "booklet": booklet})


def test_band_numbers_are_the_plain_means_of_the_store(two_years_db):
    _, bands = _page_numbers(two_years_db, [2019, 2023])
    checked = 0
    for year in (2019, 2023):
        for area in AREAS:
            items = _independent_bands(two_years_db, year, area)
            assert len(items) >= 40
            con = open_reader(two_years_db)
            try:
                con.register("banded", items)
                humans = con.execute("""
                    SELECT band, count(*) AS items, avg(100 * s.p_value) AS pct
                    FROM banded JOIN item_stats s USING (item_id)
                    WHERE s.year = $year AND s.area = $area GROUP BY band""",
                                     {"year": year, "area": area}).df()
                models = con.execute("""
                    WITH per_pattern AS (
                        SELECT coalesce(r.label, r.model_id) AS series, m.run_id, m.shuffle,
                               band, 100.0 * avg(m.correct::INTEGER) AS pct
                        FROM model_responses m JOIN model_runs r USING (run_id)
                        JOIN banded USING (item_id)
                        WHERE m.year = $year AND m.area = $area AND m.prompt_language = 'pt'
                          AND m.shots = 0
                          AND coalesce(r.label, r.model_id) LIKE 'test-%'
                        GROUP BY ALL)
                    SELECT series, band, count(*) AS n, avg(pct) AS pct,
                           stddev_samp(pct) AS sd
                    FROM per_pattern GROUP BY series, band""",
                                     {"year": year, "area": area}).df()
            finally:
                con.close()
            shown = bands[(bands["year"] == year) & (bands["area"] == area)]
            for row in humans.itertuples():
                own = shown[(shown["series"] == yd.HUMANS) & (shown["band"] == row.band)]
                assert len(own) == 1 and own["n"].iloc[0] == row.items
                assert own["items"].iloc[0] == row.items
                assert own["mean"].iloc[0] == pytest.approx(row.pct, abs=1e-9)
                checked += 1
            assert len(models) == 3 * 3
            for row in models.itertuples():
                own = shown[(shown["series"] == row.series) & (shown["band"] == row.band)]
                assert len(own) == 1 and own["n"].iloc[0] == row.n
                assert own["mean"].iloc[0] == pytest.approx(row.pct, abs=1e-9)
                assert own["ci_high"].iloc[0] == pytest.approx(
                    row.pct + 1.96 * row.sd / np.sqrt(row.n), abs=1e-9)
                checked += 1
    assert checked == 2 * 4 * (3 + 9)
    # The humans find the hardest third harder than the easiest, in every year and area.
    human = bands[bands["series"] == yd.HUMANS].pivot_table(
        index=["year", "area"], columns="band", values="mean")
    assert (human[0] > human[2]).all()


def test_an_items_only_year_shows_the_models_alone(items_only_db):
    means, bands = _page_numbers(items_only_db, [2019, 2023, 2024])
    in_2024 = means[means["year"] == 2024]
    assert yd.HUMANS not in set(in_2024["series"])
    assert set(in_2024["series"]) == set(TEST_RUNS)
    assert yd.HUMANS not in set(bands.loc[bands["year"] == 2024, "series"])
    assert set(bands.loc[bands["year"] == 2024, "series"]) == set(TEST_RUNS)
    # Without candidates the reference form is the booklet the runs answered.
    with connected(items_only_db, read_only=True) as con:
        forms = tq.year_items(con, [2024], AREAS, TEST_RUNS, "pt", 0)
    answered = _sql(items_only_db, """SELECT area, any_value(booklet_id) AS booklet_id
                                      FROM model_scores WHERE year = 2024 GROUP BY area""")
    assert forms.groupby("area")["booklet_id"].first().to_dict() == \
        answered.set_index("area")["booklet_id"].to_dict()


def test_nothing_selected_gives_empty_tables(two_years_db):
    means, bands = _page_numbers(two_years_db, [1999], runs=[])
    assert means.empty and list(means.columns) == list(yd.YEAR_COLUMNS)
    assert bands.empty and list(bands.columns) == list(yd.BAND_COLUMNS)
    means, bands = _page_numbers(two_years_db, [2019, 2023], runs=[])
    assert set(means["series"]) == set(bands["series"]) == {yd.HUMANS}


def test_pooled_series_are_named_by_model(two_years_db):
    with connected(two_years_db, read_only=True) as con:
        pooled = tq.year_patterns(con, [2019, 2023], AREAS,
                                  [STRONG, "random-baseline · 0-shot · 30 shuffles"], "pt", 0,
                                  pooled=True)
    assert set(pooled["series"]) == {STRONG, "random-baseline"}


# ---------------------------------------------------------------------------------------------
# The page


def _year_figure_x(app) -> dict[str, list[str]]:
    """Series name → the years of its points in the first (θ) panel."""
    figure = charts(app)[0]
    return {trace["name"]: list(trace["x"]) for trace in figure["data"]
            if trace.get("xaxis", "x") == "x"}


def test_the_page_shows_both_years(monkeypatch, two_years_db):
    monkeypatch.setenv("ENEM_DB", str(two_years_db))
    app = run_page(PAGE)
    assert_clean(app)
    assert "at least two ingested years" not in messages(app)
    assert [tab.label for tab in app.tabs] == ["By year", "By difficulty third"]
    assert len(charts(app)) == 1 and len(app.dataframe) == 1  # the first tab's
    x = _year_figure_x(app)
    assert x[STRONG] == ["2019", "2023"] and x[yd.HUMANS] == ["2019", "2023"]
    means, bands = _page_numbers(two_years_db, [2019, 2023],
                                 runs=[s for s in app.dataframe[0].value["series"].unique()
                                       if s != yd.HUMANS])
    shown = app.dataframe[0].value
    assert len(shown) == len(means)
    merged = shown.merge(means, on=["year", "area", "series", "statistic"])
    assert len(merged) == len(means)
    assert np.allclose(merged["mean_x"], merged["mean_y"])
    captions = " ".join(c.value for c in app.caption)
    app = open_section(app, "By difficulty third")
    assert_clean(app)
    assert len(charts(app)) == 1 and len(app.dataframe) == 1
    titles = {a["text"] for a in charts(app)[0]["layout"]["annotations"]}
    assert {"2019 · MT — Mathematics", "2023 · CN — Natural Sciences"} <= titles
    assert len(app.dataframe[0].value) == len(bands)
    captions += " ".join(c.value for c in app.caption)
    assert "No humans in" not in captions


def test_the_page_with_one_year_says_years_need_two(models_db):
    app = run_page(PAGE)
    assert_clean(app)
    assert "needs at least two ingested years" in messages(app)
    assert "holds only 2023" in messages(app)
    assert len(charts(app)) == 1
    assert len(charts(open_section(run_page(PAGE), "By difficulty third"))) == 1
    assert set(_year_figure_x(app)[STRONG]) == {"2023"}
    assert set(app.dataframe[0].value["year"]) == {2023}


def test_the_page_names_a_year_without_humans(monkeypatch, items_only_db):
    monkeypatch.setenv("ENEM_DB", str(items_only_db))
    app = run_page(PAGE, {"area": ["CN", "MT"]})
    assert_clean(app)
    captions = " ".join(c.value for c in app.caption)
    assert "No humans in 2024 (stored from the item file alone" in captions
    x = _year_figure_x(app)
    assert x[STRONG] == ["2019", "2023", "2024"] and x[yd.HUMANS] == ["2019", "2023"]
    assert set(app.dataframe[0].value["area"]) == {"CN", "MT"}


def test_the_page_follows_the_prompt_language(models_db):
    app = run_page(PAGE, {"lang": "en"})
    english = app.dataframe[0].value
    app = run_page(PAGE, {"lang": "pt"})
    portuguese = app.dataframe[0].value
    strong = [frame[(frame["series"] == STRONG) & (frame["statistic"] == "θ")]
              .set_index("area")["mean"] for frame in (english, portuguese)]
    # The strong test model is 0.3 logits stronger in English (testbed/fake_runs.py).
    assert (strong[0] - strong[1]).mean() > 0.15


def test_the_page_in_chromium(two_years_db, items_only_db, pages_models_db):
    """Screenshots of both tabs of the page with two years, with a year without humans and
    with one year (test-artifacts/browser/years_*.png): no exception, each tab's figure
    drawn."""
    sync_playwright = require_browser()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    stores = {"two_years": two_years_db, "items_only": items_only_db,
              "one_year": pages_models_db}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            for name, db in stores.items():
                with serving(db, f"streamlit-years-{name}.log") as base:
                    page = new_page(browser, {"width": 1440, "height": 3600})
                    for section, shot in (("", "years"), ("?section=By+difficulty+third",
                                                          "bands")):
                        page.goto(f"{base}/Years{section}", timeout=90_000)
                        wait_until_rendered(page, 1)
                        page.screenshot(path=str(ARTIFACTS / f"years_{name}_{shot}.png"),
                                        full_page=True)
                        assert page.locator('[data-testid="stException"]').count() == 0
                        assert page.locator(".js-plotly-plot").count() == 1
                        alerts = " ".join(
                            page.locator('[data-testid="stAlert"]').all_inner_texts())
                        assert ("at least two ingested years" in alerts) == (name == "one_year")
                    assert not page.errors, page.errors
                    page.close()
        finally:
            browser.close()


# ---------------------------------------------------------------------------------------------
# The paper's published runs (real files; skipped with a message when they are missing)


@pytest.mark.parametrize("language", ["en", "pt-br"])
def test_paper_runs_per_year_are_the_plain_means_of_the_results_files(paper_db, real_data,
                                                                      language):
    years = [2019, 2020, 2021, 2022]
    prompt = "en" if language == "en" else "pt"
    with connected(paper_db, read_only=True) as con:
        runs = [r[0] for r in con.execute("SELECT label FROM model_runs").fetchall()]
        patterns = tq.year_patterns(con, years, AREAS, runs, prompt, UNCOUNTED_SHOTS)
        forms = tq.year_items(con, years, AREAS, runs, prompt, UNCOUNTED_SHOTS)
    means = yd.year_means(pd.DataFrame(columns=["year"]), patterns)
    compared = 0
    for name, kind in zip(RESULT_FILES, ("30 seeds", "30 shuffles"), strict=True):
        rows = pd.read_parquet(real_data / "paper-results" / name)
        rows = rows[rows["LANGUAGE"] == language]
        expected = rows.groupby(["MODEL_NAME", "MODEL_SIZE", "EXAM_YEAR", "EXAM_SUBJECT"],
                                dropna=False)["IRT_SCORE"].agg(["mean", "size"])
        for (model, size, year, area), published in expected.iterrows():
            series = f"{model if pd.isna(size) else f'{model}-{size}'} · few-shot · {kind}"
            own = means[(means["series"] == series) & (means["year"] == int(year))
                        & (means["area"] == area) & (means["statistic"] == "θ")]
            assert len(own) == 1, (series, year, area)
            assert own["n"].iloc[0] == published["size"] == 30
            assert own["mean"].iloc[0] == pytest.approx(published["mean"], abs=1e-6)
            compared += 1
        # Years without candidates: the thirds are cut on the booklet the paper answered.
        booklets = rows.groupby(["EXAM_YEAR", "EXAM_SUBJECT"])["CO_PROVA"].first()
        for (year, area), booklet in booklets.items():
            form = forms[(forms["year"] == int(year)) & (forms["area"] == area)]
            assert set(form["booklet_id"]) == {int(booklet)}, (year, area)
    assert compared == (5 + 4) * 4 * 4  # nine runs, four years, four areas


# ---------------------------------------------------------------------------------------------
# The band figure's two layouts

def _synthetic_bands(years: list[int], areas: list[str], series: list[str]) -> pd.DataFrame:
    """band_means-shaped rows: mean = year − 2000 + 10·band + 100·(series index), so every
    point says where it belongs; area MT has no rows in the middle third."""
    rows = []
    for year in years:
        for area in areas:
            for band, name in enumerate(yd.BAND_NAMES):
                if area == "MT" and band == 1:
                    continue
                for index, label in enumerate(series):
                    mean = year - 2000 + 10 * band + 100 * index
                    rows.append((year, area, band, name, 15, -1.0, 1.0, label, 5, "repetitions",
                                 mean, 1.0, mean - 1, mean + 1))
    return pd.DataFrame(rows, columns=list(yd.BAND_COLUMNS))


def _panel_points(figure, title: str) -> dict[str, tuple[list, list]]:
    """Series → (x, y) of the panel titled ``title`` (a subplot title annotation)."""
    annotations = [a for a in figure.layout.annotations if a.text == title]
    assert len(annotations) == 1, title
    # make_subplots writes titles in panel order, so the title's index is the panel's.
    index = list(figure.layout.annotations).index(annotations[0])
    axis = "x" if index == 0 else f"x{index + 1}"
    return {trace.name: (list(trace.x), list(trace.y)) for trace in figure.data
            if trace.xaxis == axis}


def test_band_figure_draws_a_row_per_year_up_to_three_years():
    years, areas, series = [2021, 2022, 2023], ["CN", "MT"], [yd.HUMANS, "model-a"]
    figure = band_figure(_synthetic_bands(years, areas, series), areas, series, years)
    titles = [a.text for a in figure.layout.annotations][:6]
    assert titles[0].startswith("2021 · CN") and titles[5].startswith("2023 · MT")
    x, y = _panel_points(figure, titles[2])["model-a"]  # 2022 · CN
    assert x == list(yd.BAND_NAMES) and y == [122, 132, 142]


def test_band_figure_puts_years_on_x_beyond_three_years():
    years = list(range(2014, 2024))
    areas, series = ["CN", "MT"], [yd.HUMANS, "model-a"]
    assert len(years) > ROW_PER_YEAR_MAX
    figure = band_figure(_synthetic_bands(years, areas, series), areas, series, years)
    titles = [a.text for a in figure.layout.annotations]
    panel_titles = [t for t in titles if " · " in t]
    assert len(panel_titles) == 3 * len(areas)  # a row per third, not per year
    hardest_cn = next(t for t in panel_titles if t == "CN · hardest third")
    x, y = _panel_points(figure, hardest_cn)["model-a"]
    assert x == [str(year) for year in years]
    assert y == [year - 2000 + 20 + 100 for year in years]
    easiest_mt = next(t for t in panel_titles if t == "MT · easiest third")
    _, y = _panel_points(figure, easiest_mt)[yd.HUMANS]
    assert y == [year - 2000 for year in years]
    # MT has no middle third: its panel says so instead of drawing nothing.
    assert "no humans or runs in this area" in titles
    assert figure.layout.xaxis.categoryarray == tuple(str(year) for year in years)
    # Hovers: the custom numbers per point (b range, items) and the words of what n counts.
    model = next(trace for trace in figure.data if trace.name == "model-a")
    assert "%{customdata[2]} repetitions" in model.hovertemplate
    assert "{n_of}" not in model.hovertemplate
    assert model.customdata.shape == (len(years), 6) and set(model.customdata[:, 5]) == {15}
    assert list(model.customdata[:, 3]) == [-1.0] * len(years)
