"""Humanities (CH) templates: Brazilian states, dates, continents, maps and time zones."""

from __future__ import annotations

import numpy as np

from demo import facts
from demo.geography import STATES
from demo.question_core import (
    Draft,
    fact_draft,
    num,
    numeric_draft,
    ordinal_en,
    other_rows,
    pick,
    roman,
    unit,
)

UFS = [uf for uf in facts.STATE_NAMES]
_CAPITAL = {s[0]: s[4][0][1] for s in STATES}


def ch_capital(rng: np.random.Generator, row: int) -> Draft:
    uf = UFS[row]
    name, with_prep, region = facts.STATE_NAMES[uf]
    same_region = [i for i, u in enumerate(UFS) if facts.STATE_NAMES[u][2] == region]
    others = other_rows(rng, len(UFS), row, prefer=same_region)
    options = [_CAPITAL[UFS[i]] for i in [row, *others]]
    stem = {
        "pt": f"Qual é a capital do estado {with_prep}?",
        "en": f"What is the capital of the state of {name}?",
    }
    return fact_draft("ch_capital", {"uf": uf}, stem, options, options)


def ch_region(rng: np.random.Generator, row: int) -> Draft:
    uf = UFS[row]
    name, with_prep, region = facts.STATE_NAMES[uf]
    order = [region] + [int(i) for i in rng.permutation(5) if i != region]
    stem = {
        "pt": f"Segundo a divisão regional do IBGE, o estado {with_prep} pertence a qual região?",
        "en": f"In the IBGE regional division, the state of {name} belongs to which region?",
    }
    return fact_draft(
        "ch_region",
        {"uf": uf},
        stem,
        [facts.REGIONS_PT[i] for i in order],
        [facts.REGIONS_EN[i] for i in order],
    )


def ch_event_year(rng: np.random.Generator, row: int) -> Draft:
    ev_pt, ev_en, year = facts.EVENTS[row]
    offsets = [
        int(o) for o in rng.permutation([-100, -50, -22, -11, -10, -2, -1, 1, 2, 10, 11, 22, 50])
    ]
    stem = {"pt": f"Em que ano ocorreu {ev_pt}?", "en": f"In which year did {ev_en} take place?"}
    return numeric_draft(
        "ch_event_year",
        {"year": year},
        stem,
        year,
        [year + o for o in offsets],
        lambda x, lang: str(int(x)),
    )


def _century(c: float, lang: str) -> str:
    return f"século {roman(int(c))}" if lang == "pt" else f"{ordinal_en(int(c))} century"


CENTURY_ROWS = [i for i, e in enumerate(facts.EVENTS) if e[2] % 100]
"""Events usable for the century question (a year like 1500 is a classic ambiguity; skipped)."""


def ch_century(rng: np.random.Generator, row: int) -> Draft:
    ev_pt, ev_en, year = facts.EVENTS[CENTURY_ROWS[row]]
    century = (year - 1) // 100 + 1
    stem = {
        "pt": f"Em que século ocorreu {ev_pt} ({year})?",
        "en": f"In which century did {ev_en} ({year}) take place?",
    }
    wrong = [century + 1, century - 1, century + 2, century - 2, century + 3]
    return numeric_draft("ch_century", {"year": year}, stem, century, wrong, _century)


def ch_years_between(rng: np.random.Generator, _: int = 0) -> Draft:
    i, j = sorted(int(v) for v in rng.choice(len(facts.EVENTS), size=2, replace=False))
    (e1_pt, e1_en, y1), (e2_pt, e2_en, y2) = facts.EVENTS[i], facts.EVENTS[j]
    if y1 == y2:
        return ch_years_between(rng)
    stem = {
        "pt": f"Sabendo que {e1_pt} ocorreu em {y1} e {e2_pt} em {y2}, quantos anos separam os "
              "dois fatos?",
        "en": f"Given that {e1_en} took place in {y1} and {e2_en} in {y2}, how many years separate "
              "the two events?",
    }
    d = y2 - y1
    return numeric_draft(
        "ch_years_between",
        {"y1": y1, "y2": y2},
        stem,
        d,
        [d + 1, d - 1, d + 10, d - 10, y1 + y2 - 2000, d + 100],
        lambda x, lang: f"{int(x)} {'anos' if lang == 'pt' else 'years'}",
    )


