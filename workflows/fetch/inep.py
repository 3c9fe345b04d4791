"""``fetch inep``: one year of INEP's microdata, from the ZIP on INEP's server (or a mirror) to
the store, through the same ingest ``enem-llm ingest-enem`` runs.

Files live in ``DEST/inep/YEAR/``: the ZIP while it is needed (kept with ``keep``), and the two
CSVs the ingest reads, which stay after it (``ingest-enem`` can re-read them with other
scoring settings). When both CSVs are there already, nothing is downloaded again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from enem.csvfiles import UnusableFileError
from workflows.fetch.archives import downloaded_archive, extract, find_member, member_name
from workflows.fetch.download import download
from workflows.fetch.errors import IngestAfterFetchError
from workflows.fetch.progress import ProgressFile, no_progress
from workflows.fetch.sources import (
    INEP_ZIP,
    inep_items_name,
    inep_microdata_names,
    inep_not_published,
    unfetchable_inep_year,
)
from workflows.ingest import IngestError, IngestSummary, ingest_items, ingest_year

Say = Callable[[str], None]


@dataclass(frozen=True)
class FetchedYear:
    """The CSVs a year's fetch left in its folder (``microdata`` None for an items-only
    fetch) and what the ingest did."""

    year: int
    microdata: Path | None
    items: Path
    summary: IngestSummary


def fetch_inep_year(db_path: Path, year: int, dest: Path, *, mirror: str | None = None,
                    keep: bool = False, items_only: bool = False, progress: bool = True,
                    ca_bundle: Path | None = None, say: Say = print,
                    report: ProgressFile | None = None) -> FetchedYear:
    """Download (resuming), check and extract ``year``'s ZIP into ``dest/inep/YEAR``, then
    ingest it into ``db_path`` (only its items with ``items_only``). The ZIP is removed after a
    successful extract unless ``keep``. A failed ingest keeps the CSVs and its error names the
    command that retries. ``report`` records each phase (``workflows.fetch.progress``).
    ValueError, before any request, for a year ``unfetchable_inep_year`` refuses."""
    refused = unfetchable_inep_year(year)
    if refused is not None:  # before any request: the whole archive would be of no use
        raise ValueError(refused)
    report = report if report is not None else no_progress()
    folder = Path(dest) / "inep" / str(year)
    files = _extracted(folder, year, items_only)
    if files is None:
        files = _download_and_extract(folder, year, mirror=mirror, keep=keep,
                                      items_only=items_only, progress=progress,
                                      ca_bundle=ca_bundle, say=say, report=report)
    else:
        say(f"using the files extracted before in {folder}")
    microdata, items = files
    report.phase("ingesting", file=items.name if microdata is None else microdata.name)
    return FetchedYear(year, microdata, items,
                       _ingest(db_path, year, microdata, items, progress, say))


def _extracted(folder: Path, year: int, items_only: bool) -> tuple[Path | None, Path] | None:
    """The CSVs an earlier fetch extracted (renamed into place only when complete), or None
    when one is missing."""
    items = folder / inep_items_name(year)
    if not items.is_file():
        return None
    if items_only:
        return None, items
    for name in inep_microdata_names(year):
        if (folder / name).is_file():
            return folder / name, items
    return None


def _download_and_extract(folder: Path, year: int, *, mirror: str | None, keep: bool,
                          items_only: bool, progress: bool, ca_bundle: Path | None,
                          say: Say, report: ProgressFile) -> tuple[Path | None, Path]:
    url = INEP_ZIP.url(mirror, year=year)
    archive_path = folder / INEP_ZIP.file_name(year=year)
    say(f"downloading {url} (about {INEP_ZIP.approx_size}) to {archive_path}")
    fetched = download(url, archive_path, missing=inep_not_published(year, url),
                       progress=progress, ca_bundle=ca_bundle, sha256=INEP_ZIP.sha256,
                       report=report)
    for note in fetched.notes:
        say(note)
    by_hand = (f"extract the candidates' and the items' CSVs by hand and run `enem-llm "
               f"ingest-enem --year {year} --microdata … --items …`")
    with downloaded_archive(archive_path, by_hand) as archive:
        wanted = [find_member(archive, (inep_items_name(year),))]
        if not items_only:
            wanted.insert(0, find_member(archive, inep_microdata_names(year)))
        targets = [(info, folder / member_name(info)) for info in wanted]
        paths = extract(archive, targets, progress=progress, report=report)
    say("extracted " + ", ".join(path.name for path in paths) + f" into {folder}")
    if not keep:
        archive_path.unlink()
    return (None, paths[0]) if items_only else (paths[0], paths[1])


def _ingest(db_path: Path, year: int, microdata: Path | None, items: Path, progress: bool,
            say: Say) -> IngestSummary:
    """The same ingest ``ingest-enem`` (or ``ingest-items``) runs; a refusal keeps the files
    and names the command that retries."""
    if microdata is None:
        retry = f"enem-llm ingest-items --db {db_path} --year {year} --items {items}"
    else:
        retry = (f"enem-llm ingest-enem --db {db_path} --year {year} --microdata {microdata} "
                 f"--items {items}")
    say(f"ingesting {year} into {db_path}")
    try:
        if microdata is None:
            return ingest_items(Path(db_path), year, items)
        return ingest_year(Path(db_path), year, microdata, items, source="inep",
                           progress=progress)
    except (IngestError, UnusableFileError, duckdb.Error, ValueError) as error:
        raise IngestAfterFetchError(
            f"the ingest of {year} stopped ({error}); the store is unchanged and the "
            f"extracted files stay in {items.parent}: retry with `{retry}`") from None
