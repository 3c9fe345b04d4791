"""Values the command line accepted without a word, or answered with a traceback or a message
about its own internals (issue 22): each must end in exactly one ``error: …`` line naming the
flag or the file's line, exit code 2, and nothing written.

Each case runs ``enem-llm`` through ``cli.main.main`` (as ``tests/test_cli_errors.py`` does for
whole processes): an exception the command line does not know escapes it, as a traceback would.
"""

from __future__ import annotations

import csv
import json

import pyarrow.parquet as pq
import pytest

from cli.main import main
from cli.report_commands import check_selection
from store.catalogue_queries import human_groups
from store.connection import connected
from store.layout import copy_store
from testbed.paper_results import paper_forms, paper_results_table
from workflows.report.build import Selection
from workflows.results_io import import_results_summary

#: (arguments after ``cat-simulate --area MT``, a fragment the error line must hold).
CAT_SIMULATE = [
    (["--grid-points", "1"], "--grid-points"),
    (["--grid-points", "0"], "--grid-points"),
    (["--theta-mean", "inf"], "--theta-mean"),
    (["--theta-mean", "nan"], "--theta-mean"),
    (["--theta-sd", "nan"], "--theta-sd"),
    (["--start-theta", "nan"], "--start-theta"),
    (["--start-theta", "-inf"], "--start-theta"),
    (["--target-mse", "-1"], "--target-mse"),
    (["--target-mse", "0"], "--target-mse"),
    (["--target-mse", "nan"], "--target-mse"),
    (["--se-target", "nan"], "--se-target"),
    (["--theta-range", "-inf", "6"], "--theta-range"),
    (["--theta-range", "-1000000000", "1000000000"], "--theta-range must be finite with"),
    (["--simulees", "1000000000"], "--simulees 1,000,000,000"),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory, ingested_2023):
    """A copy of the small 2023 year (read by the commands, never written)."""
    db = tmp_path_factory.mktemp("hostile") / "enem.duckdb"
    copy_store(ingested_2023[0], db)
    return db


def _one_error(capsys, arguments: list[str]) -> str:
    """Run ``enem-llm ARGUMENTS``; assert exit 2 with one ``error:`` line; return it."""
    code = main([str(a) for a in arguments])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, (arguments, code, captured.err, captured.out[-500:])
    assert len(lines) == 1 and lines[0].startswith("error: "), (arguments, captured.err)
    return lines[0]


@pytest.mark.parametrize(("arguments", "fragment"), CAT_SIMULATE,
                         ids=[" ".join(a) for a, _ in CAT_SIMULATE])
def test_cat_simulate_refuses_values_no_simulation_can_use(store, tmp_path, capsys, arguments,
                                                          fragment):
    output = tmp_path / "mse.csv"
    line = _one_error(capsys, ["cat-simulate", "--db", store, "--area", "MT", "--output",
                               output, *arguments])
    assert fragment in line
    assert not output.exists()


def test_the_simulees_limit_is_said_in_the_error(store, capsys):
    line = _one_error(capsys, ["cat-simulate", "--db", store, "--area", "MT", "--simulees",
                               "1000000000"])
    assert "GiB of memory" in line and "the limit is" in line and "simulees" in line


def test_cat_run_refuses_a_one_point_grid(store, tmp_path, capsys):
    line = _one_error(capsys, ["cat-run", "--db", store, "--backend", "random", "--year",
                               "2023", "--runs-dir", tmp_path / "runs", "--estimator", "eap",
                               "--grid-points", "1"])
    assert "--grid-points" in line
    assert not (tmp_path / "runs").exists()


REPORT = [
    (["--runs", "no-such-run"], "no run no-such-run"),
    (["--models", "no such label"], "no run labelled 'no such label'"),
    (["--booklet", "1"], "booklet 1 is not a scorable booklet of 2023"),
    (["--group", "state:ZZ"], "group 'state:ZZ' is not a human subgroup of 2023"),
    (["--group", "nonsense"], "group 'nonsense'"),
    (["--url", "?year=abc"], "year='abc' is not a whole number"),
    (["--url", "?booklet=12.5"], "booklet='12.5' is not a whole number"),
    (["--url", "?area=XX"], "area 'XX' is not one of"),
    (["--url", "?lang=fr"], "prompt language 'fr'"),
    (["--url", "?shots=3"], "shots 3 is not one of"),
]


