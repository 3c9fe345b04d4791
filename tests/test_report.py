"""The report of the demo: every page's figures and tables with their captions, opened in a real
Chromium without errors, its PDF (page breaks, every caption in the text), the slide deck's
navigation, the SVG/PNG figures, and the command line's refusals.

PDF text is read with poppler's ``pdftotext``/``pdfinfo``; like the browser test, this FAILS
(never skips) when they are missing: ``apt-get install -y poppler-utils``.
"""

from __future__ import annotations

import html
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from cli.main import main
from tests.browser_support import ARTIFACTS
from tests.page_support import charts, run_page
from workflows.report.build import Selection, build_report, figure_captions
from workflows.report.capture import report_pages
from workflows.report.export import PRINT_SCALE
from workflows.report.html import FIGURE_WIDTH
from workflows.views import HOME, VIEWS

QUERY = "?year=2023&area=CN&area=MT&lang=pt&shots=0"


def _words(text: str) -> str:
    """Text reduced to its words, one space apart (PDF text wraps lines anywhere)."""
    return " ".join(re.findall(r"\w+", text))


@pytest.fixture(scope="module")
def report(tmp_path_factory, pages_demo_db):
    out = tmp_path_factory.mktemp("report")
    return build_report(pages_demo_db, Selection.from_url(QUERY), out, pdf=True, images=True)


@pytest.fixture(scope="module")
def pdf_text(report) -> list[str]:
    """The text of each PDF page."""
    if not shutil.which("pdftotext") or not shutil.which("pdfinfo"):
        pytest.fail("pdftotext/pdfinfo not found: apt-get install -y poppler-utils",
                    pytrace=False)
    info = subprocess.run(["pdfinfo", str(report.pdf)], capture_output=True, text=True,
                          check=True).stdout
    pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    return [subprocess.run(["pdftotext", "-f", str(n), "-l", str(n), "-layout", str(report.pdf),
                            "-"], capture_output=True, text=True, check=True).stdout
            for n in range(1, pages + 1)]


def test_selection_reads_a_dashboard_address():
    selection = Selection.from_url("http://localhost:8501/Person_fit" + QUERY + "&blank=out")
    assert (selection.year, selection.areas, selection.language, selection.shots) == (
        2023, ("CN", "MT"), "pt", 0)
    assert selection.query() == {"year": ["2023"], "area": ["CN", "MT"], "lang": ["pt"],
                                 "shots": ["0"], "blank": ["out"]}


def test_report_holds_every_figure_and_caption_of_every_page(monkeypatch, report,
                                                             pages_demo_db):
    monkeypatch.setenv("ENEM_DB", str(pages_demo_db))
    document = report.html.read_text(encoding="utf-8")
    query = Selection.from_url(QUERY).query()
    expected_figures = 0
    for page in report_pages():
        app = run_page(str(page.relative_to(page.parents[1])), query)
        # Expanders hold tools (the attribute editor) and optional extras, not results: the
        # report leaves them out, their figures too.
        tucked = sum(len(expander.get("plotly_chart")) for expander in app.expander)
        expected_figures += len(charts(app)) - tucked
        tools = {c.value for expander in app.expander for c in expander.caption}
        for caption in (c.value for c in app.caption if c.value not in tools):
            assert html.escape(caption, quote=True) in document, caption[:80]
        assert html.escape(app.title[0].value, quote=True) in document
    assert expected_figures == report.figures > 5
    assert document.count('<div class="plot"') == expected_figures
    assert document.count("<figcaption><b>Figure ") == expected_figures
    assert report.tables >= 5
    assert document.count('<div class="table-block">') == report.tables
    assert "SYNTHETIC DATA" in document
    assert "<script src=" not in document and "https://" not in document.split("</style>")[0]
    for section in ("Scoring settings and provenance", "Methods", "Table 1 · Random-choice"):
        assert section in document


