"""The embedded demo generator: INEP formats, determinism, simulation and question texts."""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from demo import DemoFiles, generate_demo_files
from demo.items import AREAS, DAY, make_exam_bank
from demo.question_bank import build_questions
from demo.question_core import parse_num
from demo.simulate import simulate_chunk

N = 3000
AREA_FILE_ORDER = ("CN", "CH", "LC", "MT")
SCALE = {
    "CH": (112.310, 501.489),
    "CN": (113.102, 501.144),
    "LC": (108.086, 499.978),
    "MT": (129.646, 500.020),
}

ITEMS_HEADER = (
    "CO_POSICAO;SG_AREA;CO_ITEM;TX_GABARITO;CO_HABILIDADE;IN_ITEM_ABAN;TX_MOTIVO_ABAN;"
    "NU_PARAM_A;NU_PARAM_B;NU_PARAM_C;TX_COR;CO_PROVA;TP_LINGUA;IN_ITEM_ADAPTADO"
)
_SCORE_COLS = (
    [f"TP_PRESENCA_{a}" for a in AREA_FILE_ORDER]
    + [f"CO_PROVA_{a}" for a in AREA_FILE_ORDER]
    + [f"NU_NOTA_{a}" for a in AREA_FILE_ORDER]
    + [f"TX_RESPOSTAS_{a}" for a in AREA_FILE_ORDER]
    + ["TP_LINGUA"]
    + [f"TX_GABARITO_{a}" for a in AREA_FILE_ORDER]
    + ["TP_STATUS_REDACAO"]
    + [f"NU_NOTA_COMP{k}" for k in range(1, 6)]
    + ["NU_NOTA_REDACAO"]
)
MICRODADOS_HEADER = ";".join(
    [
        "NU_INSCRICAO",
        "NU_ANO",
        "TP_FAIXA_ETARIA",
        "TP_SEXO",
        "TP_ESTADO_CIVIL",
        "TP_COR_RACA",
        "TP_NACIONALIDADE",
        "TP_ST_CONCLUSAO",
        "TP_ANO_CONCLUIU",
        "TP_ESCOLA",
        "TP_ENSINO",
        "IN_TREINEIRO",
        "CO_MUNICIPIO_ESC",
        "NO_MUNICIPIO_ESC",
        "CO_UF_ESC",
        "SG_UF_ESC",
        "TP_DEPENDENCIA_ADM_ESC",
        "TP_LOCALIZACAO_ESC",
        "TP_SIT_FUNC_ESC",
        "CO_MUNICIPIO_PROVA",
        "NO_MUNICIPIO_PROVA",
        "CO_UF_PROVA",
        "SG_UF_PROVA",
    ]
    + _SCORE_COLS
    + [f"Q{k:03d}" for k in range(1, 26)]
)
RESULTADOS_HEADER = ";".join(
    [
        "NU_SEQUENCIAL",
        "NU_ANO",
        "CO_ESCOLA",
        "CO_MUNICIPIO_ESC",
        "NO_MUNICIPIO_ESC",
        "CO_UF_ESC",
        "SG_UF_ESC",
        "TP_DEPENDENCIA_ADM_ESC",
        "TP_LOCALIZACAO_ESC",
        "TP_SIT_FUNC_ESC",
        "CO_MUNICIPIO_PROVA",
        "NO_MUNICIPIO_PROVA",
        "CO_UF_PROVA",
        "SG_UF_PROVA",
    ]
    + _SCORE_COLS
)


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep=";", encoding="latin-1", dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def demo2023(tmp_path_factory: pytest.TempPathFactory) -> DemoFiles:
    return generate_demo_files(tmp_path_factory.mktemp("d2023"), 2023, N, seed=7, progress=False)


@pytest.fixture(scope="module")
def demo2019(tmp_path_factory: pytest.TempPathFactory) -> DemoFiles:
    return generate_demo_files(tmp_path_factory.mktemp("d2019"), 2019, 2000, seed=7, progress=False)


@pytest.fixture(scope="module")
def demo2024(tmp_path_factory: pytest.TempPathFactory) -> DemoFiles:
    return generate_demo_files(tmp_path_factory.mktemp("d2024"), 2024, 2000, seed=7, progress=False)


