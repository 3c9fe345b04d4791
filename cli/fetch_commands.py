"""The ``fetch`` command: real data in one step (``workflows.fetch``).

    enem-llm fetch inep --year 2023 [--year 2022 …] [--items-only] [--keep]
    enem-llm fetch paper [--cot] [--no-texts] [--keep] [scoring flags]
    enem-llm fetch texts --source maritaca --year 2023 --booklet MT=1234 …

Each takes --dest DIR (default: downloads/ beside the database), --mirror URL (or
$ENEM_LLM_MIRROR), --ca-bundle FILE, --progress-file FILE, --db and --quiet. docs/fetch.md
tells the whole story.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path

from cli.arguments import add_db, add_scoring_overrides, db_path, scoring_overrides
from cli.errors import INTERRUPTED, UsageError
from cli.run_commands import booklet_flags
from workflows.fetch.inep import fetch_inep_year
from workflows.fetch.paper import fetch_paper
from workflows.fetch.progress import reporting
from workflows.fetch.sources import (
    DEFAULT_PAPER_RESULTS,
    INEP_ZIP,
    MIRROR_ENV_VAR,
    PAPER_YEARS,
    TEXT_SOURCES,
    mirror_base,
    unfetchable_inep_year,
)
from workflows.fetch.texts import fetch_texts

#: Downloads go to this folder beside the database unless --dest says otherwise.
DOWNLOADS_FOLDER = "downloads"


def _interruptible(command: Callable[[argparse.Namespace], int]
                   ) -> Callable[[argparse.Namespace], int]:
    """``command`` ending in one ``error:`` line on Ctrl-C instead of a traceback: a long
    download is the command people interrupt, and its partial file is what they need to hear
    about."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except KeyboardInterrupt:
            print("error: interrupted; the partial download (.part) is kept and the store has "
                  "only what finished: run the same command again to resume", file=sys.stderr)
            return INTERRUPTED

    return run


def _reported(task: Callable[[argparse.Namespace], str]
              ) -> Callable[[Callable[[argparse.Namespace], int]],
                            Callable[[argparse.Namespace], int]]:
    """``command`` writing its phases to ``--progress-file`` when one is given (the file ends
    in ``done``, or ``failed`` with the message the ``error:`` line gives); ``task`` names the
    fetch in that file."""

    def wrap(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        @functools.wraps(command)
        def run(args: argparse.Namespace) -> int:
            path = Path(args.progress_file) if args.progress_file else None
            with reporting(path, task=task(args)) as report:
                args.report = report
                return command(args)

        return run

    return wrap


def _say(text: str) -> None:
    """Progress lines go to stdout (stderr is for the bars and the one error line)."""
    print(text, flush=True)


def _dest(args: argparse.Namespace) -> Path:
    return Path(args.dest) if args.dest else db_path(args).parent / DOWNLOADS_FOLDER


def _common(args: argparse.Namespace) -> dict:
    """The keyword arguments every fetch workflow takes from the shared flags."""
    return {"mirror": mirror_base(args.mirror), "progress": not args.quiet,
            "ca_bundle": Path(args.ca_bundle) if args.ca_bundle else None, "say": _say,
            "report": args.report}


def cmd_fetch_inep(args: argparse.Namespace) -> int:
    years = list(dict.fromkeys(args.year))  # each year once, in the order given
    for year in years:  # every year checked before the first download
        refused = unfetchable_inep_year(year)
        if refused is not None:
            raise UsageError(refused)
    common, dest, db = _common(args), _dest(args), db_path(args)
    for year in years:
        fetched = fetch_inep_year(db, year, dest, keep=args.keep, items_only=args.items_only,
                                  **common)
        if fetched.microdata is None:
            print(f"year {year}: items stored (items-only) from {fetched.items}")
        else:
            print("\n".join(fetched.summary.lines()))
    return 0


def cmd_fetch_paper(args: argparse.Namespace) -> int:
    overrides = scoring_overrides(args)
    parts = list(DEFAULT_PAPER_RESULTS) + (["cot"] if args.cot else [])
    fetched = fetch_paper(db_path(args), _dest(args), parts=parts, texts=not args.no_texts,
                          keep=args.keep, scoring=overrides, **_common(args))
    for summary in fetched.results:
        print("\n".join(summary.lines()))
    if fetched.texts is not None:
        print("\n".join(fetched.texts.lines()))
        _unlinked(fetched.texts.unlinked)
    return 0


def cmd_fetch_texts(args: argparse.Namespace) -> int:
    summary = fetch_texts(db_path(args), args.source, args.year, _dest(args),
                          booklet_flags(args.booklet), **_common(args))
    print("\n".join(summary.lines()))
    _unlinked(summary.unlinked)
    return 0


def _unlinked(messages: list[str]) -> None:
    """Texts that found no item: counted on stdout, the first few named."""
    if messages:
        print(f"{len(messages):,} text(s) not linked to a stored item, e.g. "
              + "; ".join(messages[:3]))


def _add_shared(parser: argparse.ArgumentParser) -> None:
    add_db(parser)
    parser.add_argument("--dest", help=f"where downloads and extracted files go (default: "
                                       f"{DOWNLOADS_FOLDER}/ beside the database)")
    parser.add_argument("--mirror", metavar="URL",
                        help="fetch from this base URL instead of each source's host, keeping "
                             f"the paths (default: ${MIRROR_ENV_VAR} when set)")
    parser.add_argument("--ca-bundle", metavar="FILE",
                        help="PEM file of certificates trusted besides the system's (e.g. "
                             "the intermediate a server fails to send); SSL_CERT_FILE works "
                             "as usual; verification is never turned off")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--progress-file", metavar="FILE",
                        help="also write the phase and byte counts to this JSON file as the "
                             "fetch goes (the dashboard's Home page reads it); one fetch at a "
                             "time per file")


