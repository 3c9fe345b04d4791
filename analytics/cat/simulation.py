"""Lockstep CAT simulation: every simulee advances one item per step with array operations.

At step t all simulees still testing have answered t items, so selection, answers, the
likelihood update, θ̂ and the stopping rule are each one vectorised call over them; the only
Python loop is over steps (at most ``stopper.max_items``).

Random numbers, for a given ``seed``: the answer draws are ``default_rng(seed).random((n, T))``
(row i, column t decides simulee i's t-th answer as ``P ≥ u``). That is exactly the stream
catsim's ``Simulator`` consumes for fixed-length tests (one ``uniform()`` per answer, simulee by
simulee), so both give identical paths. Guess/slip flips and random selection draw from two
streams spawned from ``SeedSequence(seed)``, so adding noise never changes the answer draws.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from analytics.cat.estimators import Answered, CatEstimator, GridLikelihood
from analytics.cat.responses import draw_answers, flip_labels, pair_probability
from analytics.cat.selectors import ItemSelector
from analytics.cat.stopping import StoppingRule
from analytics.irt import FloatArray, ItemBank


@dataclass(frozen=True, eq=False)
class CatPaths:
    """Every simulee's path through a CAT.

    Attributes
    ----------
    items : int array (n, T)
        Bank index administered at each step; −1 after the simulee's test ended.
    correct : bool array (n, T)
        The label scored at each step (after guess/slip); False after the test ended.
    theta, se : float arrays (n, T + 1)
        θ̂ and its SE before the first item (column 0: the start θ, SE inf) and after each
        step; after a test ends its last values are carried forward.
    length : int array (n,)
        Items each simulee answered.
    """

    items: NDArray[np.intp]
    correct: NDArray[np.bool_]
    theta: FloatArray
    se: FloatArray
    length: NDArray[np.intp]

    @property
    def final_theta(self) -> FloatArray:
        """θ̂ at the end of each test, (n,)."""
        return self.theta[:, -1]

    @property
    def final_se(self) -> FloatArray:
        """SE at the end of each test, (n,)."""
        return self.se[:, -1]

    def item_sets(self) -> list[NDArray[np.intp]]:
        """The items each simulee answered, in the order given."""
        return [row[:length] for row, length in zip(self.items, self.length)]


def simulate_cat(
    bank: ItemBank,
    true_theta: ArrayLike,
    selector: ItemSelector,
    estimator: CatEstimator,
    stopper: StoppingRule,
    *,
    seed: int = 0,
    start_theta: float = 0.0,
    guess: float = 0.0,
    slip: float = 0.0,
    answer_draws: FloatArray | None = None,
) -> CatPaths:
    """Adaptive tests for simulees of known ability, all advanced in lockstep.

    Parameters
    ----------
    bank : ItemBank
        Usable items only (``bank.subset(bank.usable)``).
    true_theta : array of shape (n,)
        θ₀ of each simulee.
    selector, estimator, stopper
        The three roles (``analytics.cat.selectors`` / ``estimators`` / ``stopping``).
    seed : int
        Seeds the answer draws, the guess/slip flips and random selection (module docstring).
    start_theta : float
        θ̂ before the first item (catsim's ``FixedPointInitializer``).
    guess, slip : float in [0, 1]
        Label noise: P(wrong → correct) and P(correct → wrong) per answer.
    answer_draws : array of shape (n, ≥ T), optional
        U(0, 1) draws deciding the answers instead of the seeded ones (e.g. one catsim stream per
        simulee).

    Returns
    -------
    CatPaths
    """
    true_theta = np.atleast_1d(np.asarray(true_theta, dtype=np.float64))
    if not bank.usable.all():
        raise ValueError("the CAT bank holds items without parameters; pass bank.subset(usable)")
    n = true_theta.shape[0]
    steps = min(stopper.max_items, bank.n_items)
    if answer_draws is None:
        answer_draws = np.random.default_rng(seed).random((n, steps))
    flip_stream, select_stream = (np.random.default_rng(child)
                                  for child in np.random.SeedSequence(seed).spawn(2))
    noisy = guess > 0.0 or slip > 0.0

    items = np.full((n, steps), -1, dtype=np.intp)
    correct = np.zeros((n, steps), dtype=bool)
    theta = np.full((n, steps + 1), np.nan)
    se = np.full((n, steps + 1), np.nan)
    theta[:, 0], se[:, 0] = start_theta, np.inf
    length = np.zeros(n, dtype=np.intp)
    available = np.ones((n, bank.n_items), dtype=bool)
    likelihood = GridLikelihood(bank, estimator.points, n)
    active: NDArray[np.intp] | slice = slice(None)
    rows = np.arange(n)
    for step in range(steps):
        chosen = selector.select(theta[active, step], available[active], bank, select_stream)
        available[rows, chosen] = False
        items[active, step] = chosen
        answers = draw_answers(pair_probability(true_theta[active], chosen, bank),
                               answer_draws[active, step])
        if noisy:
            flips = flip_stream.random(answers.shape)
            answers = flip_labels(answers, guess, slip, flips)
        correct[active, step] = answers
        likelihood.add(active, chosen, answers)
        answered = Answered(items[active, :step + 1], correct[active, :step + 1],
                            likelihood.values[active], theta[active, step])
        estimate = estimator.estimate(answered, bank)
        theta[active, step + 1], se[active, step + 1] = estimate.theta, estimate.se
        done = stopper.stop(step + 1, estimate.se)
        length[rows[done]] = step + 1
        rows = rows[~done]
        active = rows
        if rows.size == 0:
            break
    return CatPaths(items, correct, *_carry_forward(theta, se, length), length)


def _carry_forward(theta: FloatArray, se: FloatArray, length: NDArray[np.intp]
                   ) -> tuple[FloatArray, FloatArray]:
    """θ̂ and SE with each row's values after its test ended set to its final ones."""
    final = length[:, None]
    after = np.arange(theta.shape[1])[None, :] > final
    last_theta = np.take_along_axis(theta, final, axis=1)
    last_se = np.take_along_axis(se, final, axis=1)
    return np.where(after, last_theta, theta), np.where(after, last_se, se)
