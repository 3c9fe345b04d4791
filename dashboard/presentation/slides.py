"""The slides of presentation mode: every figure the report captures for a selection, with
its page title and caption, captured once per selection and database version.

The figures come from the report's capture (:func:`workflows.report.capture.capture_pages`:
every page run headless through the app with the selection as its URL), so presentation mode
shows the dashboard's own figures and holds no copy of their code. The capture runs Streamlit's
``AppTest``, which replaces the process's Streamlit runtime while it runs; inside the serving
dashboard that would break every open session, so the capture runs as its own process
(``python -m dashboard.presentation.slides``, waited for through
``workflows.background.run_to_end``), which writes the slides as JSON.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import streamlit as st

from dashboard.data import Token, version_token
from dashboard.margins import PAGE_MARGIN_KEY
from workflows.background import run_to_end
from workflows.report.build import REPORT_PROCESS_TIMEOUT, figure_captions
from workflows.report.capture import PageCapture, capture_pages

#: A selection as a cache key: (query key, its values) pairs, sorted by key.
Query = tuple[tuple[str, tuple[str, ...]], ...]

#: How much larger every font of a figure is drawn on a slide.
FONT_SCALE = 1.5
#: plotly.js's default font size (px), which a figure without one is drawn at.
PLOTLY_FONT_SIZE = 12
#: plotly.js's default figure height (px).
PLOTLY_HEIGHT = 450
#: About the height (px) a slide's figure gets on a 1280×720 screen, below the controls and
#: the title, and its width there (three quarters of the window, the caption beside it).
SLIDE_HEIGHT, SLIDE_WIDTH = 620, 920
#: About the width (px) a page lays its figures out for (a 1440-px wide window).
PAGE_WIDTH = 1100
#: The smallest factor a slide on a 1280×720 screen draws a figure's type at (a figure laid
#: out much taller than the screen), and the largest on any screen.
MIN_FONT_SCALE, MAX_FONT_SCALE = 1.0, 1.8
#: Type grows as fast as the room between panels (small multiples leave none to spare).
ROOM_SCALE = 1.0


@dataclass(frozen=True)
class Slide:
    """One figure: the page it is on (its title and its file, relative to the project as in
    ``pages/Person_fit.py``), the figure (Plotly JSON as a dict), its caption."""

    page: str
    figure: dict
    caption: str
    file: str = ""


@dataclass(frozen=True)
class Deck:
    """The slides of one selection, and the errors pages showed while being captured
    ('page title: message')."""

    slides: tuple[Slide, ...]
    problems: tuple[str, ...] = ()

    def first_of(self, file: str | None) -> int | None:
        """The number (1-based) of the first slide of the page ``file`` (as in
        ``pages/Person_fit.py``), None when that page shows no figure here."""
        return next((number for number, slide in enumerate(self.slides, 1)
                     if file and slide.file == file), None)


def slides_of(pages: Sequence[PageCapture]) -> Deck:
    """Every figure of ``pages`` in report order, each with its page title, file and
    caption."""
    captions = iter(figure_captions(pages))
    slides = tuple(Slide(page.title, figure, next(captions), page.file)
                   for page in pages for figure in page.figures)
    problems = tuple(f"{page.title}: {problem}" for page in pages for problem in page.problems)
    return Deck(slides, problems)


def query_key(query: Mapping[str, Sequence[str]]) -> Query:
    """A selection's query parameters as a hashable, order-free cache key."""
    return tuple(sorted((key, tuple(values)) for key, values in query.items() if values))


