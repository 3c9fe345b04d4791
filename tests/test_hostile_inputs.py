"""Bad input that used to cost data or pass (issue 40, point 4): each is refused before any work,
with one ``error:`` line, a non-zero exit and the store (or the file) exactly as it was.

* item files with parameters outside their possible range (a = −3.5 or inf, b NaN or inf, c
  outside [0, 1)), and item files cut mid-line;
* a re-ingest that would leave the year worse (fewer valid booklets, fewer scored area records
  per candidate, fewer booklets whose official notas are reproduced) unless ``--allow-shrink``;
* harness imports whose answers are mostly unreadable (the run path's 10% rule), a lighteval
  task whose year is ``2023.5``, ``export-task --output ''``;
* ``run --seed 2**70`` / ``--temperature 1e309``, refused before a run folder exists;
* ``export-run`` onto an existing file when the write fails partway.

Item files are rewritten here from the generated demo year and from INEP's real files
(``../shared/data/real``, skipped and said so when absent); expected values come from the
files themselves.
"""

from __future__ import annotations

import errno
import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cli.main import main
from enem.csvfiles import UnusableFileError
from enem.items import PARAMETER_RANGES, load_items
from inference.plan import SEED_MAX, RunSpec
from store.connection import connected
from store.layout import copy_store
from store.question_texts import load_question_texts
from tests.db_support import query_rows
from workflows.runs.execution import execute_run

#: The year tables (and the main file's ingests) a refused ingest must leave as they were.
YEAR_TABLES = ("ingests", "items", "booklets", "rejects", "examinees", "scores",
               "booklet_audit")
#: The date stamp the harness tools put in their file names.
STAMP = "2024-05-01T12-00-00.123456"
LETTERS = "ABCDE"


# --- helpers -------------------------------------------------------------------------------------

def _snapshot(db: Path) -> dict[str, list[tuple]]:
    """Every row of the year tables, sorted: equal snapshots mean an untouched store."""
    return {table: sorted(query_rows(db, f"SELECT * FROM {table}"), key=repr)
            for table in YEAR_TABLES}


def _one_error(capsys, arguments: list[str]) -> tuple[int, str]:
    """Run the command line; (exit code, its one stderr line), which must start ``error:``."""
    code = main(arguments)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: ")
    return code, err[0]


def _item_lines(path: Path) -> tuple[list[str], list[list[str]]]:
    """Header fields and data rows (fields) of an ITENS_PROVA file (Latin-1, ';', no quoting)."""
    text = path.read_bytes().decode("latin-1")
    assert text.endswith("\n")
    header, *rows = text[:-1].split("\n")
    names = header.split(";")
    fields = [row.split(";") for row in rows]
    assert all(len(row) == len(names) for row in fields)
    return names, fields


def _write_items(path: Path, names: list[str], rows: list[list[str]]) -> Path:
    text = "\n".join(";".join(fields) for fields in [names, *rows]) + "\n"
    path.write_bytes(text.encode("latin-1"))
    return path


def _with_parameter(source: Path, target: Path, column: str, value: str,
                    booklet: str | None = None) -> Path:
    """A copy of ``source`` with ``column`` set to ``value`` in every row that gives one (only
    in the first such row of ``booklet`` when given)."""
    names, rows = _item_lines(source)
    at, booklet_at = names.index(column), names.index("CO_PROVA")
    for row in rows:
        if row[at] == "" or (booklet is not None and row[booklet_at] != booklet):
            continue
        row[at] = value
        if booklet is not None:
            break
    return _write_items(target, names, rows)


def _shifted_difficulty(source: Path, target: Path, shift: float) -> Path:
    """A copy of ``source`` with every NU_PARAM_B moved by ``shift``: plausible parameters that
    no longer reproduce INEP's notas."""
    names, rows = _item_lines(source)
    at = names.index("NU_PARAM_B")
    for row in rows:
        if row[at]:
            row[at] = repr(float(row[at]) + shift)
    return _write_items(target, names, rows)


def _booklet_ids(path: Path) -> list[str]:
    names, rows = _item_lines(path)
    return sorted({row[names.index("CO_PROVA")] for row in rows})


