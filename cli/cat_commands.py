"""Adaptive-testing commands: ``cat-simulate`` (the simulation study on a stored item bank),
``cat-run`` (a live CAT of a model through a backend; see ``workflows.cat.live``) and
``cat-posthoc`` (real candidates' answers replayed adaptively; see ``workflows.cat.posthoc``)."""

from __future__ import annotations

import argparse
import math
import re

from analytics.cat import CAT_ESTIMATORS, SELECTORS, CatSettings
from cli.arguments import (
    add_db,
    add_runs_dir,
    db_path,
    output_file,
    positive_int,
    positive_seconds,
    whole_number_at_least,
)
from cli.errors import UsageError
from cli.run_commands import BASE_URL_HELP, REQUEST_TIMEOUT_HELP
from enem.areas import AREAS
from inference.backends import available_backends
from inference.protocol import PROMPT_LANGUAGES, SHOT_SETTINGS
from workflows.cat.comparison import comparison_lines, load_comparison
from workflows.cat.live import CatRunSpec, execute_live_cat
from workflows.cat.posthoc import needed_distribution, posthoc_cat
from workflows.cat.simulation import (
    load_area_bank,
    memory_budget,
    run_simulation,
    simulation_bytes,
)


def add_cat_settings(parser: argparse.ArgumentParser) -> None:
    """The CAT set-up flags (defaults: the paper's maximum-information rule and 20 items, θ̂ by
    EAP; docs/adaptive_testing.md, "Defaults", says why not the paper's ML)."""
    defaults = CatSettings()
    group = parser.add_argument_group("adaptive test")
    group.add_argument("--selector", choices=tuple(SELECTORS), default=defaults.selector,
                       help="item selection: maximum Fisher information, random items, or "
                            "randomesque (a random one of the k most informative)")
    group.add_argument("--randomesque-k", type=positive_int, default=defaults.randomesque_k,
                       help=f"k of the randomesque rule (default {defaults.randomesque_k})")
    group.add_argument("--estimator", choices=CAT_ESTIMATORS, default=defaults.estimator,
                       help=f"θ estimator (default {defaults.estimator}): eap, the posterior "
                            "mean with a N(0, 1) prior on --grid-points points over "
                            "--theta-range (Bock & Mislevy 1982), finite from the first answer; "
                            "ml, bounded ML with Dodd's rule while all answers agree (the CAT "
                            "seed's estimator: under the 3PL it runs to its bound for low "
                            "scorers, MSE 1.64 after 20 items on the real 2022 CN bank against "
                            "EAP's 0.27; docs/adaptive_testing.md); map, the posterior mode")
    group.add_argument("--max-items", type=positive_int, default=defaults.max_items,
                       help=f"test length cap (default {defaults.max_items})")
    group.add_argument("--se-target", type=positive_number,
                       help="stop once SE(θ̂) falls below this (default: fixed length); "
                            "cat-simulate then also prints the variable-length CAT")
    group.add_argument("--start-theta", type=finite_number, default=defaults.start_theta,
                       help="θ̂ before the first item, where the first item is chosen "
                            "(default 0, the prior mean)")
    group.add_argument("--theta-range", type=finite_number, nargs=2,
                       default=defaults.theta_range,
                       metavar=("LOW", "HIGH"),
                       help="ML/MAP search bounds and EAP grid range (default -6 6)")
    group.add_argument("--grid-points", type=grid_points, default=defaults.grid_points,
                       help=f"EAP quadrature points, at least 2 (default {defaults.grid_points}: "
                            "with -6 6 the grid of mirt's fscores, which Beyond accuracy's θ "
                            "come from)")


def cat_settings(args: argparse.Namespace) -> CatSettings:
    """The parsed set-up; UsageError for values no rule accepts."""
    try:
        return CatSettings(selector=args.selector, randomesque_k=args.randomesque_k,
                           estimator=args.estimator, max_items=args.max_items,
                           se_target=args.se_target, start_theta=args.start_theta,
                           theta_range=tuple(args.theta_range), grid_points=args.grid_points)
    except ValueError as error:
        # The settings name their fields (theta_range); the user typed flags (--theta-range).
        message = re.sub(r"\b(randomesque_k|max_items|se_target|start_theta|theta_range|"
                         r"grid_points)\b", lambda m: "--" + m.group(1).replace("_", "-"),
                         str(error))
        raise UsageError(message) from error


