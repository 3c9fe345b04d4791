"""Turn a :class:`~demo.simulate.SimulatedChunk` into the INEP columns (pyarrow arrays).

Conventions (as in the real files):
- absent (``TP_PRESENCA = 0``): ``CO_PROVA``, ``TX_RESPOSTAS``, ``TX_GABARITO``, ``NU_NOTA`` empty;
- eliminated (2): ``CO_PROVA`` and ``TX_GABARITO`` filled, ``TX_RESPOSTAS`` and ``NU_NOTA`` empty;
- present (1): everything filled; a blank test is all ``.`` with ``NU_NOTA = 0.0``;
- essay columns empty unless present on day 1; school columns empty unless a school is known.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from demo.geography import MUNI_CODE, MUNI_NAME, MUNI_UF, UF_CODE, UF_SIGLA
from demo.inep_files import (
    chars_column,
    decimal_column,
    int_column,
    lookup_column,
    questionnaire_columns,
)
from demo.items import AREAS, ExamBank
from demo.simulate import RNG_BLOCK, SimulatedChunk


def registration_numbers(year: int, start: int, n: int) -> pa.Array:
    """12-digit ``NU_INSCRICAO`` text: 2 digits (year − 2002), ``00``, then the 8-digit row number.

    2023 gives ``210000000001``, ``210000000002``, ...
    """
    prefix = f"{(year - 2002) % 100:02d}00"
    seq = pc.cast(pa.array(np.arange(start + 1, start + n + 1, dtype=np.int64)), pa.string())
    return pc.binary_join_element_wise(prefix, pc.utf8_lpad(seq, width=8, padding="0"), "")


def _person_columns(chunk: SimulatedChunk, year: int) -> dict[str, pa.Array]:
    pop, n = chunk.pop, len(chunk)
    cols: dict[str, pa.Array] = {
        "NU_INSCRICAO": registration_numbers(year, chunk.start, n),
        "NU_ANO": pa.array(np.full(n, year, dtype=np.int64)),
        "TP_FAIXA_ETARIA": int_column(pop.age_band),
        "TP_SEXO": lookup_column(["M", "F"], pop.female.astype(np.int64)),
        "TP_ESTADO_CIVIL": int_column(pop.marital),
        "TP_COR_RACA": int_column(pop.race),
        "TP_NACIONALIDADE": int_column(pop.nationality),
        "TP_ST_CONCLUSAO": int_column(pop.conclusion),
        "TP_ANO_CONCLUIU": int_column(pop.year_concluded),
        "TP_ESCOLA": int_column(pop.school),
        "TP_ENSINO": int_column(pop.teaching, pop.teaching > 0),
        "IN_TREINEIRO": int_column(pop.trainee),
    }
    q_names = questionnaire_columns(year)
    for j, name in enumerate(q_names):
        if name == "Q005":
            cols[name] = int_column(pop.household)
        else:
            cols[name] = chars_column(pop.questionnaire[:, j : j + 1])
    return cols


def _place_columns(chunk: SimulatedChunk) -> dict[str, pa.Array]:
    pop = chunk.pop
    has = pop.has_school
    school_uf = MUNI_UF[pop.school_muni]
    prova_uf = MUNI_UF[pop.muni]
    return {
        "CO_ESCOLA": int_column(pop.school_code, has),
        "CO_MUNICIPIO_ESC": lookup_column(MUNI_CODE, pop.school_muni, has),
        "NO_MUNICIPIO_ESC": lookup_column(MUNI_NAME, pop.school_muni, has),
        "CO_UF_ESC": lookup_column(UF_CODE, school_uf, has),
        "SG_UF_ESC": lookup_column(UF_SIGLA, school_uf, has),
        "TP_DEPENDENCIA_ADM_ESC": int_column(pop.dependency, has),
        "TP_LOCALIZACAO_ESC": int_column(pop.location, has),
        "TP_SIT_FUNC_ESC": int_column(np.ones(len(pop), dtype=np.int64), has),
        "CO_MUNICIPIO_PROVA": lookup_column(MUNI_CODE, pop.muni),
        "NO_MUNICIPIO_PROVA": lookup_column(MUNI_NAME, pop.muni),
        "CO_UF_PROVA": lookup_column(UF_CODE, prova_uf),
        "SG_UF_PROVA": lookup_column(UF_SIGLA, prova_uf),
    }


def _score_columns(chunk: SimulatedChunk, exam: ExamBank) -> dict[str, pa.Array]:
    pop = chunk.pop
    cols: dict[str, pa.Array] = {"TP_LINGUA": int_column(pop.lingua)}
    for area in AREAS:
        presence = chunk.presence[area]
        taken = presence > 0
        present = presence == 1
        booklet = chunk.booklet[area]
        cols[f"TP_PRESENCA_{area}"] = int_column(presence)
        cols[f"CO_PROVA_{area}"] = lookup_column(exam[area].booklet_ids, booklet, taken)
        cols[f"NU_NOTA_{area}"] = decimal_column(chunk.nota[area], 1, present)
        cols[f"TX_RESPOSTAS_{area}"] = chars_column(chunk.chars[area], present)
        keys = chunk.keys[area]
        cols[f"TX_GABARITO_{area}"] = lookup_column(keys.ravel(), booklet * 2 + pop.lingua, taken)
    essay = pop.essay_status > 0
    cols["TP_STATUS_REDACAO"] = int_column(pop.essay_status, essay)
    for k in range(5):
        cols[f"NU_NOTA_COMP{k + 1}"] = decimal_column(pop.essay_comps[:, k], 1, essay)
    cols["NU_NOTA_REDACAO"] = decimal_column(pop.essay_comps.sum(axis=1), 1, essay)
    return cols


def result_columns(chunk: SimulatedChunk, exam: ExamBank) -> dict[str, pa.Array]:
    """Every column of MICRODADOS_ENEM / RESULTADOS for this chunk (select by header)."""
    year = exam.year
    cols = _person_columns(chunk, year) if year < 2024 else {}
    cols["NU_ANO"] = pa.array(np.full(len(chunk), year, dtype=np.int64))
    cols["NU_SEQUENCIAL"] = pa.array(
        np.arange(chunk.start + 1, chunk.start + len(chunk) + 1, dtype=np.int64)
    )
    cols.update(_place_columns(chunk))
    cols.update(_score_columns(chunk, exam))
    return cols


def _block_shuffle(seed: int, year: int, start: int, n: int) -> np.ndarray:
    """(n,) permutation of the chunk rows that only mixes rows inside each random-number block."""
    parts = []
    for lo in range(start, start + n, RNG_BLOCK):
        size = min(RNG_BLOCK, start + n - lo)
        rng = np.random.default_rng(np.random.SeedSequence([seed, year, 6, lo // RNG_BLOCK]))
        parts.append(lo - start + rng.permutation(size))
    return np.concatenate(parts)


def participant_columns(chunk: SimulatedChunk, year: int, seed: int) -> dict[str, pa.Array]:
    """Every column of PARTICIPANTES (2024+) for this chunk.

    Rows are shuffled within each random-number block and numbered afterwards, so that, as in
    the real release, nothing links a PARTICIPANTES row to its RESULTADOS row.
    """
    cols = _person_columns(chunk, year)
    cols.update(_place_columns(chunk))
    perm = _block_shuffle(seed, year, chunk.start, len(chunk))
    index = pa.array(perm)
    shuffled = {name: arr.take(index) for name, arr in cols.items() if name != "NU_INSCRICAO"}
    shuffled["NU_INSCRICAO"] = cols["NU_INSCRICAO"]
    return shuffled
