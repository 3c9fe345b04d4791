"""A model keeps its colour whatever else is selected, and the multi-area figures keep their
legend, panel titles and axis titles apart: the palette rule, the pages under AppTest, and the
real Streamlit server in Chromium at 1280 and 1920 px."""

from __future__ import annotations

import hashlib
import itertools
import json
import urllib.parse
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.figures import area_grid
from dashboard.palette import DASHES, MODEL_COLOURS, SYMBOLS, model_styles, series_style_table
from store.connection import open_reader
from tests.browser_support import ARTIFACTS, BROWSER_ARGS, CHROMIUM, PAGE_TIMEOUT_MS
from tests.browser_support import require_browser as _require_browser
from tests.browser_support import serving as _serving
from tests.browser_support import wait_until_rendered as _wait_until_rendered

ROOT = Path(__file__).resolve().parent.parent
OKABE_ITO_SET = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"}


def wanted_slot(label: str) -> int:
    """The colour index a label asks for, computed here from its SHA-256."""
    return int.from_bytes(hashlib.sha256(label.encode()).digest()[:8], "big") % 6


def test_a_label_keeps_its_colour_in_every_selection():
    catalogue = ["SmolLM2 · 0-shot", "gpt-4o · 30 seeds", "llama2-13b · few-shot", "random",
                 "test-odd-base", "test-strong-it", "zeta"]
    full = model_styles(catalogue, catalogue)
    assert len(set(full.values())) == len(catalogue)
    for size in range(1, len(catalogue) + 1):
        for subset in itertools.combinations(catalogue, size):
            for order in (subset, subset[::-1]):
                assert model_styles(list(order), catalogue) == {m: full[m] for m in subset}


def test_colours_follow_the_model_hash_then_catalogue_order():
    assert set(MODEL_COLOURS) == OKABE_ITO_SET
    models = [f"series-{i}" for i in range(40)]
    by_slot: dict[int, list[str]] = {}
    for model in models:
        by_slot.setdefault(wanted_slot(model), []).append(model)
    first, second = next(group for group in by_slot.values() if len(group) >= 2)[:2]
    slot = wanted_slot(first)
    # Alone, each takes the colour its model's hash names, whatever the run's other words.
    run = f"{second} · 4-shot · 30 seeds"
    assert model_styles([run], [run])[run] == (MODEL_COLOURS[slot], SYMBOLS[0])
    # Together, the earlier one in the catalogue keeps it, the later one takes the next free.
    styles = model_styles([first, second], [first, second])
    assert styles[first] == (MODEL_COLOURS[slot], SYMBOLS[0])
    assert styles[second] == (MODEL_COLOURS[(slot + 1) % 6], SYMBOLS[0])
    swapped = model_styles([first, second], [second, first])
    assert swapped[second] == (MODEL_COLOURS[slot], SYMBOLS[0])
    # Seven models in a six-colour palette: the seventh reuses a colour with another marker.
    seven = model_styles(models[:7], models[:7])
    assert len({colour for colour, _ in seven.values()}) == 6
    assert sorted(symbol for _, symbol in seven.values()).count(SYMBOLS[1]) == 1
    # Two runs of one model: one colour, the model's first run its first symbol and a solid
    # line, the next one the next symbol and dash.
    runs = [f"{first} · 0-shot · 30 shuffles", f"{first} · few-shot · 30 seeds"]
    table = series_style_table(runs, runs)
    assert [(s.colour, s.symbol, s.dash) for s in table.values()] == [
        (MODEL_COLOURS[slot], SYMBOLS[0], DASHES[0]), (MODEL_COLOURS[slot], SYMBOLS[1], DASHES[1])]
    assert DASHES[0] == "solid" and "dash" not in DASHES, "plain dash marks a hull"


def test_area_grid_keeps_pixel_gaps_between_legend_titles_and_rows():
    figure = area_grid(["CN", "CH", "LC", "MT"], columns=2, row_height=340)
    layout = figure.layout
    plot_height = layout.height - layout.margin.t - layout.margin.b
    top_row, bottom_row = layout.yaxis.domain, layout.yaxis3.domain
    gap_px = (top_row[0] - bottom_row[1]) * plot_height
    assert gap_px >= 100, "room for tick labels, the θ title and the next row's titles"
    assert (top_row[1] - top_row[0]) * plot_height == pytest.approx(340, abs=1)
    assert layout.legend.yanchor == "bottom"
    assert (layout.legend.y - 1.0) * plot_height >= 30, "the legend sits clear of the titles"


def _catalogue(db: Path) -> list[str]:
    con = open_reader(db)
    try:
        return [row[0] for row in con.execute(
            "SELECT DISTINCT coalesce(label, model_id) FROM model_runs ORDER BY 1").fetchall()]
    finally:
        con.close()


