"""The per-booklet CSV of the paper *Beyond accuracy*: one file per booklet, one row per item
(``question,body,A..E,year,question_number,test,answer,language``). Read with
:func:`load_paper_csv`."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from enem.areas import AREAS, ITEMS_PER_AREA
from enem.areas import OPTION_LETTERS as LETTERS
from inference.protocol import PROMPT_LANGUAGES
from inference.question_files.records import (
    ANNULLED_MARKS,
    OnInvalid,
    check_prompt_language,
    clean_text,
    collect,
    folder_language,
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

#: Values of the ``language`` column (the language of a row's text) → language code.
_TEXT_LANGUAGES = {
    "portuguese": "pt", "pt": "pt", "pt-br": "pt", "português": "pt", "portugues": "pt",
    "english": "en", "en": "en", "inglês": "en", "ingles": "en",
    "spanish": "es", "es": "es", "español": "es", "espanol": "es", "espanhol": "es",
}
_TEXT_LANGUAGE_NAMES = {"pt": "portuguese", "en": "english", "es": "spanish"}
#: The text language LC's foreign-language block may keep untranslated, per TP_LINGUA.
_BLOCK_LANGUAGES: dict[int | None, str] = {0: "en", 1: "es"}

Rows = list[tuple[int, dict[str, str]]]


def _area_from_name(value: str) -> str | None:
    """The area a ``test`` value or file name names (``Humanities``, ``_LC_``), or None."""
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
    test,answer,language``), as the paper published them.

    Mapping (documented choices):

    * prompt language (``Question.language``): the ``language`` argument, else the file's folder
      (``pt/``, ``en/``), else the rows' ``language`` column when every row outside LC's
      foreign-language block has the same one (portuguese or english); otherwise an error.
    * the ``language`` column is the language of the row's text. It must be the prompt language,
      except in LC's foreign-language block, where English items may be in English and Spanish
      items in Spanish (the paper left them untranslated). A mismatch is an error of that row
      (a pt file in an en folder, or blocks in the wrong order).
    * stem = ``body``; when ``body`` is empty, ``question`` (the heading) is used instead.
    * ``answer`` A–E, or ``anulada`` (any case) for an annulled item (key None).
    * area: the ``area`` argument, else the ``test`` column (a code such as ``CN`` or a name such
      as ``Natural Sciences``), else a ``_CN_``-style code in the file name.
    * booklet: the ``booklet_id`` argument, else the digits after ``CO_PROVA_`` (or the last run of
      digits) in the file name; None when neither exists.
    * sorted position: non-LC files have one row per item; position = rank of
      ``question_number`` within the file (1..45), so both booklet numbering (91..135) and 1..45
      work. LC files with 50 rows list the five lowest question numbers twice: rows 1–5 are the
      English items (positions 1–5, item_language 0), rows 6–10 the Spanish items (positions 1–5,
      item_language 1), rows 11–50 positions 6–45 by rank. An LC file with 45 rows is ranked like
      the other areas (item_language unknown).
    * source: ``paper-csv:<folder>/<file> row <n> (<text language>)``.

    ``item_id`` is None: these files carry no CO_ITEM; link by (booklet_id, position,
    item_language).
    """
    path = Path(path)
    rows = _read_rows(path)
    if booklet_id is None:
        # At most 9 digits: a booklet id is a 32-bit CO_PROVA; longer digits are no booklet.
        match = (re.search(r"CO_PROVA_(\d{1,9})(?!\d)", path.stem)
                 or re.search(r"(?<!\d)(\d{3,9})(?!.*\d)", path.stem))
        booklet_id = int(match.group(1)) if match else None
    area_code = _resolve_paper_area(area, rows, path)
    positions = _paper_positions(rows, area_code, path)
    prompt_language = _prompt_language(language, rows, positions, path)

    def build(index: int, line: int, row: dict[str, str]) -> Question:
        where = f"row {index + 1} (line {line})"
        stem = clean_text(row.get("body")) or clean_text(row.get("question"))
        answer = (row.get("answer") or "").strip()
        annulled = answer.lower() in ANNULLED_MARKS
        if not annulled and answer.upper() not in tuple(LETTERS):
            raise QuestionFormatError(
                f"answer must be A-E or 'anulada', got {answer!r}", path, where
            )
        position, item_language = positions[index]
        text_language = _text_language(row, path, where)
        if text_language not in (prompt_language, _BLOCK_LANGUAGES.get(item_language)):
            raise QuestionFormatError(
                f"text is in {_TEXT_LANGUAGE_NAMES[text_language]} but the file's prompt "
                f"language is {prompt_language!r}", path, where,
            )
        return make_question(
            path, where,
            year=int_field(row.get("year") or "", "year", path, where),
            area=area_code,
            language=prompt_language,
            stem=stem,
            options=tuple(clean_text(row.get(letter)) for letter in LETTERS),
            key=None if annulled else answer.upper(),
            annulled=annulled,
            booklet_id=booklet_id,
            position=position,
            item_language=item_language,
            source=(f"paper-csv:{path.parent.name}/{path.name} row {index + 1} "
                    f"({_TEXT_LANGUAGE_NAMES[text_language]})"),
        )

    records = (
        (f"row {i + 1}", (lambda i=i, line=line, row=row: build(i, line, row)))
        for i, (line, row) in enumerate(rows)
    )
    return collect(records, on_invalid, path)


