"""Where each public source lives and what the project takes from it.

Every URL is a ``base`` (scheme and host) and a ``path``. A mirror replaces the base of every
source and keeps the path, so one mirror folder laid out like the original hosts serves all of
them (``--mirror URL`` or the ``ENEM_LLM_MIRROR`` variable; docs/fetch.md).

What was checked against the sources themselves, and what was not, is in docs/fetch.md. None of
them publishes checksums; ``sha256`` stays empty unless someone pins a copy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

#: The environment variable holding a mirror's base URL (``--mirror`` wins over it).
MIRROR_ENV_VAR = "ENEM_LLM_MIRROR"


@dataclass(frozen=True)
class RemoteFile:
    """One downloadable file: ``base`` + ``path`` (``{year}`` filled in), an optional pinned
    SHA-256 and a rough size for the messages (never checked: the server's Content-Length is)."""

    base: str
    path: str
    sha256: str | None = None
    approx_size: str | None = None

    def url(self, mirror: str | None = None, **fields: object) -> str:
        """The file's URL, on ``mirror`` instead of the original host when one is given."""
        base = mirror.rstrip("/") if mirror else self.base
        return f"{base}/{self.path.format(**fields)}"

    def file_name(self, **fields: object) -> str:
        """The last part of the path: the name the download gets on disk."""
        return self.path.format(**fields).rsplit("/", 1)[-1]


# --- INEP's microdata --------------------------------------------------------------------------

INEP_BASE = "https://download.inep.gov.br"
INEP_ZIP = RemoteFile(INEP_BASE, "microdados/microdados_enem_{year}.zip",
                      approx_size="0.5–1.8 GB")
#: The years the dashboard offers to fetch: from the first of the layouts the ingest reads
#: (enem.microdata: 2009) to the latest year INEP had published when this was written. The
#: command line also takes a later year (it works as soon as INEP publishes it) and refuses an
#: earlier one before any request (:func:`unfetchable_inep_year`): INEP publishes those years,
#: in layouts the ingest cannot read, so their whole archive would be downloaded for nothing.
INEP_FIRST_YEAR = 2009
INEP_LATEST_YEAR = 2024
INEP_YEARS: tuple[int, ...] = tuple(range(INEP_FIRST_YEAR, INEP_LATEST_YEAR + 1))
#: From this year on INEP splits the candidates into RESULTADOS (answers, scores) and
#: PARTICIPANTES (questionnaire); the ingest reads RESULTADOS (enem.microdata).
RESULTADOS_FROM = 2024


def inep_microdata_names(year: int) -> tuple[str, ...]:
    """The names the year's candidate file may have inside the ZIP, the expected one first
    (the other is accepted too: the ingest reads both layouts)."""
    old, new = f"MICRODADOS_ENEM_{year}.csv", f"RESULTADOS_{year}.csv"
    return (new, old) if year >= RESULTADOS_FROM else (old, new)


def inep_items_name(year: int) -> str:
    """The name of the year's item file inside the ZIP."""
    return f"ITENS_PROVA_{year}.csv"


def unfetchable_inep_year(year: int) -> str | None:
    """Why ``fetch inep`` refuses ``year`` before asking any server, or None when it may be
    fetched (a year before the first the ingest reads; see :data:`INEP_FIRST_YEAR`)."""
    if year >= INEP_FIRST_YEAR:
        return None
    return (f"--year {year}: the ingest reads INEP's microdata from {INEP_FIRST_YEAR} on "
            f"(known years: {INEP_FIRST_YEAR}–{INEP_LATEST_YEAR}), so {year} is not fetched; "
            "nothing was downloaded")


def inep_not_published(year: int, url: str) -> str:
    """What a 404 for a year's ZIP means."""
    return f"INEP has not published {year} at {url}; check the year or use --mirror"


# --- the seed paper's repository (BU-UFMG-Research/irt-llms) -----------------------------------

GITHUB_BASE = "https://github.com"
#: ``raw/HEAD`` follows the default branch whatever its name, and GitHub answers it with a
#: redirect to the file's bytes (Git LFS files included).
PAPER_REPOSITORY = "BU-UFMG-Research/irt-llms/raw/HEAD"
#: The results files, by the name ``fetch paper`` gives them; "cot" only with ``--cot``.
PAPER_RESULTS: dict[str, RemoteFile] = {
    "seeds": RemoteFile(GITHUB_BASE, f"{PAPER_REPOSITORY}/"
                        "enem-experiments-results-processed-with-irt-lz.parquet",
                        approx_size="under 1 MB"),
    "shuffles": RemoteFile(GITHUB_BASE, f"{PAPER_REPOSITORY}/"
                           "enem-experiments-results-shuffle-processed-with-irt-lz.parquet",
                           approx_size="under 1 MB"),
    "cot": RemoteFile(GITHUB_BASE, f"{PAPER_REPOSITORY}/"
                      "enem-experiments-results-processed-cot-with-irt.parquet"),
}
DEFAULT_PAPER_RESULTS: tuple[str, ...] = ("seeds", "shuffles")
#: The parsed exams, in a ZIP whose password the repository's README gives.
PAPER_TEXTS = RemoteFile(GITHUB_BASE, f"{PAPER_REPOSITORY}/data.zip")
PAPER_TEXTS_PASSWORD = b"kdd24data"
#: The years the paper's results cover: their booklets must be in the store to be re-scored.
PAPER_YEARS: tuple[int, ...] = (2019, 2020, 2021, 2022)
#: Inside data.zip the paper reads ``parsed-enem-exams/<language>/<exam type>/<exam>.csv``
#: (its exam.py); the language folders, mapped to the folders ``paper-csv`` reads as the
#: prompt language.
PAPER_TEXT_LANGUAGES: dict[str, str] = {"pt-br": "pt", "en": "en"}
#: The exam type of the original option order (the others, shuffle-N, permute the options).
PAPER_EXAM_TYPE = "default"


def paper_not_published(url: str) -> str:
    """What a 404 for one of the paper's files means."""
    return (f"the paper's repository has no file at {url} (moved or renamed?); check "
            "https://github.com/BU-UFMG-Research/irt-llms or use --mirror")


# --- question texts -----------------------------------------------------------------------------

HUGGING_FACE_BASE = "https://huggingface.co"
#: maritaca-ai's ``enem`` dataset: one JSONL per exam year at the repository's root.
MARITACA = RemoteFile(HUGGING_FACE_BASE, "datasets/maritaca-ai/enem/resolve/main/{year}.jsonl",
                      approx_size="about 250 kB")
#: The text sources ``fetch texts --source`` knows, with the ``import-questions`` format each
#: file is in.
TEXT_SOURCES: dict[str, tuple[RemoteFile, str]] = {"maritaca": (MARITACA, "maritaca")}


def texts_not_published(source: str, year: int, url: str) -> str:
    """What a 404 for a year's texts means."""
    return (f"{source} has no question texts of {year} at {url}; check the year (maritaca-ai's "
            "dataset held 2022–2024 when this was written) or use --mirror")


# --- mirrors ------------------------------------------------------------------------------------

def mirror_base(flag: str | None) -> str | None:
    """The mirror in use: ``--mirror``, else $ENEM_LLM_MIRROR, else None (the original hosts).
    ValueError when it is not an http(s) URL with a host."""
    chosen = flag if flag else os.environ.get(MIRROR_ENV_VAR, "").strip() or None
    if chosen is None:
        return None
    parts = urlsplit(chosen)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query:
        where = "--mirror" if flag else f"${MIRROR_ENV_VAR}"
        raise ValueError(f"{where} must be an http(s) URL such as https://mirror.example/enem, "
                         f"got {chosen!r}")
    return chosen.rstrip("/")
