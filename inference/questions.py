"""Exam questions as the model sees them, and loaders for the three question-text formats.

A :class:`Question` is one item's text in one language: stem, five options, key. It links to the
INEP item tables by ``item_id`` (``CO_ITEM``) or by ``(booklet_id, position, item_language)``
where ``position`` is the 1-based position in the booklet *after sorting by CO_POSICAO* (the k-th
character of ``TX_RESPOSTAS``), within one area (1..45).

Formats (REFERENCE.md §3):

* project JSONL (:func:`load_project_questions`, :func:`write_project_questions`): one JSON
  object per line with the :class:`Question` fields.
* the paper's per-booklet CSV (:func:`load_paper_csv`).
* maritaca-ai ``enem`` JSONL (:func:`load_maritaca_jsonl`).

Every loader validates each record and raises :class:`QuestionFormatError` naming the file, the
line (JSONL) or row (CSV) and the problem. ``on_invalid="skip"`` logs the problem and drops the
record instead, for bulk imports where a few image-only items are expected.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal

logger = logging.getLogger(__name__)

#: Area codes, in the project's canonical order (same as ``enem.areas.AREAS``).
AREAS: tuple[str, ...] = ("CN", "CH", "LC", "MT")
#: Area order inside the printed booklets from 2017 on (day 1: LC, CH; day 2: CN, MT).
#: 2009–2016 printed CH, CN on day 1 and LC, MT on day 2: pass ("CH", "CN", "LC", "MT") then.
BOOKLET_AREA_ORDER: tuple[str, ...] = ("LC", "CH", "CN", "MT")
LETTERS = "ABCDE"
N_OPTIONS = 5
ITEMS_PER_AREA = 45
LANGUAGES: tuple[str, ...] = ("pt", "en")

Language = Literal["pt", "en"]
OnInvalid = Literal["raise", "skip"]


class QuestionFormatError(ValueError):
    """A question record is malformed. The message names the file, the line or row, and why."""

    def __init__(self, problem: str, source: str | Path | None = None, where: str | None = None):
        self.problem = problem
        self.source = None if source is None else str(source)
        self.where = where
        location = ":".join(part for part in (self.source, where) if part)
        super().__init__(f"{location}: {problem}" if location else problem)


@dataclass(frozen=True)
class Question:
    """One exam item in one language.

    ``options`` always has exactly five entries (A–E). ``key`` is the correct letter, or None when
    the item was annulled (then ``annulled`` is True). ``item_language`` is only set for the
    foreign-language items of LC (0 English, 1 Spanish). Construction validates all of this and
    raises :class:`QuestionFormatError`.
    """

    year: int
    area: str
    language: Language
    stem: str
    options: tuple[str, ...]
    key: str | None
    annulled: bool
    item_id: int | None = None
    booklet_id: int | None = None
    position: int | None = None
    item_language: int | None = None
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(self.options))
        problems = _problems(self)
        if problems:
            raise QuestionFormatError("; ".join(problems))

    @property
    def key_index(self) -> int | None:
        """Index 0..4 of the key, or None when annulled."""
        return None if self.key is None else LETTERS.index(self.key)

    @property
    def uid(self) -> str:
        """A stable identifier of the item.

        ``"item:<CO_ITEM>"`` when the item id is known (the same in every booklet colour and
        language), else ``"<year>:<area>[:b<booklet>]:p<position>[:l<item_language>]"``, else
        ``"text:<hash of stem and options>"``. Used to seed option shuffles.
        """
        if self.item_id is not None:
            return f"item:{self.item_id}"
        if self.position is not None:
            booklet = "" if self.booklet_id is None else f":b{self.booklet_id}"
            lang = "" if self.item_language is None else f":l{self.item_language}"
            return f"{self.year}:{self.area}{booklet}:p{self.position}{lang}"
        digest = hashlib.sha256("\x1f".join((self.stem, *self.options)).encode()).hexdigest()
        return f"text:{digest[:16]}"


def _problems(q: Question) -> list[str]:
    """Everything wrong with a question, as readable phrases (empty when valid)."""
    out: list[str] = []
    if not isinstance(q.year, int) or isinstance(q.year, bool) or not 1990 <= q.year <= 2100:
        out.append(f"year must be an integer year, got {q.year!r}")
    if q.area not in AREAS:
        out.append(f"area must be one of {', '.join(AREAS)}, got {q.area!r}")
    if q.language not in LANGUAGES:
        out.append(f"language must be 'pt' or 'en', got {q.language!r}")
    if not isinstance(q.stem, str) or not q.stem.strip():
        out.append(f"no question text in language {q.language!r}")
    if len(q.options) != N_OPTIONS:
        out.append(f"expected exactly 5 options, got {len(q.options)}")
    for letter, option in zip(LETTERS, q.options):
        if not isinstance(option, str) or not option.strip():
            out.append(f"option {letter} is empty")
    if not isinstance(q.annulled, bool):
        out.append(f"annulled must be true or false, got {q.annulled!r}")
    elif q.annulled and q.key is not None:
        out.append(f"annulled item must have key null, got {q.key!r}")
    elif not q.annulled and q.key not in tuple(LETTERS):
        out.append(f"key must be one of A-E (or the item marked annulled), got {q.key!r}")
    for name in ("item_id", "booklet_id", "position", "item_language"):
        value = getattr(q, name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            out.append(f"{name} must be an integer or null, got {value!r}")
    if isinstance(q.position, int) and not 1 <= q.position <= ITEMS_PER_AREA:
        out.append(f"position must be 1..{ITEMS_PER_AREA}, got {q.position}")
    if q.item_language is not None and (q.item_language not in (0, 1) or q.area != "LC"):
        out.append(f"item_language must be 0 or 1 and only for LC items, got {q.item_language!r}")
    return out


def _clean(text: Any) -> str:
    """Normalise line endings and strip outer whitespace; non-strings become ''."""
    if not isinstance(text, str):
        return ""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def _make(path: Path, where: str, /, **kwargs: Any) -> Question:
    """Build a Question, re-raising validation errors with file and location."""
    try:
        return Question(**kwargs)
    except QuestionFormatError as exc:
        raise QuestionFormatError(exc.problem, path, where) from None
    except TypeError as exc:
        raise QuestionFormatError(str(exc), path, where) from None


def _collect(
    records: Iterable[tuple[str, Any]], on_invalid: OnInvalid, source: Path
) -> list[Question]:
    """Run record builders; raise or log-and-skip QuestionFormatErrors per ``on_invalid``.

    ``records`` yields (where, thunk) pairs where thunk() returns a Question.
    """
    if on_invalid not in ("raise", "skip"):
        raise ValueError(f"on_invalid must be 'raise' or 'skip', got {on_invalid!r}")
    out: list[Question] = []
    for where, build in records:
        try:
            out.append(build())
        except QuestionFormatError as exc:
            if on_invalid == "raise":
                raise
            logger.warning("skipping invalid question: %s", exc)
    if not out:
        raise QuestionFormatError("no valid questions", source)
    return out


def _filter_language(
    questions: list[Question], language: str | None, source: Path
) -> list[Question]:
    if language is None:
        return questions
    if language not in LANGUAGES:
        raise ValueError(f"language must be 'pt' or 'en', got {language!r}")
    kept = [q for q in questions if q.language == language]
    if not kept:
        found = sorted({q.language for q in questions})
        raise QuestionFormatError(
            f"no question text in the requested language {language!r} (file has {found})", source
        )
    return kept


# --------------------------------------------------------------------------- project JSONL

_PROJECT_FIELDS = tuple(f.name for f in fields(Question))
_PROJECT_REQUIRED = ("year", "area", "language", "stem", "options", "key", "annulled", "source")


def _project_record(path: Path, lineno: int, line: str) -> Question:
    where = f"line {lineno}"
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise QuestionFormatError(f"invalid JSON ({exc.msg})", path, where) from None
    if not isinstance(obj, dict):
        raise QuestionFormatError("each line must be a JSON object", path, where)
    missing = [name for name in _PROJECT_REQUIRED if name not in obj]
    if missing:
        raise QuestionFormatError(f"missing field(s): {', '.join(missing)}", path, where)
    unknown = sorted(set(obj) - set(_PROJECT_FIELDS))
    if unknown:
        raise QuestionFormatError(f"unknown field(s): {', '.join(unknown)}", path, where)
    options = obj["options"]
    if not isinstance(options, list):
        raise QuestionFormatError("options must be a list of 5 strings", path, where)
    if obj.get("item_id") is None and (obj.get("booklet_id") is None or obj.get("position") is None):
        raise QuestionFormatError(
            "needs item_id, or booklet_id and position, to link to the item tables", path, where
        )
    kwargs = dict(obj)
    kwargs["options"] = tuple(_clean(o) if isinstance(o, str) else o for o in options)
    kwargs["stem"] = _clean(obj["stem"])
    return _make(path, where, **kwargs)


def load_project_questions(
    path: str | Path, *, language: str | None = None, on_invalid: OnInvalid = "raise"
) -> list[Question]:
    """Read the project's question JSONL (one Question object per line; blank lines ignored).

    Required keys: year, area, language, stem, options (5), key (null iff annulled), annulled,
    source; plus item_id, or booklet_id and position (and item_language for LC's foreign-language
    items). Unknown keys and duplicate items are errors. ``language`` keeps only that language.
    """
    path = Path(path)

    def records() -> Iterator[tuple[str, Any]]:
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if line.strip():
                    yield f"line {lineno}", (lambda n=lineno, s=line: _project_record(path, n, s))

    questions = _collect(records(), on_invalid, path)
    _check_duplicates(questions, path)
    return _filter_language(questions, language, path)


def _check_duplicates(questions: Sequence[Question], path: Path) -> None:
    seen: set[tuple[Any, ...]] = set()
    for q in questions:
        ident = (q.year, q.language, q.item_id, q.booklet_id, q.position, q.item_language)
        if ident in seen:
            raise QuestionFormatError(f"duplicate question {q.uid} ({q.language})", path)
        seen.add(ident)


def question_to_record(question: Question) -> dict[str, Any]:
    """The JSON-ready dict of a question (options as a list), as written to project JSONL."""
    record = asdict(question)
    record["options"] = list(question.options)
    return record


def write_project_questions(questions: Iterable[Question], path: str | Path) -> int:
    """Write questions as project JSONL (UTF-8, one object per line); returns the count.

    The file is written to a temporary name and renamed, so a crash never leaves half a file.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    count = 0
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:
        for q in questions:
            fh.write(json.dumps(question_to_record(q), ensure_ascii=False) + "\n")
            count += 1
    tmp.replace(path)
    return count