def finite_number(text: str) -> float:
    """An argparse type: a finite number (``inf`` and ``nan`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def positive_number(text: str) -> float:
    """An argparse type: a finite number above 0."""
    value = finite_number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text!r}")
    return value


#: An argparse type: a number of quadrature points, at least 2 (one point is no grid: every
#: θ̂ would be that point).
grid_points = whole_number_at_least(2)


def _check_simulees(n_simulees: int, n_items: int, settings: CatSettings,
                    random_items: int | None) -> None:
    """UsageError when ``--simulees`` would need more memory than a simulation may take."""
    need = simulation_bytes(n_simulees, n_items, settings, random_items)
    budget = memory_budget()
    if need <= budget:
        return
    each = simulation_bytes(1, n_items, settings, random_items)
    raise UsageError(
        f"--simulees {n_simulees:,} would need about {need / 2**30:,.1f} GiB of memory on this "
        f"bank of {n_items} items ({each:,} bytes per simulee); the limit is "
        f"{budget // each:,} simulees ({budget / 2**30:,.1f} GiB, half of this machine's memory)")


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must lie in [0, 1], got {text}")
    return value


def cmd_cat_simulate(args: argparse.Namespace) -> int:
    output = output_file(args.output) if args.output else None
    settings = cat_settings(args)
    bank = load_area_bank(db_path(args), args.area, args.years)
    _check_simulees(args.simulees, bank.bank.n_items, settings, args.random_items)
    report = run_simulation(bank, settings, n_simulees=args.simulees, theta_mean=args.theta_mean,
                            theta_sd=args.theta_sd, random_items=args.random_items,
                            target_mse=args.target_mse, guess=args.guess, slip=args.slip,
                            seed=args.seed)
    print("\n".join(report.lines()))
    table = report.table.rename(columns={"mse_cat": "MSE CAT", "mse_random": "MSE random forms"})
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4f}", na_rep="—"))
    if output is not None:
        report.table.to_csv(output, index=False)
        print(f"table written to {output}")
    return 0


def cat_run_spec(args: argparse.Namespace) -> CatRunSpec:
    """The live CAT the parsed ``cat-run`` arguments describe."""
    if args.backend != "random" and not args.model:
        raise UsageError(f"--model is required for the {args.backend} backend")
    options = {key: value for key, value in (
        ("device", args.device), ("base_url", args.base_url),
        ("timeout", args.request_timeout)) if value}
    for option, flag in (("base_url", "--base-url"), ("timeout", "--request-timeout")):
        if option in options and args.backend != "openai":
            raise UsageError(f"{flag} applies to --backend openai only, not {args.backend}")
    return CatRunSpec(model=args.model or "", backend=args.backend, year=args.year,
                      areas=tuple(args.areas), language=args.language, shots=args.shots,
                      n_paths=args.paths, seed=args.seed, settings=cat_settings(args).as_dict(),
                      backend_options=options, model_name=args.model_name)


def cmd_cat_run(args: argparse.Namespace) -> int:
    spec = cat_run_spec(args)
    settings = spec.cat_settings
    print(f"live CAT {spec.run_id}: {settings.describe()}")
    rows = execute_live_cat(spec, db_path(args), args.runs_dir,
                            progress=None if args.quiet else print)
    last = rows.sort_values("step").groupby(["area", "path"]).tail(1)
    summary = last[["area", "path", "step", "theta", "theta_se"]].rename(
        columns={"step": "items", "theta_se": "SE"}).sort_values(["area", "path"])
    print(summary.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"paths stored in cat_paths under run {spec.run_id}")
    print("\n".join(comparison_lines(load_comparison(db_path(args), rows))))
    return 0


def cmd_cat_posthoc(args: argparse.Namespace) -> int:
    output = output_file(args.output) if args.output else None
    result = posthoc_cat(db_path(args), args.year, args.area, n_candidates=args.candidates,
                         seed=args.seed, selector=args.selector, randomesque_k=args.randomesque_k)
    print("\n".join(result.lines()))
    table = needed_distribution(result.frame["items_needed"]).rename(columns={
        "items_needed": "items needed", "percent": "%", "cumulative_percent": "cumulative %"})
    print(table.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    if output is not None:
        result.frame.to_csv(output, index=False)
        print(f"one row per candidate written to {output}")
    return 0


def add_cat_parsers(commands) -> None:
    """Register ``cat-simulate``, ``cat-run`` and ``cat-posthoc`` on the main parser's
    sub-commands."""
    simulate = commands.add_parser(
        "cat-simulate", help="adaptive testing simulation on an area's stored item bank: MSE "
                             "by test length, CAT against random fixed forms")
    add_db(simulate)
    simulate.add_argument("--area", required=True, choices=AREAS, help="the bank's area")
    simulate.add_argument("--years", type=int, nargs="+",
                          help="years whose items form the bank (default: every stored year)")
    simulate.add_argument("--simulees", type=positive_int, default=100,
                          help="simulated examinees (default 100, as the paper)")
    simulate.add_argument("--theta-mean", type=finite_number, default=0.0,
                          help="mean of θ₀ (default 0)")
    simulate.add_argument("--theta-sd", type=positive_number, default=1.0,
                          help="SD of θ₀ (default 1)")
    simulate.add_argument("--random-items", type=positive_int,
                          help="length of the random forms (default 5 × --max-items)")
    simulate.add_argument("--target-mse", type=positive_number,
                          help="MSE whose test length is reported (default: the CAT's MSE at "
                               "--max-items)")
    simulate.add_argument("--guess", type=_probability, default=0.0,
                          help="P(a wrong answer is scored right) (default 0)")
    simulate.add_argument("--slip", type=_probability, default=0.0,
                          help="P(a right answer is scored wrong) (default 0)")
    simulate.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    simulate.add_argument("--output", help="write the MSE table to this CSV")
    add_cat_settings(simulate)
    simulate.set_defaults(run=cmd_cat_simulate)

    live = commands.add_parser(
        "cat-run", help="a live adaptive test of a model through a backend (resumable: run "
                        "again to continue)")
    add_db(live)
    add_runs_dir(live)
    live.add_argument("--model", help="local path or hub id (transformers), API model name "
                                      "(openai); default random-baseline for --backend random")
    live.add_argument("--backend", choices=available_backends(), default="transformers",
                      help="model backend (default transformers)")
    live.add_argument("--year", type=int, required=True, help="exam year whose items are asked")
    live.add_argument("--areas", nargs="+", default=list(AREAS), choices=AREAS,
                      help="areas to test (default all four)")
    live.add_argument("--language", choices=PROMPT_LANGUAGES, default="pt",
                      help="prompt language (default pt)")
    live.add_argument("--shots", type=int, choices=SHOT_SETTINGS, default=0,
                      help="solved examples before each item (default 0)")
    live.add_argument("--paths", type=positive_int, default=1,
                      help="CATs per area, path p showing each item's p-th option order "
                           "(default 1: the original order)")
    live.add_argument("--seed", type=int, default=0, help="seed of the option orders")
    live.add_argument("--device", help="cuda / cpu (transformers; default: cuda when present)")
    live.add_argument("--base-url", help=BASE_URL_HELP)
    live.add_argument("--request-timeout", type=positive_seconds, metavar="SECONDS",
                      help=REQUEST_TIMEOUT_HELP)
    live.add_argument("--model-name", help="name shown in the dashboard")
    live.add_argument("--quiet", action="store_true", help="no progress lines")
    add_cat_settings(live)
    live.set_defaults(run=cmd_cat_run)

    posthoc = commands.add_parser(
        "cat-posthoc", help="post-hoc CAT of real candidates: replay their recorded answers "
                            "adaptively and print how many items gave their full-test θ "
                            "within its SE")
    add_db(posthoc)
    posthoc.add_argument("--year", type=int, required=True, help="exam year of the candidates")
    posthoc.add_argument("--area", required=True, choices=AREAS, help="the area replayed")
    posthoc.add_argument("--candidates", type=positive_int, default=1000,
                         help="candidates sampled (default 1000; fewer when fewer are scored)")
    posthoc.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    posthoc.add_argument("--selector", choices=tuple(SELECTORS), default=CatSettings().selector,
                         help="item selection (default max-info); θ is estimated by the "
                              "year's scoring recipe")
    posthoc.add_argument("--randomesque-k", type=positive_int,
                         default=CatSettings().randomesque_k,
                         help="k of the randomesque rule (default 5)")
    posthoc.add_argument("--output", help="write one row per candidate to this CSV")
    posthoc.set_defaults(run=cmd_cat_posthoc)
