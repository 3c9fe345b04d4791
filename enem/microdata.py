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
from enem.csvfiles import UnusableFileError, check_readable

ID_COLUMNS = ("NU_INSCRICAO", "NU_SEQUENCIAL")


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
