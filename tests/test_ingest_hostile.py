"""Ingest of hostile microdata and item files: nothing that fails validation replaces a year.

Each test writes a damaged copy of the small generated 2023 year (INEP format, ``;``, Latin-1)
and checks the outcome against values worked out here from the raw lines with plain Python:
what is refused leaves every table exactly as it was, what is accepted stores exactly the rows
that are fine, and every rejected line is counted under its reason.
"""

from __future__ import annotations

import csv
import random

import duckdb
import pytest

from cli import main as cli
from enem.csvfiles import (
    MAX_LINE_BYTES,
    MISSING_COLUMNS,
    OVERLONG_LINE,
    REJECT_SAMPLES,
    TOO_MANY_COLUMNS,
    FieldCheck,
    UnusableFileError,
    csv_source_sql,
    scan_lines,
)
from enem.items import load_items
from store.layout import copy_store
from tests.db_support import query_rows
from tests.ingest_support import write_lines
from workflows.ingest import SHRINK_LIMIT, UNSCANNED_REJECT, IngestError, ingest_year

BOM = b"\xef\xbb\xbf"
#: Tables whose whole contents a refused ingest must leave as they were.
SNAPSHOT_TABLES = ("ingests", "examinees", "scores", "rejects", "items", "booklets",
                   "booklet_audit", "agg_theta_ctt", "item_stats")


def _lines(path) -> list[str]:
    """Header and data lines of a generated file (it ends with a line end)."""
    text = path.read_bytes().decode("latin-1")
    assert text.endswith("\n")
    return text[:-1].split("\n")


def _snapshot(db) -> dict[str, list[tuple]]:
    """Every row of the year tables, sorted: equal snapshots mean an untouched database."""
    return {table: sorted(query_rows(db, f"SELECT * FROM {table}"), key=repr)
            for table in SNAPSHOT_TABLES}


@pytest.fixture()
def full_db(tmp_path, ingested_2023):
    """A writable copy of a store holding the complete small 2023 year."""
    db = tmp_path / "enem.duckdb"
    copy_store(ingested_2023[0], db)
    return db


@pytest.fixture(scope="module")
def header_and_rows(demo_files_2023):
    lines = _lines(demo_files_2023.microdata)
    return lines[0], lines[1:]


def _column(header: str, name: str) -> int:
    return header.split(";").index(name)


# --- 1. files with nothing usable never replace a year ---------------------------------------

def test_header_only_file_is_refused_and_the_year_is_unchanged(tmp_path, full_db,
                                                                header_and_rows,
                                                                demo_files_2023):
    header, _ = header_and_rows
    empty = write_lines(tmp_path / "MICRODADOS_ENEM_2023.csv", [header])
    before = _snapshot(full_db)
    with pytest.raises(UnusableFileError, match="no rows"):
        ingest_year(full_db, 2023, empty, demo_files_2023.items, progress=False)
    assert _snapshot(full_db) == before


def test_all_malformed_file_is_refused_and_the_year_is_unchanged(tmp_path, full_db,
                                                                  header_and_rows,
                                                                  demo_files_2023):
    header, rows = header_and_rows
    # A systematic column problem: the data lines were written with ',' instead of ';'.
    commas = write_lines(tmp_path / "MICRODADOS_ENEM_2023.csv",
                         [header] + [row.replace(";", ",") for row in rows])
    before = _snapshot(full_db)
    with pytest.raises(UnusableFileError) as refused:
        ingest_year(full_db, 2023, commas, demo_files_2023.items, progress=False)
    message = str(refused.value)
    assert f"all {len(rows):,} lines are malformed" in message
    assert f"{len(rows):,} × malformed line (missing columns)" in message
    assert "e.g. line 2: 1 of 76 fields: " in message
    assert _snapshot(full_db) == before