def capture_deck(db_path: Path, query: Query) -> Deck:
    """The deck of ``query`` on ``db_path``, captured in a process of its own (see the module
    docstring). Raises RuntimeError with the process's last words when it fails."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "slides.json"
        command = [sys.executable, "-m", "dashboard.presentation.slides", "--db",
                   str(Path(db_path).absolute()), "--query",
                   urllib.parse.urlencode([(k, v) for k, vs in query for v in vs]),
                   "--out", str(out)]
        done = run_to_end(command, timeout=REPORT_PROCESS_TIMEOUT)
        if done.returncode != 0 or not out.exists():
            raise RuntimeError((done.stderr or done.stdout).strip()[-600:])
        return read_deck(out)


def write_deck(deck: Deck, path: Path) -> None:
    path.write_text(json.dumps(asdict(deck)), encoding="utf-8")


def read_deck(path: Path) -> Deck:
    stored = json.loads(Path(path).read_text(encoding="utf-8"))
    return Deck(tuple(Slide(**slide) for slide in stored["slides"]), tuple(stored["problems"]))


@st.cache_data(show_spinner="Running every page of this selection once to collect its "
                            "figures (a minute or so on a full-size year; later visits of the "
                            "same selection are instant) …", max_entries=8)
def _cached_deck(token: Token, query: Query) -> Deck:
    return capture_deck(Path(token[0]), query)


def selection_deck(query: Mapping[str, Sequence[str]]) -> Deck:
    """The deck of ``query`` on the dashboard's database, cached per selection and database
    version (a new run or ingest captures it again)."""
    return _cached_deck(version_token(), query_key(query))


def _scale_sizes(node: object, scale: float) -> None:
    """Multiply, in place, every explicit font size under ``node`` (any ``*font`` dict) and
    every length given in pixels (a colour bar's ``len`` with ``lenmode='pixels'``): text
    that grows needs the room to grow with it."""
    if isinstance(node, list):
        for item in node:
            _scale_sizes(item, scale)
    elif isinstance(node, dict):
        if node.get("lenmode") == "pixels" and isinstance(node.get("len"), (int, float)):
            node["len"] = node["len"] * scale
        for key, value in node.items():
            if (key.endswith("font") and isinstance(value, dict)
                    and isinstance(value.get("size"), (int, float))):
                value["size"] = value["size"] * scale
            _scale_sizes(value, scale)


def slide_scale(height: float, available: float = SLIDE_HEIGHT,
                width: float = SLIDE_WIDTH) -> float:
    """How much larger a figure's type is drawn on a slide: the figure was laid out ``height``
    px high on its page, the slide gives it ``available`` px of height and ``width`` px of
    width.

    The room between a figure's panels is a fraction of its size, while text keeps its size in
    pixels: on a 1280×720 screen (:data:`SLIDE_HEIGHT`) the type grows in proportion to the
    height the figure gets (:data:`ROOM_SCALE` times it), up to :data:`FONT_SCALE`, and a
    taller screen enlarges that by its height's ratio; but never
    more than the width allows (:data:`ROOM_SCALE` times the slide's width over the page's,
    :data:`PAGE_WIDTH`: side by side panels and long axis titles), nor beyond
    :data:`MAX_FONT_SCALE`, nor below :data:`MIN_FONT_SCALE` (the page's own type)."""
    room = ROOM_SCALE * SLIDE_HEIGHT / max(height, 1.0)
    by_height = min(FONT_SCALE, room) * available / SLIDE_HEIGHT
    by_width = ROOM_SCALE * width / PAGE_WIDTH
    return max(MIN_FONT_SCALE, min(MAX_FONT_SCALE, by_height, by_width))


def slide_figure(figure: dict, scale: float | None = None) -> dict:
    """A copy of ``figure`` for a slide: every font ``scale`` times larger (the default size
    too; by default :func:`slide_scale` of its height), pixel lengths grown by the same
    factor, an axis title repeated down a column of panels kept on the lowest panel only,
    and no height or width of its own: the slide sizes it to the screen, so that the figure
    never needs scrolling."""
    shown = copy.deepcopy(figure)
    layout = shown.setdefault("layout", {})
    _restore_page_margin(layout)
    if scale is None:
        scale = slide_scale(layout.get("height") or PLOTLY_HEIGHT)
    _scale_sizes(shown, scale)
    font = layout.setdefault("font", {})
    font.setdefault("size", PLOTLY_FONT_SIZE * scale)
    _pin_inherited_sizes(shown, font["size"])
    _drop_repeated_axis_titles(layout)
    layout.pop("height", None)
    layout.pop("width", None)
    layout["autosize"] = True
    return shown


def _restore_page_margin(layout: dict) -> None:
    """The margins the figure's builder set, before ``dashboard.margins`` widened them for the
    page (in place): a slide scales its fonts and squeezes the figure, and lets automargin find
    the room its text needs."""
    meta = layout.get("meta")
    if isinstance(meta, dict) and isinstance(meta.get(PAGE_MARGIN_KEY), dict):
        margin = {side: value for side, value in (layout.get("margin") or {}).items()
                  if side not in ("l", "r", "t", "b")}
        layout["margin"] = {**margin, **meta[PAGE_MARGIN_KEY]}


def _axis_title(axis: dict) -> str:
    title = axis.get("title")
    return str(title.get("text") or "") if isinstance(title, dict) else str(title or "")


def _drop_repeated_axis_titles(layout: dict) -> None:
    """Keep an x-axis title that several panels of one column repeat on the lowest of them
    only, in place: squeezed to a screen's height, the title of an upper panel runs into the
    title of the panel under it, and the lowest panel's title says the same."""
    columns: dict[tuple, list[tuple[float, str]]] = {}
    for key, axis in layout.items():
        if not (key.startswith("xaxis") and isinstance(axis, dict) and _axis_title(axis)):
            continue
        domain = tuple(round(v, 3) for v in axis.get("domain") or (0.0, 1.0))
        anchor = str(axis.get("anchor") or "y")
        partner = layout.get("yaxis" + anchor[1:])
        bottom = (partner.get("domain") or (0.0, 1.0))[0] if isinstance(partner, dict) else 0.0
        columns.setdefault((domain, _axis_title(axis)), []).append((bottom, key))
    for panels in columns.values():
        for _, key in sorted(panels)[1:]:
            layout[key].pop("title", None)


def _pin_inherited_sizes(figure: dict, size: float) -> None:
    """Give the text that would inherit the figure's default font (tick labels, axis titles,
    legend, annotations, colour bars) that default as an explicit ``size``, in place.

    A slide once drew its tick labels and legend at plotly's 12 px while its explicitly sized
    subplot titles were enlarged (a browser test caught it, not reproducibly): the default
    font had not reached them. Explicit sizes do not depend on it."""
    layout = figure.setdefault("layout", {})
    for key, axis in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            axis.setdefault("tickfont", {}).setdefault("size", size)
            if isinstance(axis.get("title"), dict):
                axis["title"].setdefault("font", {}).setdefault("size", size)
    layout.setdefault("legend", {}).setdefault("font", {}).setdefault("size", size)
    for annotation in layout.get("annotations") or []:
        annotation.setdefault("font", {}).setdefault("size", size)
    for trace in figure.get("data") or []:
        if isinstance(trace.get("colorbar"), dict):
            trace["colorbar"].setdefault("tickfont", {}).setdefault("size", size)


def main(argv: Sequence[str] | None = None) -> int:
    """Capture the deck of a selection into a JSON file (run by :func:`capture_deck`)."""
    parser = argparse.ArgumentParser(description="Capture presentation mode's slides.")
    parser.add_argument("--db", required=True, help="the DuckDB store")
    parser.add_argument("--query", default="", help="the selection as a URL query string")
    parser.add_argument("--out", required=True, help="JSON file to write")
    args = parser.parse_args(argv)
    query = urllib.parse.parse_qs(args.query)
    write_deck(slides_of(capture_pages(Path(args.db), query)), Path(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