@pytest.fixture(scope="module")
def micro(demo2023: DemoFiles) -> pd.DataFrame:
    return _read(demo2023.microdata)


@pytest.fixture(scope="module")
def items(demo2023: DemoFiles) -> pd.DataFrame:
    df = _read(demo2023.items)
    df["pos"] = df.CO_POSICAO.astype(int)
    return df


def _booklet_items(items: pd.DataFrame, co_prova: str, lingua: str) -> pd.DataFrame:
    """Items of a booklet in character order, after the LC language rule."""
    rows = items[(items.CO_PROVA == co_prova) & items.TP_LINGUA.isin(["", lingua])]
    return rows.sort_values("pos")


# ----------------------------------------------------------------------------- files, bytes
def test_file_names_and_paths(demo2023: DemoFiles, demo2024: DemoFiles) -> None:
    assert demo2023.microdata.name == "MICRODADOS_ENEM_2023.csv"
    assert demo2023.items.name == "ITENS_PROVA_2023.csv"
    assert demo2023.questions.name == "questions_demo_2023.jsonl"
    assert demo2023.participants is None
    assert demo2024.microdata.name == "RESULTADOS_2024.csv"
    assert demo2024.participants is not None
    assert demo2024.participants.name == "PARTICIPANTES_2024.csv"
    assert all(p.exists() for p in (demo2024.microdata, demo2024.items, demo2024.participants))


def test_deterministic_and_seed_dependent(demo2023: DemoFiles, tmp_path: Path) -> None:
    again = generate_demo_files(tmp_path / "a", 2023, N, seed=7, progress=False)
    for name in ("microdata", "items", "questions"):
        assert getattr(again, name).read_bytes() == getattr(demo2023, name).read_bytes(), name
    other = generate_demo_files(tmp_path / "b", 2023, N, seed=8, progress=False)
    for name in ("microdata", "items", "questions"):
        assert getattr(other, name).read_bytes() != getattr(demo2023, name).read_bytes(), name


def test_output_does_not_depend_on_chunk_size(tmp_path: Path) -> None:
    small = generate_demo_files(tmp_path / "s", 2024, 21_000, seed=3, chunk_rows=1, progress=False)
    big = generate_demo_files(
        tmp_path / "b", 2024, 21_000, seed=3, chunk_rows=10**6, progress=False
    )
    assert small.microdata.read_bytes() == big.microdata.read_bytes()
    assert small.participants.read_bytes() == big.participants.read_bytes()


def test_latin1_not_utf8_and_plain_csv(demo2023: DemoFiles) -> None:
    raw = demo2023.microdata.read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    text = raw.decode("latin-1")
    assert any(name in text for name in ("São Paulo", "Belém", "Goiânia", "São Luís"))
    assert "\r" not in text and '"' not in text
    lines = text.split("\n")
    assert lines[-1] == "" and len(lines) == N + 2
    assert {line.count(";") for line in lines[:-1]} == {MICRODADOS_HEADER.count(";")}


def test_headers_exact(demo2023: DemoFiles, demo2024: DemoFiles) -> None:
    def first_line(p: Path) -> str:
        return p.read_bytes().split(b"\n", 1)[0].decode("latin-1")

    assert first_line(demo2023.items) == ITEMS_HEADER
    assert first_line(demo2023.microdata) == MICRODADOS_HEADER
    assert first_line(demo2024.microdata) == RESULTADOS_HEADER
    part = first_line(demo2024.participants).split(";")
    assert part[:2] == ["NU_INSCRICAO", "NU_ANO"]
    assert "TP_ESCOLA" in part and "Q001" in part and "NU_SEQUENCIAL" not in part


