"""Bad input to any ``enem-llm`` command ends in one ``error:`` line on stderr and a non-zero
exit code, never a traceback; ``--db`` works before or after the command.

Every command that ``enem-llm --help`` lists is run as a real process with bad input. The
dashboard's item explorer, fed a bad item number in its URL, is at the end.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

from cli.main import build_parser
from inference.plan import RunSpec
from store.layout import copy_store
from tests.page_support import ROOT, TIMEOUT, assert_clean
from workflows.runs.folder import RunFolder

#: The sub-commands the parser knows (the test checks ``--help`` lists the same).
COMMANDS = sorted(next(action for action in build_parser()._actions
                       if action.dest == "command").choices)


def enem_llm(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``enem-llm ARGS`` as its own process, with no ENEM_DB and no OPENAI_API_KEY around."""
    environment = {k: v for k, v in os.environ.items() if k not in ("ENEM_DB", "OPENAI_API_KEY")}
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "cli", *map(str, args)], cwd=ROOT, check=False,
                          env=environment, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def paths(tmp_path_factory, ingested_2023, demo_files_2023):
    """Files for the bad inputs: a good store (a copy), a text file posing as a store, …"""
    root = tmp_path_factory.mktemp("cli_errors")
    db = root / "store" / "enem.duckdb"
    db.parent.mkdir()
    copy_store(ingested_2023[0], db)
    not_db = root / "notes.txt"
    not_db.write_text("not a database\n")
    empty = root / "empty.csv"
    empty.write_text("")
    with open(demo_files_2023.items, encoding="latin-1", newline="") as handle:
        lc_booklet = next(r["CO_PROVA"] for r in csv.DictReader(handle, delimiter=";")
                          if r["SG_AREA"] == "LC")
    return SimpleNamespace(
        root=root, db=db, not_db=not_db, missing=root / "missing" / "enem.duckdb", empty=empty,
        items=demo_files_2023.items, microdata=demo_files_2023.microdata,
        questions=demo_files_2023.questions, lc_booklet=lc_booklet,
        parquet=ROOT / "demo" / "runs" / "smollm2-135m-instruct.parquet")


def bad_inputs(p) -> dict[str, list[tuple[list, str]]]:
    """Command → [(arguments, a fragment the error line must hold)]."""
    prompt = ["prompt", "--year", "2023", "--area", "MT"]
    return {
        "demo": [(["--examinees", "many"], "--examinees"),
                 (["--db", p.not_db / "enem.duckdb", "--quiet"], str(p.not_db))],
        "ingest-enem": [(["--year", "2023"], "required"),
                        (["--db", p.db, "--year", "2023", "--microdata", p.root / "none.csv",
                          "--items", p.items, "--quiet"], "no such file"),
                        (["--db", p.not_db, "--year", "2023", "--microdata", p.microdata,
                          "--items", p.items, "--quiet"], "DuckDB")],
        "ingest-items": [(["--year", "twenty", "--items", p.items], "--year"),
                         (["--db", p.not_db, "--year", "2023", "--items", p.items], "DuckDB")],
        "score-patterns": [
            (["--items", p.items, "--patterns", p.empty, "--output", p.root / "o.csv"], "empty"),
            (["--items", p.items, "--patterns", p.items, "--output",
              p.root / "nowhere" / "o.csv"], "nowhere"),
            (["--items", p.items, "--patterns", p.items, "--output", p.root / "o.csv",
              "--method", "bogus"], "--method")],
        "run": [(["--db", p.missing, "--backend", "random", "--year", "2023"], "no database"),
                (["--db", p.db, "--backend", "transformers", "--model", "m", "--base-url",
                  "http://127.0.0.1:9/v1", "--year", "2023"], "--base-url"),
                (["--db", p.db, "--backend", "random", "--year", "2023", "--areas", "MT",
                  "--booklet", f"MT={p.lc_booklet}", "--runs-dir", p.root / "runs"],
                 p.lc_booklet),
                (["--db", p.db, "--backend", "random", "--year", "1999", "--background",
                  "--runs-dir", p.root / "runs"], "1999"),
                (["--db", p.db, "--backend", "random", "--year", "2023", "--areas", "MT",
                  "--runs-dir", p.not_db], str(p.not_db)),
                (["--db", p.db, "--backend", "openai", "--model", "gpt-4o-mini", "--year",
                  "2023"], "OPENAI_API_KEY")],
        "runs": [(["--db", p.missing], "no database"),
                 (["--db", p.db, "--runs-dir", p.not_db], str(p.not_db))],
        "remove-run": [([], "run_id"),
                       (["nope", "--db", p.db, "--runs-dir", p.root / "runs"], "no run nope"),
                       (["../store", "--db", p.db], "is not a run id")],
        "cancel": [([], "run_id"),
                   (["nope", "--db", p.db, "--runs-dir", p.root / "runs"], "no run nope")],
        "import-results": [([], "path"),
                           ([p.parquet, "--db", p.not_db], "DuckDB")],
        "import-questions": [([p.questions, "--format", "bogus"], "--format"),
                             ([p.questions, "--format", "project", "--db", p.not_db], "DuckDB")],
        "export-task": [(["--db", p.missing, "--year", "2023", "--area", "MT"], "no database"),
                        (["--db", p.db, "--year", "1999", "--area", "MT"], "1999"),
                        (["--db", p.db, "--year", "2023", "--area", "XX"], "--area")],
        "export-run": [(["some-run"], "output"),
                       (["some-run", p.root / "o.parquet", "--db", p.missing], "no database")],
        "prompt": [(prompt[1:] + ["--db", p.db, "--position", "46"], "position must be 1–45"),
                   (prompt[1:] + ["--db", p.db, "--position", "1", "--booklet", p.lc_booklet],
                    "LC"),
                   (prompt[1:] + ["--db", p.missing, "--position", "1"], "no database")],
        "info": [(["--db", p.not_db], "DuckDB"),
                 (["--db", p.missing], "no database")],
        "migrate": [(["--db", p.not_db], "DuckDB"),
                    (["--db", p.missing], "no database"),
                    (["--db", p.db], "already a store of per-year files")],
        "cat-simulate": [(["--area", "XX"], "--area"),
                         (["--db", p.missing, "--area", "MT"], "no database")],
        "cat-run": [(["--db", p.missing, "--backend", "random", "--year", "2023"],
                     "no database"),
                    (["--db", p.db, "--backend", "random", "--year", "1999", "--runs-dir",
                      p.root / "cat-runs"], "1999")],
        "cat-posthoc": [(["--db", p.db, "--year", "1999", "--area", "MT"], "1999"),
                        (["--db", p.missing, "--year", "2023", "--area", "MT"], "no database")],
        "fetch": [([], "SOURCE"),
                  # Port 9 (discard) refuses the connection: nothing is fetched or created.
                  (["inep", "--year", "2031", "--mirror", "http://127.0.0.1:9",
                    "--dest", p.root / "dl", "--db", p.db, "--quiet"], "cannot download"),
                  (["texts", "--source", "maritaca", "--year", "2023", "--db", p.db],
                   "--booklet")],
        "items": [(["--db", p.missing, "--year", "2023", "--area", "MT"], "no database"),
                  (["--db", p.db, "--year", "1999", "--area", "MT"], "1999"),
                  (["--db", p.db, "--year", "2023", "--area", "MT", "--models", "nobody"],
                   "no run labelled 'nobody'"),
                  (["--db", p.db, "--year", "2023", "--area", "XX"], "--area"),
                  (["--db", p.db, "--year", "2023", "--area", "MT", "--output",
                    p.root / "no-such-folder" / "gaps.csv"], "no-such-folder")],
        "report": [(["--db", p.missing, "--out", p.root / "report"], "no database"),
                   (["--db", p.db, "--out", p.root / "report", "--year", "1999"], "1999")],
    }