@pytest.fixture()
def full_db(tmp_path, ingested_2023) -> Path:
    """A writable copy of a store holding the complete small 2023 year (3,000 candidates)."""
    db = tmp_path / "store" / "enem.duckdb"
    db.parent.mkdir()
    copy_store(ingested_2023[0], db)
    return db


@pytest.fixture()
def real_2019(tmp_path, real_items_db, real_data) -> tuple[Path, Path]:
    """A writable copy of the store of INEP's real item files 2019–2022, and the 2019 file."""
    db = tmp_path / "store" / "real.duckdb"
    db.parent.mkdir()
    copy_store(real_items_db, db)
    return db, real_data / "items" / "ITENS_PROVA_2019.csv"


# --- 1. item parameters outside their possible range --------------------------------------------

IMPOSSIBLE = [("NU_PARAM_A", "-3.5"), ("NU_PARAM_A", "inf"), ("NU_PARAM_A", "0"),
              ("NU_PARAM_B", "NaN"), ("NU_PARAM_B", "inf"), ("NU_PARAM_B", "-inf"),
              ("NU_PARAM_C", "1"), ("NU_PARAM_C", "1.5"), ("NU_PARAM_C", "-0.1")]


@pytest.mark.parametrize(("column", "value"), IMPOSSIBLE)
def test_one_impossible_parameter_makes_its_booklet_unscorable(tmp_path, demo_files_2023,
                                                               column, value):
    booklets = _booklet_ids(demo_files_2023.items)
    broken = _with_parameter(demo_files_2023.items, tmp_path / "ITENS_PROVA_2023.csv",
                             column, value, booklet=booklets[0])
    items = load_items(broken)
    assert set(items.invalid) == {int(booklets[0])}
    assert column in items.invalid[int(booklets[0])]
    assert {b for b, _ in items.forms} == {int(b) for b in booklets[1:]}


def test_the_real_files_parameters_all_lie_in_range(real_data):
    for year in (2019, 2020, 2021, 2022):
        items = load_items(real_data / "items" / f"ITENS_PROVA_{year}.csv")
        assert not items.invalid
        scored = items.rows[~items.rows["abandoned"]]
        for name, (lowest, _, above, _) in PARAMETER_RANGES.items():
            assert scored[name].between(lowest, above, inclusive="left").all()


@pytest.mark.parametrize(("column", "value"), [("NU_PARAM_A", "-3.5"), ("NU_PARAM_A", "inf"),
                                               ("NU_PARAM_B", "NaN"), ("NU_PARAM_B", "inf"),
                                               ("NU_PARAM_C", "1.5")])
def test_ingest_items_refuses_a_real_file_of_impossible_parameters(tmp_path, capsys, real_2019,
                                                                   column, value):
    db, real = real_2019
    hostile = _with_parameter(real, tmp_path / "ITENS_PROVA_2019.csv", column, value)
    before = _snapshot(db)
    code, line = _one_error(capsys, ["--db", str(db), "ingest-items", "--year", "2019",
                                     "--items", str(hostile)])
    assert code == 2
    assert "no booklet can be scored" in line and column in line
    assert _snapshot(db) == before
    assert query_rows(db, "SELECT count(*) FROM booklets WHERE year = 2019 AND valid") == [(42,)]


@pytest.mark.parametrize(("column", "value"), [("NU_PARAM_A", "-3.5"), ("NU_PARAM_A", "inf"),
                                               ("NU_PARAM_C", "-0.1")])
def test_ingest_enem_refuses_an_item_file_of_impossible_parameters(tmp_path, capsys, full_db,
                                                                   demo_files_2023, column,
                                                                   value):
    hostile = _with_parameter(demo_files_2023.items, tmp_path / "ITENS_PROVA_2023.csv",
                              column, value)
    before = _snapshot(full_db)
    code, line = _one_error(capsys, ["--db", str(full_db), "ingest-enem", "--year", "2023",
                                     "--microdata", str(demo_files_2023.microdata),
                                     "--items", str(hostile), "--quiet"])
    assert code == 2
    assert "no booklet can be scored" in line
    assert _snapshot(full_db) == before


