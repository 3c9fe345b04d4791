"""The one CSV download button (``dashboard.downloads.csv_download``) and the pages that were
thinned to use it and their dashboard modules: what a button gets, and pages that draw no
figures themselves."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

from dashboard.downloads import CSV_MIME, csv_download

ROOT = Path(__file__).resolve().parent.parent
#: Pages whose figures and tables are built in dashboard modules (issue 25): they open the
#: page, query, call a figure or table function and show it.
THIN_PAGES = ("Discrimination", "Item_explorer", "Response_patterns", "Test_information")


class Recorder:
    """Stands in for a Streamlit container: keeps each ``download_button`` call."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple, dict]] = []

    def download_button(self, *args, **kwargs) -> bool:
        self.calls.append((args, kwargs))
        return False


def test_a_button_writes_the_table_without_its_index_on_click():
    table = pd.DataFrame({"model": ["a · 0-shot", "b"], "theta": [0.5, float("nan")]},
                         index=[7, 9])
    where = Recorder()
    csv_download(table, label="Table (CSV)", file_stem="model_accuracy_2023",
                 key="accuracy.table.csv", where=where)
    (args, kwargs), = where.calls
    assert args == ("Table (CSV)",)
    assert kwargs["file_name"] == "model_accuracy_2023.csv"
    assert kwargs["key"] == "accuracy.table.csv"
    assert kwargs["mime"] == CSV_MIME == "text/csv"
    # A download changes nothing on screen: no rerun of the page.
    assert kwargs["on_click"] == "ignore"
    assert kwargs["icon"] is None
    # Built when clicked, exactly what the pages wrote by hand before.
    assert callable(kwargs["data"])
    assert kwargs["data"]() == table.to_csv(index=False) == "model,theta\na · 0-shot,0.5\nb,\n"


def test_an_icon_is_passed_through():
    where = Recorder()
    csv_download(pd.DataFrame({"x": [1]}), label="Numbers (CSV)", file_stem="f", key="k.csv",
                 where=where, icon=":material/table:")
    assert where.calls[0][1]["icon"] == ":material/table:"


def test_no_page_or_dashboard_module_writes_its_own_csv_button():
    """Every CSV download goes through csv_download (the report's HTML/PDF buttons are files
    of another kind)."""
    offenders = []
    for path in [*ROOT.glob("pages/*.py"), *ROOT.glob("dashboard/**/*.py")]:
        if path.name == "downloads.py":
            continue
        text = path.read_text(encoding="utf-8")
        if "download_button" in text and "text/csv" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, offenders


@pytest.mark.parametrize("page", THIN_PAGES)
def test_thin_pages_build_no_figure_themselves(page):
    source = (ROOT / "pages" / f"{page}.py").read_text(encoding="utf-8")
    imported = {alias.name.split(".")[0] if isinstance(node, ast.Import) else node.module
                for node in ast.walk(ast.parse(source))
                if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names}
    assert not {name for name in imported if name and name.startswith("plotly")}, imported
    assert len(source.splitlines()) < 120
