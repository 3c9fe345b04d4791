"""Synthetic ENEM item bank and booklets (what ``ITENS_PROVA_YYYY.csv`` describes).

Layout of one exam (see docs/methods.md, ENEM conventions): day 1 is LC (positions 1–45) and CH
(46–90), day 2 is CN (91–135) and MT (136–180). LC holds 50 items: positions 1–5 exist twice, once
with English items (``TP_LINGUA = 0``) and once with Spanish items (``TP_LINGUA = 1``).

Inside this package every area keeps its items in a fixed *canonical* order (for LC: the five
English items, the five Spanish items, then the 40 common items). Booklets are permutations of
the positions; :meth:`AreaBank.char_order` maps a booklet (and language) to the canonical columns
in the order of the characters of ``TX_RESPOSTAS``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from enem.areas import OPTION_LETTERS

AREAS: tuple[str, ...] = ("LC", "CH", "CN", "MT")
"""Areas in booklet order (day 1: LC, CH; day 2: CN, MT)."""

FIRST_POSITION: dict[str, int] = {"LC": 1, "CH": 46, "CN": 91, "MT": 136}
DAY: dict[str, int] = {"LC": 1, "CH": 1, "CN": 2, "MT": 2}
COLOURS: dict[int, tuple[str, ...]] = {
    1: ("AZUL", "AMARELA", "BRANCA", "ROSA"),
    2: ("AZUL", "AMARELA", "CINZA", "ROSA"),
}
N_ITEMS = 45
N_BOOKLETS = 4
"""Booklets (colours) per area; every booklet of an area holds the same items."""
N_LANGUAGE_ITEMS = 5

# Mean difficulty per area (mean over the exam ≈ 1.2, as in INEP's published parameters).
_B_MEAN: dict[str, float] = {"LC": 0.9, "CH": 1.0, "CN": 1.5, "MT": 1.4}
_ABANDON_REASONS: tuple[str, ...] = (
    "Item com problema de ajuste ao modelo",
    "Item excluído após análise pedagógica",
    "Baixa discriminação na calibração",
)


@dataclass(frozen=True)
class AreaBank:
    """Items of one area in canonical order; ``m`` = 45 (50 for LC).

    Attributes:
        area: "LC", "CH", "CN" or "MT".
        item_ids: (m,) int64, 6-digit ``CO_ITEM``.
        language: (m,) int8, -1 common item, 0 English, 1 Spanish (LC only).
        key: (m,) int8, index 0..4 of the correct option (A..E).
        a, b, c: (m,) float64 published 3PL parameters (D = 1), rounded to 5 decimals;
            NaN for abandoned items.
        sim_a, sim_b, sim_c: (m,) float64 parameters used to simulate answers (equal to the
            published ones except for abandoned items, which still get answers).
        skill: (m,) int64 ``CO_HABILIDADE`` 1..30.
        abandoned: (m,) bool ``IN_ITEM_ABAN``.
        reason: (m,) reason text for abandoned items, "" otherwise.
        distractor_weights: (m, 5) float64, probability of each option given a wrong answer
            (zero on the key, rows sum to 1).
        trap: (m,) bool, items where most low-ability examinees pick one wrong option.
        booklet_ids: (n_booklets,) int64 ``CO_PROVA``.
        colours: ``TX_COR`` of each booklet.
        positions: (n_booklets, m) int64 ``CO_POSICAO`` of every item in every booklet.
    """

    area: str
    item_ids: np.ndarray
    language: np.ndarray
    key: np.ndarray
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    sim_a: np.ndarray
    sim_b: np.ndarray
    sim_c: np.ndarray
    skill: np.ndarray
    abandoned: np.ndarray
    reason: tuple[str, ...]
    distractor_weights: np.ndarray
    trap: np.ndarray
    booklet_ids: np.ndarray
    colours: tuple[str, ...]
    positions: np.ndarray

    @property
    def n_booklets(self) -> int:
        return len(self.booklet_ids)

    def form(self, lingua: int) -> np.ndarray:
        """Canonical columns (45,) taken by a candidate of ``lingua`` (0 en, 1 es), canonical
        order."""
        return np.flatnonzero((self.language == -1) | (self.language == lingua))

    def char_order(self, booklet: int, lingua: int, fifty: bool = False) -> np.ndarray:
        """Canonical columns in the order of the ``TX_RESPOSTAS`` characters of a booklet.

        Returns (45,) int64, or for LC with ``fifty=True`` (2014–2021 layout) (50,): English
        block, Spanish block, then the 40 common items, each sorted by ``CO_POSICAO``.
        """
        pos = self.positions[booklet]
        if fifty and self.area == "LC":
            blocks = [np.flatnonzero(self.language == lang) for lang in (0, 1, -1)]
            return np.concatenate([blk[np.argsort(pos[blk], kind="stable")] for blk in blocks])
        cols = self.form(lingua)
        return cols[np.argsort(pos[cols], kind="stable")]

    def key_string(self, booklet: int, lingua: int, fifty: bool = False) -> str:
        """``TX_GABARITO`` of a booklet, same layout as :meth:`char_order`."""
        order = self.char_order(booklet, lingua, fifty)
        return "".join(OPTION_LETTERS[k] for k in self.key[order])


@dataclass(frozen=True)
class ExamBank:
    """The four areas of one year's exam."""

    year: int
    areas: dict[str, AreaBank]

    def __getitem__(self, area: str) -> AreaBank:
        return self.areas[area]


