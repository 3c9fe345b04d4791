"""Reading INEP's CSV files with DuckDB, and telling unusable files apart early.

INEP files are ``;``-separated Latin-1 text with a header line. Reading goes through DuckDB's CSV
reader with every column as text; callers cast what they need.

A large file is first scanned line by line (:func:`scan_lines`, numpy over fixed-size blocks, so
memory does not grow with the file or with its number of bad lines): it counts the lines the
reader will skip, by reason, keeps the first few of each reason as a sample, and notes a missing
final line end. The reader then skips those same lines itself (``ignore_errors``): DuckDB's own
rejects table keeps one row per missing column with the whole line, which took 11.6 GB for a
45 MB file of short lines (``bench/rejects.py``).
"""

from __future__ import annotations

import os
import time
from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
from numpy.typing import ArrayLike

#: Bytes sniffed from the start of a file to judge its encoding.
SNIFF_BYTES = 1 << 20
#: Longest line, in bytes without its line end, that the reader accepts (DuckDB's
#: ``max_line_size``, stated explicitly so the line scan and the reader agree); longer lines are
#: rejected. A microdata line is about 500 bytes.
MAX_LINE_BYTES = 2_000_000
#: Rejected lines of one reason kept, with their line numbers, as a sample; all are counted.
REJECT_SAMPLES = 100
#: A header line longer than this is not a CSV header.
MAX_HEADER_BYTES = 1 << 20
#: Block size of the line scan.
SCAN_BLOCK_BYTES = 1 << 24
UTF8_BOM = b"\xef\xbb\xbf"
#: Reasons of the lines the reader skips.
MISSING_COLUMNS = "malformed line (missing columns)"
TOO_MANY_COLUMNS = "malformed line (too many columns)"
OVERLONG_LINE = f"malformed line (longer than {MAX_LINE_BYTES:,} bytes)"
#: Characters of a line quoted in a reject's detail.
DETAIL_CHARS = 160
# Bytes that make a line blank when it holds nothing else (DuckDB skips such lines).
_SPACE_BYTES = b" \t\r\x0b\x0c"
_NEWLINE, _SEMICOLON, _CR = 10, 59, 13


class UnusableFileError(ValueError):
    """The file cannot be read at all (missing, empty, wrong encoding, missing columns)."""


def sniff_encoding_problem(path: Path, encoding: str) -> str | None:
    """Return a sentence describing why ``path`` is not ``encoding`` text, or None if it may be.

    Latin-1 accepts every byte, so the checks look for the usual impostors: UTF-16 (byte-order
    mark or NUL bytes) and UTF-8 with multi-byte characters when Latin-1 was asked for. A UTF-8
    byte-order mark before otherwise ASCII text is tolerated: it is skipped when reading.
    """
    with open(path, "rb") as handle:
        head = handle.read(SNIFF_BYTES)
    if not head:
        return "the file is empty"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head:
        return "the file looks like UTF-16 or binary data, not Latin-1 text"
    bom = head.startswith(UTF8_BOM)
    if encoding.lower().replace("-", "") in ("latin1", "iso88591"):
        try:
            decoded = head.removeprefix(UTF8_BOM).decode("utf-8")
        except UnicodeDecodeError:
            return None
        if any(ord(ch) > 127 for ch in decoded):
            return (
                "the file looks UTF-8 encoded"
                + (" (it starts with a UTF-8 byte-order mark)" if bom else "")
                + " while INEP files are Latin-1; re-run with --encoding utf-8 if that is intended"
            )
    return None


def read_header(path: Path, encoding: str = "latin-1") -> list[str]:
    """Column names of a ``;``-separated file, upper-cased, BOM and quotes stripped.

    Raises UnusableFileError when the first line is too long to be a header.
    """
    with open(path, "rb") as handle:
        first = handle.readline(MAX_HEADER_BYTES + 1)
    if len(first) > MAX_HEADER_BYTES:
        raise UnusableFileError(
            f"{path}: the first line is longer than {MAX_HEADER_BYTES:,} bytes; not a CSV header")
    text = first.removeprefix(UTF8_BOM).decode(
        "utf-8" if encoding.lower().startswith("utf") else encoding)
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


