"""The paper's per-booklet exam files: read as published (LC's Spanish block, prompt language
from the folder), linked to CO_ITEM, keys checked against the item file, item attributes derived,
and a model run over the real 2022 exam.

Texts in the unit tests are written here; the real files are only read from the shared folder.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from inference.item_attributes import derive_attributes, has_image, has_numbers, numbers_in
from inference.plan import RunSpec
from inference.question_files.paper_csv import PAPER_COLUMNS, load_paper_csv
from inference.questions import QuestionFormatError
from store.connection import writing
from store.layout import copy_store
from tests.db_support import query_rows
from tests.oracle_support import booklet_items, read_rows
from workflows.question_import import import_questions
from workflows.runs.execution import execute_run

ROOT = Path(__file__).resolve().parent.parent
BOOKLETS_2022 = {"CH": 1062, "LC": 1072, "MT": 1082, "CN": 1092}


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=ROOT,
                          capture_output=True, text=True, check=False)


# --------------------------------------------------------------------------- item attributes


@pytest.mark.parametrize("text", [
    "Descrição da imagem: um mapa com rios.",
    "TEXTO 2 Descrição do quadro: duas colunas de dados.",
    "Descrição das estruturas químicas: dois anéis ligados.",
    "Image description: a map with rivers.",
    "Table description: two columns of data.",
    "Description of the diagram: a circuit with a lamp.",
    "Descripción de la imagen: un cartel con dos personas.",
    "Observe a figura.\n[[placeholder]]\nO que ela mostra?",
])
def test_image_markers_are_found(text):
    assert has_image(text)


@pytest.mark.parametrize("text", [
    "A figura abaixo mostra um mapa.",  # a word, not a description
    "O autor faz uma descrição do cenário.",
    "The narrator gives a description of the characters.",
    "Descrição longa do cenário. Depois disso: nada.",  # the colon is in another sentence
    "",
])
def test_prose_is_not_an_image_marker(text):
    assert not has_image(text)


@pytest.mark.parametrize(("text", "numbers"), [
    ("Um terreno de 2 500 metros custa R$ 1.200,50.", ["2 500", "1.200,50"]),
    ("Em 1990, 3,5 por cento; em 2001, 10%.", ["1990", "3,5", "2001", "10"]),
    ("TEXTO 1 Uma frase. TEXTO 2 Outra frase.", []),
    ("Os textos 1 e 2 e a Figura 3 tratam de 7 casas.", ["7"]),
    ("Quadro 1: 40 por cento; Art. 6º garante.", ["40"]),
    ("According to texts 1 and 2 and Table 4, 12 people came.", ["12"]),
    ("As afirmativas I, II e III citam o século XX.", []),
    ("CO2, H2O, covid-19 e SARS-CoV-2 são nomes.", []),
    ("A 29-year-old woke at 7am on the 19th.", ["29", "7", "19"]),
    ("Dois terços de três metades.", []),
])
def test_numbers_follow_the_documented_rules(text, numbers):
    assert numbers_in(text) == numbers
    assert has_numbers(text) is bool(numbers)


def test_attributes_of_one_item_read_statement_and_options_apart():
    found = derive_attributes("Descrição da imagem: uma balança. Qual é o peso?",
                              ("leve", "pesado", "2 quilos", "nenhum", "todos"))
    assert (found.has_image, found.numbers_in_statement, found.numbers_in_options) == (
        True, False, True)
    found = derive_attributes("Uma caixa tem 12 lápis.", ("a", "b", "c", "d", "e"))
    assert (found.has_image, found.numbers_in_statement, found.numbers_in_options) == (
        False, True, False)
    found = derive_attributes("Qual é a cor?", ("azul", "[[placeholder]]", "c", "d", "e"))
    assert found.has_image


# --------------------------------------------------------------------------- reading LC files


def _row(number: int, language: str, body: str, answer: str = "A", test: str = "LC"):
    return {"question": f"QUESTION {number:02d}", "body": body, "A": "um", "B": "dois",
            "C": "três", "D": "quatro", "E": "cinco", "year": "2022",
            "question_number": str(number), "test": test, "answer": answer,
            "language": language}


def _lc_rows(prompt: str) -> list[dict[str, str]]:
    """An LC file as the paper lays it out: English block, Spanish block, then 6–45."""
    own = "english" if prompt == "en" else "portuguese"
    return ([_row(n, "english", f"An English text {n}.") for n in range(1, 6)]
            + [_row(n, "spanish", f"Un texto en español {n}.") for n in range(1, 6)]
            + [_row(n, own, f"Texto {n}, anulada" if n == 9 else f"Statement {n}.",
                    answer="anulada" if n == 9 else "C") for n in range(6, 46)])


def _mixed_rows() -> list[dict[str, str]]:
    """An LC file whose rows after the foreign block alternate English and Portuguese."""
    rows = _lc_rows("pt")
    for row in rows[10::2]:
        row["language"] = "english"
    return rows


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(PAPER_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_lc_file_with_spanish_block_takes_its_prompt_language_from_the_folder(tmp_path):
    path = _write(tmp_path / "en" / "ENEM_2022_LC_CO_PROVA_1072.csv", _lc_rows("en"))
    qs = load_paper_csv(path)
    assert len(qs) == 50 and {q.language for q in qs} == {"en"}
    assert {(q.area, q.booklet_id, q.year) for q in qs} == {("LC", 1072, 2022)}
    assert [(q.position, q.item_language) for q in qs[:10]] == (
        [(p, 0) for p in range(1, 6)] + [(p, 1) for p in range(1, 6)])
    assert [q.position for q in qs[10:]] == list(range(6, 46))
    assert qs[5].stem == "Un texto en español 1." and qs[5].source.endswith("row 6 (spanish)")
    assert qs[13].annulled and qs[13].key is None and qs[14].key == "C"
    # Outside a pt/ or en/ folder the rows' own language (outside the foreign block) tells it.
    loose = _write(tmp_path / "ENEM_2022_LC_CO_PROVA_1072.csv", _lc_rows("pt"))
    assert {q.language for q in load_paper_csv(loose)} == {"pt"}
    # Rows in two languages need the folder or the flag.
    mixed = _write(tmp_path / "mixed" / "ENEM_2022_LC_CO_PROVA_1072.csv", _mixed_rows())
    with pytest.raises(QuestionFormatError, match="cannot tell the prompt language"):
        load_paper_csv(mixed)
    with pytest.raises(QuestionFormatError, match="row 11 .*text is in english"):
        load_paper_csv(mixed, language="pt")


def test_lc_file_errors_name_the_file_and_row(tmp_path):
    # A Portuguese file in the en folder.
    wrong_folder = _write(tmp_path / "en" / "ENEM_2022_LC_CO_PROVA_1.csv", _lc_rows("pt"))
    with pytest.raises(QuestionFormatError,
                       match=r"row 11 .*text is in portuguese but the file's prompt language "
                             r"is 'en'"):
        load_paper_csv(wrong_folder)
    # Spanish block first: the English-block rows hold Spanish text.
    rows = _lc_rows("pt")
    rows[:10] = rows[5:10] + rows[:5]
    swapped = _write(tmp_path / "pt" / "ENEM_2022_LC_CO_PROVA_2.csv", rows)
    with pytest.raises(QuestionFormatError, match=r"row 1 .*text is in spanish"):
        load_paper_csv(swapped)
    # Question numbers not laid out as two foreign blocks before the rest.
    rows = _lc_rows("pt")
    rows[5]["question_number"] = "7"
    with pytest.raises(QuestionFormatError, match="first five question numbers twice"):
        load_paper_csv(_write(tmp_path / "pt" / "ENEM_2022_LC_CO_PROVA_3.csv", rows))
    rows = _lc_rows("pt")
    rows[20]["language"] = "french"
    with pytest.raises(QuestionFormatError, match="row 21 .*portuguese, english or spanish"):
        load_paper_csv(_write(tmp_path / "pt" / "ENEM_2022_LC_CO_PROVA_4.csv", rows))


def test_cli_errors_are_one_line(tmp_path):
    db = tmp_path / "enem.duckdb"
    missing = _cli("import-questions", str(tmp_path / "nowhere"), "--format", "paper-csv",
                   "--db", str(db))
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"error: no such file or folder: {tmp_path / 'nowhere'}"]
    (tmp_path / "empty").mkdir()
    empty = _cli("import-questions", str(tmp_path / "empty"), "--format", "paper-csv",
                 "--db", str(db))
    assert empty.returncode == 2 and "error: no *.csv files (paper-csv)" in empty.stderr
    mixed = _write(tmp_path / "ENEM_2022_LC_CO_PROVA_1072.csv", _mixed_rows())
    unsure = _cli("import-questions", str(mixed), "--format", "paper-csv", "--db", str(db))
    assert unsure.returncode == 2 and len(unsure.stderr.strip().splitlines()) == 1
    assert "cannot tell the prompt language" in unsure.stderr and "--language" in unsure.stderr


# --------------------------------------------------------------------------- the real files


@pytest.fixture(scope="module")
def imported_2022(tmp_path_factory, real_items_db, real_data):
    """The real item store with the paper's eight 2022 files imported through the CLI, as a
    user would (treat as read-only; copy it before writing)."""
    db = tmp_path_factory.mktemp("paper2022") / "real.duckdb"
    copy_store(real_items_db, db)
    result = _cli("import-questions", "--format", "paper-csv",
                  str(real_data / "paper-questions-2022"), "--db", str(db))
    assert result.returncode == 0, result.stderr
    return db, result


def _paper_rows(real_data: Path, language: str, area: str) -> list[dict[str, str]]:
    path = (real_data / "paper-questions-2022" / language
            / f"ENEM_2022_{area}_CO_PROVA_{BOOKLETS_2022[area]}.csv")
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _real_form(real_data: Path, area: str, language: str | None) -> list[dict[str, str]]:
    """The item-file rows of a 2022 booklet for one LC language, sorted by CO_POSICAO, read
    from the raw item file (independent of the project's reader). 2022 writes TP_LINGUA as a
    float ("1.0")."""
    items = read_rows(real_data / "items" / "ITENS_PROVA_2022.csv")
    for item in items:
        item["TP_LINGUA"] = item["TP_LINGUA"].removesuffix(".0")
    return booklet_items(items, str(BOOKLETS_2022[area]), language)


def _expected_items(real_data: Path, area: str) -> list[dict[str, str]]:
    """The item-file rows of a 2022 booklet in the paper file's row order: LC's English block,
    its Spanish block, then positions 6–45."""
    if area != "LC":
        return _real_form(real_data, area, None)
    english, spanish = _real_form(real_data, area, "0"), _real_form(real_data, area, "1")
    return english[:5] + spanish[:5] + spanish[5:]


def test_real_files_import_every_item_in_both_languages(imported_2022, real_data):
    db, result = imported_2022
    assert "stored 370 question texts from 8 file(s)" in result.stdout
    assert "item attributes derived for 185 items" in result.stdout
    for area, booklet in BOOKLETS_2022.items():
        expected = {int(item["CO_ITEM"]) for item in _expected_items(real_data, area)}
        assert len(expected) == (50 if area == "LC" else 45)
        for language in ("pt", "en"):
            stored = {row[0] for row in query_rows(
                db, """SELECT q.item_id FROM question_texts q JOIN items i
                       ON i.year = q.year AND i.item_id = q.item_id
                       WHERE q.year = 2022 AND q.language = ? AND i.booklet_id = ?""",
                [language, booklet])}
            assert stored == expected, (area, language)


def test_real_file_keys_agree_with_the_item_file(imported_2022, real_data):
    db, result = imported_2022
    # Independent check: each file row's answer against TX_GABARITO of the item at that place.
    disagreements = []
    for area in BOOKLETS_2022:
        items = _expected_items(real_data, area)
        for language in ("pt", "en"):
            rows = _paper_rows(real_data, language, area)
            if area != "LC":
                rows = sorted(rows, key=lambda r: int(r["question_number"]))
            assert len(rows) == len(items)
            for row, item in zip(rows, items, strict=True):
                file_key = "X" if row["answer"].strip().lower() == "anulada" else row["answer"]
                if file_key != item["TX_GABARITO"]:
                    disagreements.append((language, area, row["question_number"],
                                          row["answer"], item["TX_GABARITO"]))
    assert disagreements == []
    assert "all keys agree with the item file" in result.stdout
    assert "key differs" not in result.stderr
    # The stored texts say the same: the one annulled item (MT) is annulled in both languages.
    stored = query_rows(db, """SELECT q.language, i.area, q.key, q.annulled, i.key
                          FROM question_texts q
                          JOIN items i ON i.year = q.year AND i.item_id = q.item_id
                          WHERE q.year = 2022 AND i.booklet_id IN (1062, 1072, 1082, 1092)""")
    assert len(stored) == 370
    assert all((key if not annulled else "X") == item_key
               for _, _, key, annulled, item_key in stored)
    assert sorted((lang, area) for lang, area, _, annulled, _ in stored if annulled) == [
        ("en", "MT"), ("pt", "MT")]


def test_prompt_prints_the_real_spanish_question(imported_2022, real_data):
    db, _ = imported_2022
    result = _cli("prompt", "--year", "2022", "--area", "LC", "--position", "1",
                  "--lc-language", "1", "--booklet", "1072", "--language", "en", "--db", str(db))
    assert result.returncode == 0, result.stderr
    spanish_first = _paper_rows(real_data, "en", "LC")[5]  # row 6: Spanish question 1
    assert spanish_first["language"] == "spanish" and spanish_first["question_number"] == "1"
    assert f"Question: {spanish_first['body'].strip()}" in result.stdout
    assert f"(A) {spanish_first['A'].strip()}" in result.stdout
    assert result.stdout.startswith("Here are some questions from a college entrance exam.")


def test_attributes_come_from_the_portuguese_text_and_user_rows_survive(imported_2022,
                                                                         real_data, tmp_path):
    db, _ = imported_2022
    stored = {(row[0]): row[1:] for row in query_rows(
        db, "SELECT item_id, has_image, numbers_in_statement, numbers_in_options, source "
            "FROM item_attributes WHERE year = 2022")}
    assert len(stored) == 185 and {row[3] for row in stored.values()} == {"derived"}
    for area in BOOKLETS_2022:
        rows = _paper_rows(real_data, "pt", area)
        if area != "LC":
            rows = sorted(rows, key=lambda r: int(r["question_number"]))
        for row, item in zip(rows, _expected_items(real_data, area), strict=True):
            found = derive_attributes(row["body"], [row[x] for x in "ABCDE"])
            assert stored[int(item["CO_ITEM"])][:3] == (
                found.has_image, found.numbers_in_statement, found.numbers_in_options)
    # Every MT item uses numbers; some items of every area show images.
    mt = [stored[int(i["CO_ITEM"])] for i in _expected_items(real_data, "MT")]
    assert all(row[1] for row in mt)
    assert all(any(stored[int(i["CO_ITEM"])][0] for i in _expected_items(real_data, area))
               for area in BOOKLETS_2022)

    # A user's correction is kept by a re-import; the other rows are derived again.
    copy = tmp_path / "copy.duckdb"
    copy_store(db, copy)
    item_id = int(_expected_items(real_data, "CH")[0]["CO_ITEM"])
    with writing(copy) as con:
        con.execute("UPDATE item_attributes SET has_image = NOT has_image, source = 'user' "
                    "WHERE year = 2022 AND item_id = ?", [item_id])
        con.execute("DELETE FROM item_attributes WHERE year = 2022 AND item_id <> ?", [item_id])
    summary = import_questions(copy, real_data / "paper-questions-2022" / "pt", "paper-csv")
    assert (summary.stored, summary.attributes_derived, summary.attributes_kept) == (185, 184, 1)
    after = {row[0]: row[1:] for row in query_rows(
        copy, "SELECT item_id, has_image, source FROM item_attributes WHERE year = 2022")}
    assert after[item_id] == (not stored[item_id][0], "user")
    assert len(after) == 185


def test_random_run_over_the_real_2022_exam(imported_2022, real_data, tmp_path):
    db = tmp_path / "run.duckdb"
    copy_store(imported_2022[0], db)
    spec = RunSpec(model="random-baseline", backend="random", year=2022,
                   areas=tuple(BOOKLETS_2022), languages=("pt", "en"), n_shuffles=3, seed=5,
                   lc_language=1, booklets=dict(BOOKLETS_2022))
    outcome = execute_run(spec, db, tmp_path / "runs")
    assert outcome.status == "finished"
    for area, booklet in BOOKLETS_2022.items():
        form = _real_form(real_data, area, "1")  # Spanish, as the paper
        assert len(form) == 45
        for language in ("pt", "en"):
            answered = query_rows(db, """SELECT position, item_id, count(DISTINCT shuffle),
                                           bool_and(choice IS NOT NULL)
                                    FROM model_responses
                                    WHERE run_id = ? AND area = ? AND prompt_language = ?
                                      AND booklet_id = ?
                                    GROUP BY ALL ORDER BY position""",
                             [spec.run_id, area, language, booklet])
            by_position = {pos: (item_id, shuffles, chosen)
                           for pos, item_id, shuffles, chosen in answered}
            for position, item in enumerate(form, start=1):
                if item["TX_GABARITO"] == "X":
                    # Annulled items are not asked: their place in the pattern stays blank.
                    assert position not in by_position
                    continue
                assert by_position[position] == (int(item["CO_ITEM"]), 3, True), (
                    area, language, position)
            patterns = query_rows(db, """SELECT response_pattern FROM model_scores
                                    WHERE run_id = ? AND area = ? AND prompt_language = ?""",
                             [spec.run_id, area, language])
            assert len(patterns) == 3 and all(len(p) == 45 for (p,) in patterns)
            annulled = [k for k, item in enumerate(form) if item["TX_GABARITO"] == "X"]
            assert all(p[k] == "." for (p,) in patterns for k in annulled)
    # Only MT 2022 booklet 1082 has an annulled item among the four.
    assert outcome.units_total == 2 * (45 + 45 + 45 + 44)
