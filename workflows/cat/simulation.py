"""The CAT simulation study on a stored item bank: an area's calibrated items, simulees of
known θ, MSE by test length for CAT and random fixed forms, and the variable-length CAT that
stops at an SE target (``analytics.cat.study``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analytics.cat import CatSettings, simulation_study, study_table, variable_length_study
from analytics.cat.study import RANDOM_LENGTH_FACTOR
from analytics.irt import ItemBank
from enem.areas import check_area
from enem.items import stored_item_bank
from store.cat_queries import area_bank_items
from store.connection import connected
from store.model_runs import year_scoring_options

#: SE targets of the page's variable-length study (θ units). An EAP's SE is the posterior SD,
#: at most the prior's 1; on INEP's banks 20 items bring most simulees to 0.25–0.6.
SE_TARGETS = (0.25, 0.3, 0.35, 0.4, 0.5, 0.6)


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
    bank = stored_item_bank(rows, scaling=scalings.pop())
    return AreaBank(area, rows["item_id"].to_numpy(np.int64),
                    rows["skill"].to_numpy(), rows["year"].to_numpy(np.int64), bank)


def simulation_bytes(n_simulees: int, n_items: int, settings: CatSettings,
                     random_items: int | None = None) -> int:
    """About how many bytes ``run_simulation`` holds at once for ``n_simulees`` on a bank of
    ``n_items``: the study keeps every simulee's arrays in memory (it advances them in
    lockstep), so memory grows in proportion to them and a count too large for the machine
    should be refused before the first array is made.

    Per simulee and per pass (the CAT, then the random forms, whose paths are kept): the item,
    label, θ̂ and SE paths and the answer draws (per step), the available-items mask and the item
    information (per bank item), and the running log-likelihood with one temporary of the
    estimator (per grid point). On the demo's MT bank (45 items, ML) it says 8.8 kB per simulee
    where the process grew by 5.6 kB: an upper bound, as a refusal should be.
    """
    points = len(settings.make_estimator().points)
    cat_steps = min(settings.max_items, n_items)
    random_steps = min(random_items or RANDOM_LENGTH_FACTOR * settings.max_items, n_items)

    def one_pass(steps: int) -> int:
        return 41 * steps + 16 + 17 * n_items + 16 * points

    return int(n_simulees) * (one_pass(cat_steps) + one_pass(random_steps) + 33 * cat_steps)


def memory_budget() -> int:
    """Bytes a simulation may take: half of this machine's physical memory."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError, AttributeError):
        return 4 * 2**30


@dataclass(frozen=True, eq=False)
class SimulationReport:
    """MSE by test length (``table``: items, mse_cat, mse_random), the length each method
    needs for ``target_mse`` (``target_given``: the caller chose it; otherwise it is the CAT's
    MSE at its full length), and the variable-length CAT (``variable``, one row per SE target,
    columns of ``analytics.cat.variable_length_study``) when the settings have an SE target."""

    table: pd.DataFrame
    target_mse: float
    cat_length: int | None
    random_length: int | None
    description: str
    target_given: bool = False
    variable: pd.DataFrame | None = None

    def lines(self) -> list[str]:
        """The description, then the study in words (and the variable-length CAT's line)."""
        return [self.description, self.summary()] + (
            [variable_length_line(self.variable.iloc[0], self.table)]
            if self.variable is not None and len(self.variable) else [])

    def summary(self) -> str:
        """What the MSE is, where the CAT ends, and what random forms need to match it."""
        cat = self.table["mse_cat"].dropna()
        n_cat, n_random = len(cat), int(self.table["items"].max())
        final = float(cat.iloc[-1])
        random_there = float(self.table["mse_random"].iloc[n_cat - 1])
        text = ("MSE is the mean over the simulees of (θ̂ − θ₀)², the squared distance of the "
                f"estimate from the simulee's true θ. After its {n_cat} items the CAT's MSE is "
                f"{final:.3f} (θ̂ off by {np.sqrt(final):.2f} logits, root mean square); random "
                f"fixed forms of {n_cat} items: {random_there:.3f}.")

        def needs(length: int | None, of: int, who: str) -> str:
            return (f"{who} {length} items" if length
                    else f"{who} do not within {of} items" if who.endswith("forms")
                    else f"{who} does not within its {of} items")

        share = (f": the CAT needs {100 * self.cat_length / self.random_length:.0f}% of their "
                 "length" if self.cat_length and self.random_length else "")
        if self.target_given:
            return (f"{text} To reach MSE ≤ {self.target_mse:.3f} and stay there: "
                    f"{needs(self.cat_length, n_cat, 'the CAT needs')}, "
                    f"{needs(self.random_length, n_random, 'random forms')}{share}.")
        random = (f"Random forms need {self.random_length} items to reach that MSE and stay at "
                  f"or below it{share}." if self.random_length else
                  f"Random forms do not reach that MSE within {n_random} items.")
        return f"{text} {random}"


