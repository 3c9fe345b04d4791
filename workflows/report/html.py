"""The report as one self-contained HTML file: plotly.js inlined once, every figure drawn from
its own JSON, tables as HTML, no request leaves the file (readable offline, printable).

Layout: a cover with the selection and whether the data are synthetic or real, the contents,
one section per page (its figures numbered with their captions, its tables, its notes), the
scoring settings and provenance, and a short methods section. ``present=True`` gives the same
figures as a slide deck: one figure per screen, large type, Previous / Next buttons and the
arrow keys.

The markup is Jinja2 templates in ``workflows/report/templates/`` (``report.html.j2``,
``presentation.html.j2``, and ``plot.html.j2`` for a figure), with its style sheets and the
slide script; this module turns the captured pages into what they show (numbered figures and
tables with their captions, text blocks, plot specifications) and renders them. Autoescape is
on: every value is escaped except those a template marks ``|safe``, which are HTML this module
or the report's builder made (tables, Markdown, the figure JSON, the cover and provenance).
Escaping is Python's ``html.escape(quote=True)`` (``&quot;``, ``&#x27;``), as the report wrote
it before the templates, so a caption is found in the file exactly as it was.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader, StrictUndefined
from markdown_it import MarkdownIt
from markupsafe import Markup
from plotly.offline import get_plotlyjs

from workflows.report.capture import Block, PageCapture

#: Width (CSS px) every figure is drawn at: fits A4 landscape inside 12 mm margins.
FIGURE_WIDTH = 1000
#: Tallest figure (CSS px) printed at full size on one A4 landscape page; taller ones shrink.
PRINT_HEIGHT = 640
#: Rows of a table shown in the report (the page's CSV download has them all).
TABLE_ROWS = 60
#: No raw HTML and no images: an offline report fetches nothing from anywhere.
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")


def _escape(value: Any) -> Markup:
    """Every value a template writes, as HTML: markup (``|safe``, macros) as it is, anything else
    escaped by ``html.escape(quote=True)`` (markupsafe's own escape writes quotes as ``&#34;``
    and ``&#39;``)."""
    if hasattr(value, "__html__"):
        return Markup(value)
    return Markup(html.escape(str(value), quote=True))


#: The report's templates; StrictUndefined so that a misspelt name fails instead of vanishing.
_TEMPLATES = Environment(loader=PackageLoader("workflows.report", "templates"), autoescape=True,
                         finalize=_escape, undefined=StrictUndefined)


@dataclass(frozen=True)
class ReportText:
    """The parts of the report that do not come from the pages: the title (text, escaped)
    and HTML fragments written as they are (``|safe`` in the templates)."""

    title: str
    selection: str
    banner: str
    provenance: str
    methods: str


def figure_json(figure: dict, height_default: int = 450) -> tuple[str, int]:
    """The figure's JSON for ``Plotly.newPlot`` at :data:`FIGURE_WIDTH` (safe inside a
    script tag) and its height in px."""
    layout = dict(figure.get("layout") or {})
    layout["width"] = FIGURE_WIDTH
    height = int(layout.get("height") or height_default)
    layout["height"] = height
    body = json.dumps({"data": figure.get("data", []), "layout": layout})
    return body.replace("</", "<\\/"), height


@dataclass(frozen=True)
class PlotSpec:
    """One figure as ``plot.html.j2`` draws it: the element id, its size in CSS px, the JSON for
    ``Plotly.newPlot`` (safe inside a script tag) and the zoom it is printed at (1: full size,
    below 1 when taller than the print height)."""

    element_id: str
    width: int
    height: int
    json: str
    zoom: float


def plot_spec(figure: dict, element_id: str, print_height: int = PRINT_HEIGHT) -> PlotSpec:
    """The :class:`PlotSpec` of a figure (a plotly figure dict), drawn at :data:`FIGURE_WIDTH`
    and shrunk on paper when taller than ``print_height``."""
    body, height = figure_json(figure)
    return PlotSpec(element_id, FIGURE_WIDTH, height, body, min(1.0, print_height / height))


def table_html(frame: pd.DataFrame, rows: int = TABLE_ROWS) -> str:
    """A DataFrame as an HTML table (first ``rows`` rows, with a note when cut)."""
    shown = frame.head(rows)
    text = shown.to_html(index=False, escape=True, na_rep="—", float_format=lambda v: f"{v:.3f}",
                         border=0)
    if len(frame) > rows:
        text += (f'<p class="caption">First {rows} of {len(frame):,} rows (the page\'s CSV '
                 "download has them all).</p>")
    return text


def markdown_html(text: str) -> str:
    """Markdown (as the pages write it) as HTML; raw HTML in it is escaped."""
    return _MARKDOWN.render(text)


@dataclass(frozen=True)
class Item:
    """One element of a report section, as ``report.html.j2`` draws it. ``kind``: 'figure'
    (``plot``, ``number``, ``caption``), 'table' (``html``, ``number``, ``caption``), 'header'
    or 'subheader' or 'caption' (``text``), 'markdown' (``html``), 'title' (nothing: the
    section's heading is the page title) or a notice's kind such as 'info' or 'warning'
    (``html``, in a note box)."""

    kind: str
    number: int = 0
    caption: str = ""
    text: str = ""
    html: str = ""
    plot: PlotSpec | None = None


@dataclass(frozen=True)
class Section:
    """One page of the report: its index (the anchor ``page-<index>``), title and items."""

    index: int
    title: str
    items: tuple[Item, ...]


def page_section(page: PageCapture, index: int, counters: dict[str, int]) -> Section:
    """One page: its title, then every kept element in order; figures and tables are
    numbered (``counters`` carries the numbers from page to page) and take the caption that
    follows them."""
    items = []
    blocks = page.blocks
    skip = False
    for position, block in enumerate(blocks):
        if skip:
            skip = False
            continue
        following = blocks[position + 1] if position + 1 < len(blocks) else None
        caption = following.payload if following and following.kind == "caption" else None
        if block.kind == "figure":
            counters["figure"] += 1
            number = counters["figure"]
            items.append(Item("figure", number, caption or "",
                              plot=plot_spec(block.payload, f"figure-{number}")))
            skip = caption is not None
        elif block.kind == "table":
            counters["table"] += 1
            items.append(Item("table", counters["table"], caption or "",
                              html=table_html(block.payload)))
            skip = caption is not None
        else:
            items.append(_text_item(block))
    return Section(index, page.title, tuple(items))


def _text_item(block: Block) -> Item:
    if block.kind in ("title", "header", "subheader", "caption"):
        return Item(block.kind, text=block.payload)
    return Item(block.kind, html=markdown_html(block.payload))


def report_document(pages: Sequence[PageCapture], text: ReportText) -> str:
    """The whole printable report as one HTML document."""
    counters = {"figure": 0, "table": 0}
    sections = [page_section(page, index, counters) for index, page in enumerate(pages)]
    return _TEMPLATES.get_template("report.html.j2").render(
        text=text, sections=sections, plotly_js=get_plotlyjs())


@dataclass(frozen=True)
class Slide:
    """One figure of the slide deck: its page's title, number, plot and caption."""

    title: str
    number: int
    plot: PlotSpec
    caption: str


def presentation_document(pages: Sequence[PageCapture], text: ReportText) -> str:
    """The selection's figures as slides: one figure per screen with its page title and
    caption, navigated with Previous / Next or the arrow keys."""
    slides: list[Slide] = []
    for page in pages:
        for position, block in enumerate(page.blocks):
            if block.kind != "figure":
                continue
            number = len(slides) + 1
            following = page.blocks[position + 1] if position + 1 < len(page.blocks) else None
            caption = following.payload if following and following.kind == "caption" else ""
            slides.append(Slide(page.title, number, plot_spec(block.payload, f"slide-{number}"),
                                caption))
    return _TEMPLATES.get_template("presentation.html.j2").render(
        text=text, slides=slides, plotly_js=get_plotlyjs())
