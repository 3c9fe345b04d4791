"""booklet_audit: per booklet, how many candidates were present, scored and had their official
nota reproduced; summaries flag the booklets under 99%. Expected counts come from the raw CSV."""

from __future__ import annotations

import csv
from collections import Counter

import numpy as np
import pytest

from cli import main as cli
from demo.inep_files import microdados_columns
from enem.score_batches import REPRODUCED_SHARE_FLOOR
from enem.scoring import ScoringOptions
from store.audit_queries import booklet_audit
from store.connection import connected, open_reader, writing
from tests.oracle_support import booklet_items, read_rows, score_candidate
from workflows.ingest import ingest_year

AREAS = ("CN", "CH", "LC", "MT")


def _audit(db, year):
    con = open_reader(db)
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


# ------------------------------------------------------------------------------------------
# The audit always follows INEP's recipe, whatever the year's display settings (real items).

#: The paper's recipe (README): 121 points on [−6, 6], nota 100·θ + 500.
PAPER_OPTIONS = ScoringOptions(n_quadrature=121, theta_range=(-6.0, 6.0), scale="paper")
#: Booklets per area and candidates per booklet (and LC language) in the generated microdata.
AUDIT_BOOKLETS, AUDIT_TAKERS = 2, 12


def _real_microdata(real_data, path):
    """A MICRODADOS_ENEM_2022 file on the real 2022 items: candidates of θ ~ N(0, 1) answering
    by the 3PL of the published parameters (a few blank tests and blank marks), each with the
    official NU_NOTA of INEP's recipe computed by the slow reference scorer; returns the path
    and {(examinee, area): (nota, θ and SE on the paper's grid)}."""
    items_rows = read_rows(real_data / "items" / "ITENS_PROVA_2022.csv")
    for item in items_rows:  # INEP's 2022 file writes the language as 0.0 / 1.0
        item["TP_LINGUA"] = item["TP_LINGUA"] and str(int(float(item["TP_LINGUA"])))
    rng = np.random.default_rng(2022)
    booklets = {area: sorted({r["CO_PROVA"] for r in items_rows if r["SG_AREA"] == area},
                             key=int)[:AUDIT_BOOKLETS] for area in AREAS}
    n = AUDIT_BOOKLETS * AUDIT_TAKERS * 2
    header = microdados_columns(2022)
    records, expected = [], {}
    for index in range(n):
        row = dict.fromkeys(header, "")
        row.update({"NU_INSCRICAO": f"{220000000000 + index}", "NU_ANO": "2022",
                    "TP_LINGUA": str(index % 2), "SG_UF_PROVA": "SP", "TP_ESCOLA": "1"})
        theta = rng.normal()
        for area in AREAS:
            booklet = booklets[area][(index // 2) % AUDIT_BOOKLETS]
            form = booklet_items(items_rows, booklet, row["TP_LINGUA"])
            marks = []
            for item in form:
                wrong = [x for x in "ABCDE" if x != item["TX_GABARITO"]]
                if item["NU_PARAM_A"] and item["TX_GABARITO"] != "X":
                    a, b, c = (float(item[f"NU_PARAM_{p}"]) for p in "ABC")
                    right = rng.random() < c + (1 - c) / (1 + np.exp(-a * (theta - b)))
                    marks.append(item["TX_GABARITO"] if right else str(rng.choice(wrong)))
                else:
                    marks.append(str(rng.choice(list("ABCDE"))))
                if rng.random() < 0.04:
                    marks[-1] = "."
            answers = "." * len(form) if index % 23 == 5 else "".join(marks)
            row.update({f"TP_PRESENCA_{area}": "1", f"CO_PROVA_{area}": booklet,
                        f"TX_RESPOSTAS_{area}": answers})
            _, _, nota = score_candidate(row, area, items_rows)
            row[f"NU_NOTA_{area}"] = f"{nota:.1f}"
            paper = score_candidate(row, area, items_rows, n_points=121, low=-6.0, high=6.0)
            expected[(row["NU_INSCRICAO"], area)] = (nota, paper[0], paper[1])
        records.append(row)
    with open(path, "w", encoding="latin-1", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, delimiter=";", lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
    return path, expected


@pytest.fixture(scope="module")
def real_microdata_2022(tmp_path_factory, real_data):
    return _real_microdata(real_data, tmp_path_factory.mktemp("real2022")
                           / "MICRODADOS_ENEM_2022.csv")


@pytest.mark.parametrize("recipe", ["inep", "paper"])
def test_audit_uses_inep_recipe_whatever_the_display_settings(tmp_path, real_data,
                                                              real_microdata_2022, recipe):
    microdata, expected = real_microdata_2022
    options = PAPER_OPTIONS if recipe == "paper" else ScoringOptions()
    db = tmp_path / "enem.duckdb"
    summary = ingest_year(db, 2022, microdata, real_data / "items" / "ITENS_PROVA_2022.csv",
                          options=options, progress=False)
    audit, ingest = _audit(db, 2022)
    n = len(expected)
    assert summary.nota_checked == summary.nota_matched == n == ingest[0] == ingest[1]
    assert len(audit) == 4 * AUDIT_BOOKLETS
    for _, present, scored, checked, matched in audit.values():
        assert present == scored == checked == matched == 2 * AUDIT_TAKERS
    assert not any("booklets with under" in line for line in summary.lines())
    with connected(db, read_only=True) as con:
        shown = booklet_audit(con, 2022)
        stored = con.execute("SELECT examinee_id, area, theta, theta_se, nota FROM scores"
                             ).fetchall()
    assert not shown["flagged"].any() and shown["inep_recipe"].all()
    # What is displayed follows the year's settings: the paper's θ and 100·θ + 500.
    for examinee, area, theta, se, nota in stored:
        official, paper_theta, paper_se = expected[(examinee, area)]
        if recipe == "inep":
            assert nota == official
        else:
            assert theta == pytest.approx(paper_theta, abs=1e-9)
            assert se == pytest.approx(paper_se, abs=1e-9)
            blank = nota == 0.0 and official == 0.0
            assert blank or nota == pytest.approx(100 * paper_theta + 500, abs=1e-7)


def test_an_audit_stored_with_display_settings_is_not_flagged(tmp_path, real_data,
                                                               real_microdata_2022):
    """A store ingested before the audit followed INEP's recipe kept the display settings'
    comparison: its counts mean nothing, so no booklet is flagged and the table says so."""
    db = tmp_path / "enem.duckdb"
    ingest_year(db, 2022, real_microdata_2022[0], real_data / "items" / "ITENS_PROVA_2022.csv",
                options=PAPER_OPTIONS, progress=False)
    with writing(db, year=2022) as con:
        con.execute("UPDATE booklet_audit SET nota_matched = 1")
        con.execute("UPDATE ingests SET audit_scoring = NULL")
        shown = booklet_audit(con, 2022)
    assert not shown["flagged"].any() and not shown["inep_recipe"].any()


def test_score_patterns_audits_by_inep_recipe_under_the_paper_recipe(tmp_path, real_data,
                                                                     real_microdata_2022,
                                                                     capsys):
    microdata, expected = real_microdata_2022
    rows = read_rows(microdata)
    source, output = tmp_path / "in.csv", tmp_path / "out.csv"
    records = [{"CO_PROVA": r["CO_PROVA_MT"], "TX_RESPOSTAS": r["TX_RESPOSTAS_MT"],
                "NU_NOTA": r["NU_NOTA_MT"], "ID": r["NU_INSCRICAO"]} for r in rows]
    _write(source, records, ["ID", "CO_PROVA", "TX_RESPOSTAS", "NU_NOTA"])
    assert cli.main(["score-patterns", "--items",
                     str(real_data / "items" / "ITENS_PROVA_2022.csv"), "--patterns",
                     str(source), "--output", str(output), "--grid-points", "121",
                     "--grid-range", "-6", "6", "--scale", "paper"]) == 0
    n = len(records)
    assert f"official nota reproduced: {n:,} of {n:,} (100.00%)" in capsys.readouterr().out
    with open(output, encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            _, theta, _ = expected[(row["ID"], "MT")]
            assert float(row["THETA"]) == pytest.approx(theta, abs=1e-9)
            assert float(row["NOTA"]) in (0.0, pytest.approx(100 * theta + 500, abs=1e-7))
