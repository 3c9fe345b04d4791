"""Runs labelled by what they are: a run imported with a prompt type that gives no count (the
paper's "few-shot", stored with no shots) is shown under its own shots setting, named after its
prompt type, never under "0-shot" with a caption that says 0-shot."""

from __future__ import annotations

import json

import pytest

from cli.main import build_parser
from cli.report_commands import selection_from
from store.connection import writing
from store.layout import copy_store
from store.model_sql import UNCOUNTED_SHOTS
from tests.page_support import assert_clean, charts, run_page
from workflows.report.build import Selection

FEW_SHOT = "test-odd-base · few-shot · 8 shuffles"
ZERO_SHOT_RUN = "test-strong-it"
PAGES = ("pages/Accuracy_vs_ability.py", "pages/Person_fit.py",
         "pages/Test_information.py", "pages/Response_patterns.py")


@pytest.fixture(scope="module")
def few_shot_db(tmp_path_factory, pages_models_db):
    """The test runs plus a copy of one run's 4-shot answers stored as an imported run does
    when its prompt type names no count: shots NULL, prompt type "few-shot"."""
    path = tmp_path_factory.mktemp("few_shot") / "few_shot.duckdb"
    copy_store(pages_models_db, path)
    with writing(path) as con:
        source = "test-odd-base-2023-fixture"
        con.execute(f"""INSERT INTO model_runs SELECT * REPLACE ('imported-few-shot' AS run_id,
                            'few-shot' AS prompt_type, '' AS shots, 'paper' AS origin,
                            '{FEW_SHOT}' AS label) FROM model_runs WHERE run_id = ?""", [source])
        for table in ("model_scores", "model_responses"):
            con.execute(f"""INSERT INTO {table} SELECT * REPLACE ('imported-few-shot' AS run_id,
                                NULL::SMALLINT AS shots) FROM {table}
                            WHERE run_id = ? AND shots = 4""", [source])
    return path


def _names(app) -> set[str]:
    names = {trace.get("name") for figure in charts(app) for trace in figure["data"]}
    return names | {row for figure in charts(app) for trace in figure["data"]
                    if trace.get("type") == "heatmap" for row in trace.get("y") or []}


def _captions(app) -> str:
    return " ".join(c.value for c in app.caption)


@pytest.mark.parametrize("page", PAGES)
def test_zero_shot_view_leaves_the_few_shot_run_out(monkeypatch, few_shot_db, page):
    monkeypatch.setenv("ENEM_DB", str(few_shot_db))
    app = run_page(page, {"shots": "0", "area": "MT"})
    assert_clean(app)
    assert not any(FEW_SHOT in (name or "") for name in _names(app))
    assert any(ZERO_SHOT_RUN in (name or "") for name in _names(app))
    assert "0-shot" in _captions(app) and "few-shot" not in _captions(app)


@pytest.mark.parametrize("page", PAGES)
def test_few_shot_setting_shows_the_run_and_says_few_shot(monkeypatch, few_shot_db, page):
    monkeypatch.setenv("ENEM_DB", str(few_shot_db))
    app = run_page(page, {"shots": "published", "area": "MT"})
    assert_clean(app)
    names = _names(app)
    assert any(FEW_SHOT in (name or "") for name in names)
    assert not any(ZERO_SHOT_RUN in (name or "") for name in names)
    captions = _captions(app)
    assert "few-shot (no count given)" in captions and "0-shot" not in captions
    assert app.query_params["shots"] == "published"


def test_shots_picker_names_the_prompt_type_and_hover_says_it(monkeypatch, few_shot_db):
    monkeypatch.setenv("ENEM_DB", str(few_shot_db))
    app = run_page("pages/Accuracy_vs_ability.py", {"area": "MT"})
    assert_clean(app)
    picker = app.sidebar.radio(key="sidebar.shots")
    assert list(picker.options) == ["0-shot", "1-shot", "4-shot", "few-shot (no count given)"]
    assert picker.value == 0  # 0-shot runs exist: the default stays 0
    picker.set_value(-1).run()
    assert_clean(app)
    points = [t for t in charts(app)[0]["data"] if t.get("name") == FEW_SHOT
              and t.get("text")]
    assert points and all(words.endswith(", few-shot (no count given)")
                          for words in points[0]["text"])
    assert "}-shot" not in json.dumps(points[0])


def test_a_store_of_few_shot_runs_alone_opens_on_them(monkeypatch, tmp_path, few_shot_db):
    path = tmp_path / "only_few_shot.duckdb"
    copy_store(few_shot_db, path)
    with writing(path) as con:
        for table in ("model_scores", "model_responses", "model_runs"):
            con.execute(f"DELETE FROM {table} WHERE run_id <> 'imported-few-shot'")
    monkeypatch.setenv("ENEM_DB", str(path))
    app = run_page("pages/Accuracy_vs_ability.py", {"area": "MT"})
    assert_clean(app)
    assert app.sidebar.radio(key="sidebar.shots").value == -1
    assert any(FEW_SHOT in (name or "") for name in _names(app))


def test_a_report_selection_carries_the_few_shot_setting():
    selection = Selection.from_url("?year=2022&shots=published&area=MT")
    assert selection.shots == UNCOUNTED_SHOTS
    assert selection.query()["shots"] == ["published"]
    assert Selection.from_url("?shots=4").query()["shots"] == ["4"]
    assert Selection.from_url("?year=2022").shots is None
    args = build_parser().parse_args(["report", "--out", "x", "--shots", "published"])
    assert selection_from(args).shots == UNCOUNTED_SHOTS
