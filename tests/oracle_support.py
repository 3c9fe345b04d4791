"""Slow, independent re-implementations used as test oracles.

Written with plain Python loops and the csv module, sharing no code with the project, so that a
bug in the vectorised path cannot hide in both.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

ENEM_K_D = {"CH": (112.310, 501.489), "CN": (113.102, 501.144),
            "LC": (108.086, 499.978), "MT": (129.646, 500.020)}


def read_rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="latin-1", newline="") as handle:
        return list(csv.DictReader(handle, delimiter=";"))


def booklet_items(items_rows: list[dict[str, str]], booklet: str, language: str | None):
    """Items of one booklet for a candidate language, sorted by CO_POSICAO."""
    chosen = [r for r in items_rows if r["CO_PROVA"] == booklet
              and (r.get("TP_LINGUA", "") in ("", None) or r["TP_LINGUA"] == language)]
    return sorted(chosen, key=lambda r: int(r["CO_POSICAO"]))


def slow_eap(pattern: list[float | None], params: list[tuple[float, float, float] | None],
             n_points: int = 40, low: float = -4.0, high: float = 4.0) -> tuple[float, float]:
    """EAP θ and SE with an N(0,1) prior on an equally spaced grid, one point at a time."""
    numerator = denominator = second = 0.0
    for k in range(n_points):
        q = low + (high - low) * k / (n_points - 1)
        weight = math.exp(-q * q / 2)
        for u, p in zip(pattern, params, strict=True):
            if u is None or p is None:
                continue
            a, b, c = p
            prob = c + (1 - c) / (1 + math.exp(-a * (q - b)))
            weight *= prob if u == 1 else 1 - prob
        numerator += weight * q
        second += weight * q * q
        denominator += weight
    theta = numerator / denominator
    return theta, math.sqrt(second / denominator - theta * theta)


def score_candidate(row: dict[str, str], area: str, items_rows, **grid
                    ) -> tuple[float, float, float]:
    """(θ, SE, nota) of one microdata row in one area, from the raw files."""
    language = row.get("TP_LINGUA", "")
    items = booklet_items(items_rows, row[f"CO_PROVA_{area}"], language)
    answers = row[f"TX_RESPOSTAS_{area}"]
    if area == "LC" and len(answers) == 50:
        answers = (answers[5:10] if language == "1" else answers[:5]) + answers[10:]
    assert len(answers) == len(items)
    pattern, params = [], []
    for mark, item in zip(answers, items, strict=True):
        pattern.append(1.0 if mark == item["TX_GABARITO"] else 0.0)
        if item["NU_PARAM_A"] in ("", None):
            params.append(None)
        else:
            params.append((float(item["NU_PARAM_A"]), float(item["NU_PARAM_B"]),
                           float(item["NU_PARAM_C"])))
    theta, se = slow_eap(pattern, params, **grid)
    k, d = ENEM_K_D[area]
    nota = 0.0 if set(answers) == {"."} else round(k * theta + d, 1)
    return theta, se, nota