@pytest.fixture(scope="module")
def help_text() -> str:
    done = enem_llm("--help")
    assert done.returncode == 0
    return done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_bad_input_ends_in_one_error_line(paths, help_text, command):
    assert f"    {command} " in help_text or f"    {command}\n" in help_text
    cases = bad_inputs(paths)[command]
    for arguments, fragment in cases:
        done = enem_llm(command, *arguments)
        shown = f"enem-llm {command} {' '.join(map(str, arguments))}\n{done.stderr}"
        assert done.returncode != 0, shown
        assert "Traceback" not in done.stderr, shown
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:"), shown
        assert str(fragment) in lines[0], shown
    assert not (paths.missing.parent).exists(), "a bad --db created a folder"
    assert not (paths.db.parent / "runs").exists(), "a refused run left a run folder"


def test_db_goes_before_or_after_the_command(paths):
    after = enem_llm("info", "--db", paths.db)
    before = enem_llm("--db", paths.db, "info")
    assert after.returncode == before.returncode == 0, before.stderr
    assert before.stdout == after.stdout and "2023" in before.stdout
    # After the command wins over before it, and both over ENEM_DB.
    both = enem_llm("--db", paths.missing, "info", "--db", paths.db,
                    env={"ENEM_DB": str(paths.not_db)})
    assert both.returncode == 0 and both.stdout == after.stdout
    prompt = ["prompt", "--year", "2023", "--area", "MT", "--position", "2"]
    assert enem_llm("--db", paths.db, *prompt).stdout == enem_llm(*prompt, "--db", paths.db).stdout


def test_a_run_another_process_holds_is_one_error_line(paths, tmp_path):
    spec = RunSpec(model="random-baseline", backend="random", year=2023, areas=("MT",))
    folder = RunFolder(tmp_path / "runs" / spec.run_id)
    folder.acquire()
    try:
        done = enem_llm("run", "--db", paths.db, "--runs-dir", tmp_path / "runs", "--backend",
                        "random", "--year", "2023", "--areas", "MT")
    finally:
        folder.release()
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), done.stderr
    assert f"run {spec.run_id} is already being worked on" in lines[0]


# --- the dashboard: the item explorer's URL -------------------------------------------------

@pytest.mark.parametrize("item", ["²", "١٢", "12.5", "-3", " 7", "1e3", "9" * 400])
def test_item_explorer_ignores_a_malformed_item_in_the_url(monkeypatch, pages_demo_db, item):
    monkeypatch.setenv("ENEM_DB", str(pages_demo_db))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    app.query_params["item"] = item
    app.query_params["area"] = "MT"
    app.switch_page("pages/Item_explorer.py").run()
    assert_clean(app)
    assert app.title[0].value == "Item explorer"
    warnings = " ".join(w.value for w in app.warning)
    assert "is not an item number" in warnings
    assert str(ROOT) not in warnings
    assert app.selectbox(key="explorer.area").value == "MT"
    assert isinstance(app.selectbox(key="explorer.item").value, int)