@dataclass
class LineTally:
    """Lines of one reason: how many, and the first REJECT_SAMPLES as (line number, detail)."""

    count: int = 0
    samples: list[tuple[int, str]] = field(default_factory=list)

    def merge(self, other: LineTally, offset: int) -> None:
        """Add ``other`` (numbered from ``offset`` + 1), which comes after these lines."""
        self.count += other.count
        room = REJECT_SAMPLES - len(self.samples)
        self.samples.extend((offset + line, text) for line, text in other.samples[:room])


@dataclass(frozen=True)
class FieldCheck:
    """A column whose value must be one of ``accepted`` (compared after stripping spaces)."""

    index: int
    name: str
    accepted: tuple[str, ...]


@dataclass
class LineScan:
    """What :func:`scan_lines` found: the fate of every line after the header.

    ``lines`` counts the data lines (blank lines, which the reader skips silently, are left
    out); ``malformed`` maps the reason of each kind of line the reader skips to its tally;
    ``off_value`` tallies the well-formed lines whose checked field holds another value, and
    ``off_values`` counts those values. ``unread_lines`` holds the numbers of the lines the
    reader skips (blank or malformed), sorted; the header is line 1. ``cpu_seconds``: CPU time
    the scan's threads took.
    """

    n_fields: int
    lines: int = 0
    blank: int = 0
    malformed: dict[str, LineTally] = field(default_factory=dict)
    off_value: LineTally = field(default_factory=LineTally)
    off_values: Counter = field(default_factory=Counter)
    ends_with_newline: bool = True
    last_line: int = 1
    last_line_fields: int = 0
    unread_lines: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    cpu_seconds: float = 0.0

    @property
    def malformed_count(self) -> int:
        return sum(tally.count for tally in self.malformed.values())

    @property
    def well_formed(self) -> int:
        """Lines the reader returns as rows."""
        return self.lines - self.malformed_count

    def row_lines(self, ordinals: ArrayLike) -> np.ndarray:
        """File line numbers of the reader's rows number ``ordinals`` (1-based, file order).

        The r-th row is line r + 1 (the header) + the unread lines before it; an unread line
        at ``unread_lines[i]`` has ``unread_lines[i] - 2 - i`` rows before it.
        """
        rows = np.asarray(ordinals, dtype=np.int64)
        rows_before = self.unread_lines - 2 - np.arange(self.unread_lines.size)
        return rows + 1 + np.searchsorted(rows_before, rows, side="left")


@dataclass
class _Block:
    """The scan of one block of complete lines, numbered from 1 within the block."""

    lines: int
    blank: int
    last_fields: int
    malformed: dict[str, LineTally]
    unread: np.ndarray
    off_value: LineTally = field(default_factory=LineTally)
    off_values: Counter = field(default_factory=Counter)
    cpu_seconds: float = 0.0