# ----------------------------------------------------------------------------- items file
def test_items_layout(items: pd.DataFrame) -> None:
    assert not items.pos.is_monotonic_increasing  # rows are shuffled
    ranges = {"LC": (1, 45), "CH": (46, 90), "CN": (91, 135), "MT": (136, 180)}
    all_booklets = items.CO_PROVA.unique()
    assert all(re.fullmatch(r"\d{4}", b) for b in all_booklets)
    for area, (lo, hi) in ranges.items():
        rows = items[items.SG_AREA == area]
        booklets = rows.CO_PROVA.unique()
        assert len(booklets) >= 2
        assert set(rows.TX_COR) <= {"AZUL", "AMARELA", "BRANCA", "CINZA", "ROSA"}
        assert rows.pos.between(lo, hi).all()
        item_sets = {b: frozenset(rows[rows.CO_PROVA == b].CO_ITEM) for b in booklets}
        assert len(set(item_sets.values())) == 1  # same items in every booklet
        orders = set()
        for b in booklets:
            for lingua in ("0", "1"):
                form = _booklet_items(items, b, lingua)
                assert len(form) == 45
                assert list(form.pos) == list(range(lo, hi + 1))
            orders.add(tuple(_booklet_items(items, b, "0").CO_ITEM))
        assert len(orders) == len(booklets)  # booklets differ in order
        if area == "LC":
            lang = rows[rows.TP_LINGUA != ""]
            assert set(lang.TP_LINGUA) == {"0", "1"}
            assert lang.pos.between(1, 5).all()
            assert rows.CO_ITEM.nunique() == 50
        else:
            assert (rows.TP_LINGUA == "").all() and rows.CO_ITEM.nunique() == 45
    assert items.groupby("CO_PROVA").SG_AREA.nunique().max() == 1  # ids distinct per area


def test_item_parameters_realistic(items: pd.DataFrame) -> None:
    unique = items.drop_duplicates("CO_ITEM")
    assert len(unique) == 185
    assert unique.CO_ITEM.str.fullmatch(r"\d{6}").all()
    aban = unique.IN_ITEM_ABAN == "1"
    assert 2 <= aban.sum() <= 3
    empty = (unique[["NU_PARAM_A", "NU_PARAM_B", "NU_PARAM_C"]] == "").all(axis=1)
    assert (aban == empty).all()
    assert (unique.loc[aban, "TX_MOTIVO_ABAN"] != "").all()
    assert (unique.loc[~aban, "TX_MOTIVO_ABAN"] == "").all()
    ok = unique[~aban]
    assert ok.NU_PARAM_A.str.fullmatch(r"-?\d+\.\d{5}").all()
    a, b, c = (ok[col].astype(float) for col in ("NU_PARAM_A", "NU_PARAM_B", "NU_PARAM_C"))
    assert 1.8 < a.mean() < 2.4 and a.min() >= 0.8 and a.max() <= 4.5
    assert 0.9 < b.mean() < 1.5 and 0.7 < b.std() < 1.3 and b.min() >= -1.5 and b.max() <= 4
    assert 0.13 < c.mean() < 0.21 and c.min() >= 0.05 and c.max() <= 0.35
    counts = unique.TX_GABARITO.value_counts()
    assert set(counts.index) == set("ABCDE") and counts.min() >= 30
    assert unique.CO_HABILIDADE.astype(int).between(1, 30).all()
    assert (unique.IN_ITEM_ADAPTADO == "0").all()


# ----------------------------------------------------------------------------- microdata
def test_presence_and_missing_fields(micro: pd.DataFrame) -> None:
    day1 = micro.TP_PRESENCA_LC
    day2 = micro.TP_PRESENCA_MT
    assert (micro.TP_PRESENCA_CH == day1).all() and (micro.TP_PRESENCA_CN == day2).all()
    assert 0.67 < (day1 == "1").mean() < 0.77
    assert 0.61 < (day2 == "1").mean() < 0.71
    assert ((day2 == "1") & (day1 == "0")).mean() < 0.02
    assert set(day1) | set(day2) <= {"0", "1", "2"}
    for area in AREAS:
        pres = micro[f"TP_PRESENCA_{area}"]
        absent, present, elim = pres == "0", pres == "1", pres == "2"
        for col in ("TX_RESPOSTAS", "NU_NOTA", "CO_PROVA", "TX_GABARITO"):
            assert (micro.loc[absent, f"{col}_{area}"] == "").all()
        for col in ("TX_RESPOSTAS", "NU_NOTA"):
            assert (micro.loc[elim, f"{col}_{area}"] == "").all()
            assert (micro.loc[present, f"{col}_{area}"] != "").all()
        assert (micro.loc[present | elim, f"CO_PROVA_{area}"] != "").all()
        assert micro.loc[present, f"NU_NOTA_{area}"].str.fullmatch(r"\d+\.\d").all()
    assert micro.NU_INSCRICAO.str.fullmatch(r"2100\d{8}").all() and micro.NU_INSCRICAO.is_unique
    assert set(micro.TP_SEXO) == {"M", "F"} and set(micro.TP_ESCOLA) == {"1", "2", "3"}
    assert micro.SG_UF_PROVA.nunique() >= 20
    assert micro.Q006.str.fullmatch(r"[A-Q]").all()


