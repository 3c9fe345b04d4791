"""The single entry point that scores response patterns, for humans and models alike.

θ by any ``ability.AbilityEstimator``, then person fit at that θ and the number correct; see
docs/methods.md, Ability estimation and Person fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from analytics.ability import AbilityEstimator, EAPEstimator
from analytics.irt import FloatArray, ItemBank, counted_responses
from analytics.person_fit import lz_and_lz_star

# INEP's official estimator: EAP, N(0, 1) prior, 40 points on [−4, 4].
DEFAULT_ESTIMATOR = EAPEstimator()


@dataclass(frozen=True, eq=False)
class PatternScores:
    """Scores of n response patterns, each field of shape (n,).

    theta, theta_se : ability estimate and its standard error
    lz, lz_star : person fit at that θ (l_z and Snijders' corrected l_z*)
    ctt : number correct over counted entries (float)
    n_scored : number of counted entries per examinee (int)
    """

    theta: FloatArray
    theta_se: FloatArray
    lz: FloatArray
    lz_star: FloatArray
    ctt: FloatArray
    n_scored: NDArray[np.int64]


def score_responses(
    responses: ArrayLike,
    bank: ItemBank,
    estimator: AbilityEstimator = DEFAULT_ESTIMATOR,
) -> PatternScores:
    """θ, SE, l_z, l_z* and number correct for every response pattern.

    Parameters
    ----------
    responses : array of shape (n_examinees, n_items)
        1.0 correct, 0.0 wrong, NaN not administered; a 1-D array is one examinee.
    bank : ItemBank
    estimator : AbilityEstimator, default EAPEstimator()
        EAPEstimator, MAPEstimator, MLEstimator or any other subclass. Its ``prior_mean`` and
        ``prior_sd`` (None for ML) choose the l_z* correction.

    Returns
    -------
    PatternScores

    Notes
    -----
    An entry counts, in θ, person fit and CTT alike, only if the response is finite and the item
    has parameters: abandoned items are neither right nor wrong, so they are not in the number
    correct either. l_z* for an EAP θ uses the MAP correction with the estimator's prior (an
    approximation; see ``person_fit.lz_star``).
    """
    # One split into counted entries serves θ, person fit and CTT alike.
    data = counted_responses(responses, bank)
    estimate = estimator._estimate_counted(data)
    person_lz, person_lz_star = lz_and_lz_star(data, estimate.theta, estimator.prior_mean,
                                               estimator.prior_sd)
    return PatternScores(
        theta=estimate.theta,
        theta_se=estimate.se,
        lz=person_lz,
        lz_star=person_lz_star,
        ctt=data.correct.sum(axis=1),
        n_scored=data.counted.sum(axis=1).astype(np.int64),
    )
