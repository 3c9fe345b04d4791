"""The report's HTML from its Jinja2 templates, without running a page: the markup of every kind
of block byte for byte as the f-strings that preceded the templates wrote it, and hostile text
(tags, quotes, template syntax) escaped as ``html.escape(quote=True)`` escapes it.

The whole report of the demo selection, before and after the templates, was byte-identical;
this test keeps the pieces so on a page built by hand (``tests/test_report.py`` runs the pages).
"""

from __future__ import annotations

import html
import json

import pandas as pd

from workflows.report.capture import Block, PageCapture
from workflows.report.html import (
    FIGURE_WIDTH,
    ReportText,
    figure_json,
    markdown_html,
    presentation_document,
    report_document,
    table_html,
)

HOSTILE = "<script>alert('x')</script> \"q\" & {{ 7*7 }} {% if %} {# c #}"
FIGURE = {"data": [{"type": "scatter", "x": [1, 2], "y": [3, 4], "name": "</script>"}],
          "layout": {"title": {"text": "t"}, "height": 900}}
SMALL_FIGURE = {"data": [], "layout": {}}
TABLE = pd.DataFrame({"a <b>": [1.23456, None], "c": ["x & y", "'z'"]})
TEXT = ReportText(title="Report & <title>", selection="<p>Selection: CN.</p>",
                  banner="Synthetic &amp; demo", provenance="<p>prov</p>", methods="<p>m</p>")


def _page(title: str) -> PageCapture:
    return PageCapture("Page.py", title, [
        Block("title", title), Block("header", HOSTILE), Block("figure", FIGURE),
        Block("caption", HOSTILE), Block("table", TABLE), Block("caption", "Table's caption"),
        Block("figure", SMALL_FIGURE), Block("subheader", "Sub"), Block("caption", "free"),
        Block("markdown", "**bold** <i>raw</i>"), Block("info", "note *it*"),
        Block("warning", "careful")])


def _plot(figure: dict, element_id: str) -> str:
    """The figure markup as the f-string wrote it."""
    body, height = figure_json(figure)
    zoom = min(1.0, 640 / height)
    rule = (f"<style>@media print {{ #{element_id} {{ zoom: {zoom:.3f}; }} }}</style>"
            if zoom < 1 else "")
    return (f'{rule}<div class="plot" id="{element_id}" style="width:{FIGURE_WIDTH}px;'
            f'height:{height}px"></div><script>(function(){{const f = {body};'
            f'Plotly.newPlot("{element_id}", f.data, f.layout, {{staticPlot: false, '
            f'displayModeBar: false, responsive: false}});}})();</script>')


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def test_a_section_is_the_markup_the_f_strings_wrote():
    document = report_document([_page("First <page>")], TEXT)
    expected = "\n".join([
        f'<section id="page-0"><h2>{_escape("First <page>")}</h2>', "",
        f"<h3>{_escape(HOSTILE)}</h3>",
        (f'<figure>{_plot(FIGURE, "figure-1")}<figcaption><b>Figure 1.</b> {_escape(HOSTILE)}'
         "</figcaption></figure>"),
        ('<div class="table-block"><p class="caption"><b>Table 1.</b> '
         f"Table&#x27;s caption</p>{table_html(TABLE)}</div>"),
        (f'<figure>{_plot(SMALL_FIGURE, "figure-2")}<figcaption><b>Figure 2.</b> '
         "</figcaption></figure>"),
        "<h3>Sub</h3>", '<p class="caption">free</p>', markdown_html("**bold** <i>raw</i>"),
        f'<div class="note info">{markdown_html("note *it*")}</div>',
        f'<div class="note warning">{markdown_html("careful")}</div>', "</section>"])
    assert expected in document
    assert "<title>Report &amp; &lt;title&gt;</title>" in document
    assert '<p class="banner">Synthetic &amp; demo</p><p>Selection: CN.</p>\n' in document
    assert ('<h2>Contents</h2><ol><li><a href="#page-0">First &lt;page&gt;</a></li><li><a '
            'href="#provenance">') in document
    assert document.startswith("<!DOCTYPE html>\n") and document.endswith("</body></html>")


def test_hostile_text_is_escaped_and_template_syntax_is_inert():
    document = report_document([_page(HOSTILE)], TEXT)
    assert "<script>alert" not in document
    # Template syntax in a value is text: written as it is, never evaluated.
    assert _escape(HOSTILE) in document and "{{ 7*7 }} {% if %} {# c #}" in _escape(HOSTILE)
    assert "&#x27;x&#x27;" in document and "&#39;" not in document.split("</script>", 1)[1]
    # The figure JSON cannot close its script tag.
    assert '"name": "<\\/script>"' in document


def test_figures_and_tables_are_numbered_across_pages():
    document = report_document([_page("A"), _page("B")], TEXT)
    assert 'id="page-1"' in document and "<b>Figure 4.</b>" in document
    assert "<b>Table 2.</b>" in document and "<b>Figure 5.</b>" not in document


def test_slides_are_the_markup_the_f_strings_wrote():
    document = presentation_document([_page("P")], TEXT)
    cover = (f'<body><div class="slide"><h2>{_escape(TEXT.title)}</h2><p class="caption">'
             f"{TEXT.banner}</p>{TEXT.selection}</div>")
    slides = (f'<div class="slide"><h2>P</h2>{_plot(FIGURE, "slide-1")}<p class="caption">'
              f"<b>Figure 1.</b> {_escape(HOSTILE)}</p></div>"
              f'<div class="slide"><h2>P</h2>{_plot(SMALL_FIGURE, "slide-2")}<p class="caption">'
              "<b>Figure 2.</b> </p></div>")
    assert cover + slides + '<nav><span id="position"></span>\n' in document
    assert document.endswith("show(0);\n</script></body></html>")
    assert json.loads(figure_json(SMALL_FIGURE)[0])["layout"]["width"] == FIGURE_WIDTH
