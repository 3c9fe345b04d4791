"""Build the report of a selection: every page's figures with their captions, the tables, the
scoring settings and provenance, and a short methods section, as one offline HTML file; on
request also a PDF printed by headless Chromium, a slide deck (presentation mode) and every
figure as SVG and print-resolution PNG.

A selection is what the dashboard's URL carries (year, areas, booklet, prompt language, shots,
runs, human subgroup), so a report reproduces exactly the view a link shares.
"""

from __future__ import annotations

import html
import re
import subprocess
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from enem.scoring import ScoringOptions
from store.connection import connected
from store.data_queries import ingest_history, model_run_table
from store.model_sql import UNCOUNTED_SHOTS
from workflows.background import project_command, run_to_end
from workflows.report.capture import PageCapture, capture_pages
from workflows.report.export import figure_images, print_pdf
from workflows.report.html import ReportText, presentation_document, report_document
from workflows.views import UNCOUNTED_SHOTS_URL, shots_to_url

REPORT_TITLE = "ENEM × LLM: does a model's exam score mean what it means for a human?"


@dataclass(frozen=True)
class Selection:
    """The dashboard's URL filters (None or empty: the dashboard's default)."""

    year: int | None = None
    areas: tuple[str, ...] = ()
    booklet: int | None = None
    language: str | None = None
    shots: int | None = None
    models: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    group: str | None = None
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def query(self) -> dict[str, list[str]]:
        """The URL query parameters of this selection (the sidebar reads them)."""
        given = {"year": [str(self.year)] if self.year is not None else [],
                 "area": list(self.areas),
                 "booklet": [str(self.booklet)] if self.booklet is not None else [],
                 "lang": [self.language] if self.language else [],
                 "shots": [shots_to_url(self.shots)] if self.shots is not None else [],
                 "model": list(self.models), "run": list(self.runs),
                 "group": [self.group] if self.group else []}
        given.update({key: list(values) for key, values in self.extra.items()})
        return {key: values for key, values in given.items() if values}

    @classmethod
    def from_url(cls, text: str) -> Selection:
        """The selection of a dashboard address or its query string (``?year=2023&area=CN``)."""
        query = urllib.parse.urlsplit(text).query if "?" in text or "://" in text else text
        params = urllib.parse.parse_qs(query.lstrip("?"))
        known = {"year", "area", "booklet", "lang", "shots", "model", "run", "group"}

        def first(key: str) -> str | None:
            return params[key][0] if key in params else None

        def whole(key: str) -> int | None:
            value = first(key)
            if not value:
                return None
            if not re.fullmatch(r"[+-]?[0-9]{1,9}", value.strip()):
                raise ValueError(f"the address's {key}={value[:40]!r} is not a whole number")
            return int(value)

        if (first("shots") or "").strip() == UNCOUNTED_SHOTS_URL:
            params["shots"] = [str(UNCOUNTED_SHOTS)]  # runs imported without a shot count
        return cls(year=whole("year"), areas=tuple(params.get("area", ())),
                   booklet=whole("booklet"), language=first("lang"), shots=whole("shots"),
                   models=tuple(params.get("model", ())), runs=tuple(params.get("run", ())),
                   group=first("group"),
                   extra={k: tuple(v) for k, v in params.items() if k not in known})

    def words(self) -> str:
        """The selection in words, for the cover."""
        query = self.query()
        if not query:
            return "the dashboard's default view (newest year, every area and run)"
        return "; ".join(f"{key} = {', '.join(values)}" for key, values in query.items())


@dataclass
class ReportFiles:
    """What :func:`build_report` wrote, and how long each step took (seconds)."""

    html: Path
    pages: list[PageCapture]
    pdf: Path | None = None
    presentation: Path | None = None
    images: list[Path] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def figures(self) -> int:
        return sum(len(page.figures) for page in self.pages)

    @property
    def tables(self) -> int:
        return sum(block.kind == "table" for page in self.pages for block in page.blocks)


def _scoring_words(stored: object) -> str:
    return ScoringOptions.from_stored(stored).describe()


def _frame_html(frame: pd.DataFrame) -> str:
    """``frame`` as an HTML table, a missing value shown "—" (to_html's ``na_rep`` leaves the
    None of a text column as "None")."""
    shown = frame.copy()
    for column in shown.select_dtypes(include="object").columns:
        shown[column] = shown[column].map(lambda value: "—" if value is None else value)
    return shown.to_html(index=False, escape=True, na_rep="—", border=0)


def provenance_html(db_path: Path, year: int | None) -> tuple[str, str]:
    """(HTML of the scoring settings, ingests and runs; the synthetic-or-real banner)."""
    with connected(Path(db_path), read_only=True) as con:
        ingests = ingest_history(con)
        runs = model_run_table(con)
    live = ingests[ingests["live"]]
    if year is not None:
        live = live[live["year"] == year]
        runs = runs[runs["years"].fillna("").str.split(", ").map(lambda ys: str(year) in ys)]
    synthetic = bool(live["is_synthetic"].fillna(False).all()) if len(live) else False
    banner = ("SYNTHETIC DATA: the candidates and questions of this report were generated by "
              "the project (the demo); they are no real ENEM results." if synthetic else
              "Real data: the candidates are INEP's public microdata as ingested below.")
    years = ", ".join(f"{r.year}: {_scoring_words(r.scoring)}" for r in live.itertuples())
    files = live[["year", "source", "is_synthetic", "microdata_file", "items_file",
                  "finished_at", "records_present", "rows_rejected", "nota_checked",
                  "nota_matched"]]
    # reindex: a store without runs gives a table without columns.
    shown_runs = runs.reindex(columns=["run_id", "series", "backend", "origin", "years", "areas",
                                       "languages", "prompt_type", "repetition", "repetitions",
                                       "status", "patterns", "source"])
    shown_runs["scoring"] = runs.reindex(columns=["scoring"])["scoring"].map(_scoring_words)
    body = (f"<p>Database: <code>{html.escape(str(Path(db_path).absolute()))}</code>.</p>"
            f"<p>Scoring settings of the year(s): {html.escape(years or 'none stored')}. Humans "
            "and model response patterns are scored by the same code with these settings "
            "unless a run lists its own.</p><h3>Data files (live ingests)</h3>"
            f"{_frame_html(files)}<h3>Model runs of the year</h3>{_frame_html(shown_runs)}")
    return body, banner