def variable_length_line(row: pd.Series, table: pd.DataFrame) -> str:
    """One variable-length CAT in words, beside the fixed-length CAT of the study."""
    fixed = table["mse_cat"].dropna()
    cap = len(fixed)
    return (f"variable length (SE < {row['se_target']:g} or {cap} items): "
            f"{row['mean_items']:.1f} items on average (median {row['median_items']:g}); "
            f"{100 * row['reached']:.0f}% reached SE < {row['se_target']:g}, the rest stopped "
            f"at {cap} items; MSE {row['mse']:.3f} (the fixed-length CAT after {cap} items: "
            f"{float(fixed.iloc[-1]):.3f})")


def simulee_thetas(n_simulees: int, theta_mean: float = 0.0, theta_sd: float = 1.0,
                   seed: int = 0) -> np.ndarray:
    """θ₀ of the study's simulees, shape (n,): N(mean, sd²) drawn from ``default_rng([seed,
    1])``, the same draws for every part of a study (CAT, random forms, variable length)."""
    if n_simulees < 1 or theta_sd <= 0:
        raise ValueError("n_simulees must be ≥ 1 and theta_sd > 0")
    return np.random.default_rng([seed, 1]).normal(theta_mean, theta_sd, n_simulees)


def variable_length(area_bank: AreaBank, settings: CatSettings, se_targets: Sequence[float], *,
                    n_simulees: int = 100, theta_mean: float = 0.0, theta_sd: float = 1.0,
                    seed: int = 0) -> pd.DataFrame:
    """The variable-length CAT for each SE target (stop once SE < target, at most
    ``settings.max_items``) on the study's simulees: se_target, mean_items, median_items,
    reached, mse."""
    theta0 = simulee_thetas(n_simulees, theta_mean, theta_sd, seed)
    return pd.DataFrame(variable_length_study(
        area_bank.bank, theta0, settings.make_estimator(), se_targets,
        max_items=settings.max_items, selector=settings.make_selector(), seed=seed,
        start_theta=settings.start_theta))


def run_simulation(area_bank: AreaBank, settings: CatSettings, *, n_simulees: int = 100,
                   theta_mean: float = 0.0, theta_sd: float = 1.0,
                   random_items: int | None = None, target_mse: float | None = None,
                   guess: float = 0.0, slip: float = 0.0, seed: int = 0) -> SimulationReport:
    """The paper's simulation: ``n_simulees`` with θ₀ ~ N(mean, sd²), a fixed-length CAT of
    ``settings.max_items`` against random forms; with ``settings.se_target`` also the
    variable-length CAT that stops there (noiseless). ``target_mse`` defaults to the CAT's MSE
    at its full length."""
    theta0 = simulee_thetas(n_simulees, theta_mean, theta_sd, seed)
    result = simulation_study(area_bank.bank, theta0, settings.make_estimator(),
                              max_items=settings.max_items, random_items=random_items,
                              selector=settings.make_selector(), seed=seed,
                              start_theta=settings.start_theta, guess=guess, slip=slip)
    target = float(result.mse_cat[-1]) if target_mse is None else float(target_mse)
    cat_length, random_length = result.lengths_to_reach(target)
    noise = f", guess {guess:g}, slip {slip:g}" if guess or slip else ""
    fixed = CatSettings.from_dict({**settings.as_dict(), "se_target": None})
    description = (f"{area_bank.describe()}; {n_simulees} simulees θ ~ N({theta_mean:g}, "
                   f"{theta_sd:g}²); {fixed.describe()}{noise}; seed {seed}")
    variable = None
    if settings.se_target is not None:
        variable = variable_length(area_bank, settings, [settings.se_target],
                                   n_simulees=n_simulees, theta_mean=theta_mean,
                                   theta_sd=theta_sd, seed=seed)
    return SimulationReport(pd.DataFrame(study_table(result)), target, cat_length,
                            random_length, description, target_mse is not None, variable)
