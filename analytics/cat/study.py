"""The paper's simulation studies: CAT against random fixed forms (MSE by test length), the
variable-length CAT (stop once SE(θ̂) falls below a target) and the standard-error curves of
noisy simulees over a grid of guess and slip rates."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from analytics.cat.estimators import CatEstimator
from analytics.cat.metrics import length_to_reach, median_by_step, mse_by_step
from analytics.cat.selectors import ItemSelector, MaxInformation, RandomItems
from analytics.cat.simulation import CatPaths, simulate_cat
from analytics.cat.stopping import FixedLength, StandardErrorTarget
from analytics.irt import FloatArray, ItemBank

#: How many times the CAT length the random forms run to, so their length to reach the CAT's
#: accuracy can be read off (the paper: CAT needs at most 20% of the items).
RANDOM_LENGTH_FACTOR = 5


@dataclass(frozen=True, eq=False)
class StudyResult:
    """MSE by test length for CAT and random fixed forms.

    ``mse_cat`` (T_cat + 1,) and ``mse_random`` (T_random + 1,) are indexed by the number of
    items (index 0: the start θ before any item). ``cat`` and ``random`` are the paths.
    """

    mse_cat: FloatArray
    mse_random: FloatArray
    cat: CatPaths
    random: CatPaths

    def lengths_to_reach(self, target_mse: float) -> tuple[int | None, int | None]:
        """Items CAT and random forms need for MSE ≤ ``target_mse`` (None: not within their
        lengths)."""
        return length_to_reach(self.mse_cat, target_mse), length_to_reach(self.mse_random,
                                                                         target_mse)


def simulation_study(
    bank: ItemBank,
    true_theta: ArrayLike,
    estimator: CatEstimator,
    *,
    max_items: int = 20,
    random_items: int | None = None,
    selector: ItemSelector | None = None,
    seed: int = 0,
    start_theta: float = 0.0,
    guess: float = 0.0,
    slip: float = 0.0,
) -> StudyResult:
    """CAT of ``max_items`` items against random forms of up to ``random_items`` items (default
    RANDOM_LENGTH_FACTOR × ``max_items``, at most the bank), with the same simulees, estimator
    and seed (the first t items of a random path are a random fixed form of length t).
    ``guess`` and ``slip`` flip the labels of both (``simulate_cat``)."""
    true_theta = np.asarray(true_theta, dtype=np.float64)
    selector = selector or MaxInformation()
    random_items = min(random_items or RANDOM_LENGTH_FACTOR * max_items, bank.n_items)
    # The two arms share the simulees, the estimator, the seed and the noise.
    same_noise = functools.partial(simulate_cat, seed=seed, start_theta=start_theta, guess=guess,
                                   slip=slip)
    cat = same_noise(bank, true_theta, selector, estimator, FixedLength(max_items))
    rnd = same_noise(bank, true_theta, RandomItems(), estimator, FixedLength(random_items))
    return StudyResult(mse_by_step(cat.theta, true_theta), mse_by_step(rnd.theta, true_theta),
                       cat, rnd)


def noise_grid(values: Iterable[float]) -> list[tuple[float, float]]:
    """Every (guess, slip) pair of ``values`` × ``values``."""
    values = [float(v) for v in values]
    return [(guess, slip) for guess in values for slip in values]


def noise_curves(
    bank: ItemBank,
    true_theta: ArrayLike,
    selector: ItemSelector,
    estimator: CatEstimator,
    pairs: Iterable[tuple[float, float]],
    *,
    max_items: int = 20,
    seed: int = 0,
    statistic: Callable[[FloatArray], FloatArray] = median_by_step,
) -> dict[tuple[float, float], FloatArray]:
    """SE(θ̂) by step, shape (T + 1,), summarised over the simulees by ``statistic`` (default
    the median: robust to the few estimates at a bound whose SE runs into the thousands), for
    simulees whose labels flip with each (guess, slip)."""
    return {
        (guess, slip): statistic(simulate_cat(
            bank, true_theta, selector, estimator, FixedLength(max_items), seed=seed,
            guess=guess, slip=slip).se)
        for guess, slip in pairs
    }


def variable_length_study(
    bank: ItemBank,
    true_theta: ArrayLike,
    estimator: CatEstimator,
    se_targets: Sequence[float],
    *,
    max_items: int = 20,
    selector: ItemSelector | None = None,
    seed: int = 0,
    start_theta: float = 0.0,
) -> dict[str, NDArray]:
    """Variable-length CATs: for each SE target, every simulee's test stops once SE(θ̂) falls
    below it (catsim's ``MinErrorStopper``) or at ``max_items``.

    Parameters
    ----------
    bank : ItemBank
        Usable items only.
    true_theta : array of shape (n,)
        θ₀ of each simulee.
    estimator : CatEstimator
    se_targets : sequence of m floats
    max_items : int
        The cap (the paper: 20).
    selector : ItemSelector, optional
        Default maximum information.
    seed, start_theta
        As ``simulate_cat``; with the same seed a simulee's path is the fixed-length CAT's up to
        the step where it stops.

    Returns
    -------
    dict of arrays of shape (m,)
        ``se_target``; ``mean_items`` and ``median_items`` (test length over the simulees);
        ``reached`` (the share whose final SE is below the target, the rest stopped at the
        cap); ``mse`` (E[(θ̂_final − θ₀)²]).
    """
    true_theta = np.asarray(true_theta, dtype=np.float64)
    selector = selector or MaxInformation()
    columns: dict[str, list[float]] = {"se_target": [], "mean_items": [], "median_items": [],
                                       "reached": [], "mse": []}
    for target in se_targets:
        paths = simulate_cat(bank, true_theta, selector, estimator,
                             StandardErrorTarget(float(target), max_items), seed=seed,
                             start_theta=start_theta)
        columns["se_target"].append(float(target))
        columns["mean_items"].append(float(paths.length.mean()))
        columns["median_items"].append(float(np.median(paths.length)))
        columns["reached"].append(float(np.mean(paths.final_se < target)))
        columns["mse"].append(float(np.mean((paths.final_theta - true_theta) ** 2)))
    return {key: np.asarray(values) for key, values in columns.items()}


def study_table(result: StudyResult) -> dict[str, NDArray]:
    """Columns of the MSE table: items 1..T_random, CAT MSE (NaN beyond its length), random
    forms' MSE."""
    steps = np.arange(1, result.mse_random.shape[0])
    cat = np.full(steps.shape, np.nan)
    n_cat = min(result.mse_cat.shape[0] - 1, steps.shape[0])
    cat[:n_cat] = result.mse_cat[1:n_cat + 1]
    return {"items": steps, "mse_cat": cat, "mse_random": result.mse_random[1:]}
