"""Computerized adaptive testing on a 3PL item bank, vectorised over simulees.

Roles, one small class each (catsim style): item selectors (``selectors``), θ estimators
(``estimators``), stopping rules (``stopping``); ``simulation.simulate_cat`` runs them in
lockstep over all simulees; ``responses`` draws answers and guess/slip noise; ``metrics``
summarises paths (MSE by step, Jaccard overlap); ``study`` is the paper's simulation study.
The recipes are described in docs/adaptive_testing.md.
"""

from analytics.cat.estimators import (
    CONSTANT_PATTERN_RULES,
    Answered,
    CatEAP,
    CatEstimator,
    CatMAP,
    CatML,
    GridLikelihood,
)
from analytics.cat.metrics import (
    jaccard,
    jaccard_matrix,
    length_to_reach,
    mean_by_step,
    median_by_step,
    mse_by_step,
    nearest_curve,
    steps_within,
)
from analytics.cat.responses import draw_answers, flip_labels, pair_probability
from analytics.cat.selectors import (
    SELECTORS,
    ItemSelector,
    MaxInformation,
    Randomesque,
    RandomItems,
)
from analytics.cat.settings import CAT_ESTIMATORS, CatSettings
from analytics.cat.simulation import CatPaths, LockstepCat, simulate_cat
from analytics.cat.stopping import (
    DEFAULT_MAX_ITEMS,
    FixedLength,
    StandardErrorTarget,
    StoppingRule,
)
from analytics.cat.study import (
    StudyResult,
    noise_curves,
    noise_grid,
    simulation_study,
    study_table,
    variable_length_study,
)

__all__ = [
    "CAT_ESTIMATORS",
    "CONSTANT_PATTERN_RULES",
    "DEFAULT_MAX_ITEMS",
    "SELECTORS",
    "Answered",
    "CatEAP",
    "CatEstimator",
    "CatMAP",
    "CatML",
    "CatPaths",
    "CatSettings",
    "FixedLength",
    "GridLikelihood",
    "ItemSelector",
    "LockstepCat",
    "MaxInformation",
    "RandomItems",
    "Randomesque",
    "StandardErrorTarget",
    "StoppingRule",
    "StudyResult",
    "draw_answers",
    "flip_labels",
    "jaccard",
    "jaccard_matrix",
    "length_to_reach",
    "mean_by_step",
    "median_by_step",
    "mse_by_step",
    "nearest_curve",
    "noise_curves",
    "noise_grid",
    "pair_probability",
    "simulate_cat",
    "simulation_study",
    "steps_within",
    "study_table",
    "variable_length_study",
]
