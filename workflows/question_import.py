"""Import question texts from a file or a folder of files: link each text to its item (CO_ITEM)
in the store, compare the files' answer keys with the item file's, and derive the items'
attributes (image, numbers) from the stored texts."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from enem.areas import OPTION_LETTERS
from inference.item_attributes import derive_attributes
from inference.question_files.maritaca import load_maritaca_jsonl
from inference.question_files.paper_csv import load_paper_csv
from inference.question_files.project import load_project_questions
from inference.questions import Question
from store.connection import connected
from store.question_texts import (
    LinkedText,
    item_texts,
    link_questions,
    store_item_attributes,
    store_linked_texts,
)

#: A reader of one question-file format: (path, area → CO_PROVA, area, prompt language) →
#: questions. ``area`` and the language are None when the command line gave none.
QuestionReader = Callable[[Path, dict[str, int], str | None, str | None], list[Question]]
#: The key the item file (TX_GABARITO) gives an annulled item.
ANNULLED_KEY = "X"
#: The text language the attributes are read from when an item has it (the exam's own).
ATTRIBUTE_LANGUAGE = "pt"


def _read_paper_csv(path: Path, booklets: dict[str, int], area: str | None,
                    language: str | None) -> list[Question]:
    """The paper's CSV; a ``--booklet`` for the file's area wins over its file name."""
    questions = load_paper_csv(path, area=area, language=language)
    return [q if booklets.get(q.area, q.booklet_id) == q.booklet_id
            else dataclasses.replace(q, booklet_id=booklets[q.area]) for q in questions]


def _read_maritaca(path: Path, booklets: dict[str, int], area: str | None,
                   language: str | None) -> list[Question]:
    """maritaca-ai's JSONL, whose texts are Portuguese only."""
    if language not in (None, "pt"):
        raise ValueError(f"maritaca files hold Portuguese texts only; got --language {language}")
    return load_maritaca_jsonl(path)


#: The question-file formats ``import_questions`` reads (``--format``), each with its reader.
QUESTION_READERS: dict[str, QuestionReader] = {
    "project": lambda path, booklets, area, language: load_project_questions(
        path, language=language),
    "paper-csv": _read_paper_csv,
    "maritaca": _read_maritaca,
}
QUESTION_FORMATS: tuple[str, ...] = tuple(QUESTION_READERS)
#: The files of each format that a folder import reads (searched in sub-folders too).
QUESTION_FILE_PATTERNS: dict[str, str] = {
    "project": "*.jsonl", "paper-csv": "*.csv", "maritaca": "*.jsonl",
}


@dataclass
class QuestionImport:
    """What one import did: texts read per file, stored, not linked, keys that disagree with
    the item file, and item attributes derived (and user-corrected ones left alone)."""

    files: list[tuple[Path, int]] = field(default_factory=list)
    stored: int = 0
    unlinked: list[str] = field(default_factory=list)
    key_disagreements: list[str] = field(default_factory=list)
    attributes_derived: int = 0
    attributes_kept: int = 0

    def lines(self) -> list[str]:
        """A readable summary, one line per file and one per total."""
        out = [f"  {path}: {count} texts" for path, count in self.files]
        out.append(f"stored {self.stored:,} question texts from {len(self.files)} file(s); "
                   f"item attributes derived for {self.attributes_derived:,} items"
                   + (f" ({self.attributes_kept:,} user-corrected rows kept)"
                      if self.attributes_kept else ""))
        agreeing = "all keys agree with the item file" if not self.key_disagreements else \
            f"{len(self.key_disagreements)} key(s) differ from the item file"
        out.append(f"answer keys: {agreeing}")
        return out


def question_files(path: Path, file_format: str) -> list[Path]:
    """The files an import reads: ``path`` itself, or every file of the format in the folder
    ``path`` and its sub-folders (sorted). ValueError when there is none."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ValueError(f"no such file or folder: {path}")
    pattern = QUESTION_FILE_PATTERNS[file_format]
    files = sorted(p for p in path.rglob(pattern) if p.is_file())
    if not files:
        raise ValueError(f"no {pattern} files ({file_format}) in {path}")
    return files


def import_questions(db_path: Path, path: Path, file_format: str,
                     booklets: dict[str, int] | None = None, *, area: str | None = None,
                     year: int | None = None, language: str | None = None) -> QuestionImport:
    """Read ``path`` (a file, or a folder of files) in ``file_format``, store its texts, check
    their keys and derive the items' attributes.

    ``booklets`` maps area → CO_PROVA for texts that give booklet positions but no booklet (and
    overrides a paper-csv file name's booklet); ``area`` names a paper-csv file's area;
    ``year`` keeps only that exam's texts; ``language`` is the prompt language of the texts
    (paper-csv: else the folder, pt/ or en/; project: keeps only that language).
    """
    if file_format not in QUESTION_READERS:
        raise ValueError(f"unknown question format {file_format!r}; expected one of "
                         f"{', '.join(QUESTION_FORMATS)}")
    booklets = dict(booklets or {})
    summary = QuestionImport()
    questions: list[Question] = []
    for file in question_files(Path(path), file_format):
        read = QUESTION_READERS[file_format](file, booklets, area, language)
        read = [q for q in read if not year or q.year == year]
        summary.files.append((file, len(read)))
        questions.extend(read)
    with connected(Path(db_path)) as con:
        linked, summary.unlinked = link_questions(con, questions, booklets)
        summary.stored = store_linked_texts(con, linked)
        summary.key_disagreements = key_disagreements(linked)
        summary.attributes_derived, summary.attributes_kept = derive_item_attributes(
            con, {(text.question.year, text.item_id) for text in linked})
    return summary


def key_disagreements(linked: Iterable[LinkedText]) -> list[str]:
    """One message per text whose key differs from its item's TX_GABARITO (an annulled text
    must meet ``X``); texts whose item is not in the store are not compared."""
    messages = []
    for text in linked:
        question = text.question
        if text.item_key is None:
            continue
        file_key = ANNULLED_KEY if question.annulled else question.key
        if file_key != text.item_key:
            where = (f"{question.year} {question.area}" +
                     (f" booklet {question.booklet_id}" if question.booklet_id else "") +
                     (f" position {question.position}" if question.position else "") +
                     (f" (TP_LINGUA {question.item_language})"
                      if question.item_language is not None else ""))
            shown = "annulled" if question.annulled else question.key
            messages.append(f"{where}, item {text.item_id} ({question.language} text): the file "
                            f"says {shown}, the item file {text.item_key}")
    return messages


def derive_item_attributes(con: duckdb.DuckDBPyConnection,
                           items: Iterable[tuple[int, int]]) -> tuple[int, int]:
    """Derive the attributes of the given (year, item_id) items from their stored texts (the
    Portuguese one when stored, else any) and store them with source 'derived'; rows a user
    corrected are kept. Returns (rows written, user rows kept)."""
    texts = item_texts(con, items)
    rows = []
    for (year, item_id), group in texts.groupby(["year", "item_id"], sort=True):
        preferred = group[group["language"] == ATTRIBUTE_LANGUAGE]
        text = (preferred if len(preferred) else group).iloc[0]
        options = [text[f"option_{letter}"] for letter in OPTION_LETTERS.lower()]
        found = derive_attributes(text["stem"], options)
        rows.append((int(year), int(item_id), found.has_image, found.numbers_in_statement,
                     found.numbers_in_options))
    return store_item_attributes(con, rows)
