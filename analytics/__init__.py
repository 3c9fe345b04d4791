"""Pure psychometrics on numpy arrays: IRT, ability estimation, person fit, CTT and scales.

No I/O, no database, no user interface: every function takes and returns arrays.
"""

from analytics.ability import (
    INEP_GRID,
    MIRT_LEGACY_GRID,
    PAPER_GRID,
    AbilityEstimate,
    EAPEstimator,
    MAPEstimator,
    MLEstimator,
    QuadratureGrid,
    eap,
    log_likelihood_on_grid,
    make_estimator,
    map_estimate,
    ml_estimate,
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
    "INEP_GRID",
    "MIRT_LEGACY_GRID",
    "PAPER_GRID",
    "AbilityEstimate",
    "EAPEstimator",
    "ItemBank",
    "MAPEstimator",
    "MLEstimator",
    "PatternScores",
    "QuadratureGrid",
    "ctt_score",
    "discrimination_index",
    "eap",
    "enem_nota",
    "item_information",
    "item_p_values",
    "log_likelihood_on_grid",
    "lz",
    "lz_star",
    "make_estimator",
    "map_estimate",
    "ml_estimate",
    "paper_scale",
    "point_biserial",
    "probability",
    "proportion_correct",
    "score_responses",
    "standard_error_curve",
    "test_information",
]
