"""Issue 24, points 4 and 5: a colour belongs to a model, and a run has one name everywhere.

- Pooling the runs of each model keeps every model's colour (Chromium, Accuracy vs ability).
- The paper's nine series (five models, seeds and shuffles): runs of one model share its
  colour and differ by symbol and dash; no two series shown together share (colour, symbol),
  also once models outnumber the colours.
- The run picker names a run as legends do (the paper's runs, a run launched from the UI).
- Lane labels (Home, Person fit) are whole and inside the figure (Chromium).
- The sidebar's human counts say what they count, in plain words.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard import palette
from dashboard.palette import MODEL_COLOURS, model_styles
from dashboard.runs.picker import run_choice_labels
from inference.plan import RunSpec
from store.catalogue_queries import model_catalogue
from store.connection import open_reader
from store.layout import copy_store
from tests.browser_support import (
    ARTIFACTS,
    PAGE_TIMEOUT_MS,
    launched_browser,  # noqa: F401  (the browser fixture)
    wait_until_rendered,
    wait_until_still,
)
from tests.browser_support import serving as _serving
from tests.page_support import assert_clean, charts, run_page
from tests.paper_db_support import SEED_SERIES, SHUFFLE_SERIES
from workflows.runs.execution import execute_run

#: What the Runs page's form launches for the random backend with its defaults: the demo
#: already holds a random baseline with these settings (seed 2023), so the store names this
#: one by its seed.
UI_RUN = RunSpec(model="random-baseline", backend="random", year=2023)
UI_LABEL = "random-baseline · 0-shot · 30 shuffles · seed 0"
PAPER_MODELS = ("gpt-3.5-turbo-0613", "llama2-13b", "llama2-7b", "mistral-7b", "mistral-8x7b")


@pytest.fixture(scope="module")
def ui_run_db(tmp_path_factory, pages_demo_db) -> Path:
    """The small demo with a second random-baseline run, launched as the Runs page does."""
    folder = tmp_path_factory.mktemp("colour_ui_run")
    db = folder / "demo.duckdb"
    copy_store(pages_demo_db, db)
    execute_run(UI_RUN, db, folder / "runs")
    return db


def _catalogue(db: Path) -> pd.DataFrame:
    con = open_reader(db)
    try:
        return model_catalogue(con)
    finally:
        con.close()


# --- Point 4: colours -------------------------------------------------------------------


def _assert_model_styles(styles: dict[str, tuple[str, str]], model_of: dict[str, str]) -> None:
    """Runs of one model share its colour; distinct models (while colours last) and distinct
    series never share (colour, symbol)."""
    pairs = list(styles.values())
    assert len(set(pairs)) == len(pairs), styles
    by_model: dict[str, set[str]] = {}
    for label, (colour, _) in styles.items():
        by_model.setdefault(model_of[label], set()).add(colour)
    assert all(len(colours) == 1 for colours in by_model.values()), by_model
    if len(by_model) <= len(MODEL_COLOURS):
        colours = [next(iter(c)) for c in by_model.values()]
        assert len(set(colours)) == len(colours), by_model


def test_the_paper_series_take_their_model_colour_and_never_share_a_style():
    catalogue = sorted(SEED_SERIES + SHUFFLE_SERIES)
    model_of = {label: label.split(" · ")[0] for label in catalogue}
    full = model_styles(catalogue, catalogue)
    _assert_model_styles(full, model_of)
    # Whatever is selected, a series keeps its style; pooled, a model keeps its colour.
    for size in (1, 2, 5):
        for subset in itertools.combinations(catalogue, size):
            assert model_styles(list(subset), catalogue) == {m: full[m] for m in subset}
    pooled = model_styles(PAPER_MODELS, PAPER_MODELS)
    for label, (colour, _) in full.items():
        assert pooled[model_of[label]][0] == colour, (label, pooled)


def test_lines_of_one_model_differ_by_dash_and_crowded_models_by_symbol_and_dash():
    catalogue = sorted(SEED_SERIES + SHUFFLE_SERIES)
    dashes = {label: palette.series_dash(label, catalogue) for label in catalogue}
    styles = model_styles(catalogue, catalogue)
    hatching = {label: palette.symbol_pattern(styles[label][1]) for label in catalogue}
    for model in PAPER_MODELS:
        runs = [label for label in catalogue if label.startswith(model + " · ")]
        assert len({dashes[label] for label in runs}) == len(runs), (model, dashes)
        # Bars have no symbol: a model's runs differ by hatching, its first run plain.
        assert len({hatching[label] for label in runs}) == len(runs), (model, hatching)
        assert hatching[runs[0]] == "" and dashes[runs[0]] == "solid"
    # Nine models, two runs each: more models than colours. The later ones reuse a colour
    # with another symbol and dash, so no two series share (colour, symbol) or (colour, dash).
    many = [f"model-{i} · 0-shot · 30 {kind}" for i in range(9) for kind in ("seeds", "shuffles")]
    styles = model_styles(many, many)
    _assert_model_styles(styles, {label: label.split(" · ")[0] for label in many})
    lines = {(styles[label][0], palette.series_dash(label, many)) for label in many}
    assert len(lines) == len(many)


def test_the_real_paper_catalogue_styles_every_series_apart(paper_db):
    catalogue = _catalogue(paper_db)
    labels = catalogue["model"].tolist()
    assert set(SEED_SERIES + SHUFFLE_SERIES) <= set(labels)
    model_of = dict(zip(catalogue["model"], catalogue["model_id"], strict=True))
    _assert_model_styles(model_styles(labels, labels), model_of)


_TRACES = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(el => el.data
    .filter(t => t.mode === 'markers' && t.legendgroup && t.marker
                 && typeof t.marker.color === 'string')
    .map(t => ({name: t.name, colour: t.marker.color, symbol: t.marker.symbol || 'circle'})))"""