@pytest.mark.parametrize(("arguments", "fragment"), REPORT,
                         ids=[" ".join(a) for a, _ in REPORT])
def test_report_of_a_selection_the_store_does_not_hold_is_refused(store, tmp_path, capsys,
                                                                  arguments, fragment):
    out = tmp_path / "report"
    line = _one_error(capsys, ["report", "--db", store, "--out", out, "--quiet", *arguments])
    assert fragment in line, line
    assert not out.exists()


def _paper_csv_rows(demo_files) -> list[dict]:
    """A paper-csv file's 45 rows for the demo's lowest MT booklet (texts made up here)."""
    with open(demo_files.items, encoding="latin-1", newline="") as handle:
        items = [r for r in csv.DictReader(handle, delimiter=";") if r["SG_AREA"] == "MT"]
    booklet = min(int(r["CO_PROVA"]) for r in items)
    return booklet, [{"question": f"Questão {136 + i}", "body": f"Enunciado {i}",
                      "A": "a", "B": "b", "C": "c", "D": "d", "E": "e", "year": "2023",
                      "question_number": str(136 + i), "test": "MT", "answer": "A",
                      "language": "portuguese"} for i in range(45)]


def test_paper_csv_with_a_field_over_the_csv_limit_is_one_error(store, tmp_path, capsys,
                                                                 demo_files_2023):
    booklet, rows = _paper_csv_rows(demo_files_2023)
    rows[7]["body"] = "x" * (200 * 1024)
    folder = tmp_path / "pt"
    folder.mkdir()
    path = folder / f"ENEM_2023_MT_CO_PROVA_{booklet}.csv"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    db = tmp_path / "enem.duckdb"
    copy_store(store, db)
    line = _one_error(capsys, ["import-questions", path, "--format", "paper-csv", "--db", db])
    assert str(path) in line and "line 9:" in line and "longer than" in line


def test_a_question_with_a_booklet_id_out_of_range_is_one_error(store, tmp_path, capsys):
    path = tmp_path / "questions.jsonl"
    path.write_text(json.dumps({
        "year": 2023, "booklet_id": 99999999999, "position": 3, "area": "MT",
        "language": "pt", "stem": "?", "options": ["a", "b", "c", "d", "e"], "key": "A",
        "annulled": False, "source": "test"}) + "\n")
    db = tmp_path / "enem.duckdb"
    copy_store(store, db)
    line = _one_error(capsys, ["import-questions", path, "--format", "project", "--db", db])
    assert "booklet_id" in line and "99999999999" in line


@pytest.mark.parametrize("rows_after", [0, 3])
def test_score_patterns_names_an_over_long_line(tmp_path, capsys, demo_files_2023, rows_after):
    patterns = tmp_path / "patterns.csv"
    with open(patterns, "w") as handle:
        handle.write("CO_PROVA,RESPONSE_PATTERN\n1234,0101\n")
        handle.write("1234," + "1" * 3_000_000 + "\n")
        handle.write("1234,0101\n" * rows_after)
    output = tmp_path / "out.csv"
    line = _one_error(capsys, ["score-patterns", "--items", demo_files_2023.items, "--patterns",
                               patterns, "--output", output])
    assert "line 3 is longer than 2,000,000 bytes" in line
    assert not output.exists()


def test_report_accepts_a_selection_the_store_holds(store, tmp_path):
    """The checks refuse only what is missing: a stored run (by id and label), a scorable
    booklet and a subgroup with candidates pass."""
    db = tmp_path / "enem.duckdb"
    copy_store(store, db)
    with connected(db, read_only=True) as con:
        forms = paper_forms(con)
    results = tmp_path / "results.parquet"
    pq.write_table(paper_results_table(forms, 32), results)
    with connected(db) as con:
        summary = import_results_summary(con, results)
    with connected(db, read_only=True) as con:
        group = human_groups(con, 2023).iloc[0]
        run = summary.runs[0]
        selection = Selection(year=2023, areas=("MT",), booklet=forms["MT"].booklet_id,
                              language="en", shots=0, models=(run.label,), runs=(run.run_id,),
                              group=f"{group['group_kind']}:{group['group_value']}")
        check_selection(con, selection, db, [2023])
        check_selection(con, Selection(group="all:all"), db, [2023])
