"""Reading INEP's CSV files with DuckDB, and telling unusable files apart early.

INEP files are ``;``-separated Latin-1 text with a header line. Reading goes through DuckDB's CSV
reader with every column as text; callers cast what they need.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

#: Bytes sniffed from the start of a file to judge its encoding.
SNIFF_BYTES = 1 << 20


class UnusableFileError(ValueError):
    """The file cannot be read at all (missing, empty, wrong encoding, missing columns)."""


def sniff_encoding_problem(path: Path, encoding: str) -> str | None:
    """Return a sentence describing why ``path`` is not ``encoding`` text, or None if it may be.

    Latin-1 accepts every byte, so the checks look for the usual impostors: UTF-16 (byte-order
    mark or NUL bytes) and UTF-8 with multi-byte characters when Latin-1 was asked for.
    """
    with open(path, "rb") as handle:
        head = handle.read(SNIFF_BYTES)
    if not head:
        return "the file is empty"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head:
        return "the file looks like UTF-16 or binary data, not Latin-1 text"
    if encoding.lower().replace("-", "") in ("latin1", "iso88591"):
        try:
            decoded = head.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if any(ord(ch) > 127 for ch in decoded):
            return (
                "the file looks UTF-8 encoded while INEP files are Latin-1; "
                "re-run with --encoding utf-8 if that is intended"
            )
    return None


def read_header(path: Path, encoding: str = "latin-1") -> list[str]:
    """Column names of a ``;``-separated file, upper-cased, BOM and quotes stripped."""
    with open(path, "rb") as handle:
        first = handle.readline()
    text = first.decode("utf-8-sig" if encoding.lower().startswith("utf") else encoding)
    return [name.strip().strip('"').upper() for name in text.rstrip("\r\n").split(";")]


def check_readable(path: Path, required: tuple[str, ...], encoding: str) -> list[str]:
    """Raise UnusableFileError unless ``path`` exists, has sane encoding and the required columns.

    Returns the header's column names.
    """
    path = Path(path)
    if not path.is_file():
        raise UnusableFileError(f"{path}: no such file")
    problem = sniff_encoding_problem(path, encoding)
    if problem:
        raise UnusableFileError(f"{path}: {problem}")
    header = read_header(path, encoding)
    missing = [name for name in required if name not in header]
    if missing:
        raise UnusableFileError(
            f"{path}: missing column(s) {', '.join(missing)}; is this the right INEP file?"
        )
    return header


def csv_source_sql(encoding: str, rejects: str | None = None) -> str:
    """The ``read_csv(...)`` call used for every INEP file; the path is bound as parameter $path.

    With ``rejects`` set, malformed lines (too few or too many fields, e.g. a truncated last line)
    are kept in DuckDB's temporary table of that name instead of stopping the read.
    """
    options = [
        "delim=';'",
        "header=true",
        "all_varchar=true",
        "quote=''",
        "escape=''",
        "auto_detect=false",
        f"encoding='{_duckdb_encoding(encoding)}'",
    ]
    if rejects:
        options += ["store_rejects=true", f"rejects_table='{rejects}'", f"rejects_scan='{rejects}_scan'"]
    return f"read_csv($path, {', '.join(options)}, columns=$columns)"


def _duckdb_encoding(encoding: str) -> str:
    normalised = encoding.lower().replace("_", "-")
    if normalised in ("latin-1", "latin1", "iso-8859-1", "iso8859-1"):
        return "latin-1"
    if normalised in ("utf-8", "utf8"):
        return "utf-8"
    raise UnusableFileError(f"unsupported encoding {encoding!r}; use latin-1 or utf-8")


def columns_struct(header: list[str]) -> dict[str, str]:
    """DuckDB ``columns=`` argument declaring every header column as VARCHAR, in file order."""
    return {name: "VARCHAR" for name in header}


def read_small_csv(path: Path, encoding: str = "latin-1"):
    """Read a small INEP file (e.g. ITENS_PROVA) completely into a pandas DataFrame of text."""
    header = read_header(path, encoding)
    con = duckdb.connect()
    try:
        sql = f"SELECT * FROM {csv_source_sql(encoding)}"
        return con.execute(sql, {"path": str(path), "columns": columns_struct(header)}).df()
    finally:
        con.close()
