"""Pure psychometrics on numpy arrays: IRT, ability estimation, person fit, CTT and scales.

No I/O, no database, no user interface, nothing about ENEM's files: every function takes and
returns arrays, and this package imports no other package of the project.

Where new work goes: a new analysis (a statistic, an index, a model check) is a function in the
module of its family (``irt``, ``person_fit``, ``ctt``, ``scales``) or a new module here, arrays
in and arrays out, exported below. A new θ estimator is a frozen dataclass subclassing
``ability.AbilityEstimator`` (its docstring is the contract) and, to be reachable by name, one
branch in ``ability.make_estimator``. Whoever needs θ together with person fit and CTT calls
``scoring.score_responses``. The formulas each module implements are in docs/methods.md.
"""

from analytics.ability import (
    ESTIMATOR_METHODS,
    INEP_GRID,
    MIRT_LEGACY_GRID,
    PAPER_GRID,
    THETA_BOUNDS,
    AbilityEstimate,
    AbilityEstimator,
    EAPEstimator,
    MAPEstimator,
    MLEstimator,
    QuadratureGrid,
    log_likelihood_on_grid,
    make_estimator,
)
from analytics.ctt import (
    ctt_score,
    discrimination_index,
    item_p_values,
    point_biserial,
    proportion_correct,
)
from analytics.irt import (
    ItemBank,
    item_information,
    probability,
    standard_error_curve,
    test_information,
)
from analytics.person_fit import lz, lz_star
from analytics.scales import ENEM_SCALE, enem_nota, paper_scale
from analytics.scoring import PatternScores, score_responses

__all__ = [
    "ENEM_SCALE",
    "ESTIMATOR_METHODS",
    "INEP_GRID",
    "MIRT_LEGACY_GRID",
    "PAPER_GRID",
    "THETA_BOUNDS",
    "AbilityEstimate",
    "AbilityEstimator",
    "EAPEstimator",
    "ItemBank",
    "MAPEstimator",
    "MLEstimator",
    "PatternScores",
    "QuadratureGrid",
    "ctt_score",
    "discrimination_index",
    "enem_nota",
    "item_information",
    "item_p_values",
    "log_likelihood_on_grid",
    "lz",
    "lz_star",
    "make_estimator",
    "paper_scale",
    "point_biserial",
    "probability",
    "proportion_correct",
    "score_responses",
    "standard_error_curve",
    "test_information",
]
