"""Ingest of INEP-format files: exact scores, rejects with reasons, atomic replacement."""

from __future__ import annotations

import random

import numpy as np
import pytest

from enem.csvfiles import UnusableFileError
from store.connection import open_reader
from store.layout import copy_store
from tests.oracle_support import read_rows, score_candidate
from workflows.ingest import IngestError, ingest_year

AREAS = ("CN", "CH", "LC", "MT")


def _scores(db, year):
    con = open_reader(db)
    try:
        return {
            (r[0], r[1]): r[2:]
            for r in con.execute(
                "SELECT examinee_id, area, theta, theta_se, nota, blank FROM scores WHERE year = ?",
                [year],
            ).fetchall()
        }
    finally:
        con.close()


def _count(db, sql, params=()):
    con = open_reader(db)
    try:
        return con.execute(sql, list(params)).fetchone()[0]
    finally:
        con.close()


def test_scores_match_slow_reference_from_raw_files(ingested_2023, demo_files_2023):
    db, summary = ingested_2023
    rows = read_rows(demo_files_2023.microdata)
    items = read_rows(demo_files_2023.items)
    scores = _scores(db, 2023)
    rng = random.Random(1)
    checked = 0
    for row in rng.sample(rows, 60):
        for area in AREAS:
            if row[f"TP_PRESENCA_{area}"] != "1":
                assert (row["NU_INSCRICAO"], area) not in scores
                continue
            theta, se, nota = score_candidate(row, area, items)
            got = scores[(row["NU_INSCRICAO"], area)]
            assert got[0] == pytest.approx(theta, abs=1e-9)
            assert got[1] == pytest.approx(se, abs=1e-9)
            assert got[2] == pytest.approx(nota, abs=1e-9)
            assert got[2] == pytest.approx(float(row[f"NU_NOTA_{area}"]), abs=1e-9)
            checked += 1
    assert checked > 50
    assert summary.nota_matched == summary.nota_checked > 0


def test_every_present_record_is_scored_or_rejected(ingested_2023, demo_files_2023):
    db, summary = ingested_2023
    rows = read_rows(demo_files_2023.microdata)
    present = sum(row[f"TP_PRESENCA_{area}"] == "1" for row in rows for area in AREAS)
    assert summary.rows_read == len(rows)
    assert summary.records_present == present
    assert summary.patterns_scored + summary.rows_rejected == present
    assert _count(db, "SELECT count(*) FROM examinees WHERE year = 2023") == len(rows)


def test_blank_tests_get_nota_zero(ingested_2023):
    db, _ = ingested_2023
    blanks = _count(db, "SELECT count(*) FROM scores WHERE blank")
    assert blanks > 0
    assert _count(db, "SELECT count(*) FROM scores WHERE blank AND nota <> 0") == 0
    assert _count(db, "SELECT count(*) FROM scores WHERE NOT blank AND nota = 0") == 0


def test_aggregates_add_up_to_scored_records(ingested_2023):
    db, summary = ingested_2023
    total = _count(db, "SELECT sum(n) FROM agg_theta_ctt WHERE group_kind = 'all'")
    assert total == summary.patterns_scored
    by_state = _count(db, "SELECT sum(n) FROM agg_theta_ctt WHERE group_kind = 'state'")
    assert by_state == summary.patterns_scored
    lz_total = _count(db, "SELECT sum(n) FROM agg_theta_lz WHERE group_kind = 'school_type'")
    assert lz_total == _count(db, "SELECT count(*) FROM scores WHERE NOT isnan(lz)")
    # Option counts of one item add up to the candidates whose form held it.
    per_item = _count(db, """SELECT count(DISTINCT n_total) FROM (
        SELECT o.item_id, sum(o.n) AS n_total FROM option_counts o
        WHERE o.area = 'MT' GROUP BY o.item_id)""")
    assert per_item == 1
    assert _count(db, "SELECT min(di) >= -1 AND max(di) <= 1 FROM item_stats")


def _rewrite(src, dst, edit):
    lines = src.read_bytes().decode("latin-1").split("\n")
    header = lines[0].split(";")
    out = [lines[0]] + [edit(header, line.split(";"), i)
                        for i, line in enumerate(lines[1:]) if line]
    dst.write_bytes(("\n".join(";".join(f) if isinstance(f, list) else f for f in out) + "\n")
                    .encode("latin-1"))


