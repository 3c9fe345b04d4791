"""Benchmark: scoring a full booklet (θ EAP + SE + l_z + l_z*) against girth and catsim.

Builds a random 3PL bank with INEP-like parameters and a simulated 0/1 response matrix, then
times:

* ours: ``analytics.score_responses`` (EAP θ, SE, l_z, l_z*) on INEP's grid (40 points, [−4, 4]),
  with the package's block threads (``analytics.irt.MAX_THREADS``) and on one thread;
* girth: ``girth.ability_3pl_eap`` (θ only). girth always integrates with Gauss–Legendre nodes,
  so it is given 40 nodes on [−4, 4] and ours is timed again on that same grid for the ratio and
  the |Δθ| check;
* catsim 0.21: it has no EAP; its ability estimator is ``NumericalSearchEstimator`` (bounded ML,
  one examinee at a time), compared with our vectorised ML on the same bounds. It is timed on a
  subset and extrapolated linearly to the full matrix.

Usage, from the repository root: python -m bench.scoring [--examinees 200000] [--items 45] [--seed
0]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from analytics import (
    INEP_GRID,
    THETA_BOUNDS,
    EAPEstimator,
    ItemBank,
    MLEstimator,
    QuadratureGrid,
    irt,
    log_likelihood_on_grid,
    probability,
    score_responses,
)
from bench.tables import print_aligned

# girth only integrates with Gauss-Legendre nodes: give it INEP's point count and range.
GIRTH_GRID = QuadratureGrid(INEP_GRID.n_quadrature, INEP_GRID.theta_range, rule="gauss-legendre")
CATSIM_BOUNDS = THETA_BOUNDS  # catsim.irt.THETA_MIN_EXTENDED / THETA_MAX_EXTENDED


@dataclass
class Row:
    label: str
    examinees: str
    seconds: float
    ratio: str = ""
    max_delta: str = ""


def inep_like_bank(n_items: int, rng: np.random.Generator) -> ItemBank:
    """a ≈ 2.1 on average (log-normal), b ≈ N(1.2, 1.1²), c ≈ 0.17 (clipped normal); D = 1."""
    spread = 0.35
    a = rng.lognormal(np.log(2.1) - spread**2 / 2, spread, n_items)
    b = rng.normal(1.2, 1.1, n_items)
    c = np.clip(rng.normal(0.17, 0.05, n_items), 0.02, 0.4)
    return ItemBank.from_arrays(a, b, c)


def simulate(bank: ItemBank, n_examinees: int, rng: np.random.Generator) -> np.ndarray:
    """A 0/1 float matrix (n_examinees, n_items) from θ ~ N(0, 1), built in blocks."""
    theta = rng.normal(0.0, 1.0, n_examinees)
    responses = np.empty((n_examinees, bank.n_items))
    for start in range(0, n_examinees, 50_000):
        rows = slice(start, start + 50_000)
        responses[rows] = rng.random((theta[rows].size, bank.n_items)) < probability(
            theta[rows], bank)
    return responses


def best_time(run: Callable[[], object], repeats: int) -> tuple[float, object]:
    """Fastest wall time over ``repeats`` runs, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def girth_theta(responses: np.ndarray, bank: ItemBank, chunk: int) -> np.ndarray:
    """girth's EAP θ on GIRTH_GRID, fed in row chunks so its (items, n, nodes) array fits memory."""
    import girth

    options = {"quadrature_n": GIRTH_GRID.n_quadrature,
               "quadrature_bounds": GIRTH_GRID.theta_range}
    parts = [np.atleast_1d(girth.ability_3pl_eap(responses[start:start + chunk].T, bank.b,
                                                 bank.a, bank.c, options))
             for start in range(0, responses.shape[0], chunk)]
    return np.concatenate(parts)


def catsim_ml_theta(responses: np.ndarray, bank: ItemBank) -> np.ndarray:
    """catsim's bounded numerical-search ML θ, one examinee at a time (its only interface)."""
    from catsim.estimation import NumericalSearchEstimator
    from catsim.item_bank import ItemBank as CatsimBank

    items = CatsimBank(np.column_stack([bank.a, bank.b, bank.c, np.ones(bank.n_items)]))
    estimator = NumericalSearchEstimator(method="bounded")
    administered = list(range(bank.n_items))
    return np.array([
        estimator.estimate(item_bank=items, administered_items=administered,
                           response_vector=pattern.astype(bool).tolist(), est_theta=0.0)
        for pattern in responses
    ])


@dataclass
class MLComparison:
    delta_text: str
    note: str


def compare_ml(responses: np.ndarray, bank: ItemBank, ours: np.ndarray,
               theirs: np.ndarray) -> MLComparison:
    """|Δθ| where both searches found the same mode, and who wins where they did not."""
    # catsim answers all-correct / all-wrong patterns with Dodd's heuristic, not an ML.
    mixed = (responses.min(axis=1) == 0) & (responses.max(axis=1) == 1)
    delta = np.abs(ours - theirs)
    same = mixed & (delta < 1e-3)
    other = np.flatnonzero(mixed & ~same)
    points = np.column_stack([ours[other], theirs[other]])
    loglik = np.array([log_likelihood_on_grid(responses[i], bank, points[k])[0]
                       for k, i in enumerate(other)]).reshape(-1, 2)
    ours_better = int(np.sum(loglik[:, 0] >= loglik[:, 1]))
    text = f"{delta[same].max():.1e} on {same.sum()} of {mixed.sum()} mixed patterns"
    note = (f"On the other {other.size} mixed patterns catsim's local search stopped at a "
            f"different mode; ours has the higher likelihood on {ours_better} of them.")
    return MLComparison(text, note)