def _model_colours(app: AppTest) -> dict[str, set[str]]:
    """Series label → the colours its traces use (alpha dropped), over every chart of a run."""
    colours: dict[str, set[str]] = {}
    for element in app.get("plotly_chart"):
        for trace in json.loads(element.proto.spec)["data"]:
            group = trace.get("legendgroup")
            colour = (trace.get("marker") or {}).get("color") or (trace.get("line") or {}).get(
                "color")
            if group and isinstance(colour, str):
                colours.setdefault(group, set()).add(_rgb(colour))
    return colours


def _rgb(colour: str) -> tuple[int, int, int]:
    if colour.startswith("#"):
        return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    red, green, blue = colour[colour.index("(") + 1:].split(",")[:3]
    return int(red), int(green), int(blue)


@pytest.mark.parametrize("page", ["pages/Accuracy_vs_ability.py", "pages/Test_information.py"])
def test_pages_keep_a_model_colour_across_selections(monkeypatch, pages_models_db, page):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    labels = _catalogue(pages_models_db)
    smol = next(label for label in labels if label.startswith("SmolLM2"))
    seen: dict[str, set] = {}
    for chosen in (["test-odd-base"], [smol, "test-odd-base"], [smol], labels):
        app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        app.query_params["model"] = chosen
        app.switch_page(page).run()
        assert not app.exception
        for label, colours in _model_colours(app).items():
            if label in labels:
                assert len(colours) == 1, (label, colours)
                seen.setdefault(label, set()).update(colours)
    assert {"test-odd-base", smol} <= set(seen)
    assert all(len(colours) == 1 for colours in seen.values()), seen
    assert seen["test-odd-base"] != seen[smol]


_BOXES = """() => {
  const plot = document.querySelector('.js-plotly-plot');
  const box = el => { const r = el.getBoundingClientRect();
                      return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const titles = [...plot.querySelectorAll('.annotation')]
      .filter(a => a.textContent.includes(' — ')).map(a => ({text: a.textContent, ...box(a)}));
  const xtitles = [...plot.querySelectorAll('.g-xtitle text, [class*="g-x"][class*="title"] text')]
      .map(t => ({text: t.textContent, ...box(t)}));
  const legend = plot.querySelector('.legend');
  const colours = {};
  for (const el of document.querySelectorAll('.js-plotly-plot'))
    for (const t of el.data) {
      const c = (t.marker && t.marker.color) || (t.line && t.line.color);
      if (t.legendgroup && typeof c === 'string') (colours[t.legendgroup] ||= []).push(c);
    }
  return {titles, xtitles, legend: legend ? box(legend) : null, colours};
}"""


def _overlap(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] \
        and b["top"] < a["bottom"]


def test_layout_and_colours_in_chromium(pages_models_db):
    sync_playwright = _require_browser()
    labels = _catalogue(pages_models_db)
    smol = next(label for label in labels if label.startswith("SmolLM2"))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    colours: dict[str, set] = {}
    with _serving(pages_models_db, "streamlit-colours.log") as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            for width, path, chosen in itertools.product(
                    (1280, 1920), ("Accuracy_vs_ability", "Test_information"),
                    (["test-odd-base"], [smol, "test-odd-base"], [])):
                page = browser.new_page(viewport={"width": width, "height": 1400})
                query = urllib.parse.urlencode([("model", m) for m in chosen])
                page.goto(f"{base}/{path}?{query}", timeout=PAGE_TIMEOUT_MS)
                _wait_until_rendered(page, 1)
                found = page.evaluate(_BOXES)
                page.screenshot(path=str(ARTIFACTS / f"colours_{path}_{len(chosen)}_{width}.png"),
                                full_page=True)
                page.close()
                assert len(found["titles"]) == 4, found["titles"]
                assert sum("θ (ability" in axis["text"] for axis in found["xtitles"]) >= 2
                first_title = min(title["top"] for title in found["titles"])
                assert found["legend"]["bottom"] <= first_title - 4, (width, path, found)
                for title, axis in itertools.product(found["titles"], found["xtitles"]):
                    assert not _overlap(title, axis), (width, path, title, axis)
                    if axis["bottom"] <= title["top"] + 1 and title["left"] < axis["right"] \
                            and axis["left"] < title["right"]:
                        assert title["top"] - axis["bottom"] >= 8, (width, path, title, axis)
                for label, used in found["colours"].items():
                    if label in labels:
                        colours.setdefault(label, set()).update(_rgb(c) for c in used)
        finally:
            browser.close()
    assert all(len(used) == 1 for used in colours.values()), colours
    assert colours["test-odd-base"] != colours[smol]
