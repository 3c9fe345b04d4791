"""The report as one self-contained HTML file: plotly.js inlined once, every figure drawn from
its own JSON, tables as HTML, no request leaves the file (readable offline, printable).

Layout: a cover with the selection and whether the data are synthetic or real, the contents,
one section per page (its figures numbered with their captions, its tables, its notes), the
scoring settings and provenance, and a short methods section. ``present=True`` gives the same
figures as a slide deck: one figure per screen, large type, Previous / Next buttons and the
arrow keys.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from markdown_it import MarkdownIt
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

STYLE = """
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 24px auto; max-width: 1040px;
       color: #222; line-height: 1.4; }
h1 { font-size: 26px; } h2 { font-size: 21px; border-bottom: 1px solid #ccc; margin-top: 36px; }
h3 { font-size: 17px; } figure { margin: 18px 0; break-inside: avoid; }
figcaption, .caption { font-size: 13px; color: #444; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #f4f4f4; } .note { border-left: 4px solid #0072B2; padding: 4px 10px;
  background: #f2f7fb; font-size: 13px; } .warning { border-left-color: #E69F00;
  background: #fdf6e9; } .error { border-left-color: #D55E00; background: #fbeee8; }
.banner { font-weight: bold; padding: 6px 10px; background: #fdf6e9; }
.table-block { break-inside: avoid; overflow-x: auto; }
@page { size: A4 landscape; margin: 12mm; }
@media print { body { margin: 0; max-width: none; } h2 { break-before: page; }
  .cover h2 { break-before: avoid; } }
"""

PRESENT_STYLE = """
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 0; font-size: 22px; }
.slide { display: none; height: 100vh; box-sizing: border-box; padding: 16px 32px; }
.slide.shown { display: flex; flex-direction: column; align-items: center; }
.slide h2 { font-size: 30px; margin: 4px 0 8px; } .slide .caption { font-size: 20px;
  max-width: 1200px; color: #333; } nav { position: fixed; bottom: 12px; right: 24px; }
nav button { font-size: 22px; padding: 6px 18px; margin-left: 8px; }
"""

PRESENT_SCRIPT = """
const slides = Array.from(document.querySelectorAll('.slide'));
let current = 0;
function show(index) {
  current = Math.max(0, Math.min(slides.length - 1, index));
  slides.forEach((s, i) => s.classList.toggle('shown', i === current));
  document.getElementById('position').textContent = (current + 1) + ' / ' + slides.length;
  const plot = slides[current].querySelector('.plot');
  if (plot) { Plotly.Plots.resize(plot); }
}
document.getElementById('previous').onclick = () => show(current - 1);
document.getElementById('next').onclick = () => show(current + 1);
document.addEventListener('keydown', (e) => {
  if (e.key === 'ArrowRight' || e.key === 'PageDown' || e.key === ' ') show(current + 1);
  if (e.key === 'ArrowLeft' || e.key === 'PageUp') show(current - 1);
});
show(0);
"""


@dataclass(frozen=True)
class ReportText:
    """The parts of the report that do not come from the pages (HTML fragments)."""

    title: str
    selection: str
    banner: str
    provenance: str
    methods: str


def _escape(text: str) -> str:
    return html.escape(str(text), quote=True)


def figure_json(figure: dict, height_default: int = 450) -> tuple[str, int]:
    """The figure's JSON for ``Plotly.newPlot`` at :data:`FIGURE_WIDTH` (safe inside a
    script tag) and its height in px."""
    layout = dict(figure.get("layout") or {})
    layout["width"] = FIGURE_WIDTH
    height = int(layout.get("height") or height_default)
    layout["height"] = height
    body = json.dumps({"data": figure.get("data", []), "layout": layout})
    return body.replace("</", "<\\/"), height


def plot_div(figure: dict, element_id: str, print_height: int = PRINT_HEIGHT) -> str:
    """A div drawn by plotly.js (static: no toolbar), shrunk on paper when taller than
    ``print_height``."""
    body, height = figure_json(figure)
    zoom = min(1.0, print_height / height)
    rule = (f"<style>@media print {{ #{element_id} {{ zoom: {zoom:.3f}; }} }}</style>"
            if zoom < 1 else "")
    return (f'{rule}<div class="plot" id="{element_id}" style="width:{FIGURE_WIDTH}px;'
            f'height:{height}px"></div><script>(function(){{const f = {body};'
            f'Plotly.newPlot("{element_id}", f.data, f.layout, {{staticPlot: false, '
            f'displayModeBar: false, responsive: false}});}})();</script>')


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


def page_section(page: PageCapture, index: int, counters: dict[str, int]) -> str:
    """One page: its title, then every kept element in order; figures and tables are
    numbered and take the caption that follows them."""
    parts = [f'<section id="page-{index}"><h2>{_escape(page.title)}</h2>']
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
            parts.append(f'<figure>{plot_div(block.payload, f"figure-{number}")}'
                         f'<figcaption><b>Figure {number}.</b> {_escape(caption or "")}'
                         "</figcaption></figure>")
            skip = caption is not None
        elif block.kind == "table":
            counters["table"] += 1
            number = counters["table"]
            parts.append(f'<div class="table-block"><p class="caption"><b>Table {number}.</b> '
                         f'{_escape(caption or "")}</p>{table_html(block.payload)}</div>')
            skip = caption is not None
        else:
            parts.append(_text_block(block))
    parts.append("</section>")
    return "\n".join(parts)


def _text_block(block: Block) -> str:
    if block.kind == "title":
        return ""
    if block.kind in ("header", "subheader"):
        return f"<h3>{_escape(block.payload)}</h3>"
    if block.kind == "caption":
        return f'<p class="caption">{_escape(block.payload)}</p>'
    if block.kind == "markdown":
        return markdown_html(block.payload)
    return (f'<div class="note {block.kind}">{markdown_html(block.payload)}</div>')


def report_document(pages: Sequence[PageCapture], text: ReportText) -> str:
    """The whole printable report as one HTML document."""
    counters = {"figure": 0, "table": 0}
    sections = [page_section(page, index, counters) for index, page in enumerate(pages)]
    contents = "".join(f'<li><a href="#page-{i}">{_escape(p.title)}</a></li>'
                       for i, p in enumerate(pages))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_escape(text.title)}</title>
<style>{STYLE}</style><script>{get_plotlyjs()}</script></head>
<body><div class="cover"><h1>{_escape(text.title)}</h1>
<p class="banner">{text.banner}</p>{text.selection}
<h2>Contents</h2><ol>{contents}<li><a href="#provenance">Scoring settings and provenance</a>
</li><li><a href="#methods">Methods</a></li></ol></div>
{''.join(sections)}
<section id="provenance"><h2>Scoring settings and provenance</h2>{text.provenance}</section>
<section id="methods"><h2>Methods</h2>{text.methods}</section>
</body></html>"""


def presentation_document(pages: Sequence[PageCapture], text: ReportText) -> str:
    """The selection's figures as slides: one figure per screen with its page title and
    caption, navigated with Previous / Next or the arrow keys."""
    slides = [(f'<div class="slide"><h2>{_escape(text.title)}</h2>'
               f'<p class="caption">{text.banner}</p>{text.selection}</div>')]
    number = 0
    for page in pages:
        for position, block in enumerate(page.blocks):
            if block.kind != "figure":
                continue
            number += 1
            following = page.blocks[position + 1] if position + 1 < len(page.blocks) else None
            caption = following.payload if following and following.kind == "caption" else ""
            slides.append(f'<div class="slide"><h2>{_escape(page.title)}</h2>'
                          f'{plot_div(block.payload, f"slide-{number}")}'
                          f'<p class="caption"><b>Figure {number}.</b> {_escape(caption)}'
                          "</p></div>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_escape(text.title)}</title>
<style>{PRESENT_STYLE}</style><script>{get_plotlyjs()}</script></head>
<body>{''.join(slides)}<nav><span id="position"></span>
<button id="previous">◀ Previous</button><button id="next">Next ▶</button></nav>
<script>{PRESENT_SCRIPT}</script></body></html>"""
