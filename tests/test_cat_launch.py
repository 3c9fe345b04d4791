"""Launching a live CAT in the background: the command line makes the same CAT (the same run
id), and the Adaptive testing page's button starts one whose paths appear when it ends."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from cli.cat_commands import cat_run_spec
from cli.main import build_parser
from store.connection import connected
from store.layout import copy_store
from tests.page_support import assert_clean, charts, messages, run_page
from workflows.cat.launch import cat_command, cat_state
from workflows.cat.live import CatRunSpec
from workflows.runs.service import runs_directory

PAGE = "pages/Adaptive_testing.py"


@pytest.mark.parametrize("spec", [
    CatRunSpec(model="", backend="random", year=2023),
    CatRunSpec(model="some/model", backend="transformers", year=2023, areas=("MT", "CH"),
               language="en", shots=4, n_paths=3, seed=7, model_name="tiny one",
               backend_options={"device": "cpu"},
               settings={"selector": "randomesque", "randomesque_k": 3, "estimator": "eap",
                         "grid_points": 61, "se_target": 0.3, "max_items": 12,
                         "start_theta": 0.5, "theta_range": (-4.0, 4.0)}),
])
def test_the_command_line_makes_the_same_cat(tmp_path, spec):
    words = cat_command(spec, tmp_path / "x.duckdb", tmp_path / "runs")
    args = build_parser().parse_args(words[words.index("--db"):])
    again = cat_run_spec(args)
    assert again == spec and again.run_id == spec.run_id
    assert Path(args.runs_dir) == tmp_path / "runs"


def test_page_launches_a_cat_and_draws_its_path(monkeypatch, tmp_path, pages_demo_db,
                                                as_operator):
    db = tmp_path / "launch.duckdb"
    copy_store(pages_demo_db, db)
    monkeypatch.setenv("ENEM_DB", str(db))
    app = run_page(PAGE, {"section": "Live CAT"})
    assert_clean(app)
    assert "No live CAT of a model on CN 2023" in messages(app)
    enem_llm = str(Path(sys.executable).parent / "enem-llm")
    [command] = [code.value for code in app.code if "cat-run" in code.value]
    assert command.startswith(f"{enem_llm} --db {db} cat-run --backend ")

    app.selectbox(key="cat.launch.backend").set_value("random")
    app.number_input(key="cat.launch.paths").set_value(2)
    [button] = [b for b in app.button if b.label == "Launch CAT"]
    button.click().run()
    assert_clean(app)
    [command] = [code.value for code in app.code if "cat-run" in code.value]
    assert command == (f"{enem_llm} --db {db} cat-run --backend random --year 2023 --areas CN "
                       "--language pt --shots 0 --paths 2 --seed 0 --selector max-info "
                       "--estimator eap --max-items 20")
    spec = CatRunSpec(model="", backend="random", year=2023, areas=("CN",), n_paths=2)
    assert f"Live CAT **{spec.run_id}**" in messages(app)

    runs_dir = runs_directory(db)
    deadline = time.monotonic() + 120
    while (state := cat_state(spec.run_id, runs_dir)).alive or state.state == "starting":
        assert time.monotonic() < deadline, state.words()
        time.sleep(0.2)
    assert state.state == "finished", (runs_dir / spec.run_id / "log.txt").read_text()
    assert state.answers == 40
    app.run()
    assert_clean(app)
    assert f"Live CAT **{spec.run_id}** — finished: 40 of at most 40 answers" in messages(app)
    [paths] = [f for f in charts(app) if f["layout"]["title"]["text"].startswith("Live CAT")]
    names = sorted(trace["name"] for trace in paths["data"])
    assert names == [f"{spec.label} · CN · path 0", f"{spec.label} · CN · path 1"]
    with connected(db, read_only=True) as con:
        stored = con.execute("SELECT count(*) FROM cat_paths WHERE run_id = ?",
                             [spec.run_id]).fetchone()[0]
    assert stored == 40