def add_fetch_parser(commands) -> None:
    """Register ``fetch`` and its sub-commands on the main parser's ``commands``."""
    fetch = commands.add_parser(
        "fetch", help="download a public source (resumable), check it, extract it and "
                      "ingest or import it (docs/fetch.md)")
    sources = fetch.add_subparsers(dest="source_kind", required=True, metavar="SOURCE")

    inep = sources.add_parser("inep", help=f"INEP's microdata of a year ({INEP_ZIP.approx_size} "
                                           "each) → ingest-enem")
    inep.add_argument("--year", type=int, action="append", required=True,
                      help="exam year, e.g. 2023; repeat for several")
    inep.add_argument("--items-only", action="store_true",
                      help="extract and store only the item file (as ingest-items): enough "
                           "for the paper's results and for model runs")
    inep.add_argument("--keep", action="store_true",
                      help="keep the ZIP after the extract (removed otherwise)")
    _add_shared(inep)
    inep.set_defaults(run=_interruptible(_reported(
        lambda args: "INEP " + ", ".join(map(str, dict.fromkeys(args.year))))(cmd_fetch_inep)))

    paper = sources.add_parser(
        "paper", help="the seed paper's results and parsed exams → import-results and "
                      f"import-questions (needs the items of {PAPER_YEARS[0]}–"
                      f"{PAPER_YEARS[-1]} in the store)")
    paper.add_argument("--cot", action="store_true",
                       help="also the zero-shot chain-of-thought results file")
    paper.add_argument("--no-texts", action="store_true",
                       help="skip data.zip (the parsed exams)")
    paper.add_argument("--keep", action="store_true",
                       help="keep data.zip after the extract (removed otherwise)")
    _add_shared(paper)
    add_scoring_overrides(paper)
    paper.set_defaults(run=_interruptible(_reported(
        lambda args: "the seed paper's results")(cmd_fetch_paper)))

    texts = sources.add_parser("texts", help="a year's question texts → import-questions")
    texts.add_argument("--source", required=True, choices=sorted(TEXT_SOURCES))
    texts.add_argument("--year", type=int, required=True, help="exam year, e.g. 2023")
    texts.add_argument("--booklet", action="append", default=[], metavar="AREA=CO_PROVA",
                       help="the booklet whose numbering the texts follow, per area")
    _add_shared(texts)
    texts.set_defaults(run=_interruptible(_reported(
        lambda args: f"{args.source} texts {args.year}")(cmd_fetch_texts)))
