"""Exam questions as the model sees them: the :class:`Question` model and its validation.

A :class:`Question` is one item's text in one language: stem, five options, key. It links to the
INEP item tables by ``item_id`` (``CO_ITEM``) or by ``(booklet_id, position, item_language)``
where ``position`` is the 1-based position in the booklet *after sorting by CO_POSICAO* (the k-th
character of ``TX_RESPOSTAS``), within one area (1..45).

Construction validates every field and raises :class:`QuestionFormatError`. Reading and writing
question files is in :mod:`inference.question_files`, one module per format.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeGuard

from enem.areas import AREAS, ITEMS_PER_AREA, N_OPTIONS
from enem.areas import OPTION_LETTERS as LETTERS
from enem.items import ITEM_ID_MAX
from enem.microdata import BOOKLET_ID_MAX
from inference.protocol import PROMPT_LANGUAGES

Language = Literal["pt", "en"]


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


def _is_int(value: object) -> TypeGuard[int]:
    """True for an int that is not a bool (a TypeGuard, so the caller's value is then an int)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _problems(q: Question) -> list[str]:
    """Everything wrong with a question, as readable phrases (empty when valid)."""
    out: list[str] = []
    if not isinstance(q.year, int) or isinstance(q.year, bool) or not 1990 <= q.year <= 2100:
        out.append(f"year must be an integer year, got {q.year!r}")
    if q.area not in AREAS:
        out.append(f"area must be one of {', '.join(AREAS)}, got {q.area!r}")
    if q.language not in PROMPT_LANGUAGES:
        out.append(f"language must be 'pt' or 'en', got {q.language!r}")
    if not isinstance(q.stem, str) or not q.stem.strip():
        out.append(f"no question text in language {q.language!r}")
    if len(q.options) != N_OPTIONS:
        out.append(f"expected exactly 5 options, got {len(q.options)}")
    for letter, option in zip(LETTERS, q.options, strict=False):  # the count is checked above
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
    if _is_int(q.booklet_id) and not 1 <= q.booklet_id <= BOOKLET_ID_MAX:
        out.append(f"booklet_id must be a booklet number, 1 to {BOOKLET_ID_MAX:,}; "
                   f"got {q.booklet_id}")
    if _is_int(q.item_id) and not abs(q.item_id) <= ITEM_ID_MAX:
        out.append(f"item_id must be an item number up to {ITEM_ID_MAX:,}; got {q.item_id}")
    if isinstance(q.position, int) and not 1 <= q.position <= ITEMS_PER_AREA:
        out.append(f"position must be 1..{ITEMS_PER_AREA}, got {q.position}")
    if q.item_language is not None and (q.item_language not in (0, 1) or q.area != "LC"):
        out.append(f"item_language must be 0 or 1 and only for LC items, got {q.item_language!r}")
    return out
