"""The ``report`` command: the dashboard's view of a selection as an offline HTML report, and on
request its PDF, a slide deck and every figure as SVG and print-resolution PNG (``workflows
.report``). The selection options are the dashboard URL's (or pass the address itself)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tqdm import tqdm

from cli.arguments import add_db, db_path
from cli.errors import UsageError
from enem.areas import AREAS
from inference.protocol import PROMPT_LANGUAGES, SHOT_SETTINGS
from store.catalogue_queries import human_groups, loaded_years
from store.connection import connected
from store.data_queries import model_run_table
from store.model_sql import UNCOUNTED_SHOTS
from store.queries import year_booklets
from workflows.report.build import Selection, build_report
from workflows.report.capture import report_pages
from workflows.views import UNCOUNTED_SHOTS_URL, shots_from_url


def add_report_parser(commands) -> None:
    report = commands.add_parser(
        "report", help="write an offline HTML report (and PDF, slides, SVG/PNG figures) of a "
                       "dashboard selection")
    add_db(report)
    report.add_argument("--out", required=True,
                        help="folder to write report.html (and the other files) into")
    selection = report.add_argument_group(
        "selection (the dashboard URL's filters; default: the dashboard's default view)")
    selection.add_argument("--url", help="a dashboard address or query string to take the "
                                         "selection from, e.g. '?year=2023&area=CN'; the "
                                         "options below override its values")
    selection.add_argument("--year", type=int, help="ENEM year (default: the newest stored)")
    selection.add_argument("--areas", nargs="+", choices=AREAS, help="areas (default: all)")
    selection.add_argument("--booklet", type=int, help="one booklet (CO_PROVA)")
    selection.add_argument("--lang", choices=PROMPT_LANGUAGES, help="prompt language (default pt)")
    selection.add_argument("--shots", type=shots_from_url,
                           choices=[*SHOT_SETTINGS, UNCOUNTED_SHOTS], metavar="{0,1,4,published}",
                           help="prompt shots (default 0, or the runs' setting when none has "
                                "0); 'published': runs imported with a prompt type that gives "
                                "no count (the paper's few-shot)")
    selection.add_argument("--models", nargs="+", metavar="LABEL",
                           help="runs by their label as the sidebar lists them (default: all)")
    selection.add_argument("--runs", nargs="+", metavar="RUN_ID",
                           help="runs by their run id (default: all)")
    selection.add_argument("--group", metavar="KIND:VALUE",
                           help="human subgroup, e.g. state:SP or school_type:2 (default all)")
    output = report.add_argument_group("extra outputs")
    output.add_argument("--pdf", action="store_true",
                        help="also print report.pdf with headless Chromium (/usr/bin/chromium)")
    output.add_argument("--images", action="store_true",
                        help="also write figures/figure-NN.svg and .png (3× size, print "
                             "resolution) through headless Chromium")
    output.add_argument("--no-slides", action="store_true",
                        help="do not write presentation.html (one figure per screen)")
    output.add_argument("--quiet", action="store_true", help="no progress bar")
    report.set_defaults(run=cmd_report)


def selection_from(args: argparse.Namespace) -> Selection:
    """The selection of ``--url`` with every given option on top."""
    base = Selection.from_url(args.url) if args.url else Selection()
    return Selection(
        year=args.year if args.year is not None else base.year,
        areas=tuple(args.areas) if args.areas else base.areas,
        booklet=args.booklet if args.booklet is not None else base.booklet,
        language=args.lang or base.language,
        shots=args.shots if args.shots is not None else base.shots,
        models=tuple(args.models) if args.models else base.models,
        runs=tuple(args.runs) if args.runs else base.runs,
        group=args.group or base.group, extra=base.extra)


def _listed(values, most: int = 8) -> str:
    values = [str(v) for v in values]
    more = f", … ({len(values)} in all)" if len(values) > most else ""
    return ", ".join(values[:most]) + more if values else "none"


def check_selection(con, selection: Selection, path: Path, years: list[int]) -> None:
    """UsageError naming the first part of ``selection`` the store does not hold (an area,
    prompt language or shot setting the dashboard does not know, a booklet of another year, a
    run or label not in the store, a human subgroup with no candidates): a report of it would
    silently show the dashboard's default instead."""
    year = selection.year if selection.year is not None else years[-1]
    for area in selection.areas:
        if area not in AREAS:
            raise UsageError(f"area {area!r} is not one of {', '.join(AREAS)}")
    if selection.language is not None and selection.language not in PROMPT_LANGUAGES:
        raise UsageError(f"prompt language {selection.language!r} is not one of "
                         f"{', '.join(PROMPT_LANGUAGES)}")
    if selection.shots is not None and selection.shots not in (*SHOT_SETTINGS, UNCOUNTED_SHOTS):
        raise UsageError(f"shots {selection.shots} is not one of "
                         f"{', '.join(map(str, SHOT_SETTINGS))}, {UNCOUNTED_SHOTS_URL}")
    if selection.booklet is not None:
        booklets = year_booklets(con, year)
        valid = booklets.loc[booklets["valid"], "booklet_id"].astype(int).tolist()
        if selection.booklet not in valid:
            raise UsageError(f"booklet {selection.booklet} is not a scorable booklet of {year} "
                             f"(those are {_listed(valid)})")
    runs = model_run_table(con)
    missing = [run for run in selection.runs if run not in set(runs["run_id"])]
    if missing:
        raise UsageError(f"no run {', '.join(missing)} in {path} (it holds "
                         f"{_listed(runs['run_id'])}; `enem-llm runs` lists them)")
    missing = [label for label in selection.models if label not in set(runs["series"])]
    if missing:
        raise UsageError(f"no run labelled {', '.join(map(repr, missing))} in {path} (labels: "
                         f"{_listed(sorted(set(runs['series'])))})")
    if selection.group and selection.group != "all:all":
        groups = human_groups(con, year)
        known = [f"{kind}:{value}" for kind, value in zip(groups["group_kind"],
                                                          groups["group_value"], strict=True)]
        if selection.group not in known:
            raise UsageError(f"group {selection.group!r} is not a human subgroup of {year} "
                             f"(KIND:VALUE, e.g. {_listed(known, 4)})")


