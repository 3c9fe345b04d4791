"""Synthetic examinees: background, abilities, presence, booklets, essay and questionnaire.

Everything is drawn for a block of ``n`` examinees at once (vectorised numpy, no per-person
loop). Ability θ is in the INEP metric (reference population ≈ N(0, 1)), right-skewed with a soft
floor (:func:`floored_ability`), so each area's estimated θ has one mode, as a real year's has.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from demo.geography import MUNI_UF, UF_CODE, UF_SHIFT, UF_WEIGHT, draw_municipalities
from demo.items import N_BOOKLETS

# Ability correlations in AREAS order (LC, CH, CN, MT).
THETA_CORR: np.ndarray = np.array(
    [
        [1.00, 0.80, 0.70, 0.65],
        [0.80, 1.00, 0.75, 0.68],
        [0.70, 0.75, 1.00, 0.78],
        [0.65, 0.68, 0.78, 1.00],
    ]
)
THETA_RESIDUAL_SD = 0.88
SCHOOL_SHIFT: dict[int, float] = {1: 0.0, 2: -0.17, 3: 0.35}
"""θ shift by ``TP_ESCOLA`` (1 not answered, 2 public, 3 private); with the SES term the
private–public gap of the unfloored ability is ≈ 0.7 (≈ 0.6 after :data:`THETA_FLOOR`)."""
SES_LOADING = 0.25
THETA_FLOOR = -2 / 3
"""Soft lower bound of θ (see :func:`floored_ability`). ENEM's items are hard (mean b ≈ 1.2):
below θ ≈ −0.6 a CN or MT answer sheet is near chance (≈ 9 of 45), and every such sheet gets
about the same EAP. A normal left tail would pile those candidates into a second mode at the
bottom of the θ histogram; real years show one mode rising steeply from the chance floor."""

P_PRESENT_DAY1 = 0.72
P_PRESENT_DAY2_GIVEN_DAY1 = 0.909
P_PRESENT_DAY2_GIVEN_ABSENT = 0.02
P_ELIMINATED = 0.001
P_ENGLISH = 0.45
P_BLANK_TEST = 0.005
# Aberrant response styles: 0 ordinary, 1 random guesser, 2 careless stretch, 3 blanks at the end.
ABERRANT_PROBS: tuple[float, ...] = (0.95, 0.02, 0.015, 0.015)

# Essay status codes (TP_STATUS_REDACAO) among candidates present on day 1.
ESSAY_STATUS: np.ndarray = np.array([1, 2, 3, 4, 6, 7, 8, 9], dtype=np.int64)
ESSAY_STATUS_P: np.ndarray = np.array([0.955, 0.004, 0.001, 0.015, 0.012, 0.005, 0.005, 0.003])

# Questionnaire: (number of answer letters, SES loading, shift) per question; None = numeric Q005.
_Q_2019: tuple[tuple[int, float, float] | None, ...] = (
    (8, 0.7, -0.2),
    (8, 0.7, -0.1),
    (6, 0.6, -0.3),
    (6, 0.6, -0.2),
    None,
    (17, 0.8, -0.9),
    (4, 0.5, -1.4),
    (5, 0.6, 0.3),
    (5, 0.6, 0.0),
    (5, 0.6, -0.8),
    (5, 0.4, -1.0),
    (5, 0.4, 0.2),
    (5, 0.5, -0.6),
    (5, 0.5, -0.3),
    (5, 0.5, -0.9),
    (5, 0.4, -0.4),
    (5, 0.5, -1.2),
    (2, 0.5, -0.6),
    (5, 0.4, 0.1),
    (2, 0.4, -0.5),
    (2, 0.5, -0.7),
    (5, 0.4, 0.4),
    (2, 0.5, -0.4),
    (5, 0.6, -0.5),
    (2, 0.5, 0.8),
)
# 2024's PARTICIPANTES has two questions fewer (Q023 and Q024 of the 2019 layout).
_Q_2024: tuple[tuple[int, float, float] | None, ...] = _Q_2019[:22] + _Q_2019[24:]


def questionnaire_spec(year: int) -> tuple[tuple[int, float, float] | None, ...]:
    """Questionnaire layout: Q001..Q025 up to 2023, Q001..Q023 from 2024."""
    return _Q_2024 if year >= 2024 else _Q_2019


@dataclass(frozen=True)
class Population:
    """One block of ``n`` examinees; every array has first dimension n.

    Codes follow the INEP dictionaries (``TP_*`` integers); ``theta`` is (n, 4) in AREAS order;
    ``presence_day`` is (n, 2) with 0 absent, 1 present, 2 eliminated for day 1 and day 2;
    ``booklet_day`` (n, 2) is the booklet index 0..3 (same colour for both areas of a day);
    ``blank`` (n, 4) marks tests left entirely blank; ``essay_comps`` (n, 5) are multiples of 20;
    ``questionnaire`` (n, n_q) holds ASCII codes of the answer letters (0 where numeric);
    ``household`` (n,) is the numeric answer of Q005.
    """

    uf: np.ndarray
    muni: np.ndarray
    female: np.ndarray
    age_band: np.ndarray
    marital: np.ndarray
    race: np.ndarray
    nationality: np.ndarray
    conclusion: np.ndarray
    year_concluded: np.ndarray
    school: np.ndarray
    teaching: np.ndarray
    trainee: np.ndarray
    has_school: np.ndarray
    school_muni: np.ndarray
    school_code: np.ndarray
    dependency: np.ndarray
    location: np.ndarray
    ses: np.ndarray
    theta: np.ndarray
    presence_day: np.ndarray
    lingua: np.ndarray
    booklet_day: np.ndarray
    aberrant: np.ndarray
    blank: np.ndarray
    essay_status: np.ndarray
    essay_comps: np.ndarray
    questionnaire: np.ndarray
    household: np.ndarray

    def __len__(self) -> int:
        return len(self.uf)


def _categorical(rng: np.random.Generator, n: int, values: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(n,) draws of ``values`` with probabilities ``p`` (inverse CDF on one uniform each)."""
    cum = np.cumsum(p) / np.sum(p)
    return np.asarray(values)[np.searchsorted(cum, rng.random(n), side="right").clip(0, len(p) - 1)]