def _marker_colours(page, url: str) -> dict[str, set[tuple[str, str]]]:
    """Series name → the (colour, symbol) pairs of its marker traces on the page at ``url``."""
    page.goto(url, timeout=PAGE_TIMEOUT_MS)
    wait_until_rendered(page, 1)
    found: dict[str, set[tuple[str, str]]] = {}
    for trace in page.evaluate(_TRACES):
        found.setdefault(trace["name"], set()).add((trace["colour"], trace["symbol"]))
    return found


@pytest.fixture(scope="module")
def served(ui_run_db, browser):
    with _serving(ui_run_db, "streamlit-first-hour-colours.log") as base:
        yield base, browser


def test_pooling_keeps_each_model_colour_in_chromium(served, ui_run_db):
    base, browser = served
    catalogue = _catalogue(ui_run_db)
    model_of = dict(zip(catalogue["model"], catalogue["model_id"], strict=True))
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        runs = _marker_colours(page, f"{base}/Accuracy_vs_ability")
        pooled = _marker_colours(page, f"{base}/Accuracy_vs_ability?pool=model")
        page.screenshot(path=str(ARTIFACTS / "first_hour_pooled_colours.png"))
    finally:
        page.close()
    assert set(runs) == set(catalogue["model"]), runs
    assert set(pooled) == set(catalogue["model_id"]), pooled
    for label, styles in runs.items():
        assert len(styles) == 1, (label, styles)
        colour = next(iter(styles))[0]
        assert {c for c, _ in pooled[model_of[label]]} == {colour}, (label, colour, pooled)
    _assert_model_styles({label: next(iter(s)) for label, s in runs.items()}, model_of)


# --- Point 5: labels ----------------------------------------------------------------------


def test_the_picker_names_the_paper_runs_as_the_charts_do(paper_db):
    picker = run_choice_labels(_catalogue(paper_db))
    for label in SEED_SERIES + SHUFFLE_SERIES:
        assert picker[label] == label


def test_a_run_launched_from_the_ui_has_one_name_in_picker_legend_and_caption(monkeypatch,
                                                                             ui_run_db):
    catalogue = _catalogue(ui_run_db)
    assert UI_LABEL in set(catalogue["model"])
    # The form left the family blank: the model keeps the family its demo run stored, so the
    # Families picker does not move it to "unknown family".
    assert set(catalogue.loc[catalogue["model_id"] == "random-baseline", "family"]) == {
        "baseline"}
    monkeypatch.setenv("ENEM_DB", str(ui_run_db))
    app = run_page("pages/Accuracy_vs_ability.py", {"area": "CN"})
    assert_clean(app)
    [runs] = [w for w in app.sidebar.multiselect if w.label == "Runs"]
    # the runs' legend entries (the dotted expected-score curve is a reference, not a run)
    legend = {trace["name"] for figure in charts(app) for trace in figure["data"]
              if trace.get("showlegend") is not False and trace.get("legendgroup")
              and trace.get("legendgroup") != "expected-score"}
    assert UI_LABEL in runs.options
    assert set(runs.options) == legend
    pooled = run_page("pages/Accuracy_vs_ability.py", {"area": "CN", "pool": "model"})
    assert_clean(pooled)
    assert UI_LABEL in " ".join(caption.value for caption in pooled.caption)


