"""Benchmark: item calibration (MML by EM) against girth's MML on the same simulated data.

For each size (examinees × items, 45 items as an ENEM area by default) it simulates answers from
an INEP-like bank (``bench.scoring.inep_like_bank``: a ≈ 2.1, b ≈ N(1.2, 1.1²), c ≈ 0.17, D = 1;
c = 0 for the 2PL rows) and times:

* 2PL: ``analytics.items.calibration.calibrate(model="2PL")`` (no priors: plain MML, SEs
  included) against ``girth.twopl_mml`` (no SEs);
* 3PL: ``calibrate(model="3PL", priors=NO_PRIORS)``, the like-for-like fit, and with its default
  priors, against ``girth.threepl_mml`` (no priors, a ∈ [0.25, 4], c ∈ [0, 0.33]).

girth is given 61 points on [−6, 6] like ours (its nodes are Gauss–Legendre, ours equally
spaced). The table shows seconds, the ratio ours/girth (below 1: ours is faster), max and median
|Δb| against girth, and Δ log L: our marginal log-likelihood minus that at girth's estimates, on
our grid (positive: ours fits better). girth 0.8.0's 3PL needs a one-line shim under numpy ≥ 2
(see ``girth_threepl``). Ours runs on ``analytics.irt.MAX_THREADS`` block threads.

Usage, from the repository root: python -m bench.calibration [--sizes 2000 20000] [--items 45]
    [--seed 0] [--repeats 1] [--skip-girth-3pl-above 20000]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import numpy as np

from analytics import ItemBank, irt, log_likelihood_on_grid
from analytics.items.calibration import NO_PRIORS, Calibration, calibrate
from bench.scoring import inep_like_bank, simulate
from bench.tables import print_aligned

N_QUADRATURE = 61
THETA_RANGE = (-6.0, 6.0)
GIRTH_OPTIONS = {"quadrature_n": N_QUADRATURE, "quadrature_bounds": THETA_RANGE}

Result = TypeVar("Result")


@dataclass
class Row:
    label: str
    examinees: str
    seconds: float
    ratio: str = ""
    max_delta: str = ""
    median_delta: str = ""
    delta_loglik: str = ""


def marginal_log_likelihood(responses: np.ndarray, bank: ItemBank) -> float:
    """Σ_j log Σ_k π_k L_j(θ_k) on our default grid (61 points on [−6, 6], N(0, 1) mass)."""
    points = np.linspace(*THETA_RANGE, N_QUADRATURE)
    log_mass = -0.5 * points**2
    log_mass -= np.logaddexp.reduce(log_mass)
    per_point = log_likelihood_on_grid(responses, bank, points) + log_mass
    return float(np.logaddexp.reduce(per_point, axis=1).sum())


def girth_twopl(responses: np.ndarray) -> ItemBank:
    import girth

    result = girth.twopl_mml(responses.T.astype(int), GIRTH_OPTIONS)
    return ItemBank(result["Discrimination"], result["Difficulty"])


def girth_threepl(responses: np.ndarray) -> ItemBank:
    """girth.threepl_mml, with its proportion correct passed to ``_mml_abstract`` flattened to
    shape (1,): girth 0.8.0 passes a (1, 1) array, whose fminbound result numpy ≥ 2 refuses to
    store in a float array. Nothing else changes."""
    import girth

    module: Any = sys.modules["girth.unidimensional.dichotomous.threepl_mml"]
    original = module._mml_abstract

    def flattened(difficulty, scalar, discrimination, theta, distribution):
        return original(difficulty, np.ravel(scalar), discrimination, theta, distribution)

    module._mml_abstract = flattened
    try:
        result = girth.threepl_mml(responses.T.astype(int), GIRTH_OPTIONS)
    finally:
        module._mml_abstract = original
    return ItemBank(result["Discrimination"], result["Difficulty"], result["Guessing"])


def best_of(run: Callable[[], Result], repeats: int) -> tuple[float, Result]:
    """Fastest wall time over ``repeats`` runs (at least one), and the last result."""
    times = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def our_row(label: str, responses: np.ndarray, ours: tuple[float, Calibration],
            theirs: tuple[float, ItemBank] | None) -> Row:
    """Our fit's row, compared with girth's where girth ran."""
    n = str(responses.shape[0])
    seconds, fit = ours
    cycles = f"{fit.iterations} EM cycles"
    if theirs is None:
        return Row(label, n, seconds, f"girth not run ({cycles})")
    girth_seconds, girth_bank = theirs
    gap = np.abs(fit.bank.b - girth_bank.b)
    delta = fit.log_likelihood - marginal_log_likelihood(responses, girth_bank)
    return Row(label, n, seconds, f"{seconds / girth_seconds:.2f} ({cycles})",
               f"{gap.max():.3f}", f"{np.median(gap):.4f}", f"{delta:+.2f}")


def print_table(rows: list[Row]) -> None:
    header = ("what", "examinees", "seconds", "ours/girth", "max |Δb|", "median |Δb|",
              "Δ log L")
    table = [header] + [(r.label, r.examinees, f"{r.seconds:.2f}", r.ratio, r.max_delta,
                         r.median_delta, r.delta_loglik) for r in rows]
    print_aligned(table[0], table[1:])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20_000])
    parser.add_argument("--items", type=int, default=45)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1, help="best of N for our timings")
    parser.add_argument("--skip-girth-3pl-above", type=int, default=20_000,
                        help="girth's 3PL is not run above this many examinees (it is slow)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    bank_3pl = inep_like_bank(args.items, rng)
    bank_2pl = ItemBank(bank_3pl.a, bank_3pl.b)
    print(f"bank: {args.items} items, mean a {bank_3pl.a.mean():.2f}, mean b "
          f"{bank_3pl.b.mean():.2f}, mean c {bank_3pl.c.mean():.3f} (2PL rows: c = 0); "
          f"{N_QUADRATURE} points on {list(THETA_RANGE)} for both; ours on "
          f"{irt.MAX_THREADS} threads")
    rows: list[Row] = []
    for n in args.sizes:
        two = simulate(bank_2pl, n, rng)
        girth_2pl = best_of(partial(girth_twopl, two), 1)
        rows.append(our_row("ours: calibrate 2PL (+ SEs)", two,
                            best_of(partial(calibrate, two, "2PL"), args.repeats), girth_2pl))
        rows.append(Row("girth.twopl_mml", str(n), girth_2pl[0]))

        three = simulate(bank_3pl, n, rng)
        girth_3pl = (best_of(partial(girth_threepl, three), 1)
                     if n <= args.skip_girth_3pl_above else None)
        plain = best_of(partial(calibrate, three, "3PL", priors=NO_PRIORS), args.repeats)
        rows.append(our_row("ours: calibrate 3PL, no priors (+ SEs)", three, plain, girth_3pl))
        rows.append(our_row("ours: calibrate 3PL, default priors (+ SEs)", three,
                            best_of(partial(calibrate, three, "3PL"), args.repeats), girth_3pl))
        if girth_3pl is not None:
            rows.append(Row("girth.threepl_mml", str(n), girth_3pl[0]))
    print()
    print_table(rows)
    print()
    print("ours/girth < 1: ours is faster. Δ log L > 0: our estimates have the higher marginal "
          "likelihood (for the prior fit, priors are not counted, so it may be below girth's).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
