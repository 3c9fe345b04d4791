"""The CAT simulation study on a stored item bank: an area's calibrated items, simulees of
known θ, MSE by test length for CAT and random fixed forms (``analytics.cat.study``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analytics.cat import CatSettings, simulation_study, study_table
from analytics.irt import ItemBank
from enem.areas import check_area
from store.cat_queries import area_bank_items
from store.connection import connected
from store.model_runs import year_scoring_options


@dataclass(frozen=True, eq=False)
class AreaBank:
    """An area's item bank: ``item_ids``, ``skills`` and ``years`` (n_items,) beside the 3PL
    ``bank`` (D from the years' scoring settings)."""

    area: str
    item_ids: np.ndarray
    skills: np.ndarray
    years: np.ndarray
    bank: ItemBank

    def describe(self) -> str:
        years = sorted(set(self.years.tolist()))
        return (f"{self.area}: {self.bank.n_items} items of {', '.join(map(str, years))} "
                f"(D = {self.bank.scaling:g})")


def load_area_bank(db_path: Path, area: str, years: Sequence[int] | None = None) -> AreaBank:
    """The distinct items with parameters of ``area`` in ``years`` (every stored year when
    None). ValueError when there are none, or the years' banks use different D."""
    area = check_area(area)
    with connected(Path(db_path), read_only=True) as con:
        rows = area_bank_items(con, area, years)
        scalings = {year_scoring_options(con, int(y)).scaling for y in set(rows["year"])}
    if rows.empty:
        where = f"year {', '.join(map(str, years))}" if years else "the store"
        raise ValueError(f"no {area} items with parameters in {where}")
    if len(scalings) > 1:
        raise ValueError(f"the years pooled use different D ({sorted(scalings)}); pool years "
                         "scored alike")
    bank = ItemBank.from_arrays(rows["a"], rows["b"], rows["c"], scaling=scalings.pop())
    return AreaBank(area, rows["item_id"].to_numpy(np.int64),
                    rows["skill"].to_numpy(), rows["year"].to_numpy(np.int64), bank)


@dataclass(frozen=True, eq=False)
class SimulationReport:
    """MSE by test length (``table``: items, mse_cat, mse_random) and the length each method
    needs for ``target_mse``."""

    table: pd.DataFrame
    target_mse: float
    cat_length: int | None
    random_length: int | None
    description: str

    def lines(self) -> list[str]:
        def length(value: int | None, of: int) -> str:
            return f"{value} items" if value else f"not within {of} items"

        n_random = int(self.table["items"].max())
        n_cat = int(self.table["mse_cat"].notna().sum())
        share = (f" ({100 * self.cat_length / self.random_length:.0f}% of the random forms' "
                 "length)" if self.cat_length and self.random_length else "")
        return [self.description,
                (f"items needed for MSE ≤ {self.target_mse:.4f}: CAT "
                f"{length(self.cat_length, n_cat)}, random forms "
                f"{length(self.random_length, n_random)}{share}")]


def run_simulation(area_bank: AreaBank, settings: CatSettings, *, n_simulees: int = 100,
                   theta_mean: float = 0.0, theta_sd: float = 1.0,
                   random_items: int | None = None, target_mse: float | None = None,
                   guess: float = 0.0, slip: float = 0.0, seed: int = 0) -> SimulationReport:
    """The paper's simulation: ``n_simulees`` with θ₀ ~ N(mean, sd²), a fixed-length CAT of
    ``settings.max_items`` (the SE target is not used: the study compares lengths) against
    random forms. ``target_mse`` defaults to the CAT's MSE at its full length."""
    if n_simulees < 1 or theta_sd <= 0:
        raise ValueError("n_simulees must be ≥ 1 and theta_sd > 0")
    theta0 = np.random.default_rng([seed, 1]).normal(theta_mean, theta_sd, n_simulees)
    result = simulation_study(area_bank.bank, theta0, settings.make_estimator(),
                              max_items=settings.max_items, random_items=random_items,
                              selector=settings.make_selector(), seed=seed,
                              start_theta=settings.start_theta, guess=guess, slip=slip)
    target = float(result.mse_cat[-1]) if target_mse is None else float(target_mse)
    cat_length, random_length = result.lengths_to_reach(target)
    noise = f", guess {guess:g}, slip {slip:g}" if guess or slip else ""
    description = (f"{area_bank.describe()}; {n_simulees} simulees θ ~ N({theta_mean:g}, "
                   f"{theta_sd:g}²); {settings.describe()}{noise}; seed {seed}")
    return SimulationReport(pd.DataFrame(study_table(result)), target, cat_length,
                            random_length, description)