def test_bad_rows_are_rejected_with_reasons(tmp_path, demo_files_2023):
    micro = tmp_path / "MICRODADOS_ENEM_2023.csv"
    broken = {}

    def edit(header, fields, index):
        column = {name: j for j, name in enumerate(header)}
        present = fields[column["TP_PRESENCA_MT"]] == "1"
        if present and "length" not in broken:
            fields[column["TX_RESPOSTAS_MT"]] = fields[column["TX_RESPOSTAS_MT"]][:-1]
            broken["length"] = fields[column["NU_INSCRICAO"]]
        elif present and "booklet" not in broken:
            fields[column["CO_PROVA_MT"]] = "9999"
            broken["booklet"] = fields[column["NU_INSCRICAO"]]
        elif present and "chars" not in broken:
            fields[column["TX_RESPOSTAS_MT"]] = "Z" + fields[column["TX_RESPOSTAS_MT"]][1:]
            broken["chars"] = fields[column["NU_INSCRICAO"]]
        return fields

    _rewrite(demo_files_2023.microdata, micro, edit)
    with open(micro, "ab") as handle:  # a truncated last line: too few fields
        handle.write(b"210099999999;2023;3;M")
    db = tmp_path / "db.duckdb"
    summary = ingest_year(db, 2023, micro, demo_files_2023.items, progress=False)
    con = open_reader(db)
    reasons = dict(con.execute(
        "SELECT examinee_id, reason FROM rejects WHERE kind = 'record' AND area = 'MT'").fetchall())
    csv_rejects = con.execute("SELECT count(*) FROM rejects WHERE kind = 'csv'").fetchone()[0]
    con.close()
    assert "length" in reasons[broken["length"]]
    assert "unknown booklet 9999" in reasons[broken["booklet"]]
    assert "characters other than" in reasons[broken["chars"]]
    assert csv_rejects == 1
    assert summary.rows_rejected >= 4


def test_non_numeric_parameter_rejects_its_booklet(tmp_path, demo_files_2023):
    items = tmp_path / "ITENS_PROVA_2023.csv"
    victim = {}

    def edit(header, fields, index):
        column = {name: j for j, name in enumerate(header)}
        if not victim and fields[column["SG_AREA"]] == "CN" and fields[column["NU_PARAM_A"]]:
            fields[column["NU_PARAM_A"]] = "abc"
            victim["booklet"] = fields[column["CO_PROVA"]]
        return fields

    _rewrite(demo_files_2023.items, items, edit)
    db = tmp_path / "db.duckdb"
    ingest_year(db, 2023, demo_files_2023.microdata, items, progress=False)
    booklet = int(victim["booklet"])
    assert _count(db, "SELECT count(*) FROM scores WHERE booklet_id = ?", [booklet]) == 0
    assert _count(db, "SELECT count(*) FROM rejects WHERE kind = 'item'") == 1
    assert _count(db, "SELECT count(*) FROM rejects WHERE reason LIKE ?",
                  [f"booklet {booklet} cannot be scored%"]) > 0
    assert _count(db, "SELECT count(*) FROM scores WHERE area = 'CN'") > 0


def test_unusable_file_leaves_database_untouched(tmp_path, ingested_2023, demo_files_2023):
    db = tmp_path / "db.duckdb"
    copy_store(ingested_2023[0], db)
    before = _count(db, "SELECT count(*) FROM scores")
    bad = tmp_path / "MICRODADOS_ENEM_2023.csv"
    bad.write_bytes("NU_INSCRICAO;NU_ANO\n1;2023\n".encode("latin-1"))
    with pytest.raises(UnusableFileError, match="missing column"):
        ingest_year(db, 2023, bad, demo_files_2023.items, progress=False)
    utf16 = tmp_path / "utf16.csv"
    utf16.write_bytes(demo_files_2023.microdata.read_bytes().decode("latin-1").encode("utf-16"))
    with pytest.raises(UnusableFileError, match="UTF-16"):
        ingest_year(db, 2023, utf16, demo_files_2023.items, progress=False)
    utf8 = tmp_path / "utf8.csv"
    utf8.write_bytes(demo_files_2023.microdata.read_bytes().decode("latin-1").encode("utf-8"))
    with pytest.raises(UnusableFileError, match="UTF-8"):
        ingest_year(db, 2023, utf8, demo_files_2023.items, progress=False)
    assert _count(db, "SELECT count(*) FROM scores") == before


