"""import-results / export-run: runs made elsewhere land next to ours, re-scored by us."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from enem.scoring import DEFAULT_OPTIONS, ScoringOptions, score_form
from inference.plan import RunSpec
from store.connection import connected, open_reader
from store.model_runs import load_form
from tests.oracle_support import booklet_items, read_rows, slow_eap
from workflows.results_io import ResultsFormatError, export_run, import_results
from workflows.runs.execution import execute_run


def _paper_rows(demo_files, n_seeds=3):
    """Results in the paper's format, built from the demo's raw files (plus each row's form)."""
    items = read_rows(demo_files.items)
    rows = []
    for area, language in (("MT", None), ("LC", "1")):
        booklet = min(int(r["CO_PROVA"]) for r in items if r["SG_AREA"] == area)
        form = booklet_items(items, str(booklet), language)
        for seed in range(n_seeds):
            pattern = "".join("1" if (i * 7 + seed) % 3 == 0 else "0" for i in range(len(form)))
            letters = "".join(item["TX_GABARITO"] if bit == "1" else
                              ("A" if item["TX_GABARITO"] != "A" else "B")
                              for bit, item in zip(pattern, form, strict=True))
            rows.append({"MODEL_NAME": "demo/fake-7b", "MODEL_SIZE": "7B", "TEMPERATURE": 0.0,
                         "SYSTEM_PROMPT_TYPE": "4-shot", "LANGUAGE": "english",
                         "SEED": 100 + seed, "CO_PROVA": booklet, "EXAM_YEAR": 2023,
                         "EXAM_SUBJECT": area, "TX_RESPOSTAS": letters, "TX_GABARITO": "",
                         "RESPONSE_PATTERN": pattern, "CTT_SCORE": 0.0, "IRT_SCORE": 0.0,
                         "IRT_SCORE_SE": 0.0, "LZ_SCORE": 0.0, "_form": form})
    return rows


def test_paper_results_are_rescored_like_humans(demo_db, demo_files_2023, tmp_path):
    rows = _paper_rows(demo_files_2023)
    path = tmp_path / "paper.parquet"
    pd.DataFrame([{k: v for k, v in r.items() if k != "_form"} for r in rows]).to_parquet(path)
    with connected(demo_db) as con:
        run_ids = import_results(con, path)
    assert len(run_ids) == 1
    con = open_reader(demo_db)
    stored = con.execute("""SELECT area, shuffle, shots, prompt_language, theta, theta_se
                            FROM model_scores ORDER BY area DESC, shuffle""").fetchall()
    inconsistent = con.execute(
        "SELECT count(*) FROM model_responses WHERE correct AND choice = '.'").fetchone()[0]
    con.close()
    assert len(stored) == len(rows) == 6
    for row, (area, _, shots, language, theta, se) in zip(rows, stored, strict=True):
        params = [None if not item["NU_PARAM_A"] else
                  (float(item["NU_PARAM_A"]), float(item["NU_PARAM_B"]),
                   float(item["NU_PARAM_C"])) for item in row["_form"]]
        expected = slow_eap([float(b) for b in row["RESPONSE_PATTERN"]], params)
        assert (area, shots, language) == (row["EXAM_SUBJECT"], 4, "en")
        assert theta == pytest.approx(expected[0], abs=1e-9)
        assert se == pytest.approx(expected[1], abs=1e-9)
    assert inconsistent == 0


def test_export_import_round_trip(demo_db, tmp_path):
    spec = RunSpec(model="random-baseline", backend="random", year=2023, areas=("CN",),
                   languages=("en",), n_shuffles=4, seed=9)
    execute_run(spec, demo_db, tmp_path / "runs")
    with connected(demo_db, read_only=True) as con:
        before = con.execute("SELECT * FROM model_scores ORDER BY ALL").fetchall()
        export_run(con, spec.run_id, tmp_path / "run.parquet")
    with connected(demo_db) as con:
        for table in ("model_scores", "model_responses", "model_runs"):
            con.execute(f"DELETE FROM {table}")
        assert import_results(con, tmp_path / "run.parquet") == [spec.run_id]
        after = con.execute("SELECT * FROM model_scores ORDER BY ALL").fetchall()
        origin = con.execute("SELECT origin, n_shuffles, scoring FROM model_runs").fetchone()
    assert after == before
    assert origin[:2] == ("local", 4)
    assert ScoringOptions.from_dict(json.loads(origin[2])) == DEFAULT_OPTIONS


def test_own_runs_are_scored_with_the_years_settings(demo_db, tmp_path):
    """A run is scored like its year's humans (the settings of the latest ingest) and records
    them; here the year is made to say the paper's grid."""
    paper = ScoringOptions(n_quadrature=121, theta_range=(-6.0, 6.0))
    with connected(demo_db) as con:
        con.execute("UPDATE ingests SET scoring = ? WHERE year = 2023",
                    [json.dumps(paper.as_dict())])
    spec = RunSpec(model="random-baseline", backend="random", year=2023, areas=("MT",),
                   languages=("pt",), n_shuffles=3, seed=5)
    execute_run(spec, demo_db, tmp_path / "runs")
    with connected(demo_db, read_only=True) as con:
        scoring = con.execute("SELECT scoring FROM model_runs WHERE run_id = ?",
                              [spec.run_id]).fetchone()[0]
        rows = con.execute("""SELECT booklet_id, response_pattern, theta FROM model_scores
                              WHERE run_id = ? ORDER BY shuffle""", [spec.run_id]).fetchall()
        form = load_form(con, 2023, rows[0][0], None)
    assert ScoringOptions.from_dict(json.loads(scoring)) == paper
    matrix = np.array([[np.nan if c == "." else float(c) for c in r[1]] for r in rows])
    expected = score_form(matrix, form, paper)["theta"]
    assert [r[2] for r in rows] == pytest.approx(list(expected), abs=1e-12)


def test_unknown_files_get_a_clear_error(demo_db, tmp_path):
    bad = tmp_path / "x.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(bad)
    text = tmp_path / "x.csv"
    text.write_text("a,b\n")
    with connected(demo_db) as con:
        with pytest.raises(ResultsFormatError, match="MODEL_NAME"):
            import_results(con, bad)
        with pytest.raises(ResultsFormatError, match="not a Parquet file"):
            import_results(con, text)