def _ordinal(
    rng: np.random.Generator, ses: np.ndarray, n_cats: int, load: float, shift: float
) -> np.ndarray:
    """(n,) category 0..n_cats-1 driven by the SES latent: ⌊n_cats·Φ(load·ses + √(1−load²)·z +
    shift)⌋."""
    x = load * ses + np.sqrt(1 - load**2) * rng.standard_normal(len(ses)) + shift
    return np.minimum((ndtr(x) * n_cats).astype(np.int64), n_cats - 1)


def _background(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    uf = _categorical(rng, n, np.arange(len(UF_WEIGHT)), UF_WEIGHT)
    muni = draw_municipalities(rng, uf)
    conclusion = _categorical(rng, n, np.array([1, 2, 3, 4]), np.array([0.55, 0.30, 0.12, 0.03]))
    finished = conclusion == 1
    year_concluded = np.where(
        finished, _categorical(rng, n, np.arange(1, 18), 1 / np.arange(1, 18)), 0
    )
    age_young = _categorical(rng, n, np.arange(1, 5), np.array([0.08, 0.45, 0.35, 0.12]))
    age_old = _categorical(
        rng,
        n,
        np.arange(3, 21),
        np.r_[
            [0.25, 0.18, 0.12, 0.08, 0.06, 0.05, 0.04, 0.03],
            [0.05, 0.04, 0.03, 0.02, 0.02, 0.01, 0.01, 0.005, 0.003, 0.002],
        ],
    )
    age_band = np.where(finished, age_old, age_young)
    in_school = conclusion == 2
    private = rng.random(n) < 0.22
    school = np.where(in_school, np.where(private, 3, 2), np.where(rng.random(n) < 0.03, 2, 1))
    ses = 0.85 * rng.standard_normal(n) + np.select([school == 3, school == 2], [0.9, -0.2], 0.0)
    has_school = school != 1
    other_muni = draw_municipalities(rng, MUNI_UF[muni])
    school_muni = np.where(rng.random(n) < 0.85, muni, other_muni)
    dependency = np.where(
        school == 3, 4, _categorical(rng, n, np.array([1, 2, 3]), np.array([0.05, 0.85, 0.10]))
    )
    return {
        "uf": uf,
        "muni": muni,
        "female": rng.random(n) < 0.6,
        "age_band": age_band,
        "marital": _categorical(rng, n, np.arange(5), np.array([0.03, 0.88, 0.07, 0.015, 0.005])),
        "race": _categorical(
            rng, n, np.arange(6), np.array([0.02, 0.40, 0.13, 0.43, 0.015, 0.005])
        ),
        "nationality": _categorical(
            rng, n, np.arange(5), np.array([0.002, 0.97, 0.02, 0.006, 0.002])
        ),
        "conclusion": conclusion,
        "year_concluded": year_concluded,
        "school": school,
        "teaching": np.where(in_school, np.where(rng.random(n) < 0.98, 1, 2), 0),
        "trainee": (conclusion == 3).astype(np.int64),
        "has_school": has_school,
        "school_muni": school_muni,
        "school_code": UF_CODE[MUNI_UF[school_muni]] * 1_000_000 + rng.integers(0, 1_000_000, n),
        "dependency": dependency,
        "location": np.where(rng.random(n) < 0.92, 1, 2),
        "ses": ses,
    }


def floored_ability(latent: np.ndarray, floor: float = THETA_FLOOR) -> np.ndarray:
    """θ from a normal ``latent``: unchanged above 0, bent exponentially towards ``floor`` below.

    θ = latent for latent ≥ 0 and θ = expm1(−latent / floor) · (−floor) below 0: smooth (slope
    1 at 0), increasing (so every subgroup keeps its order) and never under ``floor``. The
    density rises from zero at the floor to one mode just above it, then falls: right-skewed
    with a left floor, and the normal right tail keeps the top of the scale unchanged.
    """
    rate = -1.0 / floor
    return np.where(latent >= 0, latent, np.expm1(rate * np.minimum(latent, 0.0)) / rate)


def _abilities(rng: np.random.Generator, bg: dict[str, np.ndarray]) -> np.ndarray:
    """(n, 4) θ: state, school and SES shifts plus correlated normal residuals, floored."""
    n = len(bg["uf"])
    shift = (
        UF_SHIFT[bg["uf"]]
        + np.select([bg["school"] == 3, bg["school"] == 2], [SCHOOL_SHIFT[3], SCHOOL_SHIFT[2]], 0.0)
        + SES_LOADING * bg["ses"]
    )
    chol = np.linalg.cholesky(THETA_CORR)
    resid = rng.standard_normal((n, 4)) @ chol.T * THETA_RESIDUAL_SD
    return floored_ability(shift[:, None] + resid)


def _presence(rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, 2) presence codes for day 1 and day 2 (most day-1 absentees also miss day 2)."""
    day1 = rng.random(n) < P_PRESENT_DAY1
    day2 = rng.random(n) < np.where(day1, P_PRESENT_DAY2_GIVEN_DAY1, P_PRESENT_DAY2_GIVEN_ABSENT)
    present = np.stack([day1, day2], axis=1)
    eliminated = present & (rng.random((n, 2)) < P_ELIMINATED)
    return np.where(eliminated, 2, present.astype(np.int64))


def _essay(
    rng: np.random.Generator, theta_lc: np.ndarray, day1: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Essay status (n,) (0 = no essay: absent/eliminated) and components (n, 5) in 0..200 by 20."""
    n = len(theta_lc)
    status = np.where(day1 == 1, _categorical(rng, n, ESSAY_STATUS, ESSAY_STATUS_P), 0)
    latent = 0.75 * theta_lc + 0.66 * rng.standard_normal(n)
    raw = 125 + 38 * (0.8 * latent[:, None] + 0.6 * rng.standard_normal((n, 5)))
    comps = (np.rint(raw / 20) * 20).clip(40, 200).astype(np.int64)
    return status, np.where((status == 1)[:, None], comps, 0)


def _questionnaire(
    rng: np.random.Generator, ses: np.ndarray, year: int
) -> tuple[np.ndarray, np.ndarray]:
    """Questionnaire letters as ASCII codes (n, n_q) (0 in the numeric Q005) and Q005 (n,) 1..20."""
    spec = questionnaire_spec(year)
    out = np.zeros((len(ses), len(spec)), dtype=np.uint8)
    for j, s in enumerate(spec):
        if s is not None:
            out[:, j] = ord("A") + _ordinal(rng, ses, *s)
    household = np.rint(rng.normal(3.8, 1.4, len(ses)) - 0.3 * ses).clip(1, 20).astype(np.int64)
    return out, household


def simulate_population(rng: np.random.Generator, n: int, year: int) -> Population:
    """Draw ``n`` examinees of ``year``."""
    bg = _background(rng, n)
    theta = _abilities(rng, bg)
    presence = _presence(rng, n)
    lingua = (rng.random(n) >= P_ENGLISH).astype(np.int64)
    booklet_day = rng.integers(0, N_BOOKLETS, (n, 2))
    aberrant = _categorical(rng, n, np.arange(4), np.array(ABERRANT_PROBS))
    blank = rng.random((n, 4)) < P_BLANK_TEST
    essay_status, essay_comps = _essay(rng, theta[:, 0], presence[:, 0])
    questionnaire, household = _questionnaire(rng, bg["ses"], year)
    return Population(
        theta=theta,
        presence_day=presence,
        lingua=lingua,
        booklet_day=booklet_day,
        aberrant=aberrant,
        blank=blank,
        essay_status=essay_status,
        essay_comps=essay_comps,
        questionnaire=questionnaire,
        household=household,
        **bg,
    )
