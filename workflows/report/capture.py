"""Run the dashboard's pages headless and keep what they show, for the report.

Each page is run exactly as a browser would get it (``app.py``, the shared sidebar, the page,
the selection given as the URL's query parameters) through Streamlit's ``AppTest``, so the
report holds the very figures, captions, tables and messages of the dashboard and never a second
implementation of them. Widgets, download buttons and expanders (interactive tools) are left
out; everything else is kept in page order.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from store.connection import DB_ENV_VAR, PROJECT_ROOT
from workflows.views import VIEWS, View

APP = PROJECT_ROOT / "app.py"
#: Pages that hold no figure of the selection (the store's inventory, the run launcher).
#: Seconds one page may take to run.
PAGE_TIMEOUT = 120
#: Containers left out with everything in them: interactive tools, not results.
SKIPPED_KINDS = ("expander", "expandable", "popover")
#: Element kinds kept, by their Streamlit type.
TEXT_KINDS = ("title", "header", "subheader", "caption", "markdown", "info", "warning",
              "success", "error")


@dataclass(frozen=True)
class Block:
    """One thing a page showed: kind ('figure', 'table' or a :data:`TEXT_KINDS` entry) and
    its payload (the Plotly figure as a dict, a DataFrame, or text)."""

    kind: str
    payload: Any


@dataclass
class PageCapture:
    """What one page showed for the selection, in order."""

    file: str
    title: str
    blocks: list[Block] = field(default_factory=list)

    @property
    def figures(self) -> list[dict]:
        return [block.payload for block in self.blocks if block.kind == "figure"]

    @property
    def problems(self) -> list[str]:
        """Error boxes and exceptions the page showed."""
        return [str(block.payload) for block in self.blocks if block.kind == "error"]


def report_pages(views: Sequence[View] = VIEWS) -> list[Path]:
    """The page files whose figures the report shows, in menu order (Home first)."""
    return [PROJECT_ROOT / view.file for view in views if view.in_report]


@contextmanager
def database_env(db_path: Path) -> Iterator[None]:
    """Point the dashboard at ``db_path`` (its ``ENEM_DB``) for the block's duration."""
    previous = os.environ.get(DB_ENV_VAR)
    os.environ[DB_ENV_VAR] = str(Path(db_path).absolute())
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(DB_ENV_VAR, None)
        else:
            os.environ[DB_ENV_VAR] = previous


def capture_page(page: Path, query: Mapping[str, Sequence[str]]) -> PageCapture:
    """Run ``page`` through the app with ``query`` as its URL parameters; keep its output."""
    # Imported here: Streamlit costs every other command of the CLI half a second to import.
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(str(APP), default_timeout=PAGE_TIMEOUT)
    for key, values in query.items():
        app.query_params[key] = list(values) if len(values) > 1 else values[0]
    app.switch_page(str(Path(page).relative_to(PROJECT_ROOT))).run()
    blocks = list(_blocks(app.main))
    blocks += [Block("error", str(e.value)) for e in app.exception]
    title = next((b.payload for b in blocks if b.kind == "title"), Path(page).stem)
    return PageCapture(str(Path(page).relative_to(PROJECT_ROOT)), str(title), blocks)


def _blocks(node: Any) -> Iterator[Block]:
    """The kept elements under ``node``, depth first in page order."""
    for child in getattr(node, "children", {}).values():
        kind = getattr(child, "type", "")
        if kind in SKIPPED_KINDS:
            continue
        if kind == "plotly_chart":
            yield Block("figure", json.loads(child.proto.spec))
        elif kind in ("dataframe", "arrow_data_frame") and isinstance(child.value, pd.DataFrame):
            yield Block("table", child.value)
        elif kind in TEXT_KINDS:
            yield Block(kind, str(child.value))
        else:
            yield from _blocks(child)


def capture_pages(db_path: Path, query: Mapping[str, Sequence[str]],
                  pages: Sequence[Path] | None = None, progress=None) -> list[PageCapture]:
    """Every report page for the selection ``query`` on ``db_path``; ``progress`` (optional)
    is called with each page's file name before it runs."""
    captured = []
    # Headless runs have no browser session: Streamlit warns about it on every call, and a
    # page's exception is printed to the console as well as kept in the capture.
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(
        logging.ERROR)
    with database_env(db_path), contextlib.redirect_stdout(io.StringIO()):
        for page in pages or report_pages():
            if progress is not None:
                progress(Path(page).name)
            captured.append(capture_page(Path(page), query))
    return captured