def test_cli_refusal_is_one_error_line_with_a_non_zero_exit(tmp_path, full_db, header_and_rows,
                                                             demo_files_2023, capsys):
    header, _ = header_and_rows
    empty = write_lines(tmp_path / "MICRODADOS_ENEM_2023.csv", [header])
    before = _snapshot(full_db)
    code = cli.main(["ingest-enem", "--db", str(full_db), "--year", "2023", "--microdata",
                     str(empty), "--items", str(demo_files_2023.items), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) == 1 and err[0].startswith("error: ") and "no rows" in err[0]
    assert _snapshot(full_db) == before


# --- 2. rejects are counted in full but kept as a bounded sample ------------------------------

def test_malformed_lines_are_all_counted_and_a_capped_sample_kept(tmp_path, header_and_rows,
                                                                  demo_files_2023):
    header, rows = header_and_rows
    n_fields = len(header.split(";"))
    out, short_lines, long_lines = [header], [], []
    for index, row in enumerate(rows):
        line_no = len(out) + 1
        if index % 7 == 3:  # too few fields
            out.append(";".join(row.split(";")[:5]))
            short_lines.append(line_no)
        elif index % 50 == 11:  # one field too many
            out.append(row + ";X")
            long_lines.append(line_no)
        else:
            out.append(row)
        if index % 400 == 0:
            out.append("")  # blank lines are skipped, not rejected
    micro = write_lines(tmp_path / "MICRODADOS_ENEM_2023.csv", out)
    db = tmp_path / "db.duckdb"
    summary = ingest_year(db, 2023, micro, demo_files_2023.items, progress=False)
    good = len(rows) - len(short_lines) - len(long_lines)
    assert len(short_lines) > REJECT_SAMPLES
    assert summary.reject_reasons["malformed line (missing columns)"] == len(short_lines)
    assert summary.reject_reasons["malformed line (too many columns)"] == len(long_lines)
    assert summary.rows_read == len(rows)
    assert query_rows(db, "SELECT count(*) FROM examinees")[0][0] == good
    kept = query_rows(db, "SELECT line, reason, detail FROM rejects WHERE kind = 'csv' "
                          "AND reason LIKE 'malformed line (missing columns)%' ORDER BY line")
    assert [line for line, _, _ in kept] == short_lines[:REJECT_SAMPLES]
    assert kept[0][1] == (f"malformed line (missing columns) ({len(short_lines):,} lines; "
                          f"the first {REJECT_SAMPLES} kept)")
    assert kept[0][2] == f"5 of {n_fields} fields: " + out[short_lines[0] - 1]
    extra = query_rows(db, "SELECT line FROM rejects WHERE reason = 'malformed line (too many "
                           "columns)' ORDER BY line")
    assert [line for (line,) in extra] == long_lines


def test_an_over_long_line_is_a_reject_with_its_reason(tmp_path, header_and_rows,
                                                       demo_files_2023):
    header, rows = header_and_rows
    col = _column(header, "TX_RESPOSTAS_MT")
    fields = rows[10].split(";")
    fields[col] = "A" * (MAX_LINE_BYTES + 10)
    victim_id = fields[0]
    lines = [header] + rows[:10] + [";".join(fields)] + rows[11:]
    micro = write_lines(tmp_path / "MICRODADOS_ENEM_2023.csv", lines)
    db = tmp_path / "db.duckdb"
    summary = ingest_year(db, 2023, micro, demo_files_2023.items, progress=False)
    reason = f"malformed line (longer than {MAX_LINE_BYTES:,} bytes)"
    assert summary.reject_reasons[reason] == 1
    assert query_rows(db, "SELECT line, reason FROM rejects WHERE kind = 'csv'") == [(12, reason)]
    assert query_rows(db, "SELECT count(*) FROM examinees WHERE examinee_id = ?",
                      [victim_id])[0][0] == 0
    assert query_rows(db, "SELECT count(*) FROM examinees")[0][0] == len(rows) - 1


# --- 4. duplicate ids: the first line is kept, the others rejected ---------------------------

def test_duplicate_ids_keep_the_first_line_and_count_once(tmp_path, header_and_rows,
                                                          demo_files_2023):
    header, rows = header_and_rows
    presence, responses = _column(header, "TP_PRESENCA_MT"), _column(header, "TX_RESPOSTAS_MT")
    takers = [i for i, row in enumerate(rows) if row.split(";")[presence] == "1"][:3]
    copies = []
    for i in takers:  # a later copy of the same candidate with different answers
        fields = rows[i].split(";")
        fields[responses] = fields[responses][::-1]
        copies.append(";".join(fields))
    lines = [header] + rows[:1000] + copies[:2] + rows[1000:] + copies[2:]
    micro = write_lines(tmp_path / "MICRODADOS_ENEM_2023.csv", lines)
    db = tmp_path / "db.duckdb"
    summary = ingest_year(db, 2023, micro, demo_files_2023.items, progress=False)

    with open(micro, encoding="latin-1", newline="") as handle:
        records = list(csv.DictReader(handle, delimiter=";"))
    first = {}
    for record in records:
        first.setdefault(record["NU_INSCRICAO"], record)
    assert query_rows(db, "SELECT count(*), count(DISTINCT examinee_id) FROM examinees")[0] == (
        len(first), len(first))
    for i in takers:
        examinee = rows[i].split(";")[0]
        stored = query_rows(db, "SELECT responses_mt FROM examinees WHERE examinee_id = ?",
                            [examinee])
        assert stored == [(first[examinee]["TX_RESPOSTAS_MT"],)]
        assert stored[0][0] == rows[i].split(";")[responses]
    reason = "duplicate NU_INSCRICAO (an earlier line has it; the first is kept)"
    assert summary.reject_reasons[reason] == 3
    kept = query_rows(db, "SELECT line, examinee_id, detail FROM rejects WHERE reason = ? "
                          "ORDER BY line", [reason])
    expected_lines = [1002, 1003, len(lines)]
    assert [k[0] for k in kept] == expected_lines
    assert [k[1] for k in kept] == [rows[i].split(";")[0] for i in takers]
    assert kept[0][2] == f"first on line {takers[0] + 2}"
    # Aggregates count every candidate once.
    present = sum(r["TP_PRESENCA_MT"] == "1" for r in first.values())
    assert query_rows(db, "SELECT count(*) FROM scores WHERE area = 'MT'")[0][0] + query_rows(
        db, "SELECT count(*) FROM rejects WHERE kind = 'record' AND area = 'MT'")[0][0] == present
    assert query_rows(db, "SELECT sum(n) FROM agg_theta_ctt WHERE group_kind = 'all'")[0][0] == \
        summary.patterns_scored


# --- 6. truncated files, the wrong year, item files, byte-order marks -------------------------

def test_truncated_file_does_not_replace_a_full_year(tmp_path, full_db, header_and_rows,
                                                    demo_files_2023, capsys):
    header, rows = header_and_rows
    keep = int(len(rows) * 0.6)
    # Cut off mid-line, as an interrupted download leaves it: no final line end.
    cut = write_lines(tmp_path / "MICRODADOS_ENEM_2023.csv",
                      [header] + rows[:keep] + [rows[keep][:40]], end="")
    before = _snapshot(full_db)
    with pytest.raises(IngestError) as refused:
        ingest_year(full_db, 2023, cut, demo_files_2023.items, progress=False)
    message = str(refused.value)
    assert f"{keep:,} usable rows" in message and f"{len(rows):,}" in message
    assert "--allow-shrink" in message and "no line end" in message
    assert _snapshot(full_db) == before
    args = ["ingest-enem", "--db", str(full_db), "--year", "2023", "--microdata", str(cut),
            "--items", str(demo_files_2023.items), "--quiet"]
    assert cli.main(args) == 3
    assert _snapshot(full_db) == before
    capsys.readouterr()
    assert cli.main(args + ["--allow-shrink"]) == 0
    out = capsys.readouterr().out
    assert "no line end" in out
    assert query_rows(full_db, "SELECT count(*) FROM examinees WHERE year = 2023")[0][0] == keep


def test_a_shrink_under_the_limit_is_refused_and_above_it_accepted(tmp_path, full_db,
                                                                  header_and_rows,
                                                                  demo_files_2023):
    header, rows = header_and_rows
    under = int(len(rows) * SHRINK_LIMIT) - 1
    small = write_lines(tmp_path / "small.csv", [header] + rows[:under])
    before = _snapshot(full_db)
    with pytest.raises(IngestError, match="--allow-shrink"):
        ingest_year(full_db, 2023, small, demo_files_2023.items, progress=False)
    assert _snapshot(full_db) == before
    enough = write_lines(tmp_path / "enough.csv",
                         [header] + rows[:int(len(rows) * SHRINK_LIMIT) + 1])
    ingest_year(full_db, 2023, enough, demo_files_2023.items, progress=False)
    assert query_rows(full_db, "SELECT count(*) FROM examinees")[0][0] == int(
        len(rows) * SHRINK_LIMIT) + 1


def test_a_file_of_another_year_is_refused(tmp_path, full_db, header_and_rows, demo_files_2023):
    header, rows = header_and_rows
    year = _column(header, "NU_ANO")

    def set_year(row, value):
        fields = row.split(";")
        fields[year] = value
        return ";".join(fields)

    assert all(row.split(";")[year] == "2023" for row in rows)
    other = write_lines(tmp_path / "MICRODADOS_ENEM_2022.csv",
                        [header] + [set_year(row, "2022") for row in rows])
    before = _snapshot(full_db)
    with pytest.raises(UnusableFileError, match="NU_ANO is 2022 on"):
        ingest_year(full_db, 2023, other, demo_files_2023.items, progress=False)
    assert _snapshot(full_db) == before

    # A few rows of another year are rejected with their reason; the rest is ingested.
    odd = {5, 77, 1500}
    mixed = write_lines(tmp_path / "MICRODADOS_ENEM_2023.csv",
                        [header] + [set_year(row, "2021") if i in odd else row
                                    for i, row in enumerate(rows)])
    db = tmp_path / "fresh.duckdb"
    summary = ingest_year(db, 2023, mixed, demo_files_2023.items, progress=False)
    reason = "NU_ANO differs from --year 2023"
    assert summary.reject_reasons[reason] == 3
    assert query_rows(db, "SELECT line FROM rejects WHERE reason = ? ORDER BY line",
                      [reason]) == [(i + 2,) for i in sorted(odd)]
    ids = [rows[i].split(";")[0] for i in odd]
    assert query_rows(db, "SELECT count(*) FROM examinees WHERE examinee_id IN (?, ?, ?)",
                      ids)[0][0] == 0
    assert query_rows(db, "SELECT count(*) FROM examinees")[0][0] == len(rows) - 3


def test_items_file_missing_a_row_names_the_booklet_and_position(tmp_path, demo_files_2023):
    lines = _lines(demo_files_2023.items)
    header = lines[0].split(";")
    col = {name: header.index(name) for name in ("CO_PROVA", "SG_AREA", "CO_POSICAO")}
    rows = [line.split(";") for line in lines[1:]]
    booklet = next(r[col["CO_PROVA"]] for r in rows if r[col["SG_AREA"]] == "MT")
    positions = sorted(int(r[col["CO_POSICAO"]]) for r in rows if r[col["CO_PROVA"]] == booklet)
    gone = positions[16]
    kept = [line for line, r in zip(lines[1:], rows, strict=True)
            if not (r[col["CO_PROVA"]] == booklet and int(r[col["CO_POSICAO"]]) == gone)]
    items_path = write_lines(tmp_path / "ITENS_PROVA_2023.csv", [lines[0]] + kept)
    expected = (f"44 items, not 45 (CO_POSICAO {positions[0]}–{positions[-1]} "
                f"without {gone})")
    assert load_items(items_path).invalid[int(booklet)] == expected
    micro_header, micro_rows = _lines(demo_files_2023.microdata)[0], \
        _lines(demo_files_2023.microdata)[1:]
    booklet_col = _column(micro_header, "CO_PROVA_MT")
    presence_col = _column(micro_header, "TP_PRESENCA_MT")
    takers = sum(r.split(";")[booklet_col] == booklet and r.split(";")[presence_col] == "1"
                 for r in micro_rows)
    assert takers > 0
    db = tmp_path / "db.duckdb"
    summary = ingest_year(db, 2023, demo_files_2023.microdata, items_path, progress=False)
    assert summary.reject_reasons[f"booklet {booklet} cannot be scored: {expected}"] == takers
    assert not any("length is not" in reason for reason in summary.reject_reasons)


def test_utf8_byte_order_mark_is_tolerated_in_both_files(tmp_path, ingested_2023,
                                                         demo_files_2023):
    items = tmp_path / "ITENS_PROVA_2023.csv"
    items.write_bytes(BOM + demo_files_2023.items.read_bytes())
    micro = tmp_path / "MICRODADOS_ENEM_2023.csv"
    micro.write_bytes(BOM + demo_files_2023.microdata.read_bytes())
    db = tmp_path / "db.duckdb"
    summary = ingest_year(db, 2023, micro, items, progress=False)
    reference = ingested_2023[1]
    assert (summary.rows_read, summary.patterns_scored, summary.rows_rejected) == (
        reference.rows_read, reference.patterns_scored, reference.rows_rejected)
    sql = "SELECT examinee_id, area, theta, nota FROM scores ORDER BY examinee_id, area"
    assert query_rows(db, sql) == query_rows(ingested_2023[0], sql)


# --- the line scan agrees with the reader, across block boundaries ----------------------------

@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_line_scan_classifies_lines_as_the_reader_does_across_blocks(tmp_path, newline):
    rng = random.Random(5)
    header = "ID;NU_ANO;A;B;C"
    kinds = ("good", "good", "good", "short", "long", "blank", "spaces", "empty_tail",
             "spaced_tail", "off_year")
    lines, expected = [header], {"good": [], "short": [], "long": [], "off": []}
    for i in range(3000):
        kind = rng.choice(kinds)
        fields = [f"{i:06d}", "2023", "x" * rng.randint(0, 40), "y", "z"]
        line_no = len(lines) + 1
        if kind == "short":
            text = ";".join(fields[:rng.randint(1, 4)])
            expected["short"].append(line_no)
        elif kind == "long":
            text = ";".join(fields + ["w"])
            expected["long"].append(line_no)
        elif kind in ("blank", "spaces"):
            text = "" if kind == "blank" else " \t "
        elif kind == "spaced_tail":  # a tail holding a space is a field: too many
            text = ";".join(fields) + "; "
            expected["long"].append(line_no)
        else:
            if kind == "off_year":
                fields[1] = rng.choice(["2022", "abc", " 1999 "])
                expected["off"].append(line_no)
            text = ";".join(fields) + (";;" if kind == "empty_tail" else "")
            expected["good"].append(line_no)
        lines.append(text)
    over = len(lines) + 1
    lines.append("999999;2023;" + "x" * (MAX_LINE_BYTES + 50) + ";y;z")
    lines.append("777777;2023;a;b;c")
    expected["good"].append(len(lines))
    path = tmp_path / "lines.csv"
    path.write_bytes((newline.join(lines) + newline).encode("latin-1"))

    check = FieldCheck(1, "NU_ANO", ("", "2023", "2023.0"))
    scan = scan_lines(path, 5, check=check, block_bytes=4096, workers=3)
    assert scan.lines == sum(1 for line in lines[1:] if line.strip(" \t"))
    assert scan.malformed[MISSING_COLUMNS].count == len(expected["short"])
    assert [n for n, _ in scan.malformed[MISSING_COLUMNS].samples] == \
        expected["short"][:REJECT_SAMPLES]
    assert [n for n, _ in scan.malformed[TOO_MANY_COLUMNS].samples] == \
        expected["long"][:REJECT_SAMPLES]
    assert scan.malformed[OVERLONG_LINE].count == 1
    assert scan.malformed[OVERLONG_LINE].samples[0][0] == over
    assert scan.well_formed == len(expected["good"])
    assert scan.off_value.count == len(expected["off"])
    assert [n for n, _ in scan.off_value.samples] == expected["off"][:REJECT_SAMPLES]
    assert scan.row_lines(range(1, scan.well_formed + 1)).tolist() == expected["good"]

    con = duckdb.connect()
    try:
        ids = [row[0] for row in con.execute(
            f"SELECT ID FROM {csv_source_sql('latin-1', skip_malformed=True)}",
            {"path": str(path), "columns": {c: "VARCHAR" for c in header.split(";")}},
        ).fetchall()]
    finally:
        con.close()
    assert sorted(ids) == sorted(lines[n - 1].split(";")[0] for n in expected["good"])


def test_utf8_file_line_with_invalid_bytes_is_rejected_and_counted(tmp_path, header_and_rows,
                                                                    demo_files_2023):
    """With --encoding utf-8, a line whose scored columns hold a byte that is not UTF-8 is
    skipped and counted; bad bytes in a column the ingest does not read do not matter."""
    header, rows = header_and_rows
    responses, town = _column(header, "TX_RESPOSTAS_CN"), _column(header, "NO_MUNICIPIO_PROVA")
    data = [line.encode("utf-8") for line in [header] + rows]

    def spoil(index, column):
        fields = data[index + 1].split(b";")
        fields[column] = b"\xe9" + fields[column][1:]  # a Latin-1 byte alone
        data[index + 1] = b";".join(fields)
        return rows[index].split(";")[0]

    lost = spoil(10, responses)
    kept = spoil(20, town)
    micro = tmp_path / "MICRODADOS_ENEM_2023.csv"
    micro.write_bytes(b"\n".join(data) + b"\n")
    db = tmp_path / "db.duckdb"
    summary = ingest_year(db, 2023, micro, demo_files_2023.items, encoding="utf-8",
                          progress=False)
    assert summary.reject_reasons[UNSCANNED_REJECT] == 1
    assert summary.rows_read == len(rows)
    assert query_rows(db, "SELECT count(*) FROM examinees")[0][0] == len(rows) - 1
    assert query_rows(db, "SELECT count(*) FROM examinees WHERE examinee_id = ?", [lost]) == [(0,)]
    assert query_rows(db, "SELECT count(*) FROM examinees WHERE examinee_id = ?", [kept]) == [(1,)]
