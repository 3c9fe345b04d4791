"""The dashboard's report action: build the report of the current selection (the URL's
filters) with ``enem-llm report`` in its own process and offer its files for download."""

from __future__ import annotations

import tempfile
import urllib.parse
from pathlib import Path

import streamlit as st

from dashboard import access
from workflows.report.build import report_in_process

#: Session key of the last report's files (name → bytes), kept across reruns.
_FILES = "report.files"


def report_section(db_path: Path) -> None:
    """A 'Build report' button; the report's files as download buttons once built. It sits
    in an expander, which the report itself leaves out (a tool, not a result)."""
    with st.expander("Report of this selection", expanded=True, icon=":material/description:"):
        role = access.session_access()
        if role.may_operate:
            _report_tool(db_path)
        else:
            # Building runs every page in a process of its own for a minute or more.
            access.viewer_note(role, "Building a report")


def _report_tool(db_path: Path) -> None:
    st.caption("One offline HTML file with every page's figures and captions, the tables, the "
               "scoring settings, provenance and methods, for the filters in the address bar; "
               "also a slide deck (one figure per screen, arrow keys) and, when asked, a PDF "
               "printed by headless Chromium. The same as `enem-llm report --url '<address>'`.")
    pdf = st.checkbox("Also a PDF", key="report.pdf")
    if st.button("Build the report", key="report.build", icon=":material/description:"):
        query = urllib.parse.urlencode(
            {key: st.query_params.get_all(key) for key in st.query_params}, doseq=True)
        with st.spinner("Running every page for the report …"), \
                tempfile.TemporaryDirectory() as out:
            done = report_in_process(db_path, "?" + query, Path(out), pdf=pdf)
            st.session_state[_FILES] = {path.name: path.read_bytes()
                                        for path in sorted(Path(out).glob("*.*"))}
        if done.returncode not in (0, 1) or not st.session_state[_FILES]:
            st.error(f"The report could not be built: {done.stderr.strip()[-400:]}")
        elif done.returncode == 1:
            st.warning("The report was built, but some page showed an error:\n\n"
                       + done.stdout.strip())
    files = st.session_state.get(_FILES) or {}
    kinds = {".html": "text/html", ".pdf": "application/pdf"}
    for column, (name, data) in zip(st.columns(max(1, len(files))), files.items(), strict=False):
        column.download_button(name, data=data, file_name=name,
                               mime=kinds.get(Path(name).suffix, "application/octet-stream"),
                               key=f"report.download.{name}", on_click="ignore",
                               icon=":material/download:")
