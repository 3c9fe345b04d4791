"""import-questions: texts in the three formats are linked to the right CO_ITEM."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from store.connection import open_reader
from store.layout import copy_store
from tests.oracle_support import booklet_items, read_rows

ROOT = Path(__file__).resolve().parent.parent


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=ROOT,
                          capture_output=True, text=True, check=False)


def _texts(db):
    con = open_reader(db)
    try:
        return {(r[0], r[1]): r[2:] for r in con.execute(
            "SELECT item_id, language, stem, option_a, key FROM question_texts").fetchall()}
    finally:
        con.close()


def test_project_and_paper_formats_link_by_booklet_position(tmp_path, ingested_2023,
                                                              demo_files_2023):
    db = tmp_path / "enem.duckdb"
    copy_store(ingested_2023[0], db)
    items = read_rows(demo_files_2023.items)
    lines = demo_files_2023.questions.read_text(encoding="utf-8").splitlines()
    originals = [json.loads(line) for line in lines]
    by_item = {(q["item_id"], q["language"]): q for q in originals}
    booklet = min(int(r["CO_PROVA"]) for r in items if r["SG_AREA"] == "MT")
    form = booklet_items(items, str(booklet), None)

    # Project format without item ids: linked through (booklet, sorted position).
    project = tmp_path / "mt.jsonl"
    with open(project, "w", encoding="utf-8") as handle:
        for position, item in enumerate(form, start=1):
            record = dict(by_item[(int(item["CO_ITEM"]), "en")])
            record.pop("item_id")
            record.update(booklet_id=booklet, position=position, stem="EN " + record["stem"])
            handle.write(json.dumps(record) + "\n")
    result = _cli("import-questions", str(project), "--format", "project", "--db", str(db))
    assert result.returncode == 0, result.stderr
    texts = _texts(db)
    for item in form:
        original = by_item[(int(item["CO_ITEM"]), "en")]
        assert texts[(int(item["CO_ITEM"]), "en")] == (
            "EN " + original["stem"], original["options"][0], original["key"])

    # The paper's per-booklet CSV, numbered as in the booklet (136..180 for MT).
    paper = tmp_path / f"CO_PROVA_{booklet}.csv"
    with open(paper, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "body", "A", "B", "C", "D", "E", "year", "question_number",
                         "test", "answer", "language"])
        for number, item in enumerate(form, start=136):
            q = by_item[(int(item["CO_ITEM"]), "pt")]
            writer.writerow([f"Q{number}", "PT " + q["stem"], *q["options"], 2023, number, "MT",
                             q["key"], "portuguese"])
    result = _cli("import-questions", str(paper), "--format", "paper-csv", "--db", str(db))
    assert result.returncode == 0, result.stderr
    texts = _texts(db)
    for item in form:
        original = by_item[(int(item["CO_ITEM"]), "pt")]
        assert texts[(int(item["CO_ITEM"]), "pt")][0] == "PT " + original["stem"]
        assert texts[(int(item["CO_ITEM"]), "pt")][2] == original["key"]


def test_unlinkable_questions_are_reported(tmp_path, ingested_2023, demo_files_2023):
    db = tmp_path / "enem.duckdb"
    copy_store(ingested_2023[0], db)
    record = json.loads(demo_files_2023.questions.read_text(encoding="utf-8").splitlines()[0])
    record.pop("item_id")
    record.update(booklet_id=9999, position=3)
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = _cli("import-questions", str(path), "--format", "project", "--db", str(db))
    assert result.returncode == 1
    assert "no item at position 3 of booklet 9999" in result.stderr
