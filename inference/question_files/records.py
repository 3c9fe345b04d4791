"""What every question-file reader shares: cleaning text, building a Question at a file
location, and raising on or skipping invalid records."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from inference.protocol import LANGUAGE_ALIASES, PROMPT_LANGUAGES
from inference.questions import Question, QuestionFormatError

logger = logging.getLogger(__name__)

OnInvalid = Literal["raise", "skip"]
#: Answer-key values that mark an annulled item (compared lower-cased).
ANNULLED_MARKS = frozenset({"anulada", "anulado", "annulled", "x"})


def clean_text(text: Any) -> str:
    """Normalise line endings and strip outer whitespace; non-strings become ''."""
    if not isinstance(text, str):
        return ""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def make_question(path: Path, where: str, /, **kwargs: Any) -> Question:
    """Build a Question, re-raising validation errors with file and location."""
    try:
        return Question(**kwargs)
    except QuestionFormatError as exc:
        raise QuestionFormatError(exc.problem, path, where) from None
    except TypeError as exc:
        raise QuestionFormatError(str(exc), path, where) from None


def json_object(line: str, required: Iterable[str], path: Path, where: str) -> dict[str, Any]:
    """One JSON Lines record as a dict holding every ``required`` field, or QuestionFormatError."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise QuestionFormatError(f"invalid JSON ({exc.msg})", path, where) from None
    if not isinstance(obj, dict):
        raise QuestionFormatError("each line must be a JSON object", path, where)
    missing = [name for name in required if name not in obj]
    if missing:
        raise QuestionFormatError(f"missing field(s): {', '.join(missing)}", path, where)
    return obj


def int_field(value: Any, name: str, path: Path, where: str) -> int:
    """``value`` as an integer ("12", "12.0"), or QuestionFormatError naming the field."""
    text = str(value).strip()
    if re.fullmatch(r"-?\d+(\.0*)?", text):
        return int(float(text))
    raise QuestionFormatError(f"{name} must be an integer, got {text!r}", path, where)


def collect(
    records: Iterable[tuple[str, Callable[[], Question]]], on_invalid: OnInvalid, source: Path
) -> list[Question]:
    """Run record builders; raise or log-and-skip QuestionFormatErrors per ``on_invalid``.

    ``records`` yields (where, thunk) pairs where thunk() returns a Question.
    """
    if on_invalid not in ("raise", "skip"):
        raise ValueError(f"on_invalid must be 'raise' or 'skip', got {on_invalid!r}")
    out: list[Question] = []
    for _where, build in records:
        try:
            out.append(build())
        except QuestionFormatError as exc:
            if on_invalid == "raise":
                raise
            logger.warning("skipping invalid question: %s", exc)
    if not out:
        raise QuestionFormatError("no valid questions", source)
    return out


def folder_language(path: Path) -> str | None:
    """The prompt language a file's folder names (``pt/``, ``en/``, ``pt-br/``, ``english/``),
    or None when the folder names none."""
    return LANGUAGE_ALIASES.get(path.parent.name.strip().lower())


def check_prompt_language(language: str | None) -> str | None:
    """``language`` itself when it is None or a prompt language; ValueError otherwise."""
    if language is not None and language not in PROMPT_LANGUAGES:
        raise ValueError(f"language must be 'pt' or 'en', got {language!r}")
    return language


def filter_language(
    questions: list[Question], language: str | None, source: Path
) -> list[Question]:
    """The questions in ``language`` (all when None); QuestionFormatError when none is."""
    if check_prompt_language(language) is None:
        return questions
    kept = [q for q in questions if q.language == language]
    if not kept:
        found = sorted({q.language for q in questions})
        raise QuestionFormatError(
            f"no question text in the requested language {language!r} (file has {found})", source
        )
    return kept
