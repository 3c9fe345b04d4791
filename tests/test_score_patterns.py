"""score-patterns: the command that re-scores single patterns against an ITENS_PROVA file."""

from __future__ import annotations

import csv

import pytest

from cli import main as cli
from tests.inep_reference import booklet_items, read_rows, score_candidate

AREAS = ("CN", "CH", "LC", "MT")


def _patterns_from_microdata(demo_files, n=40):
    rows = [r for r in read_rows(demo_files.microdata) if r["TP_PRESENCA_MT"] == "1"
            and r["TP_PRESENCA_LC"] == "1"][:n]
    items = read_rows(demo_files.items)
    out = []
    for row in rows:
        for area in ("MT", "LC"):
            out.append({"NU_INSCRICAO": row["NU_INSCRICAO"], "CO_PROVA": row[f"CO_PROVA_{area}"],
                        "TP_LINGUA": row["TP_LINGUA"], "TX_RESPOSTAS": row[f"TX_RESPOSTAS_{area}"],
                        "AREA": area, "NU_NOTA": row[f"NU_NOTA_{area}"], "_row": row})
    return out, items


def _read(path):
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _write(path, records, columns):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(records)


def test_reproduces_official_nota_from_letters(tmp_path, demo_files_2023):
    records, _ = _patterns_from_microdata(demo_files_2023)
    source, output = tmp_path / "in.csv", tmp_path / "out.csv"
    _write(source, records, ["NU_INSCRICAO", "CO_PROVA", "TP_LINGUA", "TX_RESPOSTAS", "NU_NOTA"])
    code = cli.main(["score-patterns", "--items", str(demo_files_2023.items),
                     "--patterns", str(source), "--output", str(output)])
    assert code == 0
    result = _read(output)
    assert len(result) == len(records)
    for got in result:
        assert got["SCORE_ERROR"] == ""
        assert float(got["NOTA"]) == pytest.approx(float(got["NU_NOTA"]), abs=1e-9)


def test_response_pattern_with_paper_grid_matches_slow_reference(tmp_path, demo_files_2023):
    records, items = _patterns_from_microdata(demo_files_2023, n=10)
    for record in records:
        row = record["_row"]
        booklet = booklet_items(items, record["CO_PROVA"], row["TP_LINGUA"])
        record["RESPONSE_PATTERN"] = "".join(
            "1" if mark == item["TX_GABARITO"] else "0"
            for mark, item in zip(record["TX_RESPOSTAS"], booklet))
    source, output = tmp_path / "in.csv", tmp_path / "out.csv"
    _write(source, records, ["CO_PROVA", "TP_LINGUA", "RESPONSE_PATTERN", "AREA"])
    assert cli.main(["score-patterns", "--items", str(demo_files_2023.items), "--patterns",
                     str(source), "--output", str(output), "--grid-points", "121",
                     "--grid-range", "-6", "6", "--scale", "paper"]) == 0
    result = _read(output)
    for record, got in zip(records, result):
        theta, se, _ = score_candidate(record["_row"], record["AREA"], items,
                                       n_points=121, low=-6.0, high=6.0)
        assert float(got["THETA"]) == pytest.approx(theta, abs=1e-9)
        assert float(got["THETA_SE"]) == pytest.approx(se, abs=1e-9)
        assert float(got["NOTA"]) == pytest.approx(100 * theta + 500, abs=1e-6)


def test_bad_rows_get_an_error_and_do_not_stop_the_file(tmp_path, demo_files_2023):
    records, _ = _patterns_from_microdata(demo_files_2023, n=2)
    bad = [dict(records[0], TX_RESPOSTAS=records[0]["TX_RESPOSTAS"][:-3]),
           dict(records[0], CO_PROVA="123"),
           dict(records[1], TP_LINGUA="")]
    source, output = tmp_path / "in.csv", tmp_path / "out.csv"
    _write(source, records + bad, ["CO_PROVA", "TP_LINGUA", "TX_RESPOSTAS"])
    assert cli.main(["score-patterns", "--items", str(demo_files_2023.items), "--patterns",
                     str(source), "--output", str(output)]) == 0
    result = _read(output)
    errors = [r["SCORE_ERROR"] for r in result]
    assert errors[: len(records)] == [""] * len(records)
    assert "characters" in errors[-3]
    assert "unknown booklet 123" in errors[-2]
    assert "TP_LINGUA" in errors[-1]


def test_missing_columns_are_a_clear_error(tmp_path, demo_files_2023, capsys):
    source = tmp_path / "in.csv"
    source.write_text("FOO,BAR\n1,2\n")
    code = cli.main(["score-patterns", "--items", str(demo_files_2023.items), "--patterns",
                     str(source), "--output", str(tmp_path / "out.csv")])
    assert code == 2
    assert "CO_PROVA" in capsys.readouterr().err
