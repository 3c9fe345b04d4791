"""score-patterns: the command that re-scores single patterns against an ITENS_PROVA file."""

from __future__ import annotations

import csv

import pytest

from cli import main as cli
from tests.oracle_support import booklet_items, read_rows, score_candidate

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
            for mark, item in zip(record["TX_RESPOSTAS"], booklet, strict=True))
    source, output = tmp_path / "in.csv", tmp_path / "out.csv"
    _write(source, records, ["CO_PROVA", "TP_LINGUA", "RESPONSE_PATTERN", "AREA"])
    assert cli.main(["score-patterns", "--items", str(demo_files_2023.items), "--patterns",
                     str(source), "--output", str(output), "--grid-points", "121",
                     "--grid-range", "-6", "6", "--scale", "paper"]) == 0
    result = _read(output)
    for record, got in zip(records, result, strict=True):
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


def _score(tmp_path, demo_files, source, *extra, output=None):
    """Run score-patterns in this process: (exit code, output path)."""
    output = output or tmp_path / "out.csv"
    try:
        code = cli.main(["score-patterns", "--items", str(demo_files.items), "--patterns",
                         str(source), "--output", str(output), *extra])
    except SystemExit as stopped:
        code = stopped.code
    return code, output


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), captured.err
    return lines[0]


def test_bad_booklet_ids_are_row_errors(tmp_path, demo_files_2023):
    records, _ = _patterns_from_microdata(demo_files_2023, n=2)
    good = records[0]
    lc = next(r for r in records if r["AREA"] == "LC")
    bad_ids = ["inf", "-inf", "1e400", "nan", f"{good['CO_PROVA']}.5", "1e3",
               "99999999999999999999999999", "0x91F", "²"]
    rows = ([dict(good, CO_PROVA=value) for value in bad_ids]
            + [dict(lc, TP_LINGUA="inf"), dict(lc, TP_LINGUA="0.5"),
               dict(good, CO_PROVA=f"{good['CO_PROVA']}.0"), good])
    source = tmp_path / "in.csv"
    _write(source, rows, ["CO_PROVA", "TP_LINGUA", "TX_RESPOSTAS"])
    code, output = _score(tmp_path, demo_files_2023, source)
    assert code == 0
    result = _read(output)
    for value, got in zip(bad_ids, result[:len(bad_ids)], strict=True):
        assert "CO_PROVA" in got["SCORE_ERROR"] and got["THETA"] == "", (value, got)
    assert "TP_LINGUA" in result[len(bad_ids)]["SCORE_ERROR"]
    assert "TP_LINGUA" in result[len(bad_ids) + 1]["SCORE_ERROR"]
    integral, plain = result[-2:]
    assert integral["SCORE_ERROR"] == plain["SCORE_ERROR"] == ""
    assert integral["THETA"] == plain["THETA"] != ""


def test_latin1_and_utf8_files_are_read(tmp_path, demo_files_2023):
    records, _ = _patterns_from_microdata(demo_files_2023, n=2)
    rows = [dict(r, NOME="José Conceição") for r in records]
    columns = ["NOME", "CO_PROVA", "TP_LINGUA", "TX_RESPOSTAS"]
    text = ";".join(columns) + "\n" + "".join(
        ";".join(row[c] for c in columns) + "\n" for row in rows)
    for encoding, flags in (("latin-1", []), ("latin-1", ["--patterns-encoding", "latin-1"]),
                            ("utf-8-sig", []), ("utf-8", ["--patterns-encoding", "utf-8"])):
        source = tmp_path / f"in-{encoding}.csv"
        source.write_bytes(text.encode(encoding))
        code, output = _score(tmp_path, demo_files_2023, source, *flags)
        assert code == 0, (encoding, flags)
        result = _read(output)
        assert [r["NOME"] for r in result] == ["José Conceição"] * len(rows)
        assert all(r["SCORE_ERROR"] == "" for r in result)


def test_empty_and_malformed_files_are_clear_errors(tmp_path, demo_files_2023, capsys):
    records, _ = _patterns_from_microdata(demo_files_2023, n=1)
    row = records[0]
    cases = {
        "": "empty",
        "CO_PROVA,TX_RESPOSTAS\n": "no rows",
        (f"CO_PROVA,TX_RESPOSTAS\n{row['CO_PROVA']},{row['TX_RESPOSTAS']}\n"
         f"{row['CO_PROVA']},{row['TX_RESPOSTAS']},EXTRA\n"): "line 3 has 3 fields",
        (f"CO_PROVA,TX_RESPOSTAS\n{row['CO_PROVA']}\n"): "line 2 has 1 field",
    }
    for text, message in cases.items():
        source = tmp_path / "in.csv"
        source.write_text(text, encoding="utf-8")
        code, _ = _score(tmp_path, demo_files_2023, source)
        assert code != 0, text
        line = _one_error_line(capsys)
        assert message in line and "needs a CO_PROVA column" not in line, (text, line)


def test_missing_output_folder_is_refused_before_scoring(tmp_path, demo_files_2023, capsys):
    records, _ = _patterns_from_microdata(demo_files_2023, n=2)
    source = tmp_path / "in.csv"
    _write(source, records, ["CO_PROVA", "TP_LINGUA", "TX_RESPOSTAS"])
    code, _ = _score(tmp_path, demo_files_2023, source,
                     output=tmp_path / "no-such-folder" / "out.csv")
    assert code != 0
    assert "no-such-folder" in _one_error_line(capsys)
    assert capsys.readouterr().out == ""  # nothing was scored


def test_nothing_scored_is_a_failure(tmp_path, demo_files_2023, capsys):
    records, _ = _patterns_from_microdata(demo_files_2023, n=2)
    source = tmp_path / "in.csv"
    _write(source, [dict(r, CO_PROVA="123") for r in records],
           ["CO_PROVA", "TP_LINGUA", "TX_RESPOSTAS"])
    code, output = _score(tmp_path, demo_files_2023, source)
    assert code != 0
    assert "none of the 4 rows" in _one_error_line(capsys)
    assert all("unknown booklet 123" in r["SCORE_ERROR"] for r in _read(output))


def test_estimates_on_the_theta_bound_are_flagged(tmp_path, demo_files_2023):
    records, items = _patterns_from_microdata(demo_files_2023, n=3)
    mt = [r for r in records if r["AREA"] == "MT"]
    booklet = booklet_items(items, mt[0]["CO_PROVA"], mt[0]["TP_LINGUA"])
    keys = "".join(k if k in "ABCDE" else "A" for k in (i["TX_GABARITO"] for i in booklet))
    wrong = "".join("A" if k != "A" else "B" for k in keys)
    rows = [dict(mt[0], TX_RESPOSTAS=keys), dict(mt[0], TX_RESPOSTAS=wrong), mt[1]]
    source = tmp_path / "in.csv"
    _write(source, rows, ["CO_PROVA", "TP_LINGUA", "TX_RESPOSTAS"])
    for method, flags in (("ml", ["1", "1", "0"]), ("map", ["0", "0", "0"]),
                          ("eap", ["0", "0", "0"])):
        code, output = _score(tmp_path, demo_files_2023, source, "--method", method,
                              "--grid-range", "-6", "6")
        assert code == 0
        result = _read(output)
        assert [r["THETA_AT_BOUND"] for r in result] == flags, method
        if method == "ml":
            assert [float(r["THETA"]) for r in result[:2]] == [6.0, -6.0]
            assert -6 < float(result[2]["THETA"]) < 6
