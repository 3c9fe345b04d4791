"""``fetch texts``: one year's question texts from a public source (maritaca-ai's ``enem``
dataset on Hugging Face) to the store, through the same import ``import-questions`` runs.

The file lives in ``DEST/texts/SOURCE/``. maritaca-ai numbers each question by its place in
one printed booklet, so the booklet of each area is named (``--booklet AREA=CO_PROVA``) for
the texts to link to their items.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb

from workflows.fetch.download import download
from workflows.fetch.errors import IngestAfterFetchError
from workflows.fetch.progress import ProgressFile, no_progress
from workflows.fetch.sources import TEXT_SOURCES, texts_not_published
from workflows.fetch.stored import require_item_years
from workflows.question_import import QuestionImport, import_questions

Say = Callable[[str], None]


def fetch_texts(db_path: Path, source: str, year: int, dest: Path, booklets: dict[str, int],
                *, mirror: str | None = None, progress: bool = True,
                ca_bundle: Path | None = None, say: Say = print,
                report: ProgressFile | None = None) -> QuestionImport:
    """Download ``source``'s texts of ``year`` and import them into ``db_path``, linked through
    ``booklets`` (area → CO_PROVA). ValueError before any download when the year's items are
    not stored or no booklet is named. ``report`` records each phase
    (``workflows.fetch.progress``)."""
    report = report if report is not None else no_progress()
    if source not in TEXT_SOURCES:
        raise ValueError(f"unknown text source {source!r}; expected {', '.join(TEXT_SOURCES)}")
    remote, file_format = TEXT_SOURCES[source]
    if not booklets:
        raise ValueError(f"{source} numbers its questions by their place in one printed "
                         "booklet: name that booklet for each area with --booklet AREA=CO_PROVA "
                         "(the year's ITENS_PROVA file gives each CO_PROVA's area and colour)")
    require_item_years(db_path, (year,), f"the {source} texts")
    url = remote.url(mirror, year=year)
    target = Path(dest) / "texts" / source / remote.file_name(year=year)
    say(f"downloading {url}")
    fetched = download(url, target, missing=texts_not_published(source, year, url),
                       progress=progress, ca_bundle=ca_bundle, sha256=remote.sha256,
                       report=report)
    for note in fetched.notes:
        say(note)
    report.phase("ingesting", file=target.name)
    retry = (f"enem-llm import-questions {target} --format {file_format} --year {year} "
             + " ".join(f"--booklet {area}={booklet}" for area, booklet in booklets.items())
             + f" --db {db_path}")
    try:
        summary = import_questions(Path(db_path), target, file_format, booklets, year=year)
    except (ValueError, duckdb.Error) as error:
        raise IngestAfterFetchError(
            f"the import of {target} stopped ({error}); the store is unchanged: retry with "
            f"`{retry}`") from None
    if not summary.stored:
        first = summary.unlinked[0] if summary.unlinked else f"no text of {year} in the file"
        raise IngestAfterFetchError(
            f"no question text of {target} could be linked to a stored item ({first}); check "
            f"the --booklet values and retry with `{retry}`")
    return summary