def scan_lines(path: Path, n_fields: int, encoding: str = "latin-1",
               check: FieldCheck | None = None, block_bytes: int = SCAN_BLOCK_BYTES,
               workers: int | None = None) -> LineScan:
    """Classify every line after the header as DuckDB's reader (``csv_source_sql``) will.

    A line is blank (only spaces; skipped), over-long (MAX_LINE_BYTES or more without its line
    end), short (fewer ``;``-separated fields than ``n_fields``), long (more, unless the extra
    ones are a tail of empty fields, which the reader accepts), or well-formed. With ``check``,
    well-formed lines whose field ``check.index`` holds a value outside ``check.accepted`` are
    tallied too.

    Bytes that are not UTF-8 (with ``encoding`` utf-8) are not judged here: DuckDB skips such a
    line only when the bad bytes fall in a column the query reads, so the caller counts those
    lines as the difference between the well-formed lines and the rows it got.

    Blocks of ``block_bytes`` are classified by ``workers`` threads (numpy releases the GIL) and
    merged in file order. Memory is bounded by a few blocks in flight plus 8 bytes per unread
    line, whatever the file holds.

    DuckDB's own limit is fuzzy by a byte or two around MAX_LINE_BYTES (it depends on where the
    line falls in its buffers), so a line within two bytes of it may be judged differently.
    """
    codec = _duckdb_encoding(encoding)
    workers = workers or max(1, min(4, os.cpu_count() or 1))
    scan = LineScan(n_fields=n_fields)
    unread: list[np.ndarray] = []
    line = 1

    def merge(block: _Block) -> None:
        nonlocal line
        for reason, tally in block.malformed.items():
            scan.malformed.setdefault(reason, LineTally()).merge(tally, line)
        scan.off_value.merge(block.off_value, line)
        scan.off_values.update(block.off_values)
        unread.append(block.unread + line)
        scan.blank += block.blank
        scan.lines += block.lines - block.blank
        scan.last_line_fields = block.last_fields
        scan.cpu_seconds += block.cpu_seconds
        line += block.lines

    def classify(data: bytes) -> _Block:
        started = time.thread_time()
        block = _scan_block(data, n_fields, codec, check)
        block.cpu_seconds = time.thread_time() - started
        return block

    with open(path, "rb") as handle, ThreadPoolExecutor(max_workers=workers) as pool:
        handle.readline(MAX_HEADER_BYTES + 1)
        pending: deque = deque()
        carry, skipping = b"", False
        while block := handle.read(block_bytes):
            if skipping:  # the rest of an over-long line, already counted
                end = block.find(b"\n")
                if end < 0:
                    continue
                block, skipping = block[end + 1:], False
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            if cut:
                pending.append(pool.submit(classify, data[:cut] if carry else data))
            if len(carry) > MAX_LINE_BYTES:  # no line end yet and already too long
                pending.append(pool.submit(_overlong_block, carry, codec))
                carry, skipping = b"", True
            while len(pending) > workers or (pending and pending[0].done()):
                merge(pending.popleft().result())
        if carry:
            pending.append(pool.submit(classify, carry + b"\n"))
        while pending:
            merge(pending.popleft().result())
    scan.ends_with_newline = not (carry or skipping)
    scan.last_line = line
    scan.unread_lines = np.concatenate(unread) if unread else np.zeros(0, np.int64)
    return scan


def _overlong_block(start: bytes, codec: str) -> _Block:
    """The block of one line that has no line end within MAX_LINE_BYTES (``start`` begins it)."""
    tally = LineTally(1, [(1, f"over {MAX_LINE_BYTES:,} bytes: {_quote(start, codec)}")])
    return _Block(lines=1, blank=0, last_fields=0, malformed={OVERLONG_LINE: tally},
                  unread=np.array([1], dtype=np.int64))


def _quote(raw: bytes, codec: str) -> str:
    text = raw[:DETAIL_CHARS * 4].decode(codec, errors="replace").rstrip("\r\n")
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS] + "…"


# Lookup table: True for the bytes that make a line not blank.
_SOLID = np.ones(256, dtype=bool)
_SOLID[list(_SPACE_BYTES) + [_NEWLINE]] = False
_CHECK_WIDTH = 16


def _scan_block(data: bytes, n_fields: int, codec: str, check: FieldCheck | None) -> _Block:
    """Classify the complete lines of ``data`` (it ends with a line end), numbered from 1."""
    arr = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(arr == _NEWLINE)
    n = int(ends.size)
    starts = np.empty(n, dtype=np.int64)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    stops = ends - ((ends > starts) & (arr[ends - 1] == _CR))  # content ends before "\r\n"
    lengths = stops - starts
    semis = np.flatnonzero(arr == _SEMICOLON)
    first = np.searchsorted(semis, starts)
    n_semis = np.searchsorted(semis, ends) - first
    fields = n_semis + 1
    numbers = 1 + np.arange(n, dtype=np.int64)

    blank = np.zeros(n, dtype=bool)
    if (n_semis == 0).any():
        blank = (n_semis == 0) & ~np.logical_or.reduceat(_SOLID[arr], starts)
    overlong = ~blank & (lengths >= MAX_LINE_BYTES)
    short = ~blank & ~overlong & (fields < n_fields)
    extra = ~blank & ~overlong & (fields > n_fields)
    for i in np.flatnonzero(extra):
        # The reader takes a tail of empty fields ("…;x;;") as no fields at all.
        tail = int(semis[first[i] + n_fields - 1])
        extra[i] = data[tail:int(stops[i])].strip(b";") != b""

    def quoted(i: int) -> str:
        return _quote(data[starts[i]:min(int(stops[i]), int(starts[i]) + DETAIL_CHARS * 4)],
                      codec)

    def detail(reason: str, i: int) -> str:
        if reason == OVERLONG_LINE:
            return f"{int(lengths[i]):,} bytes: {quoted(i)}"
        return f"{int(fields[i])} of {n_fields} fields: {quoted(i)}"

    malformed = {}
    for reason, mask in ((OVERLONG_LINE, overlong), (MISSING_COLUMNS, short),
                         (TOO_MANY_COLUMNS, extra)):
        chosen = np.flatnonzero(mask)
        if chosen.size:
            malformed[reason] = LineTally(int(chosen.size), [
                (int(numbers[i]), detail(reason, i)) for i in chosen[:REJECT_SAMPLES]])
    skipped = blank | overlong | short | extra
    block = _Block(lines=n, blank=int(blank.sum()), last_fields=int(fields[-1]),
                   malformed=malformed, unread=numbers[skipped])
    if check is not None:
        rows = np.flatnonzero(~skipped)
        off, texts = _off_values(check, arr, rows, starts, stops, semis, first, n_semis, codec)
        if off.size:
            block.off_values.update(texts)
            block.off_value = LineTally(int(off.size), [
                (int(numbers[rows[j]]), f"{check.name} {text!r}: {quoted(rows[j])}")
                for j, text in zip(off[:REJECT_SAMPLES].tolist(), texts[:REJECT_SAMPLES],
                                   strict=True)])
    return block