def booklet_ids(year: int, area: str, n_booklets: int = N_BOOKLETS) -> np.ndarray:
    """4-digit ``CO_PROVA`` ids: ``YY`` ``A`` ``k`` (year, area 1..4 in LC, CH, CN, MT order,
    booklet 1..).

    Example for 2023: LC 2311–2314, CH 2321–2324, CN 2331–2334, MT 2341–2344.
    Years 2000–2009 use prefix 90–99 so the id keeps 4 digits.
    """
    yy = year % 100
    prefix = yy if yy >= 10 else yy + 90
    return np.array(
        [prefix * 100 + (AREAS.index(area) + 1) * 10 + k + 1 for k in range(n_booklets)],
        dtype=np.int64,
    )


def _balanced_keys(rng: np.random.Generator, m: int) -> np.ndarray:
    """(m,) int8 keys with each letter used ⌊m/5⌋ or ⌈m/5⌉ times, shuffled."""
    keys = np.resize(np.arange(5, dtype=np.int8), m)
    rng.shuffle(keys)
    return keys


def _draw_parameters(rng: np.random.Generator, m: int, b_mean: float) -> tuple[np.ndarray, ...]:
    """INEP-like 3PL parameters, each (m,) rounded to 5 decimals.

    a: lognormal with mean ≈ 2.1, clipped to [0.8, 4.5];
    b: normal(b_mean, 1.0) clipped to [-1.5, 4.0];
    c: Beta(6.8, 33.2) (mean 0.17) clipped to [0.05, 0.35].
    """
    sd_log = 0.35
    a = np.exp(rng.normal(np.log(2.1) - sd_log**2 / 2, sd_log, m)).clip(0.8, 4.5)
    b = rng.normal(b_mean, 1.0, m).clip(-1.5, 4.0)
    c = rng.beta(6.8, 33.2, m).clip(0.05, 0.35)
    return tuple(np.round(x, 5) for x in (a, b, c))


def _distractor_weights(rng: np.random.Generator, key: np.ndarray, trap: np.ndarray) -> np.ndarray:
    """(m, 5) attractiveness of the wrong options given a wrong answer.

    Ordinary items: Dirichlet(2,2,2,2); about 30% have one strongly attractive distractor
    (weight 0.55–0.70); trap items put 0.85–0.92 on one distractor.
    """
    m = len(key)
    w = np.zeros((m, 5))
    for i in range(m):
        wrong = np.array([k for k in range(5) if k != key[i]])
        p = rng.dirichlet(np.full(4, 2.0))
        strong = (
            rng.uniform(0.85, 0.92)
            if trap[i]
            else (rng.uniform(0.55, 0.70) if rng.random() < 0.3 else None)
        )
        if strong is not None:
            j = rng.integers(4)
            rest = np.delete(p, j)
            p = np.insert(rest / rest.sum() * (1 - strong), j, strong)
        w[i, wrong] = p
    return w