# --------------------------------------------------------------------------- the paper's CSV

PAPER_COLUMNS = (
    "question", "body", "A", "B", "C", "D", "E",
    "year", "question_number", "test", "answer", "language",
)
_PAPER_LANGUAGES = {"portuguese": "pt", "pt": "pt", "pt-br": "pt", "english": "en", "en": "en"}
_ANNULLED_MARKS = {"anulada", "anulado", "annulled", "x"}
_AREA_NAMES = {
    "cn": "CN", "natural sciences": "CN", "ciencias da natureza": "CN",
    "ciências da natureza": "CN", "natureza": "CN",
    "ch": "CH", "humanities": "CH", "ciencias humanas": "CH", "ciências humanas": "CH",
    "humanas": "CH",
    "lc": "LC", "languages": "LC", "languages and codes": "LC", "linguagens": "LC",
    "linguagens e codigos": "LC", "linguagens e códigos": "LC",
    "mt": "MT", "mathematics": "MT", "math": "MT", "matematica": "MT", "matemática": "MT",
}


def _area_from_name(value: str) -> str | None:
    text = value.strip().lower()
    if text in _AREA_NAMES:
        return _AREA_NAMES[text]
    match = re.search(r"(?:^|[^a-z])(cn|ch|lc|mt)(?:[^a-z]|$)", text)
    return match.group(1).upper() if match else None


