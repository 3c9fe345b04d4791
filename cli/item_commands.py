"""The ``items`` command: the Item gaps page's tables for a selection, as CSV
(``workflows.items.checks``)."""

from __future__ import annotations

import argparse
import sys

from cli.arguments import add_db, db_path, output_file
from cli.errors import UsageError
from enem.areas import AREAS
from inference.protocol import PROMPT_LANGUAGES, SHOT_SETTINGS
from store.connection import connected
from store.dashboard_queries import (
    UNCOUNTED_SHOTS,
    area_items,
    model_catalogue,
    shots_from_url,
)
from workflows.items.checks import default_booklet, item_checks, runs_item_language
from workflows.items.gaps import ALL_RUNS, ranked
from workflows.items.selection import ItemSelection

#: What the command can print: each a table of ``ItemChecks``.
TABLES = ("gaps", "dif", "calibration", "fit")


def cmd_items(args: argparse.Namespace) -> int:
    output = output_file(args.output) if args.output else None
    path = db_path(args)
    if not path.exists():
        raise FileNotFoundError(f"no database at {path}; run `enem-llm demo` or ingest a year")
    with connected(path, read_only=True) as con:
        if area_items(con, args.year, args.area).empty:
            raise UsageError(f"no items of {args.area} in {args.year} in {path}: ingest that "
                             "year (`enem-llm info` lists what is stored)")
        catalogue = model_catalogue(con)
        known = set(catalogue["model"])
        unknown = sorted(set(args.models or ()) - known)
        if unknown:
            raise UsageError(f"no run labelled {', '.join(map(repr, unknown))}; "
                             "`enem-llm runs` lists the labels")
        year_runs = catalogue[catalogue["years"].astype(str).str.split(", ").apply(
            lambda years: str(args.year) in years)]
        models = list(args.models or year_runs["model"])
        booklet = args.booklet if args.booklet is not None else default_booklet(
            con, args.year, args.area, args.lang, args.shots, models)
        selection = ItemSelection(args.year, args.area, booklet, None, args.lang, args.shots,
                                  tuple(models), args.pooled)
        selection = ItemSelection(args.year, args.area, booklet,
                                  runs_item_language(con, selection), args.lang, args.shots,
                                  tuple(models), args.pooled)
        checks = item_checks(con, selection)
    table = {"gaps": ranked(checks.gaps) if not args.every_series else checks.gaps,
             "dif": checks.dif, "calibration": checks.calibration.table,
             "fit": checks.fit}[args.table]
    notes = _notes(checks, args.table)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if output is None:
        table.to_csv(sys.stdout, index=False)
    else:
        table.to_csv(output, index=False)
        print(f"{len(table)} rows written to {output}", file=sys.stderr)
    return 0


def _notes(checks, table: str) -> list[str]:
    """Why a table is empty or less trustworthy, one sentence each."""
    notes = []
    if checks.gaps.empty:
        notes.append("no model response pattern in the selection")
    if table in ("dif", "fit") and checks.selection.booklet is None:
        notes.append("no booklet to compare on")
    elif table in ("dif", "fit") and checks.score_tables_missing:
        notes.append("the store has no per-score item tables for this year: ingest it again")
    if table == "calibration":
        notes.extend(checks.calibration.notes)
    return notes


def add_item_parser(commands) -> None:
    """Register ``items`` on the main parser's sub-commands."""
    items = commands.add_parser(
        "items", help="item-level checks of a selection as CSV: the items much easier or "
                      "harder for the machines (gaps), DIF humans vs machines, the items "
                      "calibrated on the machines, the humans' item fit")
    add_db(items)
    items.add_argument("--year", type=int, required=True, help="ENEM year")
    items.add_argument("--area", required=True, choices=AREAS, help="area")
    items.add_argument("--booklet", type=int,
                       help="booklet (CO_PROVA) of the DIF and item fit (default: the one the "
                            "runs took most, else the one most candidates took)")
    items.add_argument("--lang", choices=PROMPT_LANGUAGES, default="pt",
                       help="prompt language of the runs (default pt)")
    items.add_argument("--shots", type=shots_from_url, default=0,
                       choices=[*SHOT_SETTINGS, UNCOUNTED_SHOTS], metavar="{0,1,4,published}",
                       help="prompt shots of the runs (default 0; 'published': the paper's "
                            "few-shot runs)")
    items.add_argument("--models", nargs="+", metavar="LABEL",
                       help="runs by their label (default: every run of the year)")
    items.add_argument("--pooled", action="store_true",
                       help="pool the runs of each model into one series")
    items.add_argument("--table", choices=TABLES, default="gaps",
                       help="gaps (default: the pooled rows ranked from much easier to much "
                            "harder for the machines), dif, calibration or fit")
    items.add_argument("--every-series", action="store_true",
                       help=f"gaps: every series' rows, not only '{ALL_RUNS}'")
    items.add_argument("--output", help="write the CSV here instead of to standard output")
    items.set_defaults(run=cmd_items)
