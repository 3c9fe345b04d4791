"""The suite's two-route float comparisons hold when the compared values move by a few ulps.

tests/float_support.py holds every comparison of one number computed by two routes (the
contour test's ``density >= region.level``, the CAT selector's and the full-answer scorer's
argmax); here each is fed its real values nudged up and down by ``np.nextafter``, as another
CPU's kernels might compute them, and must give the same verdict. A value clearly on the wrong
side still fails, so the slack hides nothing bigger than rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import gaussian_kde

from analytics.contours import density_region
from tests.float_support import at_least, clearly_above, holds_the_coverage, picks_a_maximum

STEPS = (-8, -3, -1, 1, 3, 8)


def nudged(values: np.ndarray | float, steps: int) -> np.ndarray:
    """``values`` moved ``steps`` ulps (towards +inf when positive), element by element."""
    out = np.array(values, dtype=float)
    towards = np.inf if steps > 0 else -np.inf
    for _ in range(abs(steps)):
        out = np.nextafter(out, towards)
    return out


@pytest.mark.parametrize("n, seed", [(30, 1), (57, 2), (400, 3)])
@pytest.mark.parametrize("steps", STEPS)
def test_the_hdr_level_check_holds_a_few_ulps_either_way(n, seed, steps):
    # The cases of test_contours.test_hdr_level_equals_brute_force ([57-2] and [400-3] failed
    # on an AMD EPYC host by one bit).
    rng = np.random.default_rng(seed)
    x, y = rng.normal(-1.0, 0.3, n), rng.normal(12.0, 3.0, n)
    density = gaussian_kde(np.vstack([x, y]))(np.vstack([x, y]))
    level = density_region(x, y, 0.9).level
    assert holds_the_coverage(density, level, 0.9)
    assert holds_the_coverage(density, float(nudged(level, steps)), 0.9)
    assert holds_the_coverage(nudged(density, steps), level, 0.9)
    # The level is one of the densities: that point itself moved a few ulps either way.
    moved = density.copy()
    at = int(np.argmin(np.abs(density - level)))
    moved[at] = nudged(moved[at], steps)
    assert holds_the_coverage(moved, level, 0.9)


def test_the_hdr_level_check_still_fails_a_wrong_level():
    rng = np.random.default_rng(2)
    x, y = rng.normal(-1.0, 0.3, 57), rng.normal(12.0, 3.0, 57)
    density = gaussian_kde(np.vstack([x, y]))(np.vstack([x, y]))
    level = density_region(x, y, 0.9).level
    ranked = np.sort(density)
    # The next density above or below the level is a different level, not a rounding of it
    # (the level's own point may differ from it in the last bits, so "next" skips it).
    assert not holds_the_coverage(density, ranked[clearly_above(ranked, level)][0], 0.9)
    assert not holds_the_coverage(density, ranked[~at_least(ranked, level)][-1], 0.9)


@pytest.mark.parametrize("steps", STEPS)
def test_at_least_and_clearly_above_ignore_the_last_bits(steps):
    level = np.array([1e-300, 3.7e-3, 0.25, 1.0, 812.5])
    assert at_least(nudged(level, steps), level).all()
    assert not clearly_above(nudged(level, steps), level).any()
    assert not at_least(level * (1 - 1e-9), level).any()
    assert clearly_above(level * (1 + 1e-9), level).all()


@pytest.mark.parametrize("steps", STEPS)
def test_a_near_tie_may_be_picked_either_way(steps):
    # CAT information per item (test_cat_analytics) and log-mean per option
    # (test_answer_methods): the chosen column ties the maximum up to a few ulps.
    rng = np.random.default_rng(9)
    values = rng.uniform(0.1, 2.0, (40, 15))
    best = values.argmax(axis=1)
    rows = np.arange(40)
    rival = (best + 1) % 15
    values[rows, rival] = nudged(values[rows, best], steps)
    assert picks_a_maximum(values, best).all()
    assert picks_a_maximum(values, rival).all()
    # Log-means computed to 1e-5 by two routes: the scorer's tolerance.
    means = np.log(values)
    means[rows, rival] = means[rows, best] - 1.5e-5
    assert picks_a_maximum(means, rival, rel=0.0, atol=2e-5).all()


def test_a_clearly_smaller_column_is_not_a_maximum():
    values = np.random.default_rng(10).uniform(0.1, 2.0, (40, 15))
    worst = values.argmin(axis=1)
    assert not picks_a_maximum(values, worst).any()
    second = np.argsort(values, axis=1)[:, -2]
    assert not picks_a_maximum(values, second).any()
    assert not picks_a_maximum(np.log(values), second, rel=0.0, atol=2e-5).any()