def ch_continent(rng: np.random.Generator, row: int) -> Draft:
    pt, en, cont = facts.COUNTRIES[row]
    order = [cont] + [int(i) for i in rng.permutation(5) if i != cont]
    stem = {
        "pt": f"Em qual continente fica a maior parte do território deste país: {pt}?",
        "en": f"On which continent is most of the territory of this country: {en}?",
    }
    return fact_draft(
        "ch_continent",
        {"country": en},
        stem,
        [facts.CONTINENTS_PT[i] for i in order],
        [facts.CONTINENTS_EN[i] for i in order],
    )


def ch_map_scale(rng: np.random.Generator, _: int = 0) -> Draft:
    scale = int(pick(rng, (50_000, 100_000, 250_000, 500_000, 1_000_000, 2_000_000)))
    cm = int(rng.integers(2, 16))
    stem = {
        "pt": f"Em um mapa na escala 1:{num(scale, 'pt')}, duas cidades estão a {cm} cm uma da "
              "outra. Qual é a distância real entre elas?",
        "en": f"On a map at a scale of 1:{num(scale, 'en')}, two towns are {cm} cm apart. "
        "What is the real distance between them?",
    }
    km = cm * scale / 100_000
    return numeric_draft(
        "ch_map_scale",
        {"scale": scale, "cm": cm},
        stem,
        km,
        [km * 10, km / 10, km * 100, cm + scale / 100_000],
        unit("km", decimals=2),
    )


def ch_density(rng: np.random.Generator, _: int = 0) -> Draft:
    area = int(pick(rng, (50, 80, 100, 120, 200, 250, 400, 500)))
    dens = int(pick(rng, (12, 25, 40, 75, 120, 300, 850)))
    pop = area * dens
    stem = {
        "pt": f"Um município tem {num(pop, 'pt')} habitantes e área de {area} km². "
        "Qual é a sua densidade demográfica?",
        "en": f"A municipality has {num(pop, 'en')} inhabitants and an area of {area} km². "
        "What is its population density?",
    }
    return numeric_draft(
        "ch_density",
        {"pop": pop, "area": area},
        stem,
        dens,
        [dens * 10, dens / 10, dens * 100, dens / 2],
        unit("hab./km²", "inhabitants/km²"),
    )


def ch_time_zone(rng: np.random.Generator, _: int = 0) -> Draft:
    city_pt, city_en, offset = pick(rng, facts.TIME_ZONES)
    hour = int(rng.integers(0, 24))
    sign = "+" if offset >= 0 else "−"
    stem = {
        "pt": "Considere os fusos horários padrão, sem horário de verão: Brasília em UTC−3 e "
              f"{city_pt} em UTC{sign}{abs(offset)}. Quando são {hour:02d}h00 em Brasília, que "
              f"horas são em {city_pt}?",
        "en": "Consider standard time zones, without daylight saving: Brasília at UTC−3 and "
              f"{city_en} at UTC{sign}{abs(offset)}. When it is {hour:02d}:00 in Brasília, what "
              f"time is it in {city_en}?",
    }
    target = (hour + offset + 3) % 24
    wrong = [
        (hour - offset - 3) % 24,
        (hour + offset) % 24,
        (hour + offset + 2) % 24,
        (hour + offset + 4) % 24,
        (hour + offset + 6) % 24,
        (hour + offset + 12) % 24,
    ]

    def clock(x: float, lang: str) -> str:
        return f"{int(x) % 24:02d}h00" if lang == "pt" else f"{int(x) % 24:02d}:00"

    return numeric_draft(
        "ch_time_zone", {"hour": hour, "offset": offset}, stem, target, wrong, clock, positive=False
    )
