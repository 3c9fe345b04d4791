"""Bounded ML θ re-estimated from stored model response patterns (PATCH's estimator).

Runs store one EAP θ per response pattern, scored with their settings (the seed paper's
estimator). PATCH reports the bounded maximum-likelihood θ instead; the Populations page offers
it by re-estimating every stored 0/1 pattern against its booklet form with
``analytics.ability.MLEstimator`` on θ ∈ [−6, 6] and the run's constant D. An ML estimate on a
bound (all right or all wrong) is set by the bound, not by the answers: no estimate at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from analytics.ability import MLEstimator
from analytics.irt import FloatArray, ItemBank
from enem.responses import stored_patterns_to_responses
from enem.scoring import ScoringOptions

#: How close to a bound of the θ range an ML/MAP estimate counts as on it (logits).
BOUND_TOLERANCE = 1e-6


@dataclass(frozen=True)
class RescoredML:
    """ML θ and SE of each pattern, shape (n,): NaN where the estimate sits on a bound
    (``at_bound`` True) or the pattern counts no item (θ NaN, ``at_bound`` False)."""

    theta: FloatArray
    se: FloatArray
    at_bound: NDArray[np.bool_]


def theta_at_bound(theta: ArrayLike, bounds: tuple[float, float]) -> NDArray[np.bool_]:
    """(n,) True where θ (n,) lies within :data:`BOUND_TOLERANCE` of either bound (NaN: False)."""
    theta = np.asarray(theta, dtype=float)
    low, high = bounds
    return (theta <= low + BOUND_TOLERANCE) | (theta >= high - BOUND_TOLERANCE)


def ml_rescore(responses: ArrayLike, bank: ItemBank,
               estimator: MLEstimator | None = None) -> RescoredML:
    """Bounded ML θ of each response pattern, estimates on a bound left out.

    Parameters
    ----------
    responses : array of shape (n, bank.n_items)
        1.0 / 0.0 / NaN.
    bank : ItemBank
        With the scaling constant D the patterns are to be scored with.
    estimator : MLEstimator, optional
        Default ``MLEstimator()`` (θ ∈ [−6, 6]).

    Returns
    -------
    RescoredML
    """
    estimator = MLEstimator() if estimator is None else estimator
    estimate = estimator.estimate(responses, bank)
    on_bound = theta_at_bound(estimate.theta, estimator.theta_bounds)
    return RescoredML(theta=np.where(on_bound, np.nan, estimate.theta),
                      se=np.where(on_bound, np.nan, estimate.se), at_bound=on_bound)


def ml_rescore_patterns(patterns: Sequence[object], a: ArrayLike, b: ArrayLike, c: ArrayLike,
                        options: ScoringOptions) -> RescoredML:
    """:func:`ml_rescore` of stored patterns of one booklet form.

    Parameters
    ----------
    patterns : sequence of n str
        Stored patterns (``enem.responses.stored_patterns_to_responses``).
    a, b, c : array of shape (n_items,)
        The form's item parameters in string order; NaN for an item without parameters.
    options : ScoringOptions
        The run's stored settings; only their constant D is used (the estimator is ML).
    """
    bank = options.item_bank(ItemBank.from_arrays(a, b, c))
    return ml_rescore(stored_patterns_to_responses(patterns, bank.usable), bank)
