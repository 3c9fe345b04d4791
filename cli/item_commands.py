"""The ``items`` command: the Item gaps page's tables for a selection, as CSV
(``workflows.items.checks``; the DIF between human groups: ``workflows.items.group_dif``)."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from analytics.items.fit import DEFAULT_POOLING, POOLING_RULES
from analytics.items.gaps import MIN_SERIES
from cli.arguments import add_db, db_path, output_file
from cli.errors import UsageError
from enem.areas import AREAS
from inference.protocol import PROMPT_LANGUAGES, SHOT_SETTINGS
from store.catalogue_queries import model_catalogue
from store.connection import connected
from store.item_queries import area_items
from store.model_sql import UNCOUNTED_SHOTS
from workflows.items.checks import default_booklet, item_checks, runs_item_language
from workflows.items.gaps import ALL_RUNS, ranked
from workflows.items.group_dif import GROUPINGS, GroupDIF, human_group_dif
from workflows.items.selection import ItemSelection
from workflows.key_positions import key_position_table
from workflows.views import shots_from_url

#: What the command can print: each a table of ``ItemChecks``, the DIF between two groups
#: of the booklet's candidates, and correctness by the key's shown position.
TABLES = ("gaps", "dif", "calibration", "fit", "group-dif", "key-position")


def cmd_items(args: argparse.Namespace) -> int:
    _check_group_flags(args)
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
        # .map and .loc: on a store without runs .apply gives an empty frame, and indexing
        # with it drops every column.
        of_year = catalogue["years"].astype(str).str.split(", ").map(
            lambda years: str(args.year) in years).astype(bool)
        year_runs = catalogue.loc[of_year]
        models = list(args.models or year_runs["model"])
        if args.table == "key-position":
            return _print_key_positions(con, args, models, output)
        if args.shots is None:
            args.shots = 0
        booklet = args.booklet if args.booklet is not None else default_booklet(
            con, args.year, args.area, args.lang, args.shots, models)
        selection = ItemSelection(args.year, args.area, booklet, None, args.lang, args.shots,
                                  tuple(models), args.pooled)
        selection = ItemSelection(args.year, args.area, booklet,
                                  runs_item_language(con, selection), args.lang, args.shots,
                                  tuple(models), args.pooled)
        if args.table == "group-dif":
            if booklet is None:
                raise UsageError(f"no booklet of {args.area} in {args.year} to compare on")
            table, notes = _group_table(human_group_dif(con, selection, args.grouping,
                                                        focal=args.state))
        else:
            checks = item_checks(con, selection, sx2_pooling=args.sx2_pooling)
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


def _print_key_positions(con, args: argparse.Namespace, models: list[str], output) -> int:
    """The key-position table as CSV, then one line per series with the paper's measure: its
    Pearson r with b (`uniformity vs difficulty: r = …`)."""
    table, correlations = key_position_table(con, args.year, args.area, args.lang, args.shots,
                                             models)
    if table.empty:
        print("note: no model answer of the selection records where the key was shown",
              file=sys.stderr)
    if output is None:
        table.to_csv(sys.stdout, index=False, float_format="%.6g")
    else:
        table.to_csv(output, index=False, float_format="%.6g")
        print(f"{len(table)} rows written to {output}", file=sys.stderr)
    if correlations.empty and not table.empty:
        print("note: no series showed each item's key equally often at every position (all "
              "120 orders), so the paper's uniformity measure is undefined", file=sys.stderr)
    several = len(correlations) > 1
    for row in correlations.itertuples():
        named = f"{row.series}: " if several else ""
        print(f"{named}uniformity vs difficulty: r = {row.r:.3f} (p = {row.p_value:.3g}, "
              f"n = {row.items} items)")
    return 0


def _check_group_flags(args: argparse.Namespace) -> None:
    """--grouping goes with --table group-dif, and --state with --grouping state."""
    if (args.table == "group-dif") != (args.grouping is not None):
        raise UsageError("--table group-dif and --grouping go together")
    if args.state is not None and args.grouping != "state":
        raise UsageError("--state goes with --grouping state")


def _group_table(result: GroupDIF) -> tuple[pd.DataFrame, list[str]]:
    """The DIF table between two groups, and a note saying which groups they are."""
    contrast = result.contrast
    classes = result.classes
    note = (f"reference group: {contrast.reference_label} ({result.reference_candidates} "
            f"candidates), focal group: {contrast.focal_label} ({result.focal_candidates}); "
            f"{result.outside} candidates of the booklet are in neither; mh_delta < 0: harder "
            f"for the focal group at equal score; ETS classes A {classes['A']}, "
            f"B {classes['B']}, C {classes['C']}")
    return result.table, [note]


def _notes(checks, table: str) -> list[str]:
    """Why a table is empty or less trustworthy, one sentence each."""
    notes = []
    if checks.baselines:
        notes.append(f"left out as a baseline (random answers, not a model; never pooled with "
                     f"the machines): {', '.join(checks.baselines)}")
    if checks.gaps.empty:
        notes.append("no model response pattern in the selection")
    series = checks.gaps.loc[checks.gaps["series"] != ALL_RUNS, "series"].nunique()
    if table == "gaps" and 0 < series < MIN_SERIES:
        notes.append(f"series_t and series_q are empty: a t over series needs at least "
                     f"{MIN_SERIES} series and the selection has {series}")
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
    items.add_argument("--shots", type=shots_from_url, default=None,
                       choices=[*SHOT_SETTINGS, UNCOUNTED_SHOTS], metavar="{0,1,4,published}",
                       help="prompt shots of the runs (default 0, key-position: every "
                            "setting; 'published': the paper's few-shot runs)")
    items.add_argument("--models", nargs="+", metavar="LABEL",
                       help="runs by their label (default: every run of the year)")
    items.add_argument("--pooled", action="store_true",
                       help="pool the runs of each model into one series")
    items.add_argument("--table", choices=TABLES, default="gaps",
                       help="gaps (default: the pooled rows ranked from much easier to much "
                            "harder for the machines), dif, calibration, fit, group-dif "
                            "(DIF between two groups of the booklet's candidates: needs "
                            "--grouping), or key-position (correct answers by where the key "
                            "was shown, the paper's uniformity measure and its r with b as a "
                            "last line)")
    items.add_argument("--grouping", choices=GROUPINGS,
                       help="group-dif: sex (female reference, male focal), school_type "
                            "(public reference, private focal) or state (one state focal, "
                            "every other reference)")
    items.add_argument("--state", metavar="UF",
                       help="group-dif by state: the focal state (default: the booklet's "
                            "largest), e.g. SP")
    items.add_argument("--sx2-pooling", choices=POOLING_RULES, default=DEFAULT_POOLING,
                       help="fit: how S-X² pools sparse score groups: mirt (default, mirt's "
                            "rule: a sparse group joins its less populated neighbour) or tails "
                            "(from both tails toward the centre)")
    items.add_argument("--every-series", action="store_true",
                       help=f"gaps: every series' rows, not only '{ALL_RUNS}'")
    items.add_argument("--output", help="write the CSV here instead of to standard output")
    items.set_defaults(run=cmd_items)
