"""The ``enem-llm`` command line: ``enem-llm COMMAND --help`` explains each command.

Commands: demo, ingest-enem, ingest-items, score-patterns, info, migrate here; run, runs,
remove-run, cancel, prompt, import-results, export-run and import-questions in ``cli.run_commands``;
items in ``cli.item_commands``; fetch in ``cli.fetch_commands``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from analytics import ESTIMATOR_METHODS
from cli.arguments import add_db, db_path, output_file
from cli.cat_commands import add_cat_parsers
from cli.errors import INTERRUPTED, Parser, UsageError, error_line, exit_code
from cli.fetch_commands import add_fetch_parser
from cli.item_commands import add_item_parser
from cli.report_commands import add_report_parser
from cli.run_commands import add_run_parser
from enem.items import load_items
from enem.pattern_files import PATTERN_ENCODINGS, score_pattern_file
from enem.scoring import DEFAULT_OPTIONS, SCALES, ScoringOptions
from store.connection import connected, database_path, set_writer_name
from store.migration import migrate_store
from store.queries import overview, year_booklets
from workflows.demo_build import build_demo_database
from workflows.ingest import SHRINK_LIMIT, ingest_items, ingest_year


def _add_scoring(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("scoring (defaults are INEP's official recipe)")
    group.add_argument("--method", choices=ESTIMATOR_METHODS, default=DEFAULT_OPTIONS.method,
                       help=f"ability estimator (default {DEFAULT_OPTIONS.method})")
    group.add_argument("--grid-points", type=int, default=DEFAULT_OPTIONS.n_quadrature,
                       help="EAP quadrature points (INEP 40; the paper 121)")
    group.add_argument("--grid-range", type=float, nargs=2, default=DEFAULT_OPTIONS.theta_range,
                       metavar=("LOW", "HIGH"), help="EAP grid range (INEP -4 4; the paper -6 6)")
    group.add_argument("--scaling", type=float, default=DEFAULT_OPTIONS.scaling,
                       help="scaling constant D of the item bank (ENEM 1; TIMSS-style 1.7)")
    group.add_argument("--scale", choices=SCALES, default=DEFAULT_OPTIONS.scale,
                       help="NOTA scale: enem = round(k·θ+d, 1) per area; paper = 100·θ+500")


def _add_allow_shrink(parser: argparse.ArgumentParser, also: str) -> None:
    """``--allow-shrink``: the consent to replace a year with a worse one; ``also`` names the
    command's own cases before the shared one (an item file with fewer valid booklets)."""
    scoring = ("" if not also else
               f", or scoring under {100 * SHRINK_LIMIT:.0f}%% of the area records per "
               "candidate it scores now, or reproducing the official notas of fewer booklets")
    parser.add_argument("--allow-shrink", action="store_true",
                        help=f"replace the year even with {also}an item file with fewer valid "
                             f"booklets than it holds now{scoring} (refused otherwise, exit 3)")


def _options(args: argparse.Namespace) -> ScoringOptions:
    low, high = args.grid_range
    if args.grid_points < 2 or not low < high:
        raise UsageError("--grid-points must be ≥ 2 and --grid-range LOW < HIGH")
    return ScoringOptions(method=args.method, n_quadrature=args.grid_points,
                          theta_range=(low, high), scaling=args.scaling, scale=args.scale)


def cmd_demo(args: argparse.Namespace) -> int:
    path = database_path(args.db)
    if path.exists() and not args.force:
        print(f"{path} already exists; pass --force to rebuild the demo into it")
        return 0
    summary = build_demo_database(path, n_examinees=args.examinees, seed=args.seed,
                                  progress=not args.quiet)
    print("\n".join(summary.lines()))
    print(f"demo database ready: {path}")
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    options = _options(args)
    summary = ingest_year(database_path(args.db), args.year, Path(args.microdata),
                          Path(args.items), encoding=args.encoding, progress=not args.quiet,
                          options=options, allow_shrink=args.allow_shrink)
    print("\n".join(summary.lines()))
    print(f"  scoring: {options.describe()}")
    return 0


def cmd_ingest_items(args: argparse.Namespace) -> int:
    options = _options(args)
    ingest_items(database_path(args.db), args.year, Path(args.items), encoding=args.encoding,
                 options=options, allow_shrink=args.allow_shrink)
    with connected(database_path(args.db), read_only=True) as con:
        booklets = year_booklets(con, args.year)
    valid = booklets[booklets["valid"]]
    print(f"year {args.year}: items of {len(valid)} booklets stored "
          f"({', '.join(f'{a} {n}' for a, n in valid.groupby('area').size().items())}); "
          "no candidates (items-only)")
    for row in booklets[~booklets["valid"]].itertuples():
        print(f"  booklet {row.booklet_id} not scoreable: {row.problem}")
    print(f"  scoring: {options.describe()}")
    return 0


