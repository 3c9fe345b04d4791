"""booklet_audit: per booklet, how many candidates were present, scored and had their official
nota reproduced; summaries flag the booklets under 99%. Expected counts come from the raw CSV."""

from __future__ import annotations

import csv
from collections import Counter

import duckdb
import pytest

from cli import main as cli
from enem.score_batches import REPRODUCED_SHARE_FLOOR
from tests.inep_reference import read_rows
from workflows.ingest import ingest_year

AREAS = ("CN", "CH", "LC", "MT")


def _audit(db, year):
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            """SELECT booklet_id, area, present, scored, nota_checked, nota_matched
               FROM booklet_audit WHERE year = ?""", [year]).fetchall()
        ingest = con.execute(
            """SELECT nota_checked, nota_matched FROM ingests WHERE year = ?
               ORDER BY ingest_id DESC LIMIT 1""", [year]).fetchone()
    finally:
        con.close()
    return {r[0]: r[1:] for r in rows}, ingest


def _well_formed(answers, area, language):
    """Whether a present record's string can be scored (45 marks, or LC's 50 with '9's)."""
    if area == "LC" and len(answers) == 50:
        unchosen = answers[:5] if language == "1" else answers[5:10]
        answers = (answers[5:10] if language == "1" else answers[:5]) + answers[10:]
        if unchosen != "99999":
            return False
    return len(answers) == 45 and set(answers) <= set("ABCDE.*")


def test_audit_counts_match_the_raw_microdata(ingested_2023, demo_files_2023):
    db, summary = ingested_2023
    present, scoreable, with_nota = Counter(), Counter(), Counter()
    areas = {}
    for row in read_rows(demo_files_2023.microdata):
        for area in AREAS:
            if row[f"TP_PRESENCA_{area}"] != "1":
                continue
            booklet = int(row[f"CO_PROVA_{area}"])
            areas[booklet] = area
            present[booklet] += 1
            if _well_formed(row[f"TX_RESPOSTAS_{area}"], area, row["TP_LINGUA"]):
                scoreable[booklet] += 1
                with_nota[booklet] += row[f"NU_NOTA_{area}"] != ""
    audit, ingest = _audit(db, 2023)
    assert len(audit) == 16 and set(audit) == set(present)
    for booklet, (area, n_present, scored, checked, matched) in audit.items():
        assert area == areas[booklet]
        assert n_present == present[booklet] > 0
        assert scored == scoreable[booklet]
        assert checked == with_nota[booklet]
        assert matched == checked  # the demo's notas follow INEP's recipe exactly
    assert sum(a[1] for a in audit.values()) == summary.records_present
    assert sum(a[3] for a in audit.values()) == ingest[0] == summary.nota_checked
    assert sum(a[4] for a in audit.values()) == ingest[1] == summary.nota_matched
    assert not any("booklets with under" in line for line in summary.lines())


