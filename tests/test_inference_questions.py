"""Question loaders: project JSONL, the paper's per-booklet CSV, maritaca-ai JSONL."""

from __future__ import annotations

import csv
import json
import logging
from pathlib import Path

import pytest

from inference.item_attributes import derive_attributes
from inference.question_files.maritaca import load_maritaca_jsonl
from inference.question_files.paper_csv import PAPER_COLUMNS, load_paper_csv
from inference.question_files.project import (
    load_project_questions,
    question_to_record,
    write_project_questions,
)
from inference.questions import Question, QuestionFormatError


def make_question(**overrides) -> Question:
    fields = {
        "year": 2022, "area": "CN", "language": "pt", "stem": "Quanto é 2 + 2?",
        "options": ("1", "2", "3", "4", "5"), "key": "D", "annulled": False, "item_id": 1234,
        "source": "test",
    }
    fields.update(overrides)
    return Question(**fields)


# --------------------------------------------------------------------------- Question itself


def test_question_validates_on_construction():
    q = make_question()
    assert q.key_index == 3 and q.uid == "item:1234"
    with pytest.raises(QuestionFormatError, match="exactly 5 options"):
        make_question(options=("a", "b", "c", "d"))
    with pytest.raises(QuestionFormatError, match="option C is empty"):
        make_question(options=("a", "b", " ", "d", "e"))
    with pytest.raises(QuestionFormatError, match="key must be one of A-E"):
        make_question(key="F")
    with pytest.raises(QuestionFormatError, match="key must be one of A-E"):
        make_question(key=None)  # no key, not marked annulled
    with pytest.raises(QuestionFormatError, match="annulled item must have key null"):
        make_question(annulled=True)
    with pytest.raises(QuestionFormatError, match="no question text"):
        make_question(stem="  ")
    assert make_question(item_id=None, position=4).uid == "2022:CN:p4"
    assert make_question(item_id=None).uid.startswith("text:")
    with pytest.raises(QuestionFormatError, match="only for LC"):
        make_question(item_language=0)
    annulled = make_question(key=None, annulled=True)
    assert annulled.key_index is None
    linked = make_question(item_id=None, booklet_id=1072, position=3, area="LC", item_language=1)
    assert linked.uid == "2022:LC:b1072:p3:l1"


# --------------------------------------------------------------------------- project JSONL


def test_project_jsonl_round_trip(tmp_path: Path):
    questions = [
        make_question(),
        make_question(item_id=None, booklet_id=1072, position=2, area="LC", item_language=0,
                      language="en", stem="Line one\nline two", key=None, annulled=True),
        make_question(item_id=99, language="en", stem="Olá — ação", key="A"),
    ]
    path = tmp_path / "q.jsonl"
    assert write_project_questions(questions, path) == 3
    assert load_project_questions(path) == questions
    assert load_project_questions(path, language="en") == questions[1:]
    assert not list(tmp_path.glob("*.tmp"))
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert first == question_to_record(questions[0])


def _write_lines(path: Path, records) -> Path:
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("annulled"), "missing field\\(s\\): annulled"),
        (lambda r: r.update(options=["a", "b", "c", "d"]), "exactly 5 options"),
        (lambda r: r.update(options=["a", "b", "", "d", "e"]), "option C is empty"),
        (lambda r: r.update(key="Z"), "key must be one of A-E"),
        (lambda r: r.update(annulled=True), "annulled item must have key null"),
        (lambda r: r.update(stem=""), "no question text"),
        (lambda r: r.update(area="XX"), "area must be one of"),
        (lambda r: r.update(anulled=True), "unknown field\\(s\\): anulled"),
        (lambda r: r.update(item_id=None), "needs item_id"),
    ],
)
def test_project_jsonl_errors_name_file_and_line(tmp_path: Path, change, message):
    good = question_to_record(make_question())
    bad = question_to_record(make_question(item_id=5))
    change(bad)
    path = _write_lines(tmp_path / "bad.jsonl", [good, "", bad])
    with pytest.raises(QuestionFormatError, match=message) as info:
        load_project_questions(path)
    assert str(info.value).startswith(f"{path}:line 3: ")


