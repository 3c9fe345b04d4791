"""Lockstep CAT: every examinee advances one item per step with array operations.

At step t all examinees still testing have answered t items, so selection, answers, the
likelihood update, θ̂ and the stopping rule are each one vectorised call over them; the only
Python loop is over steps (at most ``stopper.max_items``). :class:`LockstepCat` holds that
state and takes the answers from whoever gives them (simulated simulees in
:func:`simulate_cat`, a model's backend in a live CAT).

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
        return [row[:length] for row, length in zip(self.items, self.length, strict=True)]


class LockstepCat:
    """The state of n adaptive tests advanced together, one item per step.

    Call :meth:`next_items` for the items the testing examinees take now, then :meth:`answer`
    with their labels; repeat until :attr:`finished`; :meth:`paths` gives the result.
    Selection draws (random and randomesque selectors) come from ``rng``.
    """

    def __init__(self, bank: ItemBank, n: int, selector: ItemSelector,
                 estimator: CatEstimator, stopper: StoppingRule, *, start_theta: float = 0.0,
                 rng: np.random.Generator | None = None) -> None:
        if not bank.usable.all():
            raise ValueError(
                "the CAT bank holds items without parameters; pass bank.subset(bank.usable)")
        self.bank, self.selector, self.estimator, self.stopper = bank, selector, estimator, stopper
        self.rng = rng or np.random.default_rng(0)
        self.steps = min(stopper.max_items, bank.n_items)
        self.step = 0
        self.items = np.full((n, self.steps), -1, dtype=np.intp)
        self.correct = np.zeros((n, self.steps), dtype=bool)
        self.theta = np.full((n, self.steps + 1), np.nan)
        self.se = np.full((n, self.steps + 1), np.nan)
        self.theta[:, 0], self.se[:, 0] = start_theta, np.inf
        self.length = np.zeros(n, dtype=np.intp)
        self.available = np.ones((n, bank.n_items), dtype=bool)
        self.likelihood = GridLikelihood(bank, estimator.points, n)
        self.rows = np.arange(n)
        self._chosen: NDArray[np.intp] | None = None

    @property
    def finished(self) -> bool:
        """True once every test has stopped."""
        return self.rows.size == 0 or self.step >= self.steps

    def _active(self) -> NDArray[np.intp] | slice:
        # A slice while everyone is testing: no copies of the (n, ·) arrays.
        return slice(None) if self.rows.size == self.items.shape[0] else self.rows

    def next_items(self) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """(rows, items): the examinees still testing and the bank index each takes now."""
        if self.finished:
            raise RuntimeError("every test has ended")
        active = self._active()
        self._chosen = self.selector.select(self.theta[active, self.step],
                                            self.available[active], self.bank, self.rng)
        return self.rows, self._chosen

    def answer(self, correct: NDArray[np.bool_]) -> None:
        """Record the labels (shape of ``rows``) of the items :meth:`next_items` gave, update
        θ̂ and SE, and stop the tests the rule ends."""
        if self._chosen is None:
            raise RuntimeError("call next_items before answer")
        active, step, chosen = self._active(), self.step, self._chosen
        correct = np.asarray(correct, dtype=bool)
        self.available[self.rows, chosen] = False
        self.items[active, step] = chosen
        self.correct[active, step] = correct
        self.likelihood.add(active, chosen, correct)
        answered = Answered(self.items[active, :step + 1], self.correct[active, :step + 1],
                            self.likelihood.values[active], self.theta[active, step])
        estimate = self.estimator.estimate(answered, self.bank)
        self.theta[active, step + 1], self.se[active, step + 1] = estimate.theta, estimate.se
        done = self.stopper.stop(step + 1, estimate.se)
        self.length[self.rows[done]] = step + 1
        self.rows = self.rows[~done]
        self.step, self._chosen = step + 1, None

    def paths(self) -> CatPaths:
        """The paths so far; values after a test's end (or after the current step) are its
        last ones carried forward."""
        length = np.where(np.isin(np.arange(self.length.shape[0]), self.rows), self.step,
                          self.length)
        theta, se = _carry_forward(self.theta, self.se, length)
        return CatPaths(self.items, self.correct, theta, se, length)


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
    flip_stream, select_stream = (np.random.default_rng(child)
                                  for child in np.random.SeedSequence(seed).spawn(2))
    cat = LockstepCat(bank, true_theta.shape[0], selector, estimator, stopper,
                      start_theta=start_theta, rng=select_stream)
    if answer_draws is None:
        answer_draws = np.random.default_rng(seed).random((true_theta.shape[0], cat.steps))
    noisy = guess > 0.0 or slip > 0.0
    while not cat.finished:
        rows, chosen = cat.next_items()
        answers = draw_answers(pair_probability(true_theta[rows], chosen, bank),
                               answer_draws[rows, cat.step])
        if noisy:
            answers = flip_labels(answers, guess, slip, flip_stream.random(answers.shape))
        cat.answer(answers)
    return cat.paths()


def _carry_forward(theta: FloatArray, se: FloatArray, length: NDArray[np.intp]
                   ) -> tuple[FloatArray, FloatArray]:
    """θ̂ and SE with each row's values after its test ended set to its final ones."""
    final = length[:, None]
    after = np.arange(theta.shape[1])[None, :] > final
    last_theta = np.take_along_axis(theta, final, axis=1)
    last_se = np.take_along_axis(se, final, axis=1)
    return np.where(after, last_theta, theta), np.where(after, last_se, se)
