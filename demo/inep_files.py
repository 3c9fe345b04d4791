"""Writing the INEP file formats: ``;``-separated, Latin-1, dot decimals, empty = missing.

The header line is written as is; data rows are produced by pyarrow's CSV writer (no quoting,
``\\n`` line ends) and transcoded to Latin-1 chunk by chunk.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from demo.items import AREAS, ExamBank
from enem.areas import OPTION_LETTERS

ENCODING = "latin-1"
_AREA_FILE_ORDER: tuple[str, ...] = ("CN", "CH", "LC", "MT")
"""Area order of the per-area column groups in the microdata files."""

ITEMS_COLUMNS: tuple[str, ...] = (
    "CO_POSICAO",
    "SG_AREA",
    "CO_ITEM",
    "TX_GABARITO",
    "CO_HABILIDADE",
    "IN_ITEM_ABAN",
    "TX_MOTIVO_ABAN",
    "NU_PARAM_A",
    "NU_PARAM_B",
    "NU_PARAM_C",
    "TX_COR",
    "CO_PROVA",
    "TP_LINGUA",
    "IN_ITEM_ADAPTADO",
)

_PERSON = (
    "TP_FAIXA_ETARIA",
    "TP_SEXO",
    "TP_ESTADO_CIVIL",
    "TP_COR_RACA",
    "TP_NACIONALIDADE",
    "TP_ST_CONCLUSAO",
    "TP_ANO_CONCLUIU",
)
_SCHOOL = (
    "CO_MUNICIPIO_ESC",
    "NO_MUNICIPIO_ESC",
    "CO_UF_ESC",
    "SG_UF_ESC",
    "TP_DEPENDENCIA_ADM_ESC",
    "TP_LOCALIZACAO_ESC",
    "TP_SIT_FUNC_ESC",
)
_PROVA_PLACE = ("CO_MUNICIPIO_PROVA", "NO_MUNICIPIO_PROVA", "CO_UF_PROVA", "SG_UF_PROVA")
_SCORES = (
    tuple(f"TP_PRESENCA_{a}" for a in _AREA_FILE_ORDER)
    + tuple(f"CO_PROVA_{a}" for a in _AREA_FILE_ORDER)
    + tuple(f"NU_NOTA_{a}" for a in _AREA_FILE_ORDER)
    + tuple(f"TX_RESPOSTAS_{a}" for a in _AREA_FILE_ORDER)
    + ("TP_LINGUA",)
    + tuple(f"TX_GABARITO_{a}" for a in _AREA_FILE_ORDER)
    + ("TP_STATUS_REDACAO",)
    + tuple(f"NU_NOTA_COMP{k}" for k in range(1, 6))
    + ("NU_NOTA_REDACAO",)
)


def questionnaire_columns(year: int) -> tuple[str, ...]:
    """Q001..Q025 up to 2023, Q001..Q023 from 2024."""
    return tuple(f"Q{k:03d}" for k in range(1, (24 if year >= 2024 else 26)))


def microdados_columns(year: int) -> tuple[str, ...]:
    """Header of ``MICRODADOS_ENEM_YYYY.csv`` (2019–2023 layout, 76 columns)."""
    return (
        ("NU_INSCRICAO", "NU_ANO")
        + _PERSON
        + ("TP_ESCOLA", "TP_ENSINO", "IN_TREINEIRO")
        + _SCHOOL
        + _PROVA_PLACE
        + _SCORES
        + questionnaire_columns(year)
    )


def resultados_columns() -> tuple[str, ...]:
    """Header of ``RESULTADOS_YYYY.csv`` (2024+)."""
    return ("NU_SEQUENCIAL", "NU_ANO", "CO_ESCOLA") + _SCHOOL + _PROVA_PLACE + _SCORES


def participantes_columns(year: int) -> tuple[str, ...]:
    """Header of ``PARTICIPANTES_YYYY.csv`` (2024+; no key shared with RESULTADOS)."""
    return (
        ("NU_INSCRICAO", "NU_ANO")
        + _PERSON
        + ("TP_ESCOLA", "TP_ENSINO", "IN_TREINEIRO")
        + _PROVA_PLACE
        + questionnaire_columns(year)
    )


# ----------------------------------------------------------------------------- column helpers
def int_column(values: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """Integers (n,) as an int64 column; rows where ``valid`` is False are empty."""
    return pa.array(np.asarray(values, dtype=np.int64), mask=None if valid is None else ~valid)


def decimal_column(values: np.ndarray, decimals: int, valid: np.ndarray | None = None) -> pa.Array:
    """Numbers (n,) printed with a fixed number of decimals ("612.3"); invalid rows empty."""
    v = np.nan_to_num(np.asarray(values, dtype=np.float64))
    scale = 10**decimals
    scaled = np.rint(np.abs(v) * scale).astype(np.int64)
    whole = pc.cast(pa.array(scaled // scale), pa.string())
    frac = pc.utf8_lpad(pc.cast(pa.array(scaled % scale), pa.string()), width=decimals, padding="0")
    text = pc.binary_join_element_wise(whole, frac, ".")
    negative = pa.array(v < 0)
    if pc.any(negative).as_py():
        text = pc.if_else(negative, pc.binary_join_element_wise("", text, "-"), text)
    return _mask(text, valid)


def chars_column(chars: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """ASCII codes (n, L) uint8 as strings of length L; invalid rows empty."""
    chars = np.ascontiguousarray(chars, dtype=np.uint8)
    n, width = chars.shape
    fixed = pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), n, [None, pa.py_buffer(chars)])
    return _mask(fixed.cast(pa.binary()).cast(pa.string()), valid)


def lookup_column(
    table: np.ndarray | list, index: np.ndarray, valid: np.ndarray | None = None
) -> pa.Array:
    """``table[index]`` for a small lookup table (strings or ints); invalid rows empty."""
    idx = pa.array(np.asarray(index, dtype=np.int64), mask=None if valid is None else ~valid)
    return pa.array(list(table)).take(idx)


def _mask(arr: pa.Array, valid: np.ndarray | None) -> pa.Array:
    if valid is None or bool(np.all(valid)):
        return arr
    return pc.if_else(pa.array(valid), arr, pa.scalar(None, arr.type))


# ----------------------------------------------------------------------------- writers
class CsvWriter:
    """Append pyarrow tables to an open binary file in INEP format (Latin-1, ``;``, no quoting).

    The header line is written on construction.
    """

    def __init__(self, fh: BinaryIO, columns: tuple[str, ...]) -> None:
        self.columns = columns
        self._fh = fh
        self._fh.write((";".join(columns) + "\n").encode(ENCODING))
        self._options = pacsv.WriteOptions(
            include_header=False, delimiter=";", quoting_style="none"
        )

    def write(self, columns: dict[str, pa.Array]) -> None:
        """Write the rows given as ``{column name: array}`` (all header columns required)."""
        table = pa.table({name: columns[name] for name in self.columns})
        buf = io.BytesIO()
        pacsv.write_csv(table, buf, self._options)
        self._fh.write(buf.getvalue().decode("utf-8").encode(ENCODING))


def _fmt_param(x: float) -> str:
    return "" if np.isnan(x) else f"{x:.5f}"


def write_items_file(path: Path, exam: ExamBank, rng: np.random.Generator) -> None:
    """``ITENS_PROVA_YYYY.csv``: one row per (booklet, item), rows in shuffled order."""
    rows: list[str] = []
    for area in AREAS:
        bank = exam[area]
        for j, (co_prova, colour) in enumerate(zip(bank.booklet_ids, bank.colours, strict=True)):
            for i in range(len(bank.item_ids)):
                lang = int(bank.language[i])
                rows.append(
                    ";".join(
                        (
                            str(int(bank.positions[j, i])),
                            area,
                            str(int(bank.item_ids[i])),
                            OPTION_LETTERS[int(bank.key[i])],
                            str(int(bank.skill[i])),
                            "1" if bank.abandoned[i] else "0",
                            bank.reason[i],
                            _fmt_param(bank.a[i]),
                            _fmt_param(bank.b[i]),
                            _fmt_param(bank.c[i]),
                            colour,
                            str(int(co_prova)),
                            "" if lang < 0 else str(lang),
                            "0",
                        )
                    )
                )
    order = rng.permutation(len(rows))
    text = ";".join(ITEMS_COLUMNS) + "\n" + "".join(rows[k] + "\n" for k in order)
    Path(path).write_bytes(text.encode(ENCODING))