def test_project_jsonl_bad_json_duplicates_and_language(tmp_path: Path):
    good = question_to_record(make_question())
    path = _write_lines(tmp_path / "a.jsonl", [good, "{not json"])
    with pytest.raises(QuestionFormatError, match=r"a\.jsonl:line 2: invalid JSON"):
        load_project_questions(path)
    path = _write_lines(tmp_path / "b.jsonl", [good, good])
    with pytest.raises(QuestionFormatError, match="duplicate question item:1234"):
        load_project_questions(path)
    path = _write_lines(tmp_path / "c.jsonl", [good])
    with pytest.raises(QuestionFormatError, match="requested language 'en'"):
        load_project_questions(path, language="en")


def test_project_jsonl_skip_invalid_logs(tmp_path: Path, caplog):
    good = question_to_record(make_question())
    bad = dict(good, item_id=7, options=["a"])
    path = _write_lines(tmp_path / "s.jsonl", [bad, good])
    with caplog.at_level(logging.WARNING, logger="inference.question_files"):
        loaded = load_project_questions(path, on_invalid="skip")
    assert loaded == [make_question()]
    assert "line 1" in caplog.text and "exactly 5 options" in caplog.text


# --------------------------------------------------------------------------- the paper's CSV


def _paper_row(number: int, answer: str = "A", **overrides) -> dict[str, str]:
    row = {
        "question": f"QUESTÃO {number}", "body": f"Enunciado da questão {number}.\nSegunda linha.",
        "A": "alfa", "B": "beta", "C": "gama", "D": "delta", "E": "épsilon",
        "year": "2022", "question_number": str(number), "test": "CN", "answer": answer,
        "language": "portuguese",
    }
    row.update(overrides)
    return row


