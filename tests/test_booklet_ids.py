"""Booklet ids (CO_PROVA) that are not whole numbers in range are rejects, never rounded.

A microdata line whose CO_PROVA_MT is ``2341.6`` used to be read as booklet 2342 and scored
against it. Here such values, in the microdata, the item file and a patterns file, must end as a
counted reject (or the row's SCORE_ERROR) naming the column, while whole numbers written as
``2342.0`` keep working.
"""

from __future__ import annotations

import csv

import pandas as pd

from cli.main import main
from enem.items import load_items
from enem.microdata import booklet_reason
from tests.db_support import query_rows
from tests.ingest_support import write_lines
from workflows.ingest import ingest_year


def _lines(path) -> list[str]:
    text = path.read_bytes().decode("latin-1")
    return text[:-1].split("\n")


def test_fractional_and_out_of_range_booklets_are_counted_rejects(tmp_path, demo_files_2023):
    lines = _lines(demo_files_2023.microdata)
    header = lines[0].split(";")
    booklet_col, presence_col = header.index("CO_PROVA_MT"), header.index("TP_PRESENCA_MT")
    id_col = header.index("NU_INSCRICAO")
    rows = [line.split(";") for line in lines[1:]]
    takers = [i for i, r in enumerate(rows) if r[presence_col] == "1"]
    # 2341.6 next to a real booklet 2342: rounding would score it against 2342.
    fractional = takers[:7]
    out_of_range = takers[7:10]
    written_as_float = takers[10:15]  # "2342.0": a whole number as a spreadsheet writes it
    bad_ids = set()
    for i in fractional:
        rows[i][booklet_col] = f"{int(rows[i][booklet_col]) - 1}.6"
        bad_ids.add(rows[i][id_col])
    for i in out_of_range:
        rows[i][booklet_col] = "99999999999"
        bad_ids.add(rows[i][id_col])
    for i in written_as_float:
        rows[i][booklet_col] = f"{rows[i][booklet_col]}.0"
    micro = write_lines(tmp_path / "MICRODADOS_ENEM_2023.csv",
                        [lines[0]] + [";".join(r) for r in rows])
    db = tmp_path / "enem.duckdb"
    summary = ingest_year(db, 2023, micro, demo_files_2023.items, progress=False)

    reason = booklet_reason("MT")
    assert "CO_PROVA_MT" in reason
    assert summary.reject_reasons[reason] == len(bad_ids)
    rejected = query_rows(db, "SELECT examinee_id FROM rejects WHERE kind = 'record' "
                              "AND area = 'MT' AND reason = ?", [reason])
    assert {r[0] for r in rejected} == bad_ids
    scored = {r[0] for r in query_rows(db, "SELECT examinee_id FROM scores WHERE area = 'MT'")}
    assert not scored & bad_ids
    assert {rows[i][id_col] for i in written_as_float} <= scored
    # Every present MT record is either scored or a reject.
    present = sum(r[presence_col] == "1" for r in rows)
    record_rejects = query_rows(db, "SELECT count(*) FROM rejects WHERE kind = 'record' "
                                    "AND area = 'MT'")[0][0]
    assert len(scored) + record_rejects == present


def test_item_file_booklet_ids_out_of_range_are_flagged_not_a_traceback(tmp_path,
                                                                        demo_files_2023):
    lines = _lines(demo_files_2023.items)
    header = lines[0].split(";")
    col = header.index("CO_PROVA")
    rows = [line.split(";") for line in lines[1:]]
    rows[0][col], rows[1][col], rows[2][col] = "1e20", "3000000000", "2341.6"
    items_path = write_lines(tmp_path / "ITENS_PROVA_2023.csv",
                             [lines[0]] + [";".join(r) for r in rows])
    items = load_items(items_path)
    problems = items.rows["problem"].iloc[:3].tolist()
    assert all(p and "CO_PROVA" in p for p in problems), problems
    assert items.rows["booklet_id"].iloc[:3].isna().all()


def test_cli_ingest_items_with_a_huge_booklet_id_is_one_error_free_run(tmp_path,
                                                                      demo_files_2023,
                                                                      capsys):
    lines = _lines(demo_files_2023.items)
    header = lines[0].split(";")
    col = header.index("CO_PROVA")
    rows = [line.split(";") for line in lines[1:]]
    rows[0][col] = "3000000000"
    items_path = write_lines(tmp_path / "ITENS_PROVA_2023.csv",
                             [lines[0]] + [";".join(r) for r in rows])
    code = main(["ingest-items", "--db", str(tmp_path / "e.duckdb"), "--year", "2023",
                 "--items", str(items_path)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "CO_PROVA" in "".join(
        r[0] for r in query_rows(tmp_path / "e.duckdb", "SELECT detail FROM rejects"))


def test_score_patterns_reports_a_fractional_booklet_in_the_row(tmp_path, demo_files_2023):
    with open(demo_files_2023.items, encoding="latin-1", newline="") as handle:
        booklet = min(int(r["CO_PROVA"]) for r in csv.DictReader(handle, delimiter=";")
                      if r["SG_AREA"] == "MT")
    patterns = tmp_path / "p.csv"
    pd.DataFrame({"CO_PROVA": [f"{booklet - 1}.6", f"{booklet}.0", "99999999999"],
                  "RESPONSE_PATTERN": ["01" * 22 + "1"] * 3}).to_csv(patterns, index=False)
    out = tmp_path / "o.csv"
    assert main(["score-patterns", "--items", str(demo_files_2023.items), "--patterns",
                 str(patterns), "--output", str(out)]) == 0
    errors = pd.read_csv(out, dtype=str, keep_default_na=False)["SCORE_ERROR"].tolist()
    assert "CO_PROVA" in errors[0] and "not a booklet number" in errors[0]
    assert errors[1] == ""
    assert errors[2] != ""