def cmd_report(args: argparse.Namespace) -> int:
    path = db_path(args)
    if not path.exists():
        raise FileNotFoundError(f"no database at {path}; run `enem-llm demo` or ingest a year")
    selection = selection_from(args)
    with connected(path, read_only=True) as con:
        years = loaded_years(con)
    if not years:
        raise UsageError(f"{path} holds no year yet; run `enem-llm demo` or ingest a year")
    if selection.year is not None and selection.year not in years:
        raise UsageError(f"year {selection.year} is not in {path} (it holds "
                         f"{', '.join(map(str, years))})")
    with connected(path, read_only=True) as con:
        check_selection(con, selection, path, years)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a folder")
    with tqdm(total=len(report_pages()), unit="page", disable=args.quiet) as bar:
        def advance(name: str) -> None:  # called as each page starts
            bar.set_postfix_str(name)
            bar.update(1)

        files = build_report(path, selection, out, pdf=args.pdf, images=args.images,
                             present=not args.no_slides, progress=advance)
    print(f"report of {selection.words()}: {files.figures} figures, {files.tables} tables, "
          f"{len(files.pages)} pages → {files.html}")
    for extra in (files.presentation, files.pdf):
        if extra is not None:
            print(f"  {extra}")
    if files.images:
        print(f"  {len(files.images)} figure files in {files.images[0].parent}")
    problems = [f"{page.title}: {problem.splitlines()[0]}" for page in files.pages
                for problem in page.problems]
    for problem in problems:
        print(f"  page error: {problem}")
    timing = ", ".join(f"{step} {seconds:.1f} s" for step, seconds in files.seconds.items())
    print(f"  took {timing}")
    return 1 if problems else 0
