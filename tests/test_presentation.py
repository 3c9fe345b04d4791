"""Presentation mode: ``?present=1`` shows the selection's figures one at a time, without the
sidebar, in the report's order and with the report's captions; Previous / Next walk through all
of them and stop at the ends; leaving returns to the page with the same selection. Also the
slide helpers (fonts and height of a slide's figure, figures paired with captions, the cache key).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.presentation import slides as presentation_slides
from dashboard.presentation.slides import (
    Deck,
    Slide,
    capture_deck,
    query_key,
    selection_deck,
    slide_figure,
    slide_scale,
    slides_of,
)
from workflows.report.build import Selection, figure_captions
from workflows.report.capture import Block, PageCapture, capture_pages

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 300
QUERY = "?year=2023&area=CN&area=MT&lang=en&shots=0"


# --- slide helpers --------------------------------------------------------------------------

def test_slide_figure_scales_every_font_and_leaves_the_size_to_the_screen():
    figure = {"data": [{"type": "bar", "textfont": {"size": 14}, "y": [1, 2]},
                       {"type": "heatmap", "colorbar": {"lenmode": "pixels", "len": 200,
                                                        "thickness": 14}},
                       {"type": "heatmap", "colorbar": {"len": 0.5}}],
              "layout": {"height": 300, "width": 900,
                         "annotations": [{"text": "CN", "font": {"size": 16}}, {"text": "MT"}],
                         "xaxis": {"tickfont": {"size": 10, "color": "red"},
                                   "title": {"text": "θ", "font": {"size": 13}}}}}
    shown = slide_figure(figure, scale=1.5)
    assert shown["data"][0]["textfont"] == {"size": 21.0}
    assert shown["layout"]["annotations"][0]["font"] == {"size": 24.0}
    # Text that would inherit the default font gets it explicitly (18 = plotly's 12 px × 1.5).
    assert shown["layout"]["annotations"][1]["font"] == {"size": 18.0}
    assert shown["layout"]["legend"] == {"font": {"size": 18.0}}
    assert shown["data"][1]["colorbar"]["tickfont"] == {"size": 18.0}
    assert shown["layout"]["xaxis"]["tickfont"] == {"size": 15.0, "color": "red"}
    assert shown["layout"]["xaxis"]["title"]["font"] == {"size": 19.5}
    assert shown["layout"]["font"] == {"size": 18.0}  # plotly's default 12 px × 1.5
    # The slide sizes the figure to the window: no height or width of its own.
    assert "height" not in shown["layout"] and "width" not in shown["layout"]
    assert shown["layout"]["autosize"] is True
    assert shown["data"][0]["y"] == [1, 2]
    assert shown["data"][1]["colorbar"] == {"lenmode": "pixels", "len": 300.0, "thickness": 14,
                                            "tickfont": {"size": 18.0}}
    assert shown["data"][2]["colorbar"]["len"] == 0.5  # a fraction of the (grown) plot
    # The capture's figure is left as it was (it is cached and shared).
    assert figure["layout"]["annotations"][0]["font"] == {"size": 16}
    assert figure["layout"]["height"] == 300 and figure["layout"]["width"] == 900


def test_slide_scale_follows_the_room_a_figure_gets():
    # By height: on a 1280×720 screen's 620 px a figure that fits grows by 1.5, a taller one
    # in proportion to the room it gets (620 / height), never below 1 (the page's type); a
    # taller screen enlarges that by its height's ratio; the width the slide gives bounds it.
    wide = 10_000
    assert slide_scale(380, 620, wide) == pytest.approx(1.5)
    assert slide_scale(500, 620, wide) == pytest.approx(620 / 500)
    assert slide_scale(920, 620, wide) == slide_scale(2760, 620, wide) == pytest.approx(1.0)
    assert slide_scale(894, 932, wide) == pytest.approx(932 / 894)
    assert slide_scale(380, 930, wide) == pytest.approx(1.8)  # the largest
    # By width: the slide's width over the page's 1100 px; on a 1280×720 screen the figure
    # beside its caption (920 px) leaves no room to grow; 1372 px (1920×1080) does.
    assert slide_scale(380) == pytest.approx(1.0)
    assert slide_scale(380, 932, 1372) == pytest.approx(1372 / 1100)
    assert slide_scale(2760, 620, 600) == pytest.approx(1.0)  # never below the page's type
    # slide_figure's default: the scale of the figure's own height (plotly's 450 without one).
    assert slide_figure({"data": [], "layout": {"height": 920}})["layout"]["font"]["size"] \
        == pytest.approx(12 * slide_scale(920))
    figure = {"data": [], "layout": {"font": {"size": 20, "family": "serif"},
                                      "yaxis2": {"title": {"text": "θ"}}}}
    layout = slide_figure(figure, scale=1.5)["layout"]
    assert layout["font"] == {"size": 30.0, "family": "serif"}
    # The pinned sizes follow the figure's own (scaled) default.
    assert layout["yaxis2"]["tickfont"] == layout["yaxis2"]["title"]["font"] == {"size": 30.0}


def test_a_column_of_panels_keeps_its_repeated_axis_title_on_the_lowest_panel():
    title = {"text": "θ (ability, logits)"}
    layout = {"xaxis": {"domain": [0, 0.46], "anchor": "y", "title": dict(title)},
              "xaxis2": {"domain": [0.54, 1], "anchor": "y2", "title": dict(title)},
              "xaxis3": {"domain": [0, 0.46], "anchor": "y3", "title": dict(title)},
              "xaxis4": {"domain": [0.54, 1], "anchor": "y4", "title": {"text": "b"}},
              "yaxis": {"domain": [0.55, 1]}, "yaxis2": {"domain": [0.55, 1]},
              "yaxis3": {"domain": [0, 0.45]}, "yaxis4": {"domain": [0, 0.45]}}
    shown = slide_figure({"data": [], "layout": layout})["layout"]
    assert "title" not in shown["xaxis"]  # the lower panel of its column says the same
    assert shown["xaxis3"]["title"]["text"] == "θ (ability, logits)"
    # Alone in its column with that title (the panel under it says something else): kept.
    assert shown["xaxis2"]["title"]["text"] == "θ (ability, logits)"
    assert shown["xaxis4"]["title"]["text"] == "b"


def test_slides_pair_each_figure_with_the_caption_after_it():
    one, two, three = ({"data": [{"y": [n]}], "layout": {}} for n in (1, 2, 3))
    pages = [PageCapture("pages/a.py", "Page A", [
                 Block("title", "Page A"), Block("figure", one), Block("caption", "first"),
                 Block("table", pd.DataFrame({"x": [1]})), Block("caption", "a table"),
                 Block("figure", two), Block("info", "no caption here")]),
             PageCapture("pages/b.py", "Page B", []),
             PageCapture("pages/c.py", "Page C", [
                 Block("figure", three), Block("caption", "third"),
                 Block("error", "boom")])]
    deck = slides_of(pages)
    assert deck.slides == (Slide("Page A", one, "first", "pages/a.py"),
                           Slide("Page A", two, "", "pages/a.py"),
                           Slide("Page C", three, "third", "pages/c.py"))
    assert deck.problems == ("Page C: boom",)
    # Where a page's figures start (entering presentation mode from that page).
    assert deck.first_of("pages/a.py") == 1 and deck.first_of("pages/c.py") == 3
    assert deck.first_of("pages/b.py") is None and deck.first_of(None) is None


def test_query_key_ignores_order_and_empty_keys():
    assert query_key({"year": ["2023"], "area": ["CN", "MT"], "run": []}) == \
        query_key({"area": ["CN", "MT"], "year": ["2023"]}) == \
        (("area", ("CN", "MT")), ("year", ("2023",)))
    assert query_key({"area": ["MT", "CN"]}) != query_key({"area": ["CN", "MT"]})


def test_the_deck_is_captured_once_per_selection_and_database_version(monkeypatch, tmp_path):
    db = tmp_path / "store.duckdb"
    db.write_bytes(b"x")
    monkeypatch.setenv("ENEM_DB", str(db))
    calls: list[tuple] = []

    def fake_capture(db_path, query):
        calls.append((Path(db_path), query))
        return Deck((Slide("P", {"data": [], "layout": {}}, str(len(calls))),))

    monkeypatch.setattr(presentation_slides, "capture_deck", fake_capture)
    presentation_slides._cached_deck.clear()
    first = selection_deck({"year": ["2023"], "area": ["CN"]})
    assert selection_deck({"area": ["CN"], "year": ["2023"]}) == first
    assert len(calls) == 1 and calls[0] == (db, (("area", ("CN",)), ("year", ("2023",))))
    selection_deck({"year": ["2022"]})
    assert len(calls) == 2
    # A write to the store (a new run, an ingest) is a new version: captured again.
    later = time.time() + 5
    db.write_bytes(b"xy")
    os.utime(db, (later, later))
    assert selection_deck({"year": ["2023"], "area": ["CN"]}).slides[0].caption == "3"
    assert len(calls) == 3
    presentation_slides._cached_deck.clear()


# --- in the app -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def report_figures(pages_models_db):
    """The figures and captions the report captures for QUERY (in this process)."""
    pages = capture_pages(pages_models_db, Selection.from_url(QUERY).query())
    return [figure for page in pages for figure in page.figures], figure_captions(pages)


@pytest.fixture
def presenting(monkeypatch, pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, values in Selection.from_url(QUERY).query().items():
        app.query_params[key] = values if len(values) > 1 else values[0]
    app.query_params["present"] = "1"
    app.query_params["slide"] = "1"
    return app.switch_page("pages/Person_fit.py").run()


def _shown(app: AppTest) -> tuple[dict, str]:
    """The one figure a slide shows and its caption."""
    charts = app.get("plotly_chart")
    assert len(charts) == 1
    assert not app.exception, [e.value for e in app.exception]
    captions = [c.value for c in app.caption if c.value.startswith("Figure ")]
    assert len(captions) == 1
    return json.loads(charts[0].proto.spec), captions[0]


def test_present_shows_one_figure_with_its_caption_and_no_sidebar(presenting, report_figures):
    figures, captions = report_figures
    figure, caption = _shown(presenting)
    assert len(presenting.sidebar.children) == 0
    assert not presenting.title  # not the page: the slide
    # The report's figure, with the slide's larger fonts (trace text has explicit sizes).
    assert figure["data"] == slide_figure(figures[0])["data"]
    assert caption == f"Figure 1. {captions[0]}"
    assert presenting.markdown[0].value == f"**Figure 1 of {len(figures)}**"
    assert presenting.button(key="present_previous").disabled
    assert not presenting.button(key="present_next").disabled
    assert "area = CN, MT" in presenting.caption[-1].value


def test_next_and_previous_walk_every_figure_in_report_order(presenting, report_figures):
    figures, captions = report_figures
    app = presenting
    assert len(figures) > 5
    for number in range(1, len(figures) + 1):
        figure, caption = _shown(app)
        assert figure["data"] == slide_figure(figures[number - 1])["data"], number
        assert caption == f"Figure {number}. {captions[number - 1]}"
        assert number == 1 or app.query_params["slide"] == str(number)
        if number < len(figures):
            app = app.button(key="present_next").click().run()
    assert app.button(key="present_next").disabled  # the last figure: no further
    for number in range(len(figures) - 1, 0, -1):
        app = app.button(key="present_previous").click().run()
        figure, caption = _shown(app)
        assert figure["data"] == slide_figure(figures[number - 1])["data"], number
    assert app.button(key="present_previous").disabled  # the first figure
    assert not app.button(key="present_next").disabled


def test_a_slide_of_the_address_opens_there_and_bad_numbers_are_clamped(presenting,
                                                                        report_figures):
    figures, captions = report_figures
    for asked, expected in (("3", 3), ("999", len(figures)), ("zero", 1), ("-2", 1)):
        presenting.query_params["slide"] = asked
        _, caption = _shown(presenting.run())
        assert caption == f"Figure {expected}. {captions[expected - 1]}", asked


def test_without_a_slide_it_opens_at_the_pages_first_figure(monkeypatch, pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, values in Selection.from_url(QUERY).query().items():
        app.query_params[key] = values if len(values) > 1 else values[0]
    app.query_params["present"] = "1"
    app = app.switch_page("pages/Person_fit.py").run()
    deck = capture_deck(pages_models_db, query_key(Selection.from_url(QUERY).query()))
    first = next(n for n, slide in enumerate(deck.slides, 1) if slide.page.startswith("Person"))
    assert first > 1  # Home's figure comes first in the deck
    _, caption = _shown(app)
    assert caption == f"Figure {first}. {deck.slides[first - 1].caption}"
    assert app.query_params["slide"] == str(first)  # the address names the slide shown
    app = app.button(key="present_previous").click().run()
    assert _shown(app)[1].startswith(f"Figure {first - 1}. ")


def test_leaving_returns_to_the_page_with_the_same_selection(presenting):
    app = presenting.button(key="present_next").click().run()
    app = app.button(key="present_leave").click().run()
    assert not app.exception
    assert app.title[0].value.startswith("Person fit")
    assert "present" not in app.query_params and "slide" not in app.query_params
    assert app.sidebar.radio(key="sidebar.lang").value == "en"
    assert app.sidebar.multiselect(key="sidebar.area").value == ["CN", "MT"]
    assert app.query_params["lang"] == "en"


def test_the_sidebar_button_enters_presentation_mode(monkeypatch, pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    app.query_params["area"] = "MT"
    app.query_params["slide"] = "2"  # left over from an earlier presentation: dropped
    app = app.switch_page("pages/Test_information.py").run()
    app = app.sidebar.button(key="present_enter").click().run()
    assert app.query_params["present"] == "1" and app.query_params["area"] == "MT"
    # The page's own first figure, not the deck's first (Home's).
    deck = capture_deck(pages_models_db, query_key({"area": ["MT"]}))
    first = next(n for n, slide in enumerate(deck.slides, 1)
                 if slide.file == "pages/Test_information.py")
    assert first > 1
    caption = _shown(app)[1]
    assert caption == f"Figure {first}. {deck.slides[first - 1].caption}"
    assert app.query_params["slide"] == str(first)
    assert len(app.sidebar.children) == 0


def test_the_capture_process_keeps_the_report_figures(pages_models_db, report_figures):
    figures, captions = report_figures
    deck = capture_deck(pages_models_db, query_key(Selection.from_url(QUERY).query()))
    assert [slide.figure for slide in deck.slides] == figures
    assert [slide.caption for slide in deck.slides] == captions
    assert deck.problems == ()


def test_an_empty_database_says_so(monkeypatch, pages_empty_db):
    monkeypatch.setenv("ENEM_DB", str(pages_empty_db))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    app.query_params["present"] = "1"
    app.run()
    assert not app.exception
    assert "empty" in app.info[0].value
    assert not app.get("plotly_chart")