def cmd_score_patterns(args: argparse.Namespace) -> int:
    output = output_file(args.output)
    options = _options(args)
    items = load_items(Path(args.items), args.encoding)
    summary = score_pattern_file(Path(args.patterns), items, output, options,
                                 lc_language=args.lc_language, encoding=args.patterns_encoding)
    print(f"scored {summary.scored:,} of {summary.rows:,} rows → {args.output}")
    if summary.failed and summary.scored:
        print(f"{summary.failed:,} rows could not be scored; see their SCORE_ERROR column")
    for line in summary.nota_lines():
        print(line)
    if not summary.scored:
        print(f"error: none of the {summary.rows:,} rows could be scored; see their "
              f"SCORE_ERROR column in {args.output}", file=sys.stderr)
        return 1
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    path = db_path(args)
    if not path.exists():
        raise FileNotFoundError(
            f"no database at {path}; run `enem-llm demo` or `enem-llm ingest-enem`")
    with connected(path, read_only=True) as con:
        print(overview(con).to_string(index=False))
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    path = db_path(args)
    summary = migrate_store(path, on_year=lambda year: print(f"copying {year} …",
                                                             file=sys.stderr, flush=True))
    print("\n".join(summary.lines()))
    print(f"{path} is now a store of per-year files (see docs/store.md)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="enem-llm", description=__doc__.splitlines()[0])
    add_db(parser, global_option=True)
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="generate and ingest the synthetic demo year")
    add_db(demo)
    demo.add_argument("--examinees", type=int, default=100_000, help="candidates (default 100k)")
    demo.add_argument("--seed", type=int, default=2023, help="random seed (default 2023)")
    demo.add_argument("--force", action="store_true", help="rebuild even if the database exists")
    demo.add_argument("--quiet", action="store_true", help="no progress bars")
    demo.set_defaults(run=cmd_demo)

    ingest = commands.add_parser("ingest-enem", help="ingest one year of INEP microdata")
    add_db(ingest)
    ingest.add_argument("--year", type=int, required=True, help="exam year, e.g. 2023")
    ingest.add_argument("--microdata", required=True,
                        help="MICRODADOS_ENEM_YYYY.csv (2009–2023) or RESULTADOS_YYYY.csv (2024+)")
    ingest.add_argument("--items", required=True, help="ITENS_PROVA_YYYY.csv")
    ingest.add_argument("--encoding", default="latin-1", help="file encoding (INEP: latin-1)")
    ingest.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_allow_shrink(ingest, f"under {100 * SHRINK_LIMIT:.0f}%% of the candidates it holds "
                              "now, from a microdata file that ends mid-line, ")
    _add_scoring(ingest)
    ingest.set_defaults(run=cmd_ingest)

    items_only = commands.add_parser(
        "ingest-items", help="store one year's item parameters only (no microdata needed)")
    add_db(items_only)
    items_only.add_argument("--year", type=int, required=True, help="exam year, e.g. 2022")
    items_only.add_argument("--items", required=True, help="ITENS_PROVA_YYYY.csv")
    items_only.add_argument("--encoding", default="latin-1", help="file encoding (INEP: latin-1)")
    _add_allow_shrink(items_only, "")
    _add_scoring(items_only)
    items_only.set_defaults(run=cmd_ingest_items)

    patterns = commands.add_parser(
        "score-patterns", help="score a CSV of response patterns (θ, SE, l_z, CTT, nota)")
    patterns.add_argument("--items", required=True, help="ITENS_PROVA_YYYY.csv")
    patterns.add_argument("--patterns", required=True,
                          help="CSV with CO_PROVA and TX_RESPOSTAS (+TP_LINGUA) or "
                               "RESPONSE_PATTERN")
    patterns.add_argument("--output", required=True, help="where to write the scored CSV")
    patterns.add_argument("--lc-language", type=int, choices=(0, 1),
                          help="TP_LINGUA for LC rows that have none (0 English, 1 Spanish)")
    patterns.add_argument("--encoding", default="latin-1", help="items file encoding")
    patterns.add_argument("--patterns-encoding", choices=PATTERN_ENCODINGS, default="auto",
                          help="patterns file encoding (default auto: UTF-8 when the whole "
                               "file is valid UTF-8, else Latin-1)")
    _add_scoring(patterns)
    patterns.set_defaults(run=cmd_score_patterns)

    add_run_parser(commands)
    add_report_parser(commands)
    add_cat_parsers(commands)
    add_item_parser(commands)
    add_fetch_parser(commands)

    info = commands.add_parser("info", help="what the database holds")
    add_db(info)
    info.set_defaults(run=cmd_info)

    migrate = commands.add_parser(
        "migrate", help="turn a single-file store into a main file plus one file per year",
        description="A store of one file copies itself whole on every write; migrated, a write "
                    "copies the main file (runs and metadata) and the year it changes. Needs "
                    "free disk of about the store's size while it runs; refused, with nothing "
                    "changed, when there is not.")
    add_db(migrate)
    migrate.set_defaults(run=cmd_migrate)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; bad input or a failure ends in one ``error:`` line on stderr and a
    non-zero exit code (``cli.errors``)."""
    try:
        args = build_parser().parse_args(argv)
        set_writer_name(f"enem-llm {args.command}")
        return args.run(args)
    except Exception as error:
        code = exit_code(error)
        if code is None:  # not a failure the command line knows: a bug, keep the traceback
            raise
        print(error_line(error), file=sys.stderr)
        return code


def run() -> None:
    """Entry point of the ``enem-llm`` console script."""
    try:
        code = main()
        if code == INTERRUPTED:
            # Stopped: its state is written and its outcome printed. Leave at once rather than
            # tear down the thousands of modules a command imports (about 2 s on a busy machine)
            # and wait for worker threads still holding requests the stop abandoned.
            sys.stdout.flush()
            sys.stderr.flush()
            logging.shutdown()
            os._exit(code)
        sys.exit(code)
    except BrokenPipeError:
        # The reader of our output went away (``| head``): not an error of ours. Point stdout at
        # nothing so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
