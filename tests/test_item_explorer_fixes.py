"""The Item explorer's link handling and its abandoned items, under Streamlit's AppTest.

A link that names only an area opens that area's first item (of the booklet the selected runs
answered); an item the year does not hold is
said so (never silently replaced); an item of another area opens in its own area; an abandoned
item says that INEP abandoned it, with the reason stored from the item file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from store.connection import open_reader

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120
EXPLORER = "pages/Item_explorer.py"


@pytest.fixture
def demo_db(monkeypatch, pages_demo_db) -> Path:
    monkeypatch.setenv("ENEM_DB", str(pages_demo_db))
    return pages_demo_db


def open_explorer(query: dict[str, str]) -> AppTest:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in query.items():
        app.query_params[key] = value
    app.switch_page(EXPLORER).run()
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]
    assert app.title[0].value == "Item explorer"
    return app


def first_item(db: Path, area: str) -> int:
    """The item the page opens an area on: the first (booklet order) of the booklet the
    sidebar's runs (Portuguese, 0-shot) answered most in the area; items of one foreign
    language left out (LC opens on its first common item)."""
    with open_reader(db) as con:
        booklet = con.execute(
            "SELECT booklet_id FROM model_scores WHERE year = 2023 AND area = ? "
            "AND prompt_language = 'pt' AND shots = 0 GROUP BY booklet_id "
            "ORDER BY count(*) DESC, booklet_id LIMIT 1", [area]).fetchone()[0]
        return con.execute(
            "SELECT item_id FROM items WHERE year = 2023 AND booklet_id = ? "
            "AND item_language IS NULL ORDER BY co_posicao LIMIT 1", [booklet]).fetchone()[0]


def warnings(app: AppTest) -> str:
    return " | ".join(w.value for w in app.warning)


def test_an_area_without_an_item_opens_that_area_first_item(demo_db):
    app = open_explorer({"area": "LC"})
    assert app.selectbox(key="explorer.area").value == "LC"
    expected = first_item(demo_db, "LC")
    assert app.selectbox(key="explorer.item").value == expected
    assert app.subheader[0].value.startswith(f"Item {expected} — ")
    assert app.query_params["item"] == str(expected)
    # Choosing another area afterwards is not undone by the link's area.
    app.selectbox(key="explorer.area").set_value("MT").run()
    app.run()
    assert app.selectbox(key="explorer.area").value == "MT"
    assert app.selectbox(key="explorer.item").value == first_item(demo_db, "MT")


def test_an_unknown_item_is_said_to_be_missing_not_replaced_silently(demo_db):
    app = open_explorer({"item": "999999", "area": "CH"})
    text = warnings(app)
    assert "item 999999 is not in 2023" in text, text
    shown = first_item(demo_db, "CH")
    assert f"showing item {shown} instead" in text
    assert app.selectbox(key="explorer.item").value == shown
    # The page names the item it shows, never the one asked for.
    assert app.subheader[0].value.startswith(f"Item {shown} — ")
    assert all("999999" not in s.value for s in app.subheader)


def test_an_item_of_another_area_opens_in_its_own_area(demo_db):
    with open_reader(demo_db) as con:
        item_id = con.execute("SELECT max(item_id) FROM items WHERE year = 2023 AND area = 'MT' "
                              "AND NOT abandoned").fetchone()[0]
    app = open_explorer({"item": str(item_id), "area": "CN"})
    assert app.selectbox(key="explorer.area").value == "MT"
    assert app.selectbox(key="explorer.item").value == item_id
    assert "is not in" not in warnings(app)


def test_an_abandoned_item_says_so_with_inep_reason(demo_db):
    with open_reader(demo_db) as con:
        item_id, area, reason = con.execute(
            "SELECT item_id, area, any_value(abandon_reason) FROM items WHERE year = 2023 "
            "AND abandoned AND abandon_reason IS NOT NULL GROUP BY item_id, area "
            "ORDER BY item_id LIMIT 1").fetchone()
    app = open_explorer({"item": str(item_id), "area": area})
    assert app.selectbox(key="explorer.item").value == item_id
    text = warnings(app)
    assert "abandoned" in text and "no IRT parameters" in text, text
    assert reason in text
    curve = json.loads(app.get("plotly_chart")[0].proto.spec)
    notes = [a for a in curve["layout"].get("annotations", []) if "no IRT parameters" in a["text"]]
    # One note in each panel: the characteristic curve's and the information's.
    assert sorted(note["xref"] for note in notes) == ["x domain", "x2 domain"], notes
    # No model curve is drawn for it (only the humans' dots, if any).
    assert not [t for t in curve["data"] if t.get("name") in ("3PL P(θ)", "information I(θ)")]
