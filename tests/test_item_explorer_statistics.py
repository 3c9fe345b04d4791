"""The Item explorer shows the humans' point-biserial of the item, as stored at ingest."""

from __future__ import annotations

import duckdb
import pytest

from tests.page_support import assert_clean, run_page


def test_the_point_biserial_on_screen_is_the_stored_one(models_db):
    app = run_page("pages/Item_explorer.py")
    assert_clean(app)
    shown = {metric.label: metric.value for metric in app.metric}
    item_id = int(app.selectbox(key="explorer.item").value)
    con = duckdb.connect(str(models_db), read_only=True)
    stored = con.execute("SELECT point_biserial FROM item_stats WHERE year = 2023 AND "
                         "item_id = ?", [item_id]).fetchone()[0]
    con.close()
    assert float(shown["Point-biserial"]) == pytest.approx(stored, abs=5e-4)
    assert 0 < stored < 1
