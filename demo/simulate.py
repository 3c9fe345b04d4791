"""One chunk of synthetic examinees: population, answer sheets and official scores.

Random draws are made per fixed block of :data:`RNG_BLOCK` examinees, each block with its own
seed, so the output does not depend on the chunk size used for streaming.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from demo.items import AREAS, DAY, ExamBank
from demo.population import Population, simulate_population
from demo.responses import booklet_layout, key_strings, simulate_answers
from demo.scoring import official_nota

RNG_BLOCK = 10_000
"""Examinees per random-number block (the unit of determinism)."""


@dataclass(frozen=True)
class SimulatedChunk:
    """Examinees ``start .. start + n - 1`` (0-based global row numbers).

    Per area (dict keyed by "LC", "CH", "CN", "MT"):
        presence: (n,) 0 absent, 1 present, 2 eliminated;
        booklet: (n,) booklet index 0..3 (``ExamBank[area].booklet_ids[booklet]`` is CO_PROVA);
        chars: (n, L) uint8 ASCII of ``TX_RESPOSTAS`` (L = 45, 50 for LC in 2014–2021);
        nota: (n,) official NU_NOTA (NaN unless present).
    ``keys[area]`` is an object array (n_booklets, 2) of ``TX_GABARITO`` by booklet and language.
    """

    start: int
    pop: Population
    presence: dict[str, np.ndarray]
    booklet: dict[str, np.ndarray]
    chars: dict[str, np.ndarray]
    nota: dict[str, np.ndarray]
    keys: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.pop)


def fifty_char_lc(year: int) -> bool:
    """LC answer strings have 50 characters (both language blocks) in 2014–2021."""
    return 2014 <= year <= 2021


def block_rng(seed: int, year: int, block: int) -> np.random.Generator:
    """Independent generator of one block of examinees."""
    return np.random.default_rng(np.random.SeedSequence([seed, year, 2, block]))


def _concat(parts: list[Population]) -> Population:
    return Population(
        **{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(Population)}
    )


def simulate_chunk(exam: ExamBank, seed: int, start: int, stop: int) -> SimulatedChunk:
    """Simulate and score examinees ``start <= row < stop``; ``start`` must be a block boundary."""
    if start % RNG_BLOCK:
        raise ValueError(f"chunk start {start} is not a multiple of {RNG_BLOCK}")
    fifty = fifty_char_lc(exam.year)
    pops: list[Population] = []
    answers: dict[str, list[np.ndarray]] = {area: [] for area in AREAS}
    for block_start in range(start, stop, RNG_BLOCK):
        n = min(RNG_BLOCK, stop - block_start)
        rng = block_rng(seed, exam.year, block_start // RNG_BLOCK)
        pop = simulate_population(rng, n, exam.year)
        pops.append(pop)
        for k, area in enumerate(AREAS):
            area_booklets = pop.booklet_day[:, DAY[area] - 1]
            answers[area].append(
                simulate_answers(
                    rng,
                    exam[area],
                    pop.theta[:, k],
                    area_booklets,
                    pop.lingua,
                    pop.aberrant,
                    pop.blank[:, k],
                )
            )
    pop = _concat(pops)
    presence, booklet, chars, nota, keys = {}, {}, {}, {}, {}
    for area in AREAS:
        bank = exam[area]
        day = DAY[area] - 1
        ans = np.concatenate(answers[area])
        presence[area] = pop.presence_day[:, day]
        booklet[area] = pop.booklet_day[:, day]
        chars[area] = booklet_layout(bank, ans, booklet[area], pop.lingua, fifty)
        present = np.flatnonzero(presence[area] == 1)
        nota[area] = np.full(len(pop), np.nan)
        nota[area][present] = official_nota(bank, ans[present], pop.lingua[present])
        keys[area] = key_strings(bank, fifty)
    return SimulatedChunk(start, pop, presence, booklet, chars, nota, keys)
