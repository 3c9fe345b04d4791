"""The project's question JSONL: one :class:`~inference.questions.Question` object per line.

Read with :func:`load_project_questions`, written with :func:`write_project_questions`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from inference.question_files.records import (
    OnInvalid,
    clean_text,
    collect,
    filter_language,
    json_object,
    make_question,
)
from inference.questions import Question, QuestionFormatError

_PROJECT_FIELDS = tuple(f.name for f in fields(Question))
_PROJECT_REQUIRED = ("year", "area", "language", "stem", "options", "key", "annulled", "source")


def _project_record(path: Path, lineno: int, line: str) -> Question:
    where = f"line {lineno}"
    obj = json_object(line, _PROJECT_REQUIRED, path, where)
    unknown = sorted(set(obj) - set(_PROJECT_FIELDS))
    if unknown:
        raise QuestionFormatError(f"unknown field(s): {', '.join(unknown)}", path, where)
    options = obj["options"]
    if not isinstance(options, list):
        raise QuestionFormatError("options must be a list of 5 strings", path, where)
    by_position = obj.get("booklet_id") is not None and obj.get("position") is not None
    if obj.get("item_id") is None and not by_position:
        raise QuestionFormatError(
            "needs item_id, or booklet_id and position, to link to the item tables", path, where
        )
    kwargs = dict(obj)
    kwargs["options"] = tuple(clean_text(o) if isinstance(o, str) else o for o in options)
    kwargs["stem"] = clean_text(obj["stem"])
    return make_question(path, where, **kwargs)


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

    questions = collect(records(), on_invalid, path)
    _check_duplicates(questions, path)
    return filter_language(questions, language, path)


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
