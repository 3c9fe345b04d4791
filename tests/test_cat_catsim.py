"""analytics.cat against catsim 0.21 on the same bank, selector, estimator and stopping rule.

catsim's set-up: ``FixedPointInitializer(θ_start)``, ``MaxInfoSelector()``,
``NumericalSearchEstimator()`` (bounded Brent search on [−6, 6] for mixed patterns, Dodd's rule
for all-correct / all-wrong ones) and ``MinErrorStopper(se, max_items)``; its simulee answers
right when P ≥ u for the next ``uniform()`` of ``default_rng(seed)``. Ours: ``MaxInformation``,
``CatML(constant_patterns="dodd")`` and ``StandardErrorTarget``, with each simulee's draws taken
from its own catsim stream. catsim has no D: it gets D·a.

Both estimators define the same θ̂ where the likelihood has one maximum: always for a 2PL bank
(its log-likelihood is concave). A 3PL likelihood can have two modes, where catsim's search
may stop at the lower one and ours takes the higher, so for 3PL the paths are compared on the
simulees whose likelihood had a single maximum at every step.
"""

from __future__ import annotations

import numpy as np
import pytest
from catsim.estimation import NumericalSearchEstimator
from catsim.initialization import FixedPointInitializer
from catsim.item_bank import ItemBank as CatsimBank
from catsim.selection import MaxInfoSelector
from catsim.simulation import Simulator
from catsim.stopping import MinErrorStopper

from analytics import ItemBank, log_likelihood_on_grid
from analytics.cat import CatML, MaxInformation, StandardErrorTarget, simulate_cat

# catsim's bounded search stops within xatol = 1e-5 of the maximum; ours converges to 1e-8.
THETA_TOLERANCE = 5e-5


def _catsim_paths(bank: ItemBank, theta0, seeds, se_target, max_items, start):
    matrix = np.column_stack([bank.scaling * bank.a, bank.b, bank.c, np.ones(bank.n_items)])
    items, thetas = [], []
    for true_theta, seed in zip(theta0, seeds, strict=True):
        simulator = Simulator(CatsimBank(matrix), [true_theta], FixedPointInitializer(start),
                              MaxInfoSelector(), NumericalSearchEstimator(),
                              MinErrorStopper(se_target, max_items=max_items), seed=int(seed))
        simulator.simulate()
        items.append(simulator.administered_items[0])
        thetas.append(simulator.estimations[0])
    return items, thetas


def _ours(bank, theta0, seeds, se_target, max_items, start):
    draws = np.array([np.random.default_rng(int(s)).random(max_items) for s in seeds])
    return simulate_cat(bank, theta0, MaxInformation(), CatML(constant_patterns="dodd"),
                        StandardErrorTarget(se_target, max_items), answer_draws=draws,
                        start_theta=start)


def _assert_same_path(paths, row, items, thetas):
    n = paths.length[row]
    assert paths.items[row, :n].tolist() == [int(i) for i in items]
    np.testing.assert_allclose(paths.theta[row, :n + 1], thetas, atol=THETA_TOLERANCE)


@pytest.mark.parametrize("scaling, start", [(1.0, 0.0), (1.7, 0.5)])
def test_2pl_paths_are_identical_to_catsim(scaling, start):
    rng = np.random.default_rng(21)
    bank = ItemBank.from_arrays(rng.lognormal(0.2, 0.3, 90), rng.normal(0.0, 1.1, 90),
                                scaling=scaling)
    theta0 = rng.normal(size=40)
    seeds = np.arange(100, 140)
    ours = _ours(bank, theta0, seeds, 0.4, 20, start)
    items, thetas = _catsim_paths(bank, theta0, seeds, 0.4, 20, start)
    assert len(set(ours.length.tolist())) > 1  # the SE target stopped tests at several lengths
    for row in range(40):
        _assert_same_path(ours, row, items[row], thetas[row])


def _single_maximum_throughout(paths, row, bank) -> bool:
    """True when the likelihood of every mixed prefix of the path has one local maximum on a
    0.005 grid over [−6, 6] (a constant prefix is Dodd's rule in both)."""
    points = np.linspace(-6.0, 6.0, 2401)
    for step in range(1, paths.length[row] + 1):
        answers = paths.correct[row, :step]
        if answers.all() or not answers.any():
            continue
        matrix = np.full((1, bank.n_items), np.nan)
        matrix[0, paths.items[row, :step]] = answers
        values = log_likelihood_on_grid(matrix, bank, points)[0]
        change = np.diff(values)
        # One maximum: no clear rise after the first clear fall (flat tails do not count).
        falls = np.flatnonzero(change < -1e-9)
        if falls.size and np.any(change[falls[0]:] > 1e-9):
            return False
    return True


def test_3pl_paths_are_identical_to_catsim_where_the_likelihood_has_one_maximum():
    rng = np.random.default_rng(8)
    bank = ItemBank.from_arrays(rng.lognormal(0.7, 0.3, 120), rng.normal(0.8, 1.1, 120),
                                np.clip(rng.normal(0.17, 0.05, 120), 0.02, 0.4))
    theta0 = rng.normal(size=60)
    seeds = np.arange(60)
    ours = _ours(bank, theta0, seeds, 0.3, 15, 0.0)
    items, thetas = _catsim_paths(bank, theta0, seeds, 0.3, 15, 0.0)
    checked = [row for row in range(60) if _single_maximum_throughout(ours, row, bank)]
    assert len(checked) >= 30
    for row in checked:
        _assert_same_path(ours, row, items[row], thetas[row])
