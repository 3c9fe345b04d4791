"""A store of item files and model runs only (no candidates: where the paper's researchers
start): the pages say what the store holds and draw no empty human panels."""

from __future__ import annotations

import pytest

from store.connection import connected
from store.layout import copy_store
from tests.page_support import assert_clean, charts, run_page
from workflows.results_io import import_results_summary

RESULTS = "enem-experiments-results-processed-with-irt-lz.parquet"


@pytest.fixture(scope="module")
def items_and_runs(tmp_path_factory, real_items_db, real_data):
    path = tmp_path_factory.mktemp("items_only") / "store.duckdb"
    copy_store(real_items_db, path)
    with connected(path) as con:
        import_results_summary(con, real_data / "paper-results" / RESULTS)
    return path


@pytest.mark.parametrize("page, statistic", [("pages/home.py", "θ"),
                                             ("pages/Person_fit.py", "l_z")])
def test_no_human_panel_is_drawn_and_the_caption_says_why(monkeypatch, items_and_runs, page,
                                                          statistic):
    monkeypatch.setenv("ENEM_DB", str(items_and_runs))
    app = run_page(page, {"year": "2022"})
    assert_clean(app)
    texts = " ".join(t for figure in charts(app)
                     for t in [a.get("text", "") for a in figure["layout"].get("annotations", [])])
    assert "no scored candidates" not in texts
    lanes = [figure for figure in charts(app) if any(
        trace.get("mode") == "markers" and trace.get("marker", {}).get("symbol") ==
        "line-ns-open" for trace in figure["data"])]
    assert lanes and not any(trace["type"] == "bar" for trace in lanes[0]["data"])
    captions = " ".join(caption.value for caption in app.caption)
    assert "holds no candidates of 2022 (its item file only)" in captions
    assert "Grey bars" not in captions
    sidebar = " ".join(toggle.label for toggle in app.sidebar.toggle)
    assert "all-blank" not in sidebar  # no humans, no switch about them
    assert statistic in " ".join(h.value for h in app.subheader)