def _perturb_booklet(source, target, booklet, shift):
    """Copy of an items file with the difficulty of every item of one booklet moved by shift."""
    with open(source, encoding="latin-1", newline="") as handle:
        reader = csv.DictReader(handle, delimiter=";")
        header, rows = reader.fieldnames, list(reader)
    for row in rows:
        if row["CO_PROVA"] == str(booklet) and row["NU_PARAM_B"]:
            row["NU_PARAM_B"] = f"{float(row['NU_PARAM_B']) + shift:.5f}"
    with open(target, "w", encoding="latin-1", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, delimiter=";", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return target


def test_booklet_whose_notas_do_not_reproduce_is_flagged(tmp_path, demo_files_2023):
    rows = read_rows(demo_files_2023.microdata)
    victim = min(int(r["CO_PROVA_MT"]) for r in rows if r["TP_PRESENCA_MT"] == "1")
    takers = sum(r["TP_PRESENCA_MT"] == "1" and r["CO_PROVA_MT"] == str(victim) for r in rows)
    items = _perturb_booklet(demo_files_2023.items, tmp_path / "ITENS_PROVA_2023.csv",
                             victim, shift=0.6)
    db = tmp_path / "db.duckdb"
    summary = ingest_year(db, 2023, demo_files_2023.microdata, items, progress=False)
    audit, ingest = _audit(db, 2023)
    area, present, scored, checked, matched = audit[victim]
    assert (area, present, scored, checked) == ("MT", takers, takers, takers)
    # Blank tests keep nota 0 whatever the parameters; hardly any other nota survives.
    assert matched / checked < 0.2
    for booklet, counts in audit.items():
        if booklet != victim:
            assert counts[4] == counts[3] > 0
    lines = summary.lines()
    assert "  booklets with under 99% of official NU_NOTA reproduced: 1" in lines
    flagged = [line for line in lines if line.startswith("    booklet ")]
    expected = (f"    booklet {victim} (MT): {matched:,} of {checked:,} "
                f"({100 * matched / checked:.1f}%)")
    assert flagged == [expected]
    assert summary.nota_checked - summary.nota_matched == checked - matched
    assert ingest == (summary.nota_checked, summary.nota_matched)


def _pattern_rows(demo_files, area, n=60):
    rows = [r for r in read_rows(demo_files.microdata) if r[f"TP_PRESENCA_{area}"] == "1"][:n]
    return [{"CO_PROVA": r[f"CO_PROVA_{area}"], "TP_LINGUA": r["TP_LINGUA"],
             "TX_RESPOSTAS": r[f"TX_RESPOSTAS_{area}"], "NU_NOTA": r[f"NU_NOTA_{area}"],
             f"NU_NOTA_{area}": r[f"NU_NOTA_{area}"]} for r in rows]


def _write(path, records, columns):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(records)


@pytest.mark.parametrize("nota_column", ["NU_NOTA", "NU_NOTA_CH"])
def test_score_patterns_prints_the_per_booklet_summary(tmp_path, demo_files_2023, capsys,
                                                       nota_column):
    records = _pattern_rows(demo_files_2023, "CH")
    victim = records[0]["CO_PROVA"]
    spoiled = 0
    for record in records:
        if record["CO_PROVA"] == victim and float(record[nota_column]) > 0:
            record[nota_column] = f"{float(record[nota_column]) + 3.0:.1f}"
            spoiled += 1
    victim_rows = sum(r["CO_PROVA"] == victim for r in records)
    source, output = tmp_path / "in.csv", tmp_path / "out.csv"
    _write(source, records, ["CO_PROVA", "TP_LINGUA", "TX_RESPOSTAS", nota_column])
    assert cli.main(["score-patterns", "--items", str(demo_files_2023.items),
                     "--patterns", str(source), "--output", str(output)]) == 0
    printed = capsys.readouterr().out.splitlines()
    n = len(records)
    share = 100.0 * (n - spoiled) / n
    assert f"official nota reproduced: {n - spoiled:,} of {n:,} ({share:.2f}%)" in printed
    kept = victim_rows - spoiled
    assert (f"  booklet {victim} (CH): {kept:,} of {victim_rows:,} "
            f"({100 * kept / victim_rows:.1f}%)") in printed
    assert sum(line.startswith("  booklet ") for line in printed) == 1
    assert spoiled / victim_rows > 1 - REPRODUCED_SHARE_FLOOR


def test_score_patterns_without_official_notas_prints_no_audit(tmp_path, demo_files_2023,
                                                               capsys):
    records = _pattern_rows(demo_files_2023, "MT", n=10)
    source, output = tmp_path / "in.csv", tmp_path / "out.csv"
    _write(source, records, ["CO_PROVA", "TX_RESPOSTAS"])
    assert cli.main(["score-patterns", "--items", str(demo_files_2023.items),
                     "--patterns", str(source), "--output", str(output)]) == 0
    assert capsys.readouterr().out.splitlines() == [f"scored 10 of 10 rows → {output}"]