METHODS = """
<p><b>Scores.</b> Every response pattern, of a candidate or of a model run (one prompt
language, shot setting and option shuffle), is scored with the 3PL model and the published
item parameters: θ by EAP on the quadrature grid named under the provenance, its posterior SD
as SE, the CTT score as the number of counted items correct (abandoned and annulled items
dropped), and person fit l_z (Drasgow, Levine &amp; Williams 1985) at the EAP θ; negative l_z
marks a pattern less likely than expected at its θ.</p>
<p><b>Discrimination index.</b> DI = proportion correct in the top 25% minus the bottom 25% of
a population ranked by θ: all candidates for humans, every selected model pattern for models.
An item discriminates for the models when DI ≥ 0.2.</p>
<p><b>Random baseline (Table 1).</b> A uniformly random letter per item and shuffle, scored like
any run; mean ± SD (divisor n − 1) over repetitions per prompt language and area.</p>
<p><b>Item attributes (Table 2).</b> Images, numbers in the statement and numbers in the options
are read off the question texts by fixed rules (corrections by hand are kept); for each
attribute a 2×2 table against discrimination and Pearson's χ² test of independence with one
degree of freedom (Yates' correction as stated in the table's caption).</p>
<p><b>Contamination probe (Fig 6 / Table 3).</b> Min-K% Prob (K = 20): the mean
log-probability of the 20% least likely tokens of an item's text under the model; its
Pearson correlation with the item's 4-shot accuracy over repetitions, two-sided p from
Student's t with n − 2 degrees of freedom.</p>
<p>The formulas, with the module implementing each, are in <code>docs/methods.md</code> and
<code>docs/paper_tables_and_report.md</code> of the project.</p>
"""


def report_text(db_path: Path, selection: Selection, when: str) -> ReportText:
    """The cover, provenance and methods of a report."""
    provenance, banner = provenance_html(db_path, selection.year)
    cover = (f"<p>Selection: {html.escape(selection.words())}. Generated {html.escape(when)} "
             "from the dashboard's own pages.</p>")
    return ReportText(REPORT_TITLE, cover, html.escape(banner), provenance, METHODS)


def build_report(db_path: Path, selection: Selection, out_dir: Path, *, pdf: bool = False,
                 images: bool = False, present: bool = True,
                 progress: Callable[[str], None] | None = None) -> ReportFiles:
    """Write ``report.html`` (and ``report.pdf``, ``presentation.html``,
    ``figures/figure-NN.{svg,png}`` when asked) of ``selection`` on ``db_path`` into
    ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    pages = capture_pages(Path(db_path), selection.query(), progress=progress)
    seconds["pages"] = time.perf_counter() - start
    text = report_text(Path(db_path), selection, time.strftime("%Y-%m-%d %H:%M"))
    files = ReportFiles(out_dir / "report.html", pages, seconds=seconds)
    files.html.write_text(report_document(pages, text), encoding="utf-8")
    if present:
        files.presentation = out_dir / "presentation.html"
        files.presentation.write_text(presentation_document(pages, text), encoding="utf-8")
    seconds["html"] = time.perf_counter() - start - seconds["pages"]
    if pdf:
        mark = time.perf_counter()
        files.pdf = print_pdf(files.html, out_dir / "report.pdf")
        seconds["pdf"] = time.perf_counter() - mark
    if images:
        mark = time.perf_counter()
        figures = [figure for page in pages for figure in page.figures]
        names = [f"figure-{index:02d}" for index in range(1, len(figures) + 1)]
        files.images = figure_images(figures, names, out_dir / "figures")
        seconds["images"] = time.perf_counter() - mark
    return files


def figure_captions(pages: Sequence[PageCapture]) -> list[str]:
    """The caption of every figure, in report order ('' where a figure has none)."""
    captions = []
    for page in pages:
        for position, block in enumerate(page.blocks):
            if block.kind == "figure":
                following = page.blocks[position + 1] if position + 1 < len(page.blocks) else None
                captions.append(following.payload if following is not None
                                and following.kind == "caption" else "")
    return captions


#: Seconds a report built for the dashboard may take.
REPORT_PROCESS_TIMEOUT = 600


def report_in_process(db_path: Path, url_query: str, out_dir: Path, pdf: bool = False
                      ) -> subprocess.CompletedProcess:
    """Build the report as its own process (``enem-llm report``, as a terminal would), for
    the dashboard: the pages are run headless there, never inside the serving app. Returns
    the finished process (its stdout lists the files; exit 1 when a page showed an error,
    the report is written all the same)."""
    command = [*project_command(), "--db", str(Path(db_path).absolute()), "report", "--out",
               str(Path(out_dir).absolute()), "--url", url_query or "?", "--quiet"]
    if pdf:
        command.append("--pdf")
    return run_to_end(command, timeout=REPORT_PROCESS_TIMEOUT)
