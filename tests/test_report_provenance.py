"""The report's provenance tables say "—" for what a store does not hold (an items-only year
has no microdata file), never "None"."""

from __future__ import annotations

import re

from workflows.report.build import provenance_html


def test_an_items_only_store_shows_a_dash_for_its_missing_microdata(real_items_db):
    body, banner = provenance_html(real_items_db, 2022)
    assert "None" not in re.sub(r"<[^>]+>", " ", body)
    cells = re.findall(r"<td>(.*?)</td>", body)
    assert "ITENS_PROVA_2022.csv" in " ".join(cells)
    assert "—" in cells  # the microdata file of an items-only ingest
    assert banner.startswith("Real data")
