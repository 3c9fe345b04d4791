"""What the page tests share: the pages and what each shows, and AppTest helpers.

The page list comes from ``workflows.views.VIEWS`` (the app's own menu), so a new view is
tested by every page test without being listed twice; only what each page is expected to draw
is written here.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from dashboard.state.url import SECTION_PARAM
from workflows.views import HOME as HOME_VIEW
from workflows.views import RUNS as RUNS_VIEW
from workflows.views import VIEWS

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120

HOME = HOME_VIEW.file
RUNS = RUNS_VIEW.file
#: The page's own title where it is not its navigation title.
TITLES = {HOME: "When an LLM passes ENEM"}
#: page file → (plotly charts, dataframes) it shows at least, with model runs.
DRAWS: dict[str, tuple[int, int]] = {
    HOME: (1, 1),
    "pages/Accuracy_vs_ability.py": (1, 1),
    "pages/Person_fit.py": (2, 1),
    "pages/Response_patterns.py": (1, 0),  # one area at a time
    "pages/Test_information.py": (1, 1),
    "pages/Discrimination.py": (1, 2),
    "pages/Populations.py": (2, 3),
    "pages/Conditions.py": (2, 2),
    "pages/Years.py": (1, 1),  # its first tab
    "pages/Options_and_traps.py": (1, 2),  # its first tab
    "pages/Item_gaps.py": (2, 2),
    "pages/Paper_tables.py": (1, 2),
    "pages/Item_explorer.py": (2, 0),
    "pages/Data.py": (0, 3),
    "pages/Adaptive_testing.py": (3, 1),  # its first tab
}
#: Pages whose first tab shows no model run: the tab (``section=``) that does.
MODEL_SECTIONS: dict[str, str] = {"pages/Adaptive_testing.py": "Skills"}
#: page file → (title start, plotly charts with model runs, dataframes with model runs): every
#: view of the menu but Runs (tested on its own, tests/test_runs_page.py).
PAGES: dict[str, tuple[str, int, int]] = {
    view.file: (TITLES.get(view.file, view.title), *DRAWS[view.file])
    for view in VIEWS if view.file != RUNS}
#: Pages with the shared "No model runs … launch one" empty state (Paper tables says which
#: random or 4-shot runs each table lacks; tests/test_paper_tables_page.py checks it).
MODEL_PAGES = [p for p in PAGES if p not in (HOME, "pages/Data.py", "pages/Paper_tables.py")]
#: Pages that draw models one by one (Discrimination pools them into one population, Item
#: gaps draws every selected run pooled and names the series in its table).
PER_MODEL_PAGES = [p for p in MODEL_PAGES
                   if p not in ("pages/Discrimination.py", "pages/Item_gaps.py")]


def run_page(page: str, query: dict[str, str | list[str]] | None = None) -> AppTest:
    """Open ``page`` directly, as a deep link (its URL with ``query``) into the app does.

    Switching before the first run works because each page's url_path is the name Streamlit
    derives from its file name."""
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in (query or {}).items():
        app.query_params[key] = value
    return app.switch_page(page).run()


def run_via_home(page: str) -> AppTest:
    """Open the home page, then switch to ``page`` like a user clicking the navigation."""
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    return app.switch_page(page).run() if page != HOME else app


def open_section(app: AppTest, label: str, key: str = SECTION_PARAM) -> AppTest:
    """Open the tab ``label`` of the page's sections (tabs bound to the URL's ``key``), as a
    click on it does: only the open tab's section is drawn."""
    app.session_state[key] = label
    # The browser's address follows the tab; AppTest's does not, and a stale one would win.
    app.query_params[key] = label
    return app.run()


def charts(app: AppTest) -> list[dict]:
    """The Plotly figures of a run, as dicts."""
    return [json.loads(element.proto.spec) for element in app.get("plotly_chart")]


def series_names(app: AppTest) -> set[str]:
    """The series a run's figures name: trace names, heatmap rows and the category rows of
    scatter traces (Conditions draws one row per series)."""
    figures = charts(app)
    names = {trace.get("name") for figure in figures for trace in figure["data"]}
    return names | {row for figure in figures for trace in figure["data"]
                    if trace.get("type") in ("heatmap", "scatter")
                    for row in trace.get("y") or [] if isinstance(row, str)}


def decoded(value) -> np.ndarray:
    """A Plotly array from a figure's JSON (plain list or base64 'bdata' typed array)."""
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape", array.shape)
        if isinstance(shape, str):
            shape = tuple(int(part) for part in shape.split(","))
        return array.reshape(shape)
    return np.asarray(value, dtype=float)


def messages(app: AppTest) -> str:
    """Every info/warning/success text of a run, joined."""
    return " | ".join(e.value for e in [*app.info, *app.warning, *app.success])


def assert_clean(app: AppTest) -> None:
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]