_LANE_TICKS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
  const svg = plot.querySelector('.main-svg').getBoundingClientRect();
  const ticks = [...plot.querySelectorAll('.yaxislayer-above [class^="y"][class$="tick"] text')]
    .filter(t => /[A-Za-z]/.test(t.textContent))
    .map(t => { const r = t.getBoundingClientRect();
                const lines = [...t.querySelectorAll('tspan.line')].map(s => s.textContent);
                return {text: lines.length ? lines.join(' ') : t.textContent,
                        left: r.left, right: r.right, top: r.top, bottom: r.bottom}; });
  return {svg: {left: svg.left, right: svg.right, top: svg.top, bottom: svg.bottom}, ticks};
})"""


@pytest.mark.parametrize("path", ["", "Person_fit"])
def test_lane_labels_are_whole_and_inside_the_figure_in_chromium(served, ui_run_db, path):
    base, browser = served
    labels = set(_catalogue(ui_run_db)["model"])
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        page.goto(f"{base}/{path}?area=CN", timeout=PAGE_TIMEOUT_MS)
        wait_until_rendered(page, 1)
        plots = page.evaluate(_LANE_TICKS)
        page.screenshot(path=str(ARTIFACTS / f"first_hour_lanes_{path or 'home'}.png"),
                        full_page=True)
    finally:
        page.close()
    lanes = [plot for plot in plots if {t["text"] for t in plot["ticks"]} & labels]
    assert lanes, plots
    for plot in lanes:
        texts = [tick["text"].replace(" ·  ", " · ").strip() for tick in plot["ticks"]]
        assert set(texts) == labels, texts
        for tick in plot["ticks"]:
            assert "…" not in tick["text"]
            box = plot["svg"]
            assert box["left"] - 0.5 <= tick["left"] and tick["right"] <= box["right"] + 0.5, \
                (tick, box)


_CHOICES = """() => [...[...document.querySelectorAll(
      '[data-testid="stSidebar"] [data-testid="stMultiSelect"]')]
    .find(el => el.querySelector('label').textContent.startsWith('Runs'))
    .querySelectorAll('[data-tag] > span[title]'),
    ...document.querySelectorAll('[role="option"] > div')]
  .map(el => ({text: el.textContent, title: el.getAttribute('title'),
               cut: el.scrollWidth > el.clientWidth + 1,
               right: el.getBoundingClientRect().right,
               edge: el.parentElement.getBoundingClientRect().right}))"""


def test_chosen_runs_and_picker_options_read_whole_in_chromium(served, ui_run_db):
    """The sidebar's chosen runs (and the open picker's options) show their whole label: the
    last words (' · seed 0') are what tells the two random-baseline runs apart."""
    base, browser = served
    catalogue = _catalogue(ui_run_db)
    chosen = catalogue[catalogue["model_id"] == "random-baseline"]
    query = "&".join(f"run={run}" for runs in chosen["run_ids"] for run in runs)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        page.goto(f"{base}/Accuracy_vs_ability?{query}", timeout=PAGE_TIMEOUT_MS)
        wait_until_rendered(page, 1)
        runs = page.locator('[data-testid="stSidebar"] [data-testid="stMultiSelect"]').filter(
            has_text="Runs")
        runs.scroll_into_view_if_needed()
        runs.locator("input").click()
        page.wait_for_selector('[role="option"]', timeout=PAGE_TIMEOUT_MS)
        wait_until_still(page)
        found = page.evaluate(_CHOICES)
        page.screenshot(path=str(ARTIFACTS / "first_hour_run_picker.png"))
    finally:
        page.close()
    tags = [item for item in found if item["title"]]
    options = [item for item in found if not item["title"] and item["text"] != "Select all"]
    assert len(tags) == len(chosen) and options, found
    for item in tags + options:
        assert not item["cut"] and item["right"] <= item["edge"] + 1, item
    assert sorted(item["text"] for item in tags) == sorted(chosen["model"]), found
    assert {item["text"] for item in options} == set(catalogue["model"]) - set(chosen["model"])


def test_the_sidebar_counts_say_what_they_count(monkeypatch, ui_run_db):
    monkeypatch.setenv("ENEM_DB", str(ui_run_db))
    app = run_page("pages/Accuracy_vs_ability.py", {"area": "CN"})
    assert_clean(app)
    [group] = [w for w in app.sidebar.selectbox if w.label == "Human subgroup"]
    words = [*group.options[1:], *(t.label for t in app.sidebar.toggle)]
    assert group.options[1:] and all("tests taken" in option for option in group.options[1:])
    assert not [text for text in words if "area record" in text], words
    blank = [t.label for t in app.sidebar.toggle if "all-blank" in t.label]
    assert blank and "of tests taken" in blank[0]


def test_a_long_lane_label_wraps_whole_and_its_lanes_grow():
    from dashboard.lane_figure import LANE_PX, histogram_with_lanes, label_lines

    long = "a-model-with-a-long-name · few-shot (no count given) · 30 shuffles · run 1a2b3c4d"
    points = pd.DataFrame([{"area": "CN", "model": model, "run_id": "r", "shuffle": s,
                            "theta": 0.1 * s, "theta_se": 0.3, "lz": 0.0, "ctt": s}
                           for model in (long, "short · 0-shot") for s in range(3)])
    histogram = {"CN": pd.DataFrame({"bin": [0.0], "n": [1]})}
    styles = {long: ("#000000", "circle"), "short · 0-shot": ("#111111", "circle")}
    figure, _ = histogram_with_lanes(["CN"], histogram, points, "theta", bin_width=0.1,
                                     styles=styles, x_title="θ", human_label="humans")
    axis = figure.layout.yaxis
    labels = dict(zip(axis.tickvals, axis.ticktext, strict=True))
    names = {trace.name: {labels[y] for y in trace.y} for trace in figure.data
             if trace.type == "scatter"}
    [wrapped] = names[long]
    assert "<br>" in wrapped and "…" not in wrapped
    assert wrapped.replace(" ·<br>", " · ") == long
    # Both lanes grow to the wrapped label's two lines.
    plot_px = figure.layout.height - figure.layout.margin.t - figure.layout.margin.b
    px_per_unit = (axis.domain[1] - axis.domain[0]) * plot_px / (axis.range[1] - axis.range[0])
    lanes = sorted(v for v in axis.tickvals if v < 0)
    assert np.allclose(np.diff(lanes) * px_per_unit, label_lines(wrapped) * LANE_PX)
    assert label_lines(wrapped) >= 2


_NOTE_AND_LANES = """() => {
  const box = el => { const r = el.getBoundingClientRect();
                      return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const note = [...document.querySelectorAll('.annotation')]
      .find(a => a.textContent.startsWith('no scored candidates'));
  const lanes = [...document.querySelectorAll('.yaxislayer-above text')]
      .filter(t => t.textContent.includes(' · ')).map(box);
  return {note: note ? box(note) : null, lanes};
}"""


def test_a_year_without_candidates_says_so_above_the_lanes_in_chromium(tmp_path, served):
    """An area without candidates beside one with them: the note sits in the empty
    histogram, not on a lane. (A store without any candidates draws the lanes alone:
    tests/test_items_only_store.py.)"""
    from dashboard.lane_figure import histogram_with_lanes

    models = [f"model-{i} · few-shot · 30 seeds" for i in range(5)]
    points = pd.DataFrame([{"area": "CN", "model": model, "run_id": "r", "shuffle": s,
                            "theta": 0.2 * i + 0.01 * s, "theta_se": 0.3, "lz": 0.0, "ctt": s}
                           for i, model in enumerate(models) for s in range(5)])
    others = pd.DataFrame({"bin": [-0.5, 0.0, 0.5], "n": [10, 30, 10]})
    figure, _ = histogram_with_lanes(["CN", "MT"], {"MT": others}, points, "theta",
                                     bin_width=0.1,
                                     styles=model_styles(models, models), x_title="θ",
                                     human_label="humans")
    html = tmp_path / "lanes.html"
    figure.write_html(html, include_plotlyjs=True)
    _, browser = served  # the module's browser (one Playwright per process at a time)
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    try:
        page.goto(html.as_uri())
        # plotly.js draws the figure in steps: wait for the note and all five lanes.
        page.wait_for_function(f"(() => {{ const f = {_NOTE_AND_LANES}; const r = f(); "
                               f"return r.note && r.lanes.length >= {len(models)}; }})()",
                               timeout=PAGE_TIMEOUT_MS)
        found = page.evaluate(_NOTE_AND_LANES)
    finally:
        page.close()
    # CN's panel comes first: its five lanes are the five highest lane labels.
    lanes = sorted(found["lanes"], key=lambda lane: lane["top"])[:len(models)]
    assert found["note"] and len(found["lanes"]) == 2 * len(models), found
    assert found["note"]["bottom"] < min(lane["top"] for lane in lanes) - 20, found