def _positions(
    rng: np.random.Generator, area: str, language: np.ndarray, n_booklets: int
) -> np.ndarray:
    """(n_booklets, m) ``CO_POSICAO``: booklet 0 in canonical order, the others shuffled.

    Common items are permuted within the area's range; LC language items stay at 1–5.
    """
    first = FIRST_POSITION[area]
    common = np.flatnonzero(language == -1)
    n_lang = N_ITEMS - len(common)
    pos = np.zeros((n_booklets, len(language)), dtype=np.int64)
    for j in range(n_booklets):
        perm_common = np.arange(len(common)) if j == 0 else rng.permutation(len(common))
        pos[j, common] = first + n_lang + perm_common
        for lang in (0, 1):
            blk = np.flatnonzero(language == lang)
            perm = np.arange(len(blk)) if j == 0 else rng.permutation(len(blk))
            pos[j, blk] = first + perm
    return pos


def make_area_bank(
    rng: np.random.Generator, year: int, area: str, item_ids: np.ndarray, abandoned_cols: np.ndarray
) -> AreaBank:
    """One area's bank; ``item_ids`` (m,) and ``abandoned_cols`` (canonical column indices)."""
    m = len(item_ids)
    n_lang = N_LANGUAGE_ITEMS if area == "LC" else 0
    language = np.full(m, -1, dtype=np.int8)
    language[:n_lang] = 0
    language[n_lang : 2 * n_lang] = 1
    key = _balanced_keys(rng, m)
    a, b, c = _draw_parameters(rng, m, _B_MEAN[area])
    trap = np.zeros(m, dtype=bool)
    trap[rng.choice(np.flatnonzero(language == -1), size=3, replace=False)] = True
    c = np.where(trap, np.round(c * 0.5, 5).clip(0.05, None), c)  # trap items: few lucky guesses
    abandoned = np.zeros(m, dtype=bool)
    abandoned[abandoned_cols] = True
    reason = tuple(
        _ABANDON_REASONS[int(rng.integers(len(_ABANDON_REASONS)))] if ab else "" for ab in abandoned
    )
    nan = np.where(abandoned, np.nan, 1.0)
    ids = booklet_ids(year, area)
    return AreaBank(
        area=area,
        item_ids=item_ids.astype(np.int64),
        language=language,
        key=key,
        a=a * nan,
        b=b * nan,
        c=c * nan,
        sim_a=a,
        sim_b=b,
        sim_c=c,
        skill=rng.integers(1, 31, m).astype(np.int64),
        abandoned=abandoned,
        reason=reason,
        distractor_weights=_distractor_weights(rng, key, trap),
        trap=trap,
        booklet_ids=ids,
        colours=COLOURS[DAY[area]][: len(ids)],
        positions=_positions(rng, area, language, len(ids)),
    )


def make_exam_bank(year: int, seed: int) -> ExamBank:
    """The whole exam for ``year``: 185 items, 2 or 3 of them abandoned (never LC language
    items)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, year, 1]))
    sizes = {area: N_ITEMS + (N_LANGUAGE_ITEMS if area == "LC" else 0) for area in AREAS}
    total = sum(sizes.values())
    ids = np.sort(rng.choice(np.arange(100_000, 1_000_000), size=total, replace=False))
    ids = rng.permutation(ids)
    # Abandoned items: 2 or 3 common items over the whole exam.
    common_slots = [
        (area, j)
        for area in AREAS
        for j in range(sizes[area])
        if not (area == "LC" and j < 2 * N_LANGUAGE_ITEMS)
    ]
    n_ab = int(rng.integers(2, 4))
    picks = rng.choice(len(common_slots), size=n_ab, replace=False)
    areas: dict[str, AreaBank] = {}
    start = 0
    for area in AREAS:
        m = sizes[area]
        ab_cols = np.array(
            [j for k, (ar, j) in enumerate(common_slots) if ar == area and k in picks],
            dtype=np.int64,
        )
        areas[area] = make_area_bank(rng, year, area, np.sort(ids[start : start + m]), ab_cols)
        start += m
    return ExamBank(year=year, areas=areas)
