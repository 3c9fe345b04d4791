"""The per-booklet CSV of the paper *Beyond accuracy*: one file per booklet, one row per item
(``question,body,A..E,year,question_number,test,answer,language``). Read with
:func:`load_paper_csv`."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from enem.areas import AREAS, ITEMS_PER_AREA
from enem.areas import OPTION_LETTERS as LETTERS
from inference.protocol import LANGUAGE_ALIASES
from inference.question_files.records import (
    ANNULLED_MARKS,
    OnInvalid,
    clean_text,
    collect,
    filter_language,
    int_field,
    make_question,
)
from inference.questions import Question, QuestionFormatError

PAPER_COLUMNS = (
    "question", "body", *LETTERS,
    "year", "question_number", "test", "answer", "language",
)
_AREA_NAMES = {
    "cn": "CN", "natural sciences": "CN", "ciencias da natureza": "CN",
    "ciências da natureza": "CN", "natureza": "CN",
    "ch": "CH", "humanities": "CH", "ciencias humanas": "CH", "ciências humanas": "CH",
    "humanas": "CH",
    "lc": "LC", "languages": "LC", "languages and codes": "LC", "linguagens": "LC",
    "linguagens e codigos": "LC", "linguagens e códigos": "LC",
    "mt": "MT", "mathematics": "MT", "math": "MT", "matematica": "MT", "matemática": "MT",
}

Rows = list[tuple[int, dict[str, str]]]


def _area_from_name(value: str) -> str | None:
    text = value.strip().lower()
    if text in _AREA_NAMES:
        return _AREA_NAMES[text]
    match = re.search(r"(?:^|[^a-z])(cn|ch|lc|mt)(?:[^a-z]|$)", text)
    return match.group(1).upper() if match else None


def load_paper_csv(
    path: str | Path,
    booklet_id: int | None = None,
    area: str | None = None,
    *,
    language: str | None = None,
    on_invalid: OnInvalid = "raise",
) -> list[Question]:
    """Read one booklet of the paper's parsed exams (``question,body,A..E,year,question_number,
    test,answer,language``).

    Mapping (documented choices):

    * stem = ``body``; when ``body`` is empty, ``question`` (the heading) is used instead.
    * ``answer`` A–E, or ``anulada`` (any case) for an annulled item (key None).
    * ``language``: portuguese → "pt", english → "en".
    * area: the ``area`` argument, else the ``test`` column (a code such as ``CN`` or a name such
      as ``Natural Sciences``), else a ``_CN_``-style code in the file name.
    * booklet: the ``booklet_id`` argument, else the digits after ``CO_PROVA_`` (or the last run of
      digits) in the file name; None when neither exists.
    * sorted position: non-LC files have one row per item; position = rank of
      ``question_number`` within the file (1..45), so both booklet numbering (91..135) and 1..45
      work. LC files with 50 rows are taken in file order: rows 1–5 are the English items
      (positions 1–5, item_language 0), rows 6–10 the Spanish items (positions 1–5,
      item_language 1), rows 11–50 positions 6–45. An LC file with 45 rows is ranked like the
      other areas (item_language unknown).

    ``item_id`` is None: these files carry no CO_ITEM; link by (booklet_id, position, item_language).
    """
    path = Path(path)
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        missing = [c for c in PAPER_COLUMNS if c not in header]
        if missing:
            raise QuestionFormatError(f"missing column(s): {', '.join(missing)}", path, "header")
        rows = [(reader.line_num, row) for row in reader]
    if not rows:
        raise QuestionFormatError("no rows", path)

    if booklet_id is None:
        match = re.search(r"CO_PROVA_(\d+)", path.stem) or re.search(r"(\d{3,})(?!.*\d)", path.stem)
        booklet_id = int(match.group(1)) if match else None
    area_code = _resolve_paper_area(area, rows, path)
    positions = _paper_positions(rows, area_code, path)

    def build(index: int, line: int, row: dict[str, str]) -> Question:
        where = f"row {index + 1} (line {line})"
        stem = clean_text(row.get("body")) or clean_text(row.get("question"))
        answer = (row.get("answer") or "").strip()
        annulled = answer.lower() in ANNULLED_MARKS
        if not annulled and answer.upper() not in tuple(LETTERS):
            raise QuestionFormatError(
                f"answer must be A-E or 'anulada', got {answer!r}", path, where
            )
        lang_text = (row.get("language") or "").strip().lower()
        if lang_text not in LANGUAGE_ALIASES:
            raise QuestionFormatError(
                f"language must be portuguese or english, got {lang_text!r}", path, where
            )
        position, item_language = positions[index]
        return make_question(
            path, where,
            year=int_field(row.get("year") or "", "year", path, where),
            area=area_code,
            language=LANGUAGE_ALIASES[lang_text],
            stem=stem,
            options=tuple(clean_text(row.get(letter)) for letter in LETTERS),
            key=None if annulled else answer.upper(),
            annulled=annulled,
            booklet_id=booklet_id,
            position=position,
            item_language=item_language,
            source=f"paper-csv:{path.name}",
        )

    records = (
        (f"row {i + 1}", (lambda i=i, line=line, row=row: build(i, line, row)))
        for i, (line, row) in enumerate(rows)
    )
    questions = collect(records, on_invalid, path)
    return filter_language(questions, language, path)


def _resolve_paper_area(area: str | None, rows: Rows, path: Path) -> str:
    if area is not None:
        code = area.upper()
        if code not in AREAS:
            raise ValueError(f"area must be one of {', '.join(AREAS)}, got {area!r}")
        return code
    tests = {(row.get("test") or "").strip() for _, row in rows}
    codes = {_area_from_name(t) for t in tests if t}
    if len(codes) == 1 and None not in codes:
        return codes.pop()
    from_name = _area_from_name(path.stem.replace("-", "_"))
    if from_name:
        return from_name
    raise QuestionFormatError(
        f"cannot tell the area from test values {sorted(tests)} or the file name; pass area=",
        path,
    )


def _paper_positions(rows: Rows, area: str, path: Path) -> list[tuple[int, int | None]]:
    """(sorted position, item_language) for each row, per the rules in :func:`load_paper_csv`."""
    n = len(rows)
    if area == "LC" and n == ITEMS_PER_AREA + 5:
        return (
            [(i + 1, 0) for i in range(5)]
            + [(i + 1, 1) for i in range(5)]
            + [(i + 6, None) for i in range(n - 10)]
        )
    if n != ITEMS_PER_AREA:
        expected = "45 (or 50 for LC)" if area == "LC" else "45"
        raise QuestionFormatError(f"expected {expected} rows for area {area}, got {n}", path)
    numbers = []
    for i, (line, row) in enumerate(rows):
        where = f"row {i + 1} (line {line})"
        numbers.append(
            int_field(row.get("question_number") or "", "question_number", path, where)
        )
    if len(set(numbers)) != n:
        raise QuestionFormatError("question_number values repeat", path)
    order = sorted(range(n), key=lambda i: numbers[i])
    positions: list[tuple[int, int | None]] = [(0, None)] * n
    for rank, i in enumerate(order, start=1):
        positions[i] = (rank, None)
    return positions
