"""The microdata file's layout, decided once from its header.

Two layouts exist: MICRODADOS_ENEM_YYYY (2009–2023, id NU_INSCRICAO, demographics inline) and
RESULTADOS_YYYY (2024+, id NU_SEQUENCIAL, school columns but no questionnaire). How a layout's
columns map onto the store's ``examinees`` table is the store's business
(``store.examinee_sql``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from enem.areas import AREAS
from enem.csvfiles import FieldCheck, LineScan, UnusableFileError, check_readable, scan_lines

ID_COLUMNS = ("NU_INSCRICAO", "NU_SEQUENCIAL")
YEAR_COLUMN = "NU_ANO"
#: Largest booklet id (CO_PROVA) the store holds: its booklet columns are 32-bit integers.
BOOKLET_ID_MAX = 2**31 - 1
#: Share of well-formed rows whose NU_ANO differs from --year above which the file is refused.
WRONG_YEAR_SHARE = 0.5


@dataclass(frozen=True)
class MicrodataLayout:
    """What one microdata file offers: its layout name, id column and header."""

    name: str
    id_column: str
    header: tuple[str, ...]

    def has(self, column: str) -> bool:
        return column in self.header


def area_columns(area: str) -> tuple[str, str, str]:
    """(presence, booklet, responses) column names of one area."""
    return f"TP_PRESENCA_{area}", f"CO_PROVA_{area}", f"TX_RESPOSTAS_{area}"


def detect_layout(path: Path, encoding: str) -> MicrodataLayout:
    """Read the header and decide the layout; UnusableFileError if scoring columns are missing."""
    header = check_readable(Path(path), (), encoding)
    id_column = next((name for name in ID_COLUMNS if name in header), None)
    if id_column is None:
        raise UnusableFileError(
            f"{path}: neither NU_INSCRICAO nor NU_SEQUENCIAL in the header; "
            "expected a MICRODADOS_ENEM or RESULTADOS file"
        )
    required = [column for area in AREAS for column in area_columns(area)] + ["TP_LINGUA"]
    missing = [column for column in required if column not in header]
    if missing:
        raise UnusableFileError(f"{path}: missing column(s) {', '.join(missing)}")
    name = "resultados" if id_column == "NU_SEQUENCIAL" else "microdados"
    return MicrodataLayout(name=name, id_column=id_column, header=tuple(header))


def year_values(year: int) -> tuple[str, ...]:
    """NU_ANO texts (after trimming spaces) that agree with ``year``; empty agrees too."""
    return ("", str(year), f"{year}.0")


def year_reason(year: int) -> str:
    """Reject reason of a row whose NU_ANO is another year."""
    return f"{YEAR_COLUMN} differs from --year {year}"


def duplicate_reason(layout: MicrodataLayout) -> str:
    """Reject reason of a later line repeating an examinee id."""
    return f"duplicate {layout.id_column} (an earlier line has it; the first is kept)"


def scan_microdata(path: Path, layout: MicrodataLayout, year: int, encoding: str) -> LineScan:
    """Classify every line of the microdata file; UnusableFileError if no row can be used.

    Refused: a file with a header and no rows, one whose every line is malformed, and one
    whose NU_ANO disagrees with ``year`` on more than WRONG_YEAR_SHARE of its rows.
    """
    check = (FieldCheck(layout.header.index(YEAR_COLUMN), YEAR_COLUMN, year_values(year))
             if layout.has(YEAR_COLUMN) else None)
    scan = scan_lines(Path(path), len(layout.header), encoding, check)
    problem = unusable_scan_problem(scan, year)
    if problem:
        raise UnusableFileError(f"{path}: {problem}")
    return scan


def unusable_scan_problem(scan: LineScan, year: int) -> str | None:
    """Why a scanned microdata file cannot be used at all, or None."""
    if scan.lines == 0:
        return ("the file has a header and no rows (`ingest-items` stores a year's items "
                "without candidates)")
    if scan.well_formed == 0:
        counts = "; ".join(f"{tally.count:,} × {reason}" for reason, tally in
                           sorted(scan.malformed.items(), key=lambda kv: -kv[1].count))
        first = min((tally.samples[0] for tally in scan.malformed.values() if tally.samples),
                    default=None)
        example = f"; e.g. line {first[0]}: {first[1]}" if first else ""
        return (f"no usable row: all {scan.lines:,} lines are malformed ({counts}){example}; "
                f"the header has {scan.n_fields} ';'-separated columns")
    if scan.off_value.count > WRONG_YEAR_SHARE * scan.well_formed:
        value, count = scan.off_values.most_common(1)[0]
        rest = scan.off_value.count - count
        others = f" (and other values on {rest:,})" if rest else ""
        return (f"{YEAR_COLUMN} is {value} on {count:,} of {scan.well_formed:,} rows{others}, "
                f"not --year {year}: is this the {value} file?")
    return None


def booklet_reason(area: str) -> str:
    """Reject reason of a present record whose CO_PROVA is empty or not a booklet id: a whole
    number (``2342``, or ``2342.0`` as a spreadsheet writes it) up to BOOKLET_ID_MAX. A value
    such as ``2341.6`` is never rounded onto a real booklet (``store.examinee_sql``)."""
    return (f"CO_PROVA_{area} missing or not a booklet id (a whole number up to "
            f"{BOOKLET_ID_MAX:,})")