def test_report_opens_in_chromium_without_errors(report, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    try:
        page.goto(report.html.as_uri(), timeout=60_000)
        page.wait_for_function(
            "document.querySelectorAll('.plot .main-svg').length >= "
            "document.querySelectorAll('.plot').length", timeout=60_000)
        drawn = page.evaluate("document.querySelectorAll('.plot .main-svg').length")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report_top.png"))
    finally:
        page.close()
    assert not problems, problems
    assert drawn >= report.figures


def test_presentation_steps_through_every_figure(report, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    try:
        page.goto(report.presentation.as_uri(), timeout=60_000)
        total = report.figures + 1  # a title slide, then one slide per figure
        assert page.inner_text("#position") == f"1 / {total}"
        page.click("#next")
        assert page.inner_text("#position") == f"2 / {total}"
        page.keyboard.press("ArrowRight")
        assert page.inner_text("#position") == f"3 / {total}"
        shown = page.locator(".slide.shown")
        assert shown.count() == 1 and shown.locator(".main-svg").count() >= 1
        assert "Figure 2." in shown.inner_text()
        page.keyboard.press("ArrowLeft")
        assert page.inner_text("#position") == f"2 / {total}"
        page.screenshot(path=str(ARTIFACTS / "presentation_slide2.png"))
    finally:
        page.close()
    assert not problems, problems


def test_pdf_breaks_before_each_page_and_holds_every_caption(report, pdf_text):
    assert len(pdf_text) >= len(report.pages) + 2  # cover, one start per page, provenance
    starts = [_words(text)[:60] for text in pdf_text]
    for page in report.pages:
        title = _words(page.title)[:40]
        assert any(start.startswith(title) for start in starts), page.title
    everything = _words(" ".join(pdf_text))
    captions = [c for c in figure_captions(report.pages) if c]
    assert len(captions) == report.figures
    for number, caption in enumerate(captions, start=1):
        assert _words(f"Figure {number}. {caption}") in everything, caption[:80]


def _png_size(path: Path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width, height


def test_figures_as_svg_and_print_resolution_png(report):
    assert len(report.images) == 2 * report.figures
    pngs = sorted(p for p in report.images if p.suffix == ".png")
    svgs = sorted(p for p in report.images if p.suffix == ".svg")
    first = next(f for page in report.pages for f in page.figures)
    height = int(first["layout"].get("height") or 450)
    assert _png_size(pngs[0]) == (FIGURE_WIDTH * PRINT_SCALE, height * PRINT_SCALE)
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in pngs)
    assert all(s.read_text(encoding="utf-8").lstrip().startswith("<svg") for s in svgs)


def test_cli_refuses_a_year_not_in_the_store(pages_demo_db, tmp_path, capsys):
    code = main(["--db", str(pages_demo_db), "report", "--out", str(tmp_path), "--year",
                 "1999"])
    assert code == 2
    assert capsys.readouterr().err.startswith("error: year 1999 is not in")
    code = main(["--db", str(tmp_path / "none.duckdb"), "report", "--out", str(tmp_path)])
    assert code == 2 and "no database at" in capsys.readouterr().err


def test_page_button_builds_the_report_of_the_address_bar(monkeypatch, pages_demo_db,
                                                         as_operator):
    monkeypatch.setenv("ENEM_DB", str(pages_demo_db))
    app = run_page("pages/Paper_tables.py", {"area": "MT"})
    app.button(key="report.build").click().run(timeout=600)
    assert not app.exception and not app.error, [e.value for e in [*app.exception, *app.error]]
    names = {button.proto.label for button in app.get("download_button")
             if "report.download" in button.proto.id}
    assert {"report.html", "presentation.html"} <= names


def test_report_follows_the_menu_and_leaves_out_pages_without_figures(monkeypatch, report,
                                                                      pages_demo_db):
    monkeypatch.setenv("ENEM_DB", str(pages_demo_db))
    document = report.html.read_text(encoding="utf-8")
    query = Selection.from_url(QUERY).query()
    in_report = [view for view in VIEWS if view.in_report]
    assert in_report[0] == HOME and len(in_report) == len(VIEWS) - 2
    starts = []
    for view in VIEWS:
        title = run_page(view.file, query).title[0].value
        found = document.find(f">{html.escape(title, quote=True)}<")
        if view.in_report:
            starts.append(found)
        else:  # the store's inventory and the run launcher show no figure of the selection
            assert found == -1 and not charts(run_page(view.file, query)), view.file
    assert -1 not in starts and starts == sorted(starts)
