"""The paper's published runs on the dashboard: the real 2019–2022 booklets, item files only,
both results files and the 2022 texts, as a new user would load them."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.page_support import (
    MODEL_SECTIONS,
    PAGES,
    PER_MODEL_PAGES,
    RUNS,
    assert_clean,
    charts,
    messages,
    open_section,
    run_page,
    series_names,
)
from tests.paper_db_support import RESULT_FILES, SEED_SERIES, SHUFFLE_SERIES


@pytest.fixture
def paper_dashboard(monkeypatch, paper_db):  # the paper's runs (tests/paper_db_support.py)
    monkeypatch.setenv("ENEM_DB", str(paper_db))
    return paper_db


@pytest.mark.parametrize("year", [2019, 2020, 2021, 2022])
@pytest.mark.parametrize("language", ["pt", "en"])
def test_every_paper_series_is_drawn_for_every_year_and_language(paper_dashboard, year,
                                                                 language):
    app = run_page("pages/Accuracy_vs_ability.py", {"year": str(year), "lang": language})
    assert_clean(app)
    assert set(SEED_SERIES + SHUFFLE_SERIES) <= series_names(app)
    assert "No model runs" not in messages(app)


@pytest.mark.parametrize("page", [*PAGES, RUNS])
def test_every_page_shows_the_paper_runs_on_the_real_2022_booklets(paper_dashboard, page):
    app = run_page(page, {"year": "2022"})
    assert_clean(app)
    assert "holds only its item file" in messages(app)
    assert "No model runs" not in messages(app)
    if page in PER_MODEL_PAGES:
        # A page of tabs: the tab that draws the runs (an items-only year has no candidates'
        # options, so Options and traps' first tab draws none).
        section = {**MODEL_SECTIONS, "pages/Options_and_traps.py": "Difficulty"}.get(page)
        if section:
            app = open_section(app, section)
            assert_clean(app)
        assert "llama2-13b · few-shot · 30 seeds" in series_names(app)


def test_the_paper_theta_is_on_screen(paper_dashboard, real_data):
    """Runs imported with the paper's grid: the table's mean θ per series is the mean of the
    published IRT_SCORE over the same rows, and captions say the runs were scored otherwise
    than the year's candidates would be (INEP's grid, the store's default)."""
    app = run_page("pages/Accuracy_vs_ability.py", {"year": "2021", "lang": "en"})
    shown = next(f.value for f in app.dataframe if "mean_theta" in f.value)
    published = pd.read_parquet(real_data / "paper-results" / RESULT_FILES[0])
    rows = published[(published["EXAM_YEAR"] == "2021") & (published["LANGUAGE"] == "en")]
    expected = rows.groupby(["MODEL_NAME", "MODEL_SIZE", "EXAM_SUBJECT"], dropna=False)[
        "IRT_SCORE"].mean()
    for (name, size, area), theta in expected.items():
        model = name if pd.isna(size) else f"{name}-{size}"
        mean = shown[(shown["model"] == f"{model} · few-shot · 30 seeds")
                     & (shown["area"] == area)]["mean_theta"]
        assert len(mean) == 1 and abs(float(mean.iloc[0]) - theta) < 1e-9, (model, area)
    captions = " ".join(c.value for c in app.caption)
    assert ("θ: EAP, 40 points on [-4, 4], D = 1, ENEM nota. Humans: no candidates (item file "
            "only). Model runs scored otherwise: EAP, 121 points on [-6, 6], D = 1, ENEM nota."
            ) in captions
    data = run_page("pages/Data.py")
    runs = next(f.value for f in data.dataframe if "series" in f.value)
    assert set(runs["scoring"]) == {"EAP, 121 points on [-6, 6], D = 1, ENEM nota"}
    assert set(runs.loc[runs["series"].isin(SEED_SERIES), "repetition"]) == {"seed"}
    assert set(runs.loc[runs["series"].isin(SHUFFLE_SERIES), "repetition"]) == {"shuffle"}


def test_test_information_uses_the_booklet_the_models_answered(paper_dashboard):
    """No candidates to say which booklet is the main one: the curves are drawn for the booklet
    the runs answered (2019: 519 CN, 520 CH, 521 LC, 522 MT), not the lowest CO_PROVA."""
    app = run_page("pages/Test_information.py", {"year": "2019"})
    assert_clean(app)
    verdicts = next(f.value for f in app.dataframe if "verdict" in f.value)
    assert verdicts.groupby("area")["booklet"].unique().map(list).to_dict() == {
        "CN": [519], "CH": [520], "LC": [521], "MT": [522]}
    ticks = [axis.get("tickvals") for key, axis in charts(app)[0]["layout"].items()
             if key.startswith("yaxis") and axis.get("tickvals")]
    assert all(len(values) == len(SEED_SERIES + SHUFFLE_SERIES) for values in ticks) and ticks