# --- 2. a year is not made worse without consent ------------------------------------------------

def test_ingest_items_with_fewer_valid_booklets_needs_allow_shrink(tmp_path, capsys, real_2019):
    db, real = real_2019
    booklets = _booklet_ids(real)
    one_broken = _with_parameter(real, tmp_path / "ITENS_PROVA_2019.csv", "NU_PARAM_A", "-3.5",
                                 booklet=booklets[0])
    arguments = ["--db", str(db), "ingest-items", "--year", "2019", "--items", str(one_broken)]
    before = _snapshot(db)
    code, line = _one_error(capsys, arguments)
    assert code == 3
    assert f"41 valid booklets, fewer than the {len(booklets)}" in line
    assert f"booklet {booklets[0]}" in line and "--allow-shrink" in line
    assert _snapshot(db) == before
    assert main(arguments + ["--allow-shrink"]) == 0
    assert query_rows(db, "SELECT count(*) FILTER (valid), count(*) FROM booklets "
                          "WHERE year = 2019") == [(41, 42)]


def test_ingest_items_of_the_same_file_again_is_accepted(capsys, real_2019):
    db, real = real_2019
    assert main(["--db", str(db), "ingest-items", "--year", "2019", "--items", str(real)]) == 0
    assert "items of 42 booklets stored" in capsys.readouterr().out


def test_ingest_enem_with_fewer_valid_booklets_needs_allow_shrink(tmp_path, capsys, full_db,
                                                                  demo_files_2023):
    booklets = _booklet_ids(demo_files_2023.items)
    one_broken = _with_parameter(demo_files_2023.items, tmp_path / "ITENS_PROVA_2023.csv",
                                 "NU_PARAM_B", "inf", booklet=booklets[-1])
    before = _snapshot(full_db)
    code, line = _one_error(capsys, ["--db", str(full_db), "ingest-enem", "--year", "2023",
                                     "--microdata", str(demo_files_2023.microdata),
                                     "--items", str(one_broken), "--quiet"])
    assert code == 3
    assert f"{len(booklets) - 1} valid booklets, fewer than the {len(booklets)}" in line
    assert _snapshot(full_db) == before


def _unknown_booklets(source: Path, target: Path, every: int) -> Path:
    """A copy of a microdata file where every ``every``-th row names booklet 9 in all four
    areas: the row is stored, its area records cannot be scored."""
    text = source.read_bytes().decode("latin-1")
    header, *rows = text[:-1].split("\n")
    names = header.split(";")
    columns = [names.index(f"CO_PROVA_{area}") for area in ("CN", "CH", "LC", "MT")]
    changed = []
    for number, row in enumerate(rows):
        fields = row.split(";")
        if number % every == 0:
            for at in columns:
                if fields[at]:
                    fields[at] = "9"
        changed.append(";".join(fields))
    target.write_bytes(("\n".join([header, *changed]) + "\n").encode("latin-1"))
    return target


def test_ingest_enem_scoring_fewer_records_needs_allow_shrink(tmp_path, capsys, full_db,
                                                              demo_files_2023):
    """Every candidate kept (the candidates' own check passes), a fifth of them unscorable."""
    microdata = _unknown_booklets(demo_files_2023.microdata,
                                  tmp_path / "MICRODADOS_ENEM_2023.csv", every=5)
    arguments = ["--db", str(full_db), "ingest-enem", "--year", "2023", "--microdata",
                 str(microdata), "--items", str(demo_files_2023.items), "--quiet"]
    before = _snapshot(full_db)
    code, line = _one_error(capsys, arguments)
    assert code == 3
    assert "area records" in line and "--allow-shrink" in line
    assert _snapshot(full_db) == before
    assert main(arguments + ["--allow-shrink"]) == 0
    scored, examinees = query_rows(full_db, "SELECT (SELECT count(*) FROM scores), "
                                            "(SELECT count(*) FROM examinees)")[0]
    assert examinees == len(before["examinees"])
    assert scored < 0.9 * len(before["scores"])


