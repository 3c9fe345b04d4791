"""Brazilian states and a few municipalities per state for the synthetic examinees.

Weights are rough shares of ENEM participants; ``shift`` is the demo's own ability shift of the
state (θ units, about ±0.3). Municipality codes follow the IBGE 7-digit pattern.
"""

from __future__ import annotations

import numpy as np

# (UF, IBGE code, weight, ability shift, [(municipality code, name), ...]); capital first.
STATES: tuple[tuple[str, int, float, float, tuple[tuple[int, str], ...]], ...] = (
    ("RO", 11, 0.008, -0.10, ((1100205, "Porto Velho"), (1100122, "Ji-Paraná"))),
    ("AC", 12, 0.005, -0.20, ((1200401, "Rio Branco"), (1200203, "Cruzeiro do Sul"))),
    ("AM", 13, 0.025, -0.22, ((1302603, "Manaus"), (1303403, "Parintins"))),
    ("RR", 14, 0.003, -0.15, ((1400100, "Boa Vista"), (1400472, "Rorainópolis"))),
    ("PA", 15, 0.055, -0.25, ((1501402, "Belém"), (1500800, "Ananindeua"), (1506807, "Santarém"))),
    ("AP", 16, 0.005, -0.25, ((1600303, "Macapá"), (1600600, "Santana"))),
    ("TO", 17, 0.009, -0.12, ((1721000, "Palmas"), (1702109, "Araguaína"))),
    ("MA", 21, 0.042, -0.28, ((2111300, "São Luís"), (2105302, "Imperatriz"))),
    ("PI", 22, 0.025, -0.15, ((2211001, "Teresina"), (2207702, "Parnaíba"))),
    ("CE", 23, 0.060, -0.05, ((2304400, "Fortaleza"), (2307304, "Juazeiro do Norte"))),
    ("RN", 24, 0.020, -0.08, ((2408102, "Natal"), (2408003, "Mossoró"))),
    ("PB", 25, 0.025, -0.08, ((2507507, "João Pessoa"), (2504009, "Campina Grande"))),
    ("PE", 26, 0.055, -0.10, ((2611606, "Recife"), (2604106, "Caruaru"))),
    ("AL", 27, 0.020, -0.20, ((2704302, "Maceió"), (2700300, "Arapiraca"))),
    ("SE", 28, 0.013, -0.15, ((2800308, "Aracaju"), (2803500, "Lagarto"))),
    ("BA", 29, 0.070, -0.15, ((2927408, "Salvador"), (2910800, "Feira de Santana"))),
    ("MG", 31, 0.100, 0.18, ((3106200, "Belo Horizonte"), (3170206, "Uberlândia"))),
    ("ES", 32, 0.018, 0.15, ((3205309, "Vitória"), (3205200, "Vila Velha"))),
    ("RJ", 33, 0.070, 0.18, ((3304557, "Rio de Janeiro"), (3303302, "Niterói"))),
    ("SP", 35, 0.170, 0.20, ((3550308, "São Paulo"), (3509502, "Campinas"), (3548500, "Santos"))),
    ("PR", 41, 0.040, 0.20, ((4106902, "Curitiba"), (4113700, "Londrina"))),
    ("SC", 42, 0.020, 0.28, ((4205407, "Florianópolis"), (4209102, "Joinville"))),
    ("RS", 43, 0.035, 0.22, ((4314902, "Porto Alegre"), (4305108, "Caxias do Sul"))),
    ("MS", 50, 0.012, 0.00, ((5002704, "Campo Grande"), (5003702, "Dourados"))),
    ("MT", 51, 0.015, -0.02, ((5103403, "Cuiabá"), (5108402, "Várzea Grande"))),
    ("GO", 52, 0.030, 0.05, ((5208707, "Goiânia"), (5201108, "Anápolis"))),
    ("DF", 53, 0.015, 0.30, ((5300108, "Brasília"),)),
)

UF_SIGLA: np.ndarray = np.array([s[0] for s in STATES])
"""(27,) state abbreviations."""
UF_CODE: np.ndarray = np.array([s[1] for s in STATES], dtype=np.int64)
UF_WEIGHT: np.ndarray = np.array([s[2] for s in STATES]) / sum(s[2] for s in STATES)
UF_SHIFT: np.ndarray = np.array([s[3] for s in STATES])

MUNI_CODE: np.ndarray = np.array([m[0] for s in STATES for m in s[4]], dtype=np.int64)
"""(n_muni,) IBGE municipality codes."""
MUNI_NAME: np.ndarray = np.array([m[1] for s in STATES for m in s[4]], dtype=object)
MUNI_UF: np.ndarray = np.array([i for i, s in enumerate(STATES) for _ in s[4]], dtype=np.int64)
"""(n_muni,) index into STATES of each municipality."""
_FIRST_MUNI: np.ndarray = np.concatenate([[0], np.cumsum([len(s[4]) for s in STATES])[:-1]])
_N_MUNI: np.ndarray = np.array([len(s[4]) for s in STATES], dtype=np.int64)


def draw_municipalities(rng: np.random.Generator, uf: np.ndarray) -> np.ndarray:
    """Municipality index (n,) for state indices ``uf`` (n,): the capital with probability 0.6."""
    n_other = _N_MUNI[uf] - 1
    other = 1 + np.floor(rng.random(len(uf)) * np.maximum(n_other, 1)).astype(np.int64)
    capital = (rng.random(len(uf)) < 0.6) | (n_other == 0)
    return _FIRST_MUNI[uf] + np.where(capital, 0, other)
