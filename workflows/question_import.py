"""Import question texts from a file and link each to its item (CO_ITEM) in the store."""

from __future__ import annotations

from pathlib import Path

from inference import questions as loaders
from store.connection import connected
from store.question_texts import store_questions

#: The question-file formats ``import_question_file`` reads.
QUESTION_FORMATS: tuple[str, ...] = ("project", "paper-csv", "maritaca")


def import_question_file(db_path: Path, path: Path, file_format: str, booklets: dict[str, int],
                         area: str | None = None, year: int | None = None
                         ) -> tuple[int, list[str]]:
    """Read ``path`` in ``file_format`` and store its texts; returns (rows stored, one message
    per text that could not be linked to an item).

    ``booklets`` maps area → CO_PROVA for formats that give booklet positions rather than
    CO_ITEM; ``area`` names a paper-csv file's area; ``year`` keeps only that exam's texts.
    """
    if file_format == "project":
        questions = loaders.load_project_questions(path)
    elif file_format == "paper-csv":
        booklet = booklets.get(area.upper()) if area else None
        questions = loaders.load_paper_csv(path, booklet_id=booklet, area=area)
    elif file_format == "maritaca":
        questions = loaders.load_maritaca_jsonl(path)
    else:
        raise ValueError(f"unknown question format {file_format!r}; expected one of "
                         f"{', '.join(QUESTION_FORMATS)}")
    if year:
        questions = [q for q in questions if q.year == year]
    with connected(Path(db_path)) as con:
        return store_questions(con, questions, booklets)