def print_table(rows: list[Row]) -> None:
    header = ("what", "examinees", "seconds", "speed ratio", "max |Δθ|")
    table = [header] + [(r.label, r.examinees, f"{r.seconds:.3f}", r.ratio, r.max_delta)
                        for r in rows]
    print_aligned(table[0], table[1:])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examinees", type=int, default=200_000)
    parser.add_argument("--items", type=int, default=45)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="best of N for our timings")
    parser.add_argument("--girth-chunk", type=int, default=20_000,
                        help="rows per girth call (girth builds an items × rows × nodes array)")
    parser.add_argument("--catsim-examinees", type=int, default=2000,
                        help="catsim is timed on this many examinees and extrapolated")
    return parser.parse_args(argv)


def catsim_rows(responses: np.ndarray, bank: ItemBank, args: argparse.Namespace,
                ours_ml: tuple[float, np.ndarray], ours_eap_seconds: float) -> tuple[Row, str]:
    """catsim's table row and footnote; a note instead when catsim cannot be imported."""
    n = responses.shape[0]
    label = f"catsim NumericalSearchEstimator ML (extrapolated from {args.catsim_examinees})"
    try:
        import catsim  # noqa: F401  (only to learn whether it is installed)
    except ImportError as error:
        return Row(label, str(n), float("nan"), "skipped"), f"catsim skipped: {error}."
    subset = responses[: args.catsim_examinees]
    start = time.perf_counter()
    values = catsim_ml_theta(subset, bank)
    measured = time.perf_counter() - start
    seconds = measured * n / subset.shape[0]
    ml_seconds, ml_theta = ours_ml
    report = compare_ml(subset, bank, ml_theta[: subset.shape[0]], values)
    row = Row(label, str(n), seconds,
              f"{seconds / ml_seconds:.0f}× vs our ML, {seconds / ours_eap_seconds:.0f}× vs our "
              "EAP pipeline", report.delta_text)
    note = (f"catsim: {measured:.2f} s measured for {subset.shape[0]} examinees, extrapolated "
            f"linearly to {n}. {report.note}")
    return row, note


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    bank = inep_like_bank(args.items, rng)
    responses = simulate(bank, args.examinees, rng)
    n = args.examinees
    print(f"bank: {args.items} items, mean a {bank.a.mean():.2f}, mean b {bank.b.mean():.2f}, "
          f"mean c {bank.c.mean():.3f}; responses {n} × {args.items}, "
          f"{responses.mean():.3f} correct")

    threads = irt.MAX_THREADS
    ours_inep, _ = best_time(lambda: score_responses(responses, bank), args.repeats)
    ours_gl, ours_gl_scores = best_time(
        lambda: score_responses(responses, bank, EAPEstimator(GIRTH_GRID)), args.repeats)
    ours_ml, ours_ml_est = best_time(
        lambda: MLEstimator(theta_bounds=CATSIM_BOUNDS).estimate(responses, bank), args.repeats)
    irt.MAX_THREADS = 1
    ours_inep_1, _ = best_time(lambda: score_responses(responses, bank), args.repeats)
    ours_gl_1, _ = best_time(
        lambda: score_responses(responses, bank, EAPEstimator(GIRTH_GRID)), args.repeats)
    irt.MAX_THREADS = threads

    start = time.perf_counter()
    girth_values = girth_theta(responses, bank, args.girth_chunk)
    girth_seconds = time.perf_counter() - start
    girth_delta = np.max(np.abs(girth_values - ours_gl_scores.theta))

    catsim_row, catsim_note = catsim_rows(responses, bank, args, (ours_ml, ours_ml_est.theta),
                                          ours_inep)
    rows = [
        Row(f"ours: EAP θ+SE+l_z+l_z*, INEP grid (40 pts, [-4,4]), {threads} threads", str(n),
            ours_inep),
        Row("ours: EAP θ+SE+l_z+l_z*, INEP grid (40 pts, [-4,4]), 1 thread", str(n),
            ours_inep_1),
        Row(f"ours: EAP θ+SE+l_z+l_z*, girth's grid (40 GL nodes, [-4,4]), {threads} threads",
            str(n), ours_gl),
        Row("ours: EAP θ+SE+l_z+l_z*, girth's grid (40 GL nodes, [-4,4]), 1 thread", str(n),
            ours_gl_1),
        Row("girth.ability_3pl_eap (θ only), 40 GL nodes, [-4,4]", str(n), girth_seconds,
            f"{girth_seconds / ours_gl:.1f}× ({threads} threads), "
            f"{girth_seconds / ours_gl_1:.1f}× (1 thread)",
            f"{girth_delta:.1e}"),
        Row(f"ours: ML θ+SE, bounds [-6,6], {threads} threads", str(n), ours_ml),
        catsim_row,
    ]
    print()
    print_table(rows)
    print()
    print(catsim_note)
    target = 30.0
    ratio = girth_seconds / ours_gl
    print(f"target ≥ {target:.0f}× girth on the same grid: "
          f"{'met' if ratio >= target else 'NOT met'} ({ratio:.1f}× with {threads} threads, "
          f"{girth_seconds / ours_gl_1:.1f}× on one); agreement with girth "
          f"{'within' if girth_delta <= 1e-6 else 'OUTSIDE'} 1e-6. girth is single-threaded numpy; "
          "BLAS threads are left at their defaults.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