def _off_values(check: FieldCheck, arr: np.ndarray, rows: np.ndarray, starts, stops, semis,
                first, n_semis, codec: str) -> tuple[np.ndarray, list[str]]:
    """Indices into ``rows`` of the lines whose field ``check.index`` is not accepted, and
    their values (stripped; cut at 16 bytes)."""
    nothing: tuple[np.ndarray, list[str]] = (np.zeros(0, dtype=np.int64), [])
    if not rows.size:
        return nothing
    k = check.index
    begin = starts[rows] if k == 0 else semis[first[rows] + k - 1] + 1
    if semis.size:
        follows = semis[np.minimum(first[rows] + k, semis.size - 1)]
        end = np.where(n_semis[rows] > k, follows, stops[rows])
    else:
        end = stops[rows]
    width = end - begin
    columns = np.arange(_CHECK_WIDTH)
    gathered = np.where(columns < width[:, None],
                        arr[np.minimum(begin[:, None] + columns, arr.size - 1)], 0)
    values = np.ascontiguousarray(gathered, dtype=np.uint8).view(f"S{_CHECK_WIDTH}")[:, 0]
    accepted = {value.encode(codec) for value in check.accepted}
    known = np.isin(values, np.array(sorted(accepted), dtype=f"S{_CHECK_WIDTH}"))
    maybe = np.flatnonzero(~known | (width > _CHECK_WIDTH))
    if not maybe.size:
        return nothing
    distinct, inverse = np.unique(values[maybe], return_inverse=True)
    fine = np.array([value.strip(b" ") in accepted for value in distinct.tolist()])
    off = maybe[~fine[inverse] | (width[maybe] > _CHECK_WIDTH)]
    texts = [value.decode(codec, errors="replace").strip() + ("…" if wide else "")
             for value, wide in zip(values[off].tolist(), (width[off] > _CHECK_WIDTH).tolist(),
                                    strict=True)]
    return off, texts


def csv_source_sql(encoding: str, skip_malformed: bool = False) -> str:
    """The ``read_csv(...)`` call used for every INEP file; the path is bound as parameter $path.

    With ``skip_malformed``, lines the reader cannot use (too few or too many fields, longer than
    MAX_LINE_BYTES, bad UTF-8 in a column read) are skipped instead of stopping the read, and
    nothing is kept of them: :func:`scan_lines` counts them, with their reasons and line numbers.
    """
    options = [
        "delim=';'",
        "header=true",
        "all_varchar=true",
        "quote=''",
        "escape=''",
        "auto_detect=false",
        f"max_line_size={MAX_LINE_BYTES}",
        f"encoding='{_duckdb_encoding(encoding)}'",
    ]
    if skip_malformed:
        options.append("ignore_errors=true")
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
    except duckdb.Error as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UnusableFileError(f"{path}: cannot be read as a ';'-separated file: {first}") \
            from error
    finally:
        con.close()