def test_ingest_enem_reproducing_fewer_booklets_needs_allow_shrink(tmp_path, capsys, full_db,
                                                                   demo_files_2023):
    """Plausible but wrong parameters: every booklet valid, no official nota reproduced."""
    shifted = _shifted_difficulty(demo_files_2023.items, tmp_path / "ITENS_PROVA_2023.csv", 0.5)
    arguments = ["--db", str(full_db), "ingest-enem", "--year", "2023", "--microdata",
                 str(demo_files_2023.microdata), "--items", str(shifted), "--quiet"]
    reproduced = query_rows(full_db, "SELECT count(*) FROM booklet_audit "
                                     "WHERE nota_matched = nota_checked")[0][0]
    before = _snapshot(full_db)
    code, line = _one_error(capsys, arguments)
    assert code == 3
    assert f"fewer than the {reproduced:,} it reproduces now" in line
    assert _snapshot(full_db) == before
    assert main(arguments + ["--allow-shrink"]) == 0
    assert query_rows(full_db, "SELECT count(*) FROM booklet_audit "
                               "WHERE nota_matched >= 0.99 * nota_checked") == [(0,)]


# --- 3. item files cut mid-line ------------------------------------------------------------------

@pytest.mark.parametrize("cut", [12, 0], ids=["mid-line", "no-line-end"])
def test_an_item_file_cut_short_is_refused(tmp_path, capsys, demo_files_2023, cut):
    data = demo_files_2023.items.read_bytes()
    short = tmp_path / "ITENS_PROVA_2023.csv"
    short.write_bytes(data[:len(data) - 1 - cut])  # the line end, and ``cut`` bytes before it
    lines = data.count(b"\n")
    with pytest.raises(UnusableFileError, match=f"line {lines:,}.* no line end"):
        load_items(short)
    db = tmp_path / "store" / "enem.duckdb"
    code, line = _one_error(capsys, ["--db", str(db), "ingest-items", "--year", "2023",
                                     "--items", str(short)])
    assert code == 2 and "cut short" in line
    assert not db.parent.exists() or not any(db.parent.iterdir())


# --- 4. harness imports --------------------------------------------------------------------------

def _min_booklet(db: Path, area: str) -> int:
    return query_rows(db, "SELECT min(booklet_id) FROM booklets WHERE valid AND area = ?",
                      [area])[0][0]


def _mt_form(db: Path) -> list[tuple[int, int, str]]:
    """(position, item_id, key) of the lowest valid MT booklet, in order."""
    return query_rows(db, """SELECT position, item_id, key FROM items WHERE booklet_id = ?
                             AND position IS NOT NULL ORDER BY position""",
                      [_min_booklet(db, "MT")])


def _generated_sample(doc_id: int, number: int, key: str, reply: str, extracted: str) -> str:
    """One ``enem_challenge`` line of lm-eval's ``--log_samples`` (a ``generate_until`` task):
    the document, its one request, the raw reply and the filter's answer."""
    doc = {"id": f"2023_{number}", "exam": "2023", "question": "Questão", "description": "",
           "choices": {"text": [f"opção {x}" for x in LETTERS], "label": list(LETTERS)},
           "answerKey": key}
    return json.dumps({"doc_id": doc_id, "doc": doc, "target": key,
                       "arguments": {"gen_args_0": {"arg_0": "Pergunta", "arg_1": {}}},
                       "resps": [[reply]], "filtered_resps": [extracted], "filter": "all",
                       "metrics": ["exact_match"], "exact_match": 0.0}) + "\n"


def _samples(tmp_path: Path, form, unreadable: int) -> Path:
    """A samples file answering the MT booklet (questions 136–180), its first ``unreadable``
    answers a reply with no letter that the filter could not read either."""
    folder = tmp_path / "out" / "org__model-7b"
    folder.mkdir(parents=True)
    lines = [_generated_sample(i, 135 + position, key, "Não sei responder.", "[invalid]")
             if i < unreadable else _generated_sample(i, 135 + position, key, f" {key}", key)
             for i, (position, _, key) in enumerate(form)]
    path = folder / f"samples_enem_challenge_{STAMP}.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_an_lm_eval_file_of_unreadable_answers_is_not_published(tmp_path, capsys, demo_db):
    form = _mt_form(demo_db)
    samples = _samples(tmp_path, form, unreadable=len(form))
    code, line = _one_error(capsys, ["--db", str(demo_db), "import-results", str(samples),
                                     "--booklet", f"MT={_min_booklet(demo_db, 'MT')}"])
    assert code == 2
    assert f"100.0% of {len(form)} answers had no letter A–E (limit 10%)" in line
    assert "not imported" in line
    assert query_rows(demo_db, "SELECT count(*) FROM model_runs") == [(0,)]
    assert query_rows(demo_db, "SELECT count(*) FROM model_responses") == [(0,)]