def _int_field(value: Any, name: str, path: Path, where: str) -> int:
    text = str(value).strip()
    if re.fullmatch(r"-?\d+(\.0*)?", text):
        return int(float(text))
    raise QuestionFormatError(f"{name} must be an integer, got {text!r}", path, where)


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
        stem = _clean(row.get("body")) or _clean(row.get("question"))
        answer = (row.get("answer") or "").strip()
        annulled = answer.lower() in _ANNULLED_MARKS
        if not annulled and answer.upper() not in tuple(LETTERS):
            raise QuestionFormatError(
                f"answer must be A-E or 'anulada', got {answer!r}", path, where
            )
        lang_text = (row.get("language") or "").strip().lower()
        if lang_text not in _PAPER_LANGUAGES:
            raise QuestionFormatError(
                f"language must be portuguese or english, got {lang_text!r}", path, where
            )
        position, item_language = positions[index]
        return _make(
            path, where,
            year=_int_field(row.get("year") or "", "year", path, where),
            area=area_code,
            language=_PAPER_LANGUAGES[lang_text],
            stem=stem,
            options=tuple(_clean(row.get(letter)) for letter in LETTERS),
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
    questions = _collect(records, on_invalid, path)
    return _filter_language(questions, language, path)


def _resolve_paper_area(area: str | None, rows: list[tuple[int, dict[str, str]]], path: Path) -> str:
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


def _paper_positions(
    rows: list[tuple[int, dict[str, str]]], area: str, path: Path
) -> list[tuple[int, int | None]]:
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
            _int_field(row.get("question_number") or "", "question_number", path, where)
        )
    if len(set(numbers)) != n:
        raise QuestionFormatError("question_number values repeat", path)
    order = sorted(range(n), key=lambda i: numbers[i])
    positions: list[tuple[int, int | None]] = [(0, None)] * n
    for rank, i in enumerate(order, start=1):
        positions[i] = (rank, None)
    return positions


# --------------------------------------------------------------------------- maritaca-ai JSONL

PLACEHOLDER = "[[placeholder]]"