def _write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(PAPER_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_paper_csv_natural_sciences_positions_by_rank(tmp_path: Path):
    numbers = list(range(91, 136))
    numbers[0], numbers[10] = numbers[10], numbers[0]  # file not in order
    rows = [_paper_row(n, answer="anulada" if n == 95 else "BCDEA"[n % 5]) for n in numbers]
    rows[3]["body"] = ""  # falls back to the heading
    path = _write_csv(tmp_path / "ENEM_2022_CN_CO_PROVA_1092.csv", rows)
    qs = load_paper_csv(path)
    assert len(qs) == 45
    by_number = {int(r["question_number"]): q for r, q in zip(rows, qs, strict=True)}
    assert by_number[91].position == 1 and by_number[135].position == 45
    assert by_number[101].position == 11
    assert all(q.area == "CN" and q.booklet_id == 1092 and q.language == "pt" for q in qs)
    assert by_number[95].annulled and by_number[95].key is None
    assert by_number[96].key == "BCDEA"[96 % 5]
    assert qs[0].stem == "Enunciado da questão 101.\nSegunda linha."
    assert qs[3].stem == f"QUESTÃO {numbers[3]}"
    assert qs[0].item_id is None and qs[0].source.startswith("paper-csv:")


def test_paper_csv_languages_file_with_both_foreign_blocks(tmp_path: Path):
    rows = (
        [_paper_row(n, test="LC", body=f"English {n}") for n in range(1, 6)]
        + [_paper_row(n, test="LC", body=f"Español {n}") for n in range(1, 6)]
        + [_paper_row(n, test="LC") for n in range(6, 46)]
    )
    qs = load_paper_csv(_write_csv(tmp_path / "lc.csv", rows), booklet_id=1072)
    assert len(qs) == 50
    assert [(q.position, q.item_language) for q in qs[:10]] == (
        [(p, 0) for p in range(1, 6)] + [(p, 1) for p in range(1, 6)]
    )
    assert qs[0].stem == "English 1" and qs[5].stem == "Español 1"
    assert [q.position for q in qs[10:]] == list(range(6, 46))
    assert all(q.booklet_id == 1072 and q.area == "LC" for q in qs)


def test_paper_csv_errors(tmp_path: Path):
    rows = [_paper_row(n) for n in range(1, 46)]
    rows[2]["E"] = ""
    path = _write_csv(tmp_path / "cn.csv", rows)
    with pytest.raises(QuestionFormatError, match=r"cn\.csv:row 3 \(line \d+\): option E is empty"):
        load_paper_csv(path)
    assert len(load_paper_csv(path, on_invalid="skip")) == 44
    rows[2]["E"] = "ok"
    rows[4]["answer"] = "F"
    with pytest.raises(QuestionFormatError, match="row 5 .*answer must be A-E or 'anulada'"):
        load_paper_csv(_write_csv(tmp_path / "cn2.csv", rows))
    rows[4]["answer"] = "A"
    # language= is the file's prompt language; Portuguese rows cannot be its English texts.
    with pytest.raises(QuestionFormatError, match="text is in portuguese but the file's prompt "
                                                  "language is 'en'"):
        load_paper_csv(_write_csv(tmp_path / "cn3.csv", rows), language="en")
    with pytest.raises(QuestionFormatError, match="expected 45 rows"):
        load_paper_csv(_write_csv(tmp_path / "short.csv", rows[:40]))
    (tmp_path / "nohead.csv").write_text("question,body\nx,y\n", encoding="utf-8")
    with pytest.raises(QuestionFormatError, match="header: missing column"):
        load_paper_csv(tmp_path / "nohead.csv")
    english = [dict(r, language="english", test="Mathematics") for r in rows]
    qs = load_paper_csv(_write_csv(tmp_path / "mt.csv", english), language="en")
    assert {q.area for q in qs} == {"MT"} and {q.language for q in qs} == {"en"}


# --------------------------------------------------------------------------- maritaca-ai JSONL


def _maritaca(ident: str, label: str = "C", **overrides) -> dict:
    rec = {
        "id": ident, "exam": "2022", "question": f"Texto da {ident}.",
        "alternatives": ["um", "dois", "três", "quatro", "cinco"], "label": label,
        "description": [], "IU": False, "ledor": False,
    }
    rec.update(overrides)
    return rec


def test_maritaca_areas_positions_and_placeholders(tmp_path: Path):
    records = [
        _maritaca("questao_01_ingles"),
        _maritaca("questao_01_espanhol", label="Anulado"),
        _maritaca("questao_46"),
        _maritaca("questao_91", question="Veja a figura.\n[[placeholder]]\nQual é?",
                  description=["  Um gráfico de barras.  "]),
        _maritaca("questao_136", alternatives=["[[placeholder]]", "b", "c", "d", "e"],
                  question="[[placeholder]] e [[placeholder]]",
                  description=["Figura 1", "Figura 2", "Opção em imagem"]),
        _maritaca("questao_180", label="E"),
    ]
    qs = load_maritaca_jsonl(_write_lines(tmp_path / "2022.jsonl", records), booklet_id=1)
    assert [(q.area, q.position) for q in qs] == [
        ("LC", 1), ("LC", 1), ("CH", 1), ("CN", 1), ("MT", 1), ("MT", 45)
    ]
    assert [q.item_language for q in qs[:2]] == [0, 1]
    assert qs[1].annulled and qs[1].key is None
    assert qs[3].stem == "Veja a figura.\nDescrição da imagem: Um gráfico de barras.\nQual é?"
    assert derive_attributes(qs[3].stem, qs[3].options).has_image
    assert qs[4].stem == "Descrição da imagem: Figura 1 e Descrição da imagem: Figura 2"
    assert qs[4].options[0] == "Descrição da imagem: Opção em imagem"
    assert qs[5].key == "E" and qs[0].year == 2022 and qs[0].language == "pt"
    old = load_maritaca_jsonl(tmp_path / "2022.jsonl", area_order=("CH", "CN", "LC", "MT"))
    assert [q.area for q in old] == ["CH", "CH", "CN", "LC", "MT", "MT"]


def test_maritaca_duplicate_numbers_without_marker_and_errors(tmp_path: Path):
    records = [_maritaca("questao_02"), _maritaca("questao_02"), _maritaca("questao_07")]
    qs = load_maritaca_jsonl(_write_lines(tmp_path / "dup.jsonl", records))
    assert [q.item_language for q in qs] == [0, 1, None]
    image_only = _maritaca("questao_10", alternatives=["[[placeholder]]", "b", "c", "d", "e"])
    path = _write_lines(tmp_path / "img.jsonl", [_maritaca("questao_09"), image_only])
    with pytest.raises(QuestionFormatError, match=r"img\.jsonl:line 2: option A is empty"):
        load_maritaca_jsonl(path)
    assert len(load_maritaca_jsonl(path, on_invalid="skip")) == 1
    four = _maritaca("questao_11", alternatives=["a", "b", "c", "d"])
    with pytest.raises(QuestionFormatError, match="line 1: expected exactly 5 options"):
        load_maritaca_jsonl(_write_lines(tmp_path / "four.jsonl", [four]))
    with pytest.raises(QuestionFormatError, match="key must be one of A-E"):
        load_maritaca_jsonl(_write_lines(tmp_path / "lab.jsonl", [_maritaca("q_3", label="X?")]))
    with pytest.raises(ValueError, match="area_order"):
        load_maritaca_jsonl(path, area_order=("CN", "CH"))
