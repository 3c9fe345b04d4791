"""The microdata file: which layout it has and how its columns map to the ``examinees`` table.

Two layouts exist: MICRODADOS_ENEM_YYYY (2009–2023, id NU_INSCRICAO, demographics inline) and
RESULTADOS_YYYY (2024+, id NU_SEQUENCIAL, school columns but no questionnaire). Everything that
differs between them is decided here, once, from the header.
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


def examinee_select_sql(layout: MicrodataLayout) -> str:
    """SELECT list (after ``$year``) producing the ``examinees`` columns from the raw CSV."""

    def optional(expression: str, column: str, cast: str) -> str:
        return expression if layout.has(column) else f"CAST(NULL AS {cast})"

    def small_int(column: str) -> str:
        return optional(f"TRY_CAST(trim({column}) AS SMALLINT)", column, "SMALLINT")

    if layout.has("TP_ESCOLA"):
        school = small_int("TP_ESCOLA")
    elif layout.has("TP_DEPENDENCIA_ADM_ESC"):
        # RESULTADOS has the school's administration instead: 1–3 public, 4 private; mapped onto
        # TP_ESCOLA's codes (2 public, 3 private) so subgroups mean the same in every year.
        school = """CASE TRY_CAST(trim(TP_DEPENDENCIA_ADM_ESC) AS SMALLINT)
                      WHEN 4 THEN 3 WHEN 1 THEN 2 WHEN 2 THEN 2 WHEN 3 THEN 2 END"""
    else:
        school = "CAST(NULL AS SMALLINT)"
    parts = [
        f"trim({layout.id_column})",
        small_int("TP_LINGUA"),
        optional("trim(SG_UF_PROVA)", "SG_UF_PROVA", "VARCHAR"),
        school,
        optional("trim(TP_SEXO)", "TP_SEXO", "VARCHAR"),
        small_int("TP_COR_RACA"),
        small_int("TP_FAIXA_ETARIA"),
        optional("trim(Q006)", "Q006", "VARCHAR"),
    ]
    parts += [small_int(f"TP_PRESENCA_{area}") for area in AREAS]
    parts += [f"TRY_CAST(trim(CO_PROVA_{area}) AS INTEGER)" for area in AREAS]
    parts += [
        optional(f"TRY_CAST(trim(NU_NOTA_{area}) AS DOUBLE)", f"NU_NOTA_{area}", "DOUBLE")
        for area in AREAS
    ]
    parts += [f"trim(TX_RESPOSTAS_{area})" for area in AREAS]
    return ", ".join(parts)