def test_response_strings(micro: pd.DataFrame, items: pd.DataFrame) -> None:
    for area in AREAS:
        present = micro[micro[f"TP_PRESENCA_{area}"] == "1"]
        resp = present[f"TX_RESPOSTAS_{area}"]
        assert (resp.str.len() == 45).all()
        chars = "".join(resp)
        assert set(chars) <= set("ABCDE.*")
        assert 0 < chars.count("*") / len(chars) < 0.01
        for (booklet, lingua), group in present.groupby([f"CO_PROVA_{area}", "TP_LINGUA"]):
            key = "".join(_booklet_items(items, booklet, lingua).TX_GABARITO)
            assert (group[f"TX_GABARITO_{area}"] == key).all()
    assert set(micro.TP_LINGUA) == {"0", "1"}
    assert 0.35 < (micro.TP_LINGUA == "0").mean() < 0.55


def test_p_values_track_difficulty(micro: pd.DataFrame, items: pd.DataFrame) -> None:
    for area in AREAS:
        present = micro[micro[f"TP_PRESENCA_{area}"] == "1"]
        for (booklet, lingua), group in present.groupby([f"CO_PROVA_{area}", "TP_LINGUA"]):
            form = _booklet_items(items, booklet, lingua)
            resp = np.array([list(s) for s in group[f"TX_RESPOSTAS_{area}"]])
            p = (resp == np.array(list(form.TX_GABARITO))).mean(axis=0)
            b = pd.to_numeric(form.NU_PARAM_B, errors="coerce").to_numpy()
            ok = ~np.isnan(b)
            assert np.corrcoef(p[ok], b[ok])[0, 1] < -0.6, (area, booklet)


def test_p_values_match_3pl_under_simulated_abilities() -> None:
    exam = make_exam_bank(2023, 11)
    chunk = simulate_chunk(exam, 11, 0, 10_000)
    for k, area in enumerate(AREAS):
        bank = exam[area]
        rows = (chunk.presence[area] == 1) & (chunk.pop.aberrant == 0) & ~chunk.pop.blank[:, k]
        rows &= chunk.pop.lingua == 1
        theta = chunk.pop.theta[rows, k]
        booklet = chunk.booklet[area][rows]
        chars = chunk.chars[area][rows]
        observed, expected = [], []
        for j in range(bank.n_booklets):
            order = bank.char_order(j, 1)
            sel = booklet == j
            keys = (ord("A") + bank.key[order]).astype(np.uint8)
            observed.append((chars[sel] == keys).mean(axis=0))
            a, b, c = bank.sim_a[order], bank.sim_b[order], bank.sim_c[order]
            prob = c + (1 - c) / (1 + np.exp(-a * (theta[sel, None] - b)))
            expected.append(prob.mean(axis=0))
        observed, expected = np.concatenate(observed), np.concatenate(expected)
        assert np.corrcoef(observed, expected)[0, 1] > 0.97, area
        assert np.abs(observed - expected).mean() < 0.03, area


def test_trap_items_attract_low_scorers(micro: pd.DataFrame, items: pd.DataFrame) -> None:
    exam = make_exam_bank(2023, 7)
    bank = exam["MT"]
    present = micro[micro.TP_PRESENCA_MT == "1"]
    low = present[present.NU_NOTA_MT.astype(float) < present.NU_NOTA_MT.astype(float).quantile(0.3)]
    for i in np.flatnonzero(bank.trap):
        item = str(bank.item_ids[i])
        picks = []
        for booklet, group in low.groupby("CO_PROVA_MT"):
            form = _booklet_items(items, booklet, "0").reset_index(drop=True)
            col = int(form.index[form.CO_ITEM == item][0])
            picks += [s[col] for s in group.TX_RESPOSTAS_MT]
        letters = pd.Series(picks).value_counts(normalize=True)
        key = "ABCDE"[bank.key[i]]
        assert letters.index[0] != key and letters.iloc[0] > 0.45


