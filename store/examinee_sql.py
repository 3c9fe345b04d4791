"""How a microdata layout's columns become the ``examinees`` table's columns (SQL)."""

from __future__ import annotations

from enem.areas import AREAS
from enem.microdata import YEAR_COLUMN, MicrodataLayout

#: The ``examinees`` columns after ``year``, in table order (the SELECT list names each).
EXAMINEE_COLUMNS: tuple[str, ...] = (
    ("examinee_id", "language", "state", "school_type", "sex", "race", "age_band", "income")
    + tuple(f"presence_{area.lower()}" for area in AREAS)
    + tuple(f"booklet_{area.lower()}" for area in AREAS)
    + tuple(f"nota_official_{area.lower()}" for area in AREAS)
    + tuple(f"responses_{area.lower()}" for area in AREAS)
    # Added later, so at the end of the table: TP_DEPENDENCIA_ADM_ESC, Q001, Q002, Q025.
    + ("school_admin", "father_education", "mother_education", "internet")
)


def year_filter_sql(layout: MicrodataLayout) -> str:
    """WHERE condition keeping the raw rows whose NU_ANO is one of the bound list ``$years``
    (``enem.microdata.year_values``; empty counts as agreeing). True without NU_ANO."""
    if not layout.has(YEAR_COLUMN):
        return "len($years) >= 0"  # still names the parameter, which is always bound
    return f"list_contains($years, coalesce(trim({YEAR_COLUMN}), ''))"


def booklet_id_sql(column: str) -> str:
    """SQL of a booklet id read from the text ``column``: the whole number it writes (``2342``,
    ``+2342``, ``2342.0``), NULL for anything else. A plain cast would round ``2341.6`` onto
    booklet 2342 and score the candidate against it; NULL makes the record a reject
    (``enem.microdata.booklet_reason``), as does a number beyond INTEGER (TRY_CAST gives NULL)."""
    return (f"CASE WHEN regexp_full_match(trim({column}), '[+]?[0-9]{{1,18}}([.]0*)?') "
            f"THEN TRY_CAST(trim({column}) AS INTEGER) END")


def examinee_select_sql(layout: MicrodataLayout) -> str:
    """SELECT list (after ``$year``) producing the ``examinees`` columns from the raw CSV, each
    named as its column."""

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
    parts += [booklet_id_sql(f"CO_PROVA_{area}") for area in AREAS]
    parts += [
        optional(f"TRY_CAST(trim(NU_NOTA_{area}) AS DOUBLE)", f"NU_NOTA_{area}", "DOUBLE")
        for area in AREAS
    ]
    parts += [f"trim(TX_RESPOSTAS_{area})" for area in AREAS]
    parts += [small_int("TP_DEPENDENCIA_ADM_ESC"),
              optional("trim(Q001)", "Q001", "VARCHAR"),
              optional("trim(Q002)", "Q002", "VARCHAR"),
              optional("trim(Q025)", "Q025", "VARCHAR")]
    return ", ".join(f"{part} AS {name}" for part, name in zip(parts, EXAMINEE_COLUMNS,
                                                               strict=True))