def test_an_lm_eval_file_within_the_limit_is_published(tmp_path, capsys, demo_db):
    form = _mt_form(demo_db)
    within = int(0.1 * len(form))  # 4 of 45: 8.9%
    samples = _samples(tmp_path, form, unreadable=within)
    assert main(["--db", str(demo_db), "import-results", str(samples),
                 "--booklet", f"MT={_min_booklet(demo_db, 'MT')}"]) == 0
    assert f"generated answers with no letter (left out of the patterns): {within}" in \
        capsys.readouterr().out
    assert query_rows(demo_db, "SELECT count(*) FROM model_responses WHERE choice = '?'") == [
        (within,)]


def _lighteval_details(tmp_path: Path, db: Path, task: str) -> Path:
    """A details file (lighteval ≥ 0.10) answering the MT booklet in MCF form, each document
    built from the stored Portuguese texts so that it links."""
    form = _mt_form(db)
    texts = {int(r[0]): r[1:] for r in query_rows(
        db, """SELECT item_id, stem, option_a, option_b, option_c, option_d, option_e
               FROM question_texts WHERE language = 'pt'""")}
    rows = []
    for position, item, key in form:
        stem, *options = texts[item]
        shown = "\n".join(f" {x}. {o}" for x, o in zip(LETTERS, options, strict=True))
        doc = {"query": f"Pergunta: {stem}\n{shown}\nResposta:",
               "choices": [f" {x}" for x in LETTERS], "gold_index": [LETTERS.index(key)],
               "id": str(position), "task_name": task, "num_asked_few_shots": 0}
        logprobs = [-1.0 - 0.1 * i for i in range(len(LETTERS))]
        rows.append({"doc": doc, "model_response": {"text": [], "logprobs": logprobs},
                     "metric": {"acc": 0.0}})
    folder = tmp_path / "evals" / "details" / "org" / "model-1b" / STAMP
    folder.mkdir(parents=True)
    path = folder / f"details_{task}_{STAMP}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_a_lighteval_task_of_year_2023_5_is_refused(tmp_path, capsys, demo_db):
    path = _lighteval_details(tmp_path, demo_db, "lighteval|enem_por_mcf:2023.5|0")
    code, line = _one_error(capsys, ["--db", str(demo_db), "import-results", str(path)])
    assert code == 2
    assert "names no exam year" in line and "2023.5" in line
    assert query_rows(demo_db, "SELECT count(*) FROM model_runs") == [(0,)]


def test_a_lighteval_task_of_year_2023_is_imported(tmp_path, capsys, demo_db):
    path = _lighteval_details(tmp_path, demo_db, "lighteval|enem_por_mcf:2023|0")
    assert main(["--db", str(demo_db), "import-results", str(path)]) == 0
    assert query_rows(demo_db, "SELECT year FROM model_runs") == [(2023,)]


