"""Reading the paper's key-position experiment files (docs/harness.md, "The paper's
key-position experiment").

One parquet file per booklet, ``shuffle_experiment_ENEM_<year>_<AREA>_CO_PROVA_<booklet>``,
one row per item: ``MODEL``, ``TEMPERATURE``, ``QUESTION`` (the item's 0-based index in
booklet order; in LC the five English items come first and are not in the file, so its rows
run 5 … 49), ``ENEM_EXAM`` (``ENEM_2022_CN_CO_PROVA_1092``), ``LANGUAGE``, ``SEED``,
``MODEL_RESPONSE_PATTERN`` and ``CORRECT_ANSWER`` (the key's letter).

The pattern holds 120 letters: the option chosen when the item was shown in order *i* of
:data:`OPTION_ORDERS` (Python's ``itertools.permutations("ABCDE")`` order). Each option keeps
its own letter wherever it is shown, so a letter names the option itself and the order says
where it stood. ``X`` marks an answer without a letter; a voided item (key ``anulada``) has the
single character ``V``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from enem.areas import OPTION_LETTERS
from inference.harness.records import HarnessFormatError

#: Every order of the five options, as the experiment lists them: ``OPTION_ORDERS[i][p]`` is
#: the letter of the option shown at position p (0 = first) in order i.
OPTION_ORDERS: tuple[str, ...] = tuple("".join(order)
                                       for order in itertools.permutations(OPTION_LETTERS))
#: A pattern's mark for an answer without a letter, and the whole pattern of a voided item.
NO_LETTER = "X"
VOIDED = "V"
COLUMNS: tuple[str, ...] = ("MODEL", "TEMPERATURE", "QUESTION", "ENEM_EXAM", "LANGUAGE", "SEED",
                            "MODEL_RESPONSE_PATTERN", "CORRECT_ANSWER")
_EXAM = re.compile(r"ENEM_(?P<year>\d{4})_(?P<area>CH|CN|LC|MT)_CO_PROVA_(?P<booklet>\d+)")
#: The experiment's language names, as the project's prompt languages.
LANGUAGES = {"pt-br": "pt", "pt": "pt", "en": "en"}


@dataclass(frozen=True)
class KeyPositionItem:
    """One row: the item's 0-based index in booklet order, its 120 choices (or
    :data:`VOIDED`) and the key's letter as the file gives it."""

    question: int
    pattern: str
    key: str

    @property
    def voided(self) -> bool:
        return self.pattern == VOIDED


@dataclass(frozen=True)
class KeyPositionFile:
    """A whole file: one model, temperature, language, seed and booklet, and its items."""

    path: Path
    model: str
    temperature: float | None
    language: str
    seed: int | None
    year: int
    area: str
    booklet: int
    items: tuple[KeyPositionItem, ...]


def is_key_position_file(columns: list[str]) -> bool:
    """True when a parquet file's columns are the experiment's."""
    return {"MODEL_RESPONSE_PATTERN", "QUESTION", "ENEM_EXAM"} <= set(columns)


def read_key_position_file(path: Path) -> KeyPositionFile:
    """The file at ``path``; HarnessFormatError naming the row and column of what cannot be
    read (a missing column, a second exam or model, a pattern that is not 120 letters)."""
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        raise HarnessFormatError(f"{path}: not a readable parquet file ({error})") from None
    missing = [column for column in COLUMNS if column not in table.column_names]
    if missing:
        raise HarnessFormatError(f"{path}: no column {', '.join(missing)} (the key-position "
                                 f"experiment's files have {', '.join(COLUMNS)})")
    rows = table.select(list(COLUMNS)).to_pylist()
    if not rows:
        raise HarnessFormatError(f"{path}: no rows")
    first = rows[0]
    exam = _EXAM.fullmatch(str(first["ENEM_EXAM"]).strip())
    if exam is None:
        raise HarnessFormatError(f"{path}: row 1: ENEM_EXAM {first['ENEM_EXAM']!r} is not "
                                 "ENEM_<year>_<AREA>_CO_PROVA_<booklet>")
    language = LANGUAGES.get(str(first["LANGUAGE"]).strip().lower())
    if language is None:
        raise HarnessFormatError(f"{path}: row 1: LANGUAGE {first['LANGUAGE']!r} is none of "
                                 f"{', '.join(LANGUAGES)}")
    items = []
    for number, row in enumerate(rows, start=1):
        for column in ("ENEM_EXAM", "MODEL", "LANGUAGE"):
            if row[column] != first[column]:
                raise HarnessFormatError(f"{path}: row {number}: {column} {row[column]!r} "
                                         f"differs from row 1's {first[column]!r} (one run "
                                         "of one booklet per file)")
        items.append(_item(path, number, row))
    return KeyPositionFile(path, str(first["MODEL"]).strip(), _optional_float(
        first["TEMPERATURE"]), language, _optional_int(first["SEED"]), int(exam["year"]),
        exam["area"], int(exam["booklet"]), tuple(items))


def _item(path: Path, number: int, row: dict) -> KeyPositionItem:
    where = f"{path}: row {number}"
    question = row["QUESTION"]
    if isinstance(question, bool) or not isinstance(question, int) or question < 0:
        raise HarnessFormatError(f"{where}: QUESTION {question!r} is not a 0-based index")
    pattern = str(row["MODEL_RESPONSE_PATTERN"] or "").strip().upper()
    allowed = set(OPTION_LETTERS) | {NO_LETTER}
    if pattern != VOIDED and (len(pattern) != len(OPTION_ORDERS) or set(pattern) - allowed):
        raise HarnessFormatError(f"{where}: MODEL_RESPONSE_PATTERN has {len(pattern)} "
                                 f"characters; expected {len(OPTION_ORDERS)} letters A-E or "
                                 f"{NO_LETTER}, or {VOIDED} for a voided item")
    return KeyPositionItem(question, pattern, str(row["CORRECT_ANSWER"] or "").strip().upper())


def _optional_float(value) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _optional_int(value) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None