def test_failure_midway_rolls_back_and_reingest_replaces(tmp_path, monkeypatch, ingested_2023,
                                                          demo_files_2023):
    db = tmp_path / "db.duckdb"
    copy_store(ingested_2023[0], db)
    before = {t: _count(db, f"SELECT count(*) FROM {t}")
              for t in ("scores", "examinees", "items", "agg_theta_ctt", "ingests")}

    import workflows.ingest as ingest_module

    def explode(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(ingest_module.year_tables, "write_booklet_audit", explode)
    with pytest.raises(IngestError, match="rolled back"):
        ingest_year(db, 2023, demo_files_2023.microdata, demo_files_2023.items, progress=False)
    after = {t: _count(db, f"SELECT count(*) FROM {t}") for t in before}
    assert after == before
    monkeypatch.undo()
    ingest_year(db, 2023, demo_files_2023.microdata, demo_files_2023.items, progress=False)
    again = {t: _count(db, f"SELECT count(*) FROM {t}") for t in before}
    assert again["scores"] == before["scores"]
    assert again["examinees"] == before["examinees"]
    assert again["ingests"] == before["ingests"] + 1


def test_lc_fifty_character_layout(tmp_path, demo_files_2019):
    db = tmp_path / "db.duckdb"
    summary = ingest_year(db, 2019, demo_files_2019.microdata, demo_files_2019.items,
                          progress=False)
    rows = read_rows(demo_files_2019.microdata)
    items = read_rows(demo_files_2019.items)
    scores = _scores(db, 2019)
    lc_rows = [r for r in rows if r["TP_PRESENCA_LC"] == "1"][:40]
    assert all(len(r["TX_RESPOSTAS_LC"]) == 50 for r in lc_rows)
    for row in lc_rows:
        theta, _, nota = score_candidate(row, "LC", items)
        got = scores[(row["NU_INSCRICAO"], "LC")]
        assert got[0] == pytest.approx(theta, abs=1e-9)
        assert got[2] == pytest.approx(nota, abs=1e-9)
    assert summary.nota_matched == summary.nota_checked


def test_resultados_layout_2024(tmp_path, demo_files_2024):
    db = tmp_path / "db.duckdb"
    summary = ingest_year(db, 2024, demo_files_2024.microdata, demo_files_2024.items,
                          progress=False)
    assert summary.layout == "resultados"
    assert summary.patterns_scored > 0
    assert summary.nota_matched == summary.nota_checked > 0
    assert _count(db, "SELECT count(*) FROM examinees WHERE school_type IS NOT NULL") > 0


def test_item_tables_match_a_count_from_the_raw_files(ingested_2023, demo_files_2023):
    from tests.oracle_support import booklet_items

    db, _ = ingested_2023
    rows = read_rows(demo_files_2023.microdata)
    items = read_rows(demo_files_2023.items)
    target = next(r for r in items if r["SG_AREA"] == "MT" and r["NU_PARAM_A"])
    item_id, key = int(target["CO_ITEM"]), target["TX_GABARITO"]
    takers = correct = 0
    chosen = {}
    pairs = []  # (item correct, CTT on the rest of the test) per taker
    for row in rows:
        if row["TP_PRESENCA_MT"] != "1":
            continue
        booklet = booklet_items(items, row["CO_PROVA_MT"], None)
        position = next(i for i, item in enumerate(booklet) if int(item["CO_ITEM"]) == item_id)
        mark = row["TX_RESPOSTAS_MT"][position]
        takers += 1
        correct += mark == key
        chosen[mark] = chosen.get(mark, 0) + 1
        scored = sum(m == item["TX_GABARITO"]
                     for m, item in zip(row["TX_RESPOSTAS_MT"], booklet, strict=True)
                     if item["NU_PARAM_A"])
        pairs.append((float(mark == key), scored - float(mark == key)))
    con = open_reader(db)
    n, p_value, point_biserial = con.execute(
        "SELECT n, p_value, point_biserial FROM item_stats WHERE item_id = ?", [item_id]).fetchone()
    icc_n, icc_correct = con.execute(
        "SELECT sum(n), sum(n_correct) FROM item_icc WHERE item_id = ?", [item_id]).fetchone()
    options = dict(con.execute("SELECT option, n FROM option_counts WHERE item_id = ?",
                               [item_id]).fetchall())
    con.close()
    assert n == takers == icc_n
    assert icc_correct == correct
    assert p_value == pytest.approx(correct / takers, abs=1e-6)
    item_correct, rest = (np.array(v) for v in zip(*pairs, strict=True))
    assert point_biserial == pytest.approx(np.corrcoef(item_correct, rest)[0, 1], abs=1e-9)
    assert {k: v for k, v in options.items() if v} == chosen