def test_export_task_refuses_an_empty_output(tmp_path, capsys, demo_db, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    code, line = _one_error(capsys, ["--db", str(demo_db), "export-task", "--year", "2023",
                                     "--area", "MT", "--shuffles", "1", "--output", ""])
    assert code == 2 and "--output" in line
    assert list(here.iterdir()) == []


# --- 5. run values checked before any work -------------------------------------------------------

@pytest.mark.parametrize("seed", [str(2**70), str(SEED_MAX + 1), "-1", "2**70"])
def test_run_refuses_a_seed_out_of_range_before_any_work(tmp_path, capsys, demo_db, seed):
    runs = tmp_path / "runs"
    code, line = _one_error(capsys, ["--db", str(demo_db), "run", "--backend", "random",
                                     "--year", "2023", "--areas", "MT", "--shuffles", "1",
                                     "--runs-dir", str(runs), "--quiet", "--seed", seed])
    assert code == 2 and "--seed" in line
    assert not runs.exists() or list(runs.iterdir()) == []


@pytest.mark.parametrize("temperature", ["1e309", "inf", "nan", "-0.5"])
def test_run_refuses_a_temperature_out_of_range_before_any_work(tmp_path, capsys, demo_db,
                                                                temperature):
    runs = tmp_path / "runs"
    code, line = _one_error(capsys, ["--db", str(demo_db), "run", "--backend", "transformers",
                                     "--model", str(tmp_path / "no-model"), "--year", "2023",
                                     "--answer-method", "generate", "--runs-dir", str(runs),
                                     "--quiet", "--temperature", "0.6", temperature])
    assert code == 2 and "--temperature" in line
    assert not runs.exists() or list(runs.iterdir()) == []


@pytest.mark.parametrize(("seed", "temperature"), [(2**70, 0.6), (-1, 0.6), (0, math.inf),
                                                   (0, math.nan), (0, -0.1)])
def test_a_run_spec_refuses_values_no_run_can_store(seed, temperature):
    """The Runs page and every other caller build a RunSpec: the same checks hold there."""
    with pytest.raises(ValueError, match="seed|temperature"):
        RunSpec(model="m", backend="transformers", year=2023, seed=seed,
                backend_options={"answer_method": "generate", "temperature": temperature})


def test_a_run_spec_takes_the_largest_seed():
    assert RunSpec(model="m", backend="random", year=2023, seed=SEED_MAX).seed == SEED_MAX


# --- 6. run exports ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def store_with_run(tmp_path_factory, ingested_2023, demo_files_2023) -> tuple[Path, str]:
    """A store holding the small 2023 year, its texts and a published random run of MT."""
    db = tmp_path_factory.mktemp("with_run") / "enem.duckdb"
    copy_store(ingested_2023[0], db)
    with connected(db) as con:
        load_question_texts(con, demo_files_2023.questions)
    spec = RunSpec(model="random-baseline", backend="random", year=2023, areas=("MT",),
                   n_shuffles=2)
    outcome = execute_run(spec, db, db.parent / "runs")
    return db, outcome.run_id


def test_export_run_keeps_an_existing_file_when_the_write_fails(tmp_path, capsys,
                                                                store_with_run, monkeypatch):
    db, run_id = store_with_run
    folder = tmp_path / "exports"
    folder.mkdir()
    target = folder / "run.parquet"
    assert main(["--db", str(db), "export-run", run_id, str(target)]) == 0
    old = target.read_bytes()

    def disk_full(table, where, *args, **kwargs) -> None:
        with open(where, "wb") as handle:  # some bytes reach the disk, then it is full
            handle.write(b"PAR1" + b"\0" * 100)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq, "write_table", disk_full)
    code, line = _one_error(capsys, ["--db", str(db), "export-run", run_id, str(target)])
    assert code == 1 and "No space left on device" in line
    assert target.read_bytes() == old
    assert [path.name for path in folder.iterdir()] == ["run.parquet"]


def test_a_run_export_of_answers_without_letters_is_not_imported(tmp_path, capsys,
                                                                  store_with_run,
                                                                  ingested_2023):
    db, run_id = store_with_run
    exported = tmp_path / "run.parquet"
    assert main(["--db", str(db), "export-run", run_id, str(exported)]) == 0
    table = pq.read_table(exported)
    blanks = pa.array(["."] * table.num_rows)
    table = table.set_column(table.schema.get_field_index("choice"), "choice", blanks)
    pq.write_table(table, exported)  # the metadata (the run's description) travels along
    other = tmp_path / "other" / "enem.duckdb"
    other.parent.mkdir()
    copy_store(ingested_2023[0], other)
    capsys.readouterr()
    code, line = _one_error(capsys, ["--db", str(other), "import-results", str(exported)])
    assert code == 2
    assert f"100.0% of {table.num_rows:,} answers had no letter A–E" in line
    assert query_rows(other, "SELECT count(*) FROM model_runs") == [(0,)]
