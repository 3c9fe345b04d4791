"""One CAT set-up by name: the settings the command line, the dashboard and stored runs share,
and the selector, estimator and stopping rule they make."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from analytics.ability import PAPER_GRID, THETA_BOUNDS, QuadratureGrid
from analytics.cat.estimators import CONSTANT_PATTERN_RULES, CatEAP, CatEstimator, CatMAP, CatML
from analytics.cat.selectors import SELECTORS, ItemSelector, MaxInformation, Randomesque
from analytics.cat.stopping import (
    DEFAULT_MAX_ITEMS,
    FixedLength,
    StandardErrorTarget,
    StoppingRule,
)

#: θ bounds beyond ±this are refused: θ is in SDs of the calibration population, and the ML/MAP
#: search grid (one point per 0.1) grows with the range.
THETA_LIMIT = 20.0
#: Estimator names, as ``analytics.ability.ESTIMATOR_METHODS`` spells them.
CAT_ESTIMATORS: tuple[str, ...] = (CatML.name, CatEAP.name, CatMAP.name)


@dataclass(frozen=True)
class CatSettings:
    """A CAT set-up.

    Parameters
    ----------
    selector : {"max-info", "random", "randomesque"}
    randomesque_k : int
        Items the randomesque rule draws among.
    estimator : {"eap", "ml", "map"}
        EAP integrates ``grid_points`` points over ``theta_range``; ML and MAP search it.
        Default EAP with a N(0, 1) prior: finite from the first answer and never at a bound.
        The CAT seed's ML has no finite estimate until a pattern holds a right and a wrong
        answer, and under the 3PL its maximum runs to the lower bound for many low scorers
        (the likelihood flattens at the guessing floor), so on INEP's real banks its MSE rises
        and falls with the test length (docs/adaptive_testing.md, "Defaults").
    max_items : int
        Test length cap (the paper: 20).
    se_target : float or None
        Stop once SE(θ̂) falls below it; None for fixed-length tests.
    start_theta : float
        θ̂ before the first item.
    theta_range : (float, float)
    grid_points : int
    constant_patterns : {"dodd", "bound"}
        ML's rule for all-correct / all-wrong patterns.
    """

    selector: str = MaxInformation.name
    randomesque_k: int = 5
    estimator: str = CatEAP.name
    max_items: int = DEFAULT_MAX_ITEMS
    se_target: float | None = None
    start_theta: float = 0.0
    theta_range: tuple[float, float] = THETA_BOUNDS
    grid_points: int = PAPER_GRID.n_quadrature
    constant_patterns: str = "dodd"

    def __post_init__(self) -> None:
        if self.selector not in SELECTORS:
            raise ValueError(f"unknown selector {self.selector!r}; choose one of "
                             f"{', '.join(SELECTORS)}")
        if self.estimator not in CAT_ESTIMATORS:
            raise ValueError(f"unknown estimator {self.estimator!r}; choose one of "
                             f"{', '.join(CAT_ESTIMATORS)}")
        if self.constant_patterns not in CONSTANT_PATTERN_RULES:
            raise ValueError(f"constant_patterns must be one of {CONSTANT_PATTERN_RULES}")
        object.__setattr__(self, "theta_range", tuple(float(x) for x in self.theta_range))
        # Checked here for every estimator, not only where a grid is built: a value no rule
        # accepts should fail when the set-up is made, with its own message.
        low, high = self.theta_range
        if not (-THETA_LIMIT <= low < high <= THETA_LIMIT):
            raise ValueError(f"theta_range must be finite with {-THETA_LIMIT:g} ≤ low < high ≤ "
                             f"{THETA_LIMIT:g}; got {self.theta_range}")
        if not math.isfinite(self.start_theta):
            raise ValueError(f"start_theta must be a finite number; got {self.start_theta!r}")
        if isinstance(self.grid_points, bool) or int(self.grid_points) != self.grid_points \
                or self.grid_points < 2:
            raise ValueError(f"grid_points must be a whole number ≥ 2; got {self.grid_points!r}")
        # Build each role once so a bad value fails here, with its own message.
        self.make_selector(), self.make_estimator(), self.make_stopper()

    def make_selector(self) -> ItemSelector:
        if self.selector == Randomesque.name:
            return Randomesque(int(self.randomesque_k))
        return SELECTORS[self.selector]()

    def make_estimator(self) -> CatEstimator:
        if self.estimator == CatEAP.name:
            return CatEAP(grid=QuadratureGrid(int(self.grid_points), self.theta_range))
        if self.estimator == CatMAP.name:
            return CatMAP(theta_bounds=self.theta_range)
        return CatML(theta_bounds=self.theta_range, constant_patterns=self.constant_patterns)

    def make_stopper(self) -> StoppingRule:
        if self.se_target is None:
            return FixedLength(int(self.max_items))
        return StandardErrorTarget(float(self.se_target), int(self.max_items))

    def describe(self) -> str:
        """One line, e.g. ``max-info · ml (Dodd) · SE < 0.3 or 20 items``."""
        selector = (f"randomesque (k = {self.randomesque_k})" if self.selector == Randomesque.name
                    else self.selector)
        estimator = f"ml ({self.constant_patterns})" if self.estimator == CatML.name \
            else self.estimator
        stop = (f"SE < {self.se_target:g} or {self.max_items} items" if self.se_target
                else f"{self.max_items} items")
        return f"{selector} · {estimator} · {stop}"

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> CatSettings:
        known = {field.name for field in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in values.items() if key in known})