def test_lc_layouts(micro: pd.DataFrame, demo2019: DemoFiles) -> None:
    lc = micro[micro.TP_PRESENCA_LC == "1"]
    assert (lc.TX_RESPOSTAS_LC.str.len() == 45).all()
    assert (lc.TX_GABARITO_LC.str.len() == 45).all()
    everyone = _read(demo2019.microdata)
    old = everyone[everyone.TP_PRESENCA_LC == "1"]
    resp = old.TX_RESPOSTAS_LC
    assert (resp.str.len() == 50).all() and (old.TX_GABARITO_LC.str.len() == 50).all()
    english = old.TP_LINGUA == "0"
    assert (resp[english].str[5:10] == "99999").all()
    assert (resp[~english].str[0:5] == "99999").all()
    assert not resp[english].str[0:5].str.contains("9").any()
    assert not resp.str[10:].str.contains("9").any()
    day2 = everyone[everyone.TP_PRESENCA_CN == "1"]
    assert (day2.TX_RESPOSTAS_CN.str.len() == 45).all()


def test_2024_layout(demo2024: DemoFiles) -> None:
    res = _read(demo2024.microdata)
    part = _read(demo2024.participants)
    assert len(res) == len(part) == 2000
    assert "TP_ESCOLA" not in res.columns and "Q001" not in res.columns
    assert res.NU_SEQUENCIAL.tolist() == [str(k) for k in range(1, 2001)]
    assert part.NU_INSCRICAO.is_unique and not set(part.NU_INSCRICAO) & set(res.NU_SEQUENCIAL)
    assert (res[res.TP_PRESENCA_LC == "1"].TX_RESPOSTAS_LC.str.len() == 45).all()
    private = res.TP_DEPENDENCIA_ADM_ESC == "4"
    assert private.any() and (res.TP_DEPENDENCIA_ADM_ESC == "").any()


# ----------------------------------------------------------------------------- scores
def _slow_eap(pattern: list[int], params: list[tuple[float, float, float]]) -> float:
    """θ EAP, D = 1, N(0,1) prior, 40 equally spaced points on [−4, 4], one examinee."""
    num = den = 0.0
    for k in range(40):
        q = -4.0 + 8.0 * k / 39
        like = math.exp(-0.5 * q * q)
        for u, (a, b, c) in zip(pattern, params, strict=True):
            p = c + (1 - c) / (1 + math.exp(-a * (q - b)))
            like *= p if u else 1 - p
        num += like * q
        den += like
    return num / den


def test_nota_matches_independent_eap(micro: pd.DataFrame, items: pd.DataFrame) -> None:
    checked = 0
    for area in AREAS:
        present = micro[micro[f"TP_PRESENCA_{area}"] == "1"].head(6)
        for _, row in present.iterrows():
            form = _booklet_items(items, row[f"CO_PROVA_{area}"], row.TP_LINGUA)
            resp = row[f"TX_RESPOSTAS_{area}"]
            pattern, params = [], []
            for ch, (_, item) in zip(resp, form.iterrows(), strict=True):
                if item.IN_ITEM_ABAN == "1":
                    continue
                pattern.append(int(ch == item.TX_GABARITO))
                params.append(
                    (float(item.NU_PARAM_A), float(item.NU_PARAM_B), float(item.NU_PARAM_C))
                )
            k, d = SCALE[area]
            nota = (
                0.0
                if set(resp) == {"."}
                else float(np.round(k * _slow_eap(pattern, params) + d, 1))
            )
            assert f"{nota:.1f}" == row[f"NU_NOTA_{area}"], (area, row.NU_INSCRICAO)
            checked += 1
    assert checked == 24


def test_blank_tests_score_zero(micro: pd.DataFrame) -> None:
    blanks = 0
    for area in AREAS:
        present = micro[micro[f"TP_PRESENCA_{area}"] == "1"]
        blank = present[f"TX_RESPOSTAS_{area}"].str.fullmatch(r"\.+")
        assert (present.loc[blank, f"NU_NOTA_{area}"] == "0.0").all()
        assert (present.loc[~blank, f"NU_NOTA_{area}"] != "0.0").all()
        blanks += int(blank.sum())
    assert blanks > 0