def _read_rows(path: Path) -> Rows:
    """The data rows of a paper CSV with their line numbers; checks the header."""
    reader = None
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            missing = [c for c in PAPER_COLUMNS if c not in header]
            if missing:
                raise QuestionFormatError(
                    f"missing column(s): {', '.join(missing)}", path, "header")
            rows = [(reader.line_num, row) for row in reader]
    except UnicodeDecodeError:
        raise QuestionFormatError("not UTF-8 text; is this one of the paper's CSV files?",
                                  path) from None
    except csv.Error as error:
        # The csv module refuses a field over its limit (128 KiB), far beyond any question's
        # text, and malformed quoting; either means this is not one of the paper's files.
        where = f"line {reader.line_num + 1}" if reader is not None else None
        problem = (f"a field is longer than {csv.field_size_limit():,} characters, far more "
                   "than any question text" if "field limit" in str(error) else str(error))
        raise QuestionFormatError(f"{problem}; is this one of the paper's CSV files?", path,
                                  where) from None
    if not rows:
        raise QuestionFormatError("no rows", path)
    return rows


def _text_language(row: dict[str, str], path: Path, where: str) -> str:
    """The language code ("pt", "en", "es") of a row's ``language`` column."""
    value = (row.get("language") or "").strip().lower()
    if value not in _TEXT_LANGUAGES:
        raise QuestionFormatError(
            f"language must be portuguese, english or spanish, got {value!r}", path, where)
    return _TEXT_LANGUAGES[value]


def _prompt_language(language: str | None, rows: Rows, positions: list[tuple[int, int | None]],
                     path: Path) -> str:
    """The file's prompt language: argument, folder, or the one language of its own rows."""
    checked = check_prompt_language(language)
    if checked is not None:
        return checked
    from_folder = folder_language(path)
    if from_folder is not None:
        return from_folder
    found = {
        _TEXT_LANGUAGES.get((row.get("language") or "").strip().lower())
        for (_, row), (_, item_language) in zip(rows, positions, strict=True)
        if item_language is None
    }
    if len(found) == 1:
        (only,) = found
        if only in PROMPT_LANGUAGES:
            return only
    raise QuestionFormatError(
        "cannot tell the prompt language: put the file in a pt/ or en/ folder or pass "
        "--language pt|en", path)


def _resolve_paper_area(area: str | None, rows: Rows, path: Path) -> str:
    """The file's area: the argument, else the ``test`` column, else the file name."""
    if area is not None:
        code = area.upper()
        if code not in AREAS:
            raise ValueError(f"area must be one of {', '.join(AREAS)}, got {area!r}")
        return code
    tests = {(row.get("test") or "").strip() for _, row in rows}
    codes = {_area_from_name(t) for t in tests if t}
    if len(codes) == 1:
        (named,) = codes
        if named is not None:
            return named
    from_name = _area_from_name(path.stem.replace("-", "_"))
    if from_name:
        return from_name
    raise QuestionFormatError(
        f"cannot tell the area from test values {sorted(tests)} or the file name; pass --area",
        path,
    )


def _paper_positions(rows: Rows, area: str, path: Path) -> list[tuple[int, int | None]]:
    """(sorted position, item_language) for each row, per the rules in :func:`load_paper_csv`."""
    n = len(rows)
    foreign = 5  # LC's foreign-language block: positions 1–5, once per language
    if area == "LC" and n == ITEMS_PER_AREA + foreign:
        numbers = _question_numbers(rows, path)
        english, spanish, rest = numbers[:foreign], numbers[foreign:2 * foreign], numbers[10:]
        if english != spanish or max(english) >= min(rest):
            raise QuestionFormatError(
                "an LC file with 50 rows must list its first five question numbers twice "
                f"(English block, then Spanish) before the others; got {numbers[:12]}", path)
        return (
            [(p, 0) for p in _ranks(english, path)]
            + [(p, 1) for p in _ranks(spanish, path)]
            + [(p + foreign, None) for p in _ranks(rest, path)]
        )
    if n != ITEMS_PER_AREA:
        expected = "45 (or 50 for LC)" if area == "LC" else "45"
        raise QuestionFormatError(f"expected {expected} rows for area {area}, got {n}", path)
    return [(p, None) for p in _ranks(_question_numbers(rows, path), path)]


def _question_numbers(rows: Rows, path: Path) -> list[int]:
    """The ``question_number`` of every row, as integers."""
    return [
        int_field(row.get("question_number") or "", "question_number", path,
                  f"row {i + 1} (line {line})")
        for i, (line, row) in enumerate(rows)
    ]


def _ranks(numbers: list[int], path: Path) -> list[int]:
    """1-based rank of each number among ``numbers`` (which must not repeat)."""
    if len(set(numbers)) != len(numbers):
        raise QuestionFormatError("question_number values repeat", path)
    order = sorted(numbers)
    return [order.index(number) + 1 for number in numbers]
