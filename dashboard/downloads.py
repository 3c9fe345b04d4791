"""The one CSV download button of the dashboard: a table's numbers as a file, beside what shows it.

Every table and figure that offers its numbers does so through :func:`csv_download`, so each
button writes the same kind of file (UTF-8 CSV, header row, no index, ``text/csv``) and none
reruns the page when clicked: a download changes nothing on screen. The CSV text is built only
when the button is clicked (Streamlit calls ``data`` then), not on every run of the page.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

CSV_MIME = "text/csv"


def csv_download(table: pd.DataFrame | Callable[[], pd.DataFrame], *, label: str, file_stem: str,
                 key: str, where: DeltaGenerator | None = None, icon: str | None = None) -> None:
    """A button that downloads ``table`` as ``{file_stem}.csv``.

    Parameters
    ----------
    table
        The rows to write, in their column order; the index is left out. A function
        returning them defers building the table (e.g. a concatenation of every figure's
        rows) to the click, like the CSV text itself.
    label
        The button's text (e.g. ``"Table (CSV)"``).
    file_stem
        The downloaded file's name without ``.csv``.
    key
        The widget key, unique on the page (by convention ``"<page>.<table>.csv"``).
    where
        The container the button goes in (a column); the page's main body when None.
    icon
        Streamlit's icon string for the button (e.g. ``":material/table:"``), or None.
    """
    (where if where is not None else st).download_button(
        label, data=lambda: (table() if callable(table) else table).to_csv(index=False),
        file_name=f"{file_stem}.csv", mime=CSV_MIME, key=key, on_click="ignore", icon=icon)