def test_group_differences(micro: pd.DataFrame) -> None:
    present = micro[micro.TP_PRESENCA_MT == "1"]
    nota = present.NU_NOTA_MT.astype(float)
    by_school = nota[nota > 0].groupby(present.TP_ESCOLA).mean()
    assert by_school["3"] - by_school["2"] > 50
    assert 440 < nota[nota > 0].mean() < 560


def test_essay_columns(micro: pd.DataFrame) -> None:
    day1 = micro.TP_PRESENCA_LC == "1"
    assert (micro.loc[~day1, "TP_STATUS_REDACAO"] == "").all()
    ok = micro[day1 & (micro.TP_STATUS_REDACAO == "1")]
    comps = ok[[f"NU_NOTA_COMP{k}" for k in range(1, 6)]].astype(float)
    assert (comps.sum(axis=1) == ok.NU_NOTA_REDACAO.astype(float)).all()
    assert ((comps % 20) == 0).all().all() and comps.max().max() <= 200


# ----------------------------------------------------------------------------- questions
def test_question_file_matches_items(demo2023: DemoFiles, items: pd.DataFrame) -> None:
    lines = demo2023.questions.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 2 * 185
    keys = dict(zip(items.CO_ITEM.astype(int), items.TX_GABARITO, strict=False))
    lang_of = dict(zip(items.CO_ITEM.astype(int), items.TP_LINGUA, strict=False))
    by_item: dict[int, dict[str, dict]] = {}
    for rec in records:
        assert set(rec) == {
            "year",
            "item_id",
            "area",
            "language",
            "stem",
            "options",
            "key",
            "annulled",
            "source",
        }
        assert (
            rec["year"] == 2023 and rec["source"] == "demo-synthetic" and rec["annulled"] is False
        )
        assert rec["key"] == keys[rec["item_id"]]
        assert len(rec["options"]) == 5 and len(set(rec["options"])) == 5
        assert all(isinstance(o, str) and o.strip() for o in rec["options"]) and rec["stem"].strip()
        by_item.setdefault(rec["item_id"], {})[rec["language"]] = rec
    assert set(by_item) == set(keys)
    for item_id, pair in by_item.items():
        assert set(pair) == {"pt", "en"}
        assert pair["pt"]["key"] == pair["en"]["key"] and pair["pt"]["area"] == pair["en"]["area"]
        if lang_of[item_id] == "0":
            assert "inglês" in pair["pt"]["stem"]
        elif lang_of[item_id] == "1":
            assert "espanhol" in pair["pt"]["stem"]


_MASS = {
    "H": 1,
    "C": 12,
    "N": 14,
    "O": 16,
    "Na": 23,
    "Mg": 24,
    "S": 32,
    "Cl": 35.5,
    "K": 39,
    "Ca": 40,
}
_CAPITALS = {
    "RO": "Porto Velho",
    "AC": "Rio Branco",
    "AM": "Manaus",
    "RR": "Boa Vista",
    "PA": "Belém",
    "AP": "Macapá",
    "TO": "Palmas",
    "MA": "São Luís",
    "PI": "Teresina",
    "CE": "Fortaleza",
    "RN": "Natal",
    "PB": "João Pessoa",
    "PE": "Recife",
    "AL": "Maceió",
    "SE": "Aracaju",
    "BA": "Salvador",
    "MG": "Belo Horizonte",
    "ES": "Vitória",
    "RJ": "Rio de Janeiro",
    "SP": "São Paulo",
    "PR": "Curitiba",
    "SC": "Florianópolis",
    "RS": "Porto Alegre",
    "MS": "Campo Grande",
    "MT": "Cuiabá",
    "GO": "Goiânia",
}
_ROMAN = {14: "XIV", 15: "XV", 16: "XVI", 17: "XVII", 18: "XVIII", 19: "XIX", 20: "XX", 21: "XXI"}


def _minutes(text: str) -> float:
    h = re.search(r"(\d+) h", text)
    m = re.search(r"(\d+) min", text)
    return (int(h.group(1)) if h else 0) * 60 + (int(m.group(1)) if m else 0)


