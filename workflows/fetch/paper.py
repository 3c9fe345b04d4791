"""``fetch paper``: the seed paper's published results and parsed exams, from its repository
(BU-UFMG-Research/irt-llms) to the store, through the same imports ``import-results`` and
``import-questions --format paper-csv`` run.

Files live in ``DEST/paper/``: the results parquets (kept: they are what was imported), and
``questions/pt`` and ``questions/en`` with the exams' texts taken from ``data.zip`` (the ZIP
itself is removed after the extract unless ``keep``).

The results are re-scored on import against the stored items of their years (2019–2022), so
those years must be in the store first; this is checked before anything is downloaded.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import duckdb

from store.connection import connected
from workflows.fetch.archives import (
    downloaded_archive,
    extract,
    member_name,
    members_where,
)
from workflows.fetch.download import download
from workflows.fetch.errors import ArchiveError, IngestAfterFetchError
from workflows.fetch.progress import ProgressFile, no_progress
from workflows.fetch.sources import (
    DEFAULT_PAPER_RESULTS,
    PAPER_EXAM_TYPE,
    PAPER_RESULTS,
    PAPER_TEXT_LANGUAGES,
    PAPER_TEXTS,
    PAPER_TEXTS_PASSWORD,
    PAPER_YEARS,
    RemoteFile,
    paper_not_published,
)
from workflows.fetch.stored import require_item_years
from workflows.imported_runs import ImportSummary
from workflows.question_import import QuestionImport, import_questions
from workflows.results_io import import_results_summary

Say = Callable[[str], None]
#: A parsed exam's file name in data.zip (the paper's exam.py reads ENEM_<year>_<area>_...).
_EXAM_FILE = re.compile(r"ENEM_(\d{4})_[A-Z]{2}_.*\.csv", re.IGNORECASE)
QUESTIONS_FOLDER = "questions"


@dataclass
class FetchedPaper:
    """What ``fetch_paper`` imported: one summary per results file, and the texts' import
    (None when texts were not asked for)."""

    results: list[ImportSummary]
    texts: QuestionImport | None
    questions: Path | None


def fetch_paper(db_path: Path, dest: Path, *, parts: Sequence[str] = DEFAULT_PAPER_RESULTS,
                texts: bool = True, keep: bool = False, scoring: dict | None = None,
                mirror: str | None = None, progress: bool = True,
                ca_bundle: Path | None = None, say: Say = print,
                report: ProgressFile | None = None) -> FetchedPaper:
    """Download the results files named by ``parts`` (keys of PAPER_RESULTS) and, with
    ``texts``, data.zip; then import them into ``db_path``: the results in one write session
    (all or none, scored with the stored settings overridden by ``scoring``), then the texts.
    ``report`` records each phase (``workflows.fetch.progress``)."""
    report = report if report is not None else no_progress()
    unknown = sorted(set(parts) - set(PAPER_RESULTS))
    if unknown:
        raise ValueError(f"unknown results file(s) {', '.join(unknown)}; expected "
                         f"{', '.join(PAPER_RESULTS)}")
    require_item_years(db_path, PAPER_YEARS, "the paper's results")
    folder = Path(dest) / "paper"
    files = [_download(PAPER_RESULTS[part], folder, mirror, progress, ca_bundle, say, report)
             for part in parts]
    questions = (_questions(folder, keep, mirror, progress, ca_bundle, say, report) if texts
                 else None)
    report.phase("ingesting", file=files[0].name if files else "")
    summaries = _import_results(db_path, files, scoring or {}, say)
    imported = _import_texts(db_path, questions, say) if questions is not None else None
    return FetchedPaper(summaries, imported, questions)


def _download(remote: RemoteFile, folder: Path, mirror: str | None, progress: bool,
              ca_bundle: Path | None, say: Say, report: ProgressFile) -> Path:
    url = remote.url(mirror)
    target = folder / remote.file_name()
    if not target.is_file():
        say(f"downloading {url}")
    fetched = download(url, target, missing=paper_not_published(url), progress=progress,
                       ca_bundle=ca_bundle, sha256=remote.sha256, report=report)
    for note in fetched.notes:
        say(note)
    return target


def _questions(folder: Path, keep: bool, mirror: str | None, progress: bool,
               ca_bundle: Path | None, say: Say, report: ProgressFile) -> Path:
    """The folder of the parsed exams (``pt/`` and ``en/``), extracted from data.zip unless an
    earlier fetch did."""
    questions = folder / QUESTIONS_FOLDER
    if any(questions.glob("*/*.csv")):
        say(f"using the texts extracted before in {questions}")
        return questions
    archive_path = _download(PAPER_TEXTS, folder, mirror, progress, ca_bundle, say, report)
    with downloaded_archive(archive_path, "docs/fetch.md tells how to import the texts by "
                            "hand") as archive:
        targets = _text_targets(archive, questions)
        extract(archive, targets, password=PAPER_TEXTS_PASSWORD, progress=progress,
                report=report)
    say(f"extracted {len(targets)} parsed exams into {questions}")
    if not keep:
        archive_path.unlink()
    return questions


def _text_targets(archive: zipfile.ZipFile, questions: Path
                  ) -> list[tuple[zipfile.ZipInfo, Path]]:
    """(member, target) for each parsed exam of the paper's years in the original option order,
    the language folder renamed to the one ``paper-csv`` reads (pt-br → pt)."""

    def wanted(path: PurePosixPath) -> bool:
        match = _EXAM_FILE.fullmatch(path.name)
        return (match is not None and int(match.group(1)) in PAPER_YEARS
                and len(path.parts) >= 3 and path.parts[-2] == PAPER_EXAM_TYPE
                and path.parts[-3] in PAPER_TEXT_LANGUAGES)

    targets: dict[Path, zipfile.ZipInfo] = {}
    for info in members_where(archive, wanted):
        language = PurePosixPath(info.filename.replace("\\", "/")).parts[-3]
        target = questions / PAPER_TEXT_LANGUAGES[language] / member_name(info)
        targets.setdefault(target, info)  # a copy in a second folder adds nothing
    if not targets:
        raise ArchiveError(
            f"{Path(str(archive.filename)).name} holds no parsed exam at "
            f"<language>/{PAPER_EXAM_TYPE}/ENEM_<year>_<area>_*.csv for language "
            f"{' or '.join(PAPER_TEXT_LANGUAGES)} and years "
            f"{PAPER_YEARS[0]}–{PAPER_YEARS[-1]}")
    return [(info, target) for target, info in sorted(targets.items())]


def _import_results(db_path: Path, files: list[Path], scoring: dict,
                    say: Say) -> list[ImportSummary]:
    """Every results file in one write session: the store gets all of them or none."""
    say(f"importing {len(files)} results file(s) into {db_path}")
    try:
        with connected(Path(db_path)) as con:
            return [import_results_summary(con, path, scoring) for path in files]
    except (ValueError, duckdb.Error) as error:
        retry = "; ".join(f"enem-llm import-results {path} --db {db_path}" for path in files)
        raise IngestAfterFetchError(
            f"the import of the paper's results stopped ({error}); the store is unchanged and "
            f"the downloads stay in {files[0].parent}: retry with `{retry}`") from None


def _import_texts(db_path: Path, questions: Path, say: Say) -> QuestionImport:
    """The parsed exams through ``import-questions --format paper-csv``."""
    retry = f"enem-llm import-questions {questions} --format paper-csv --db {db_path}"
    say(f"importing the question texts of {questions}")
    try:
        summary = import_questions(Path(db_path), questions, "paper-csv")
    except (ValueError, duckdb.Error) as error:
        raise IngestAfterFetchError(
            f"the import of the paper's texts stopped ({error}); the results are imported and "
            f"the texts stay in {questions}: retry with `{retry}`") from None
    if not summary.stored:
        first = summary.unlinked[0] if summary.unlinked else "no text was read"
        raise IngestAfterFetchError(
            f"no question text of {questions} could be linked to a stored item ({first}); "
            f"retry with `{retry}`")
    return summary