def _fill_placeholders(texts: list[str], descriptions: list[str]) -> list[str]:
    """Replace the n-th ``[[placeholder]]`` (counted across ``texts`` in order) with the n-th
    description, stripped; a placeholder with no description left is removed."""
    queue = [d.strip() for d in descriptions if isinstance(d, str)]
    out = []
    for text in texts:
        parts = text.split(PLACEHOLDER)
        filled = parts[0]
        for part in parts[1:]:
            filled += (queue.pop(0) if queue else "") + part
        out.append(filled)
    return out


def load_maritaca_jsonl(
    path: str | Path,
    area_order: Sequence[str] = BOOKLET_AREA_ORDER,
    *,
    booklet_id: int | None = None,
    on_invalid: OnInvalid = "raise",
) -> list[Question]:
    """Read maritaca-ai ``enem`` JSONL (``id, exam, question, alternatives, label, description,
    IU, ledor``).

    * Question number n = the integer in ``id`` ("questao_01" → 1), counted over the whole printed
      exam (1..180). Area = ``area_order[ceil(n / 45) - 1]`` and position = n − 45·(area index);
      the default order LC, CH, CN, MT is the booklet order from 2017 on (maritaca's files are
      2022+). Pass ("CH", "CN", "LC", "MT") for 2009–2016 exams.
    * LC positions 1–5 may appear twice (English and Spanish). The language is read from the id
      ("ingles"/"english" → 0, "espanhol"/"spanish" → 1); without such a marker the first
      occurrence of a number is English and the second Spanish.
    * Images: each ``[[placeholder]]`` in the question, then in the alternatives, is replaced in
      order by the matching entry of ``description`` (the description text itself, stripped);
      placeholders beyond the descriptions are removed. An option that is only an image without
      description becomes empty and the item is invalid.
    * ``label`` "Anulado" (any case) marks an annulled item. ``IU`` and ``ledor`` are not used.
    * Language is Portuguese; ``item_id`` is None (link by booklet_id/position/item_language).
    """
    path = Path(path)
    order = tuple(a.upper() for a in area_order)
    if sorted(order) != sorted(AREAS):
        raise ValueError(f"area_order must be a permutation of {AREAS}, got {area_order!r}")
    seen_numbers: dict[tuple[int, int], int] = {}

    def build(lineno: int, line: str) -> Question:
        where = f"line {lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QuestionFormatError(f"invalid JSON ({exc.msg})", path, where) from None
        if not isinstance(obj, dict):
            raise QuestionFormatError("each line must be a JSON object", path, where)
        missing = [k for k in ("id", "exam", "question", "alternatives", "label") if k not in obj]
        if missing:
            raise QuestionFormatError(f"missing field(s): {', '.join(missing)}", path, where)
        ident = str(obj["id"])
        match = re.search(r"(\d+)", ident)
        if not match:
            raise QuestionFormatError(f"id {ident!r} has no question number", path, where)
        number = int(match.group(1))
        if not 1 <= number <= ITEMS_PER_AREA * len(order):
            raise QuestionFormatError(f"question number {number} out of range", path, where)
        year = _int_field(str(obj["exam"]), "exam", path, where)
        area_index = math.ceil(number / ITEMS_PER_AREA) - 1
        area = order[area_index]
        position = number - ITEMS_PER_AREA * area_index
        item_language = None
        if area == "LC" and position <= 5:
            lowered = ident.lower()
            if "ingl" in lowered or "engl" in lowered:
                item_language = 0
            elif "espan" in lowered or "span" in lowered:
                item_language = 1
            else:
                count = seen_numbers.get((year, number), 0)
                seen_numbers[(year, number)] = count + 1
                item_language = count if count in (0, 1) else None
        alternatives = obj["alternatives"]
        if not isinstance(alternatives, list):
            raise QuestionFormatError("alternatives must be a list of 5 strings", path, where)
        descriptions = obj.get("description") or []
        if not isinstance(descriptions, list):
            descriptions = [descriptions]
        raw = [obj["question"] if isinstance(obj["question"], str) else ""]
        raw += [a if isinstance(a, str) else "" for a in alternatives]
        filled = [_clean(t) for t in _fill_placeholders(raw, descriptions)]
        label = str(obj["label"]).strip()
        annulled = label.lower() in _ANNULLED_MARKS
        return _make(
            path, where,
            year=year, area=area, language="pt", stem=filled[0], options=tuple(filled[1:]),
            key=None if annulled else label.upper(), annulled=annulled,
            booklet_id=booklet_id, position=position, item_language=item_language,
            source=f"maritaca:{path.name}:{ident}",
        )

    def records() -> Iterator[tuple[str, Any]]:
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if line.strip():
                    yield f"line {lineno}", (lambda n=lineno, s=line: build(n, s))

    return _collect(records(), on_invalid, path)