def _expected(template: str, p: dict) -> float | str | None:
    """The answer re-derived from the template parameters (None: not checked)."""
    formulas = {
        "mt_discount": lambda: p["price"] * (1 - p["pct"] / 100),
        "mt_perimeter": lambda: 2 * (p["w"] + p["h"]),
        "mt_tiles": lambda: (p["w"] * 100 / p["side"]) * (p["h"] * 100 / p["side"]),
        "mt_mean": lambda: sum(p["grades"]) / len(p["grades"]),
        "mt_interest": lambda: p["capital"] + p["capital"] * p["rate"] / 100 * p["months"],
        "mt_inverse_proportion": lambda: p["workers"] * p["days"] / p["new"],
        "mt_travel_time": lambda: p["dist"] / p["speed"] * 60,
        "mt_box_volume": lambda: math.prod(p["dims"]) / 1000,
        "mt_pythagoras": lambda: math.sqrt(p["hyp"] ** 2 - p["base"] ** 2),
        "mt_taxi": lambda: p["fixed"] + p["per_km"] * p["km"],
        "mt_percent_of": lambda: p["total"] * p["pct"] / 100,
        "cn_speed_units": lambda: p["kmh"] * 1000 / 3600,
        "cn_density": lambda: p["mass"] / p["volume"],
        "cn_newton": lambda: p["mass"] * p["acc"],
        "cn_ohm": lambda: p["voltage"] / p["resistance"],
        "cn_kinetic": lambda: 0.5 * p["mass"] * p["speed"] ** 2,
        "cn_temperature": lambda: p["celsius"] * 9 / 5 + 32,
        "cn_wave": lambda: p["freq"] * p["wavelength"],
        "cn_molar_mass": lambda: sum(
            _MASS[el] * (int(n) if n else 1)
            for el, n in re.findall(r"([A-Z][a-z]?)(\d*)", p["formula"])
        ),
        "ch_map_scale": lambda: p["cm"] * p["scale"] / 100 / 1000,
        "ch_density": lambda: p["pop"] / p["area"],
        "ch_years_between": lambda: p["y2"] - p["y1"],
        "ch_event_year": lambda: p["year"],
        "mt_probability": lambda: str(Fraction(p["red"], p["red"] + p["blue"] + p["green"])),
        "ch_time_zone": lambda: f"{(p['hour'] + 3 + p['offset']) % 24:02d}h00",
        "ch_century": lambda: "século " + _ROMAN[math.ceil(p["year"] / 100)],
        "ch_capital": lambda: _CAPITALS[p["uf"]],
    }
    return formulas[template]() if template in formulas else None


def test_computed_answers_are_correct() -> None:
    checked = 0
    for seed in range(6):
        exam = make_exam_bank(2023, seed)
        for q in build_questions(exam, seed):
            expected = _expected(q.draft.template, q.draft.params)
            answer = q.options["pt"][q.key]
            assert (
                answer == q.draft.correct["pt"] and q.options["en"][q.key] == q.draft.correct["en"]
            )
            if expected is None:
                continue
            if isinstance(expected, str):
                assert answer == expected, (q.draft.template, q.draft.params, answer)
            elif q.draft.template == "mt_travel_time":
                assert _minutes(answer) == pytest.approx(expected)
            else:
                assert parse_num(answer, "pt") == pytest.approx(expected, abs=0.006), (
                    q.draft.template,
                    q.draft.params,
                    answer,
                )
                assert parse_num(q.options["en"][q.key], "en") == parse_num(answer, "pt")
            checked += 1
    assert checked > 300


def test_questions_vary_and_use_both_languages() -> None:
    exam = make_exam_bank(2023, 5)
    questions = build_questions(exam, 5)
    assert len({q.draft.stem["pt"] for q in questions}) == len(questions)
    templates = {q.draft.template for q in questions}
    assert {"lc_english", "lc_spanish"} <= templates and len(templates) >= 25
    for q in questions:
        assert q.draft.stem["pt"] != q.draft.stem["en"]
        assert [o == q.draft.correct["pt"] for o in q.options["pt"]].count(True) == 1
    assert {q.area for q in questions} == set(AREAS) and DAY["LC"] == 1
