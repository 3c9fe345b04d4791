"""Import question texts from a file and link each to its item (CO_ITEM) in the store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from inference.question_files.maritaca import load_maritaca_jsonl
from inference.question_files.paper_csv import load_paper_csv
from inference.question_files.project import load_project_questions
from inference.questions import Question
from store.connection import connected
from store.question_texts import store_questions

#: A reader of one question-file format: (path, area → CO_PROVA, area or None) → questions.
QuestionReader = Callable[[Path, dict[str, int], str | None], list[Question]]


def _read_paper_csv(path: Path, booklets: dict[str, int], area: str | None) -> list[Question]:
    booklet = booklets.get(area.upper()) if area else None
    return load_paper_csv(path, booklet_id=booklet, area=area)


#: The question-file formats ``import_question_file`` reads (``--format``), each with its reader.
QUESTION_READERS: dict[str, QuestionReader] = {
    "project": lambda path, booklets, area: load_project_questions(path),
    "paper-csv": _read_paper_csv,
    "maritaca": lambda path, booklets, area: load_maritaca_jsonl(path),
}
QUESTION_FORMATS: tuple[str, ...] = tuple(QUESTION_READERS)


def import_question_file(db_path: Path, path: Path, file_format: str, booklets: dict[str, int],
                         area: str | None = None, year: int | None = None
                         ) -> tuple[int, list[str]]:
    """Read ``path`` in ``file_format`` and store its texts; returns (rows stored, one message
    per text that could not be linked to an item).

    ``booklets`` maps area → CO_PROVA for formats that give booklet positions rather than
    CO_ITEM; ``area`` names a paper-csv file's area; ``year`` keeps only that exam's texts.
    """
    if file_format not in QUESTION_READERS:
        raise ValueError(f"unknown question format {file_format!r}; expected one of "
                         f"{', '.join(QUESTION_FORMATS)}")
    questions = QUESTION_READERS[file_format](path, booklets, area)
    if year:
        questions = [q for q in questions if q.year == year]
    with connected(Path(db_path)) as con:
        return store_questions(con, questions, booklets)
