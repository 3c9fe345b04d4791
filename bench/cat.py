"""Benchmark: lockstep CAT simulation against catsim's own simulator, same bank and settings.

10,000 simulees (θ ~ N(0, 1)) take a 20-item CAT on a 180-item 3PL bank with INEP-like
parameters: maximum-information selection, bounded ML on [−6, 6] with Dodd's rule for
all-correct / all-wrong starts, start θ = 0, fixed length. catsim 0.21 runs the same set-up
(``FixedPointInitializer``, ``MaxInfoSelector``, ``NumericalSearchEstimator``,
``TestLengthStopper``) one simulee at a time; it is timed on a subset and scaled per simulee.
Both draw the answers from ``default_rng(seed)`` in the same order, so the subset's paths can
be compared item by item.

Then a live CAT with the random backend over the four areas (one path each, the same CAT
settings) on a demo database (``--db``, or a small one built in a temporary folder first, not
timed): its wall time from plan to stored paths, run folder writes included.

Usage, from the repository root: python -m bench.cat [--simulees 10000] [--items 180]
    [--steps 20] [--catsim-simulees 500] [--seed 0] [--db DEMO.duckdb]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from analytics import ItemBank, log_likelihood_on_grid
from analytics.cat import CatEAP, CatML, FixedLength, MaxInformation, simulate_cat
from bench.scoring import best_time, inep_like_bank
from workflows.cat.live import CatRunSpec, execute_live_cat
from workflows.demo_build import build_demo_database

#: catsim's search stops within xatol = 1e-5 of the maximum; ours converges to 1e-8.
THETA_TOLERANCE = 5e-5


def catsim_simulation(bank: ItemBank, theta0: np.ndarray, steps: int, seed: int):
    """catsim's Simulator on the same settings; returns (seconds, items (n, T), θ̂ (n, T + 1))."""
    from catsim.estimation import NumericalSearchEstimator
    from catsim.initialization import FixedPointInitializer
    from catsim.item_bank import ItemBank as CatsimBank
    from catsim.selection import MaxInfoSelector
    from catsim.simulation import Simulator
    from catsim.stopping import TestLengthStopper

    matrix = np.column_stack([bank.scaling * bank.a, bank.b, bank.c, np.ones(bank.n_items)])
    simulator = Simulator(CatsimBank(matrix), theta0, FixedPointInitializer(0.0),
                          MaxInfoSelector(), NumericalSearchEstimator(),
                          TestLengthStopper(max_items=steps), seed=seed)
    start = time.perf_counter()
    simulator.simulate()
    seconds = time.perf_counter() - start
    return seconds, np.array(simulator.administered_items), np.array(simulator.estimations)


def compare_paths(bank: ItemBank, ours, items: np.ndarray, thetas: np.ndarray) -> str:
    """How many paths are identical, and why the others part."""
    n = items.shape[0]
    same_items = (ours.items[:n] == items).all(axis=1)
    delta = np.abs(ours.theta[:n] - thetas).max(axis=1)
    identical = same_items & (delta <= THETA_TOLERANCE)
    higher = 0
    parted = np.flatnonzero(~identical)
    for row in parted:
        # The first step whose θ̂ differs: same answers so far, two different maxima.
        step = int(np.argmax(np.abs(ours.theta[row] - thetas[row]) > THETA_TOLERANCE))
        matrix = np.full((1, bank.n_items), np.nan)
        matrix[0, ours.items[row, :step]] = ours.correct[row, :step]
        values = log_likelihood_on_grid(matrix, bank, [ours.theta[row, step],
                                                       thetas[row, step]])[0]
        higher += bool(values[0] >= values[1])
    return (f"identical paths (items, and θ̂ within {THETA_TOLERANCE:g} at every step): "
            f"{identical.sum()} of {n}; max |Δθ̂| on them {delta[identical].max():.1e}. "
            f"The other {parted.size} part where the 3PL likelihood has two maxima and "
            f"catsim's bounded search stops at one of them: ours has the higher likelihood "
            f"at the parting step in {higher} of {parted.size}.")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulees", type=int, default=10_000)
    parser.add_argument("--items", type=int, default=180, help="items in the bank")
    parser.add_argument("--steps", type=int, default=20, help="items per test")
    parser.add_argument("--catsim-simulees", type=int, default=500,
                        help="catsim is timed on the first N simulees and scaled per simulee")
    parser.add_argument("--repeats", type=int, default=3, help="best of N for our timings")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--db", help="demo database for the live CAT (default: build a small "
                                     "one in a temporary folder)")
    return parser.parse_args(argv)


def live_cat_seconds(db: Path, runs: Path, year: int) -> tuple[float, int]:
    """Wall time of a live CAT with the random backend over the four areas, items asked."""
    spec = CatRunSpec(model="", backend="random", year=year)
    start = time.perf_counter()
    rows = execute_live_cat(spec, db, runs)
    return time.perf_counter() - start, len(rows)


def live_cat(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        db = Path(args.db) if args.db else Path(folder) / "demo.duckdb"
        if not args.db:
            build_demo_database(db, n_examinees=2000, seed=1, progress=False)
        seconds, asked = live_cat_seconds(db, Path(folder) / "runs", 2023)
    print(f"live CAT, random backend, four areas: {seconds:.2f} s for {asked} items asked "
          f"(target ≤ 2 s)")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    bank = inep_like_bank(args.items, rng)
    theta0 = rng.normal(0.0, 1.0, args.simulees)
    print(f"bank: {args.items} items (mean a {bank.a.mean():.2f}, b {bank.b.mean():.2f}, "
          f"c {bank.c.mean():.3f}, D = {bank.scaling:g}); {args.simulees} simulees × "
          f"{args.steps} steps; max information, ML on [−6, 6] with Dodd's rule")

    def ours_ml():
        return simulate_cat(bank, theta0, MaxInformation(), CatML(), FixedLength(args.steps),
                            seed=args.seed)

    ml_seconds, paths = best_time(ours_ml, args.repeats)
    eap_seconds, _ = best_time(lambda: simulate_cat(
        bank, theta0, MaxInformation(), CatEAP(), FixedLength(args.steps), seed=args.seed),
        args.repeats)
    print(f"ours (lockstep, ML):  {ml_seconds:8.3f} s for {args.simulees} simulees "
          f"({1e6 * ml_seconds / args.simulees:.1f} µs per simulee)")
    print(f"ours (lockstep, EAP): {eap_seconds:8.3f} s for {args.simulees} simulees")
    live_cat(args)
    try:
        import catsim  # noqa: F401  (only to learn whether it is installed)
    except ImportError as error:
        print(f"catsim skipped: {error}")
        return 0
    subset = min(args.catsim_simulees, args.simulees)
    seconds, items, thetas = catsim_simulation(bank, theta0[:subset], args.steps, args.seed)
    scaled = seconds * args.simulees / subset
    print(f"catsim Simulator:     {seconds:8.3f} s measured on the first {subset} simulees, "
          f"scaled per simulee to {scaled:.1f} s for {args.simulees} "
          f"({1e6 * seconds / subset:.0f} µs per simulee)")
    print(f"speed ratio (catsim scaled / ours, ML): {scaled / ml_seconds:.0f}×  (target ≥ 50×)")
    print(compare_paths(bank, paths, items, thetas))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
