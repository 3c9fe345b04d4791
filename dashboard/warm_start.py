"""Everything a page imports, imported once when the server runs its first page.

A page's first visit used to pay for the modules only it uses (the options analysis, the
adaptive-testing simulator, …) and for Streamlit's own lazy imports: the first alert whose text
is not plain ASCII compiles Streamlit's emoji pattern (40 ms alone, 0.2–0.3 s on 2 busy cores).
The frame (``dashboard.state.frame.run_page``) imports all of it in the server's first script
run, which already pays for importing Streamlit, pandas and Plotly, so that no later first
visit does.

The objects alive after those imports (modules, functions, classes: about 200,000) live as long
as the server, so they are then moved out of the garbage collector's sight (``gc.freeze``):
each later full collection, which Python starts on its own as a page allocates, scans only
what was made since (a full pass over everything took 0.1 s of a page's first visit).
"""

from __future__ import annotations

import ast
import gc
import importlib

import streamlit as st

from store.connection import PROJECT_ROOT
from workflows.views import VIEWS

#: Modules Streamlit imports on first use inside its elements, not when it is imported.
STREAMLIT_LAZY_MODULES = ("streamlit.emojis",)


def imported_names(source: str) -> list[str]:
    """The absolute names a Python ``source`` imports, in order of appearance, each once:
    ``import a.b`` gives ``a.b``; ``from a.b import c`` gives ``a.b`` and ``a.b.c`` (``c`` may
    be a submodule, which importing ``a.b`` alone does not import)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return list(dict.fromkeys(names))


def page_imports() -> list[str]:
    """Every name the page files of :data:`workflows.views.VIEWS` import, each once."""
    names = [name for view in VIEWS
             for name in imported_names((PROJECT_ROOT / view.file).read_text(encoding="utf-8"))]
    return list(dict.fromkeys(names))


def import_if_module(name: str) -> bool:
    """Import ``name`` when it is a module; False when it names something else (a function
    imported from a module). An error inside an existing module is raised."""
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
        return False
    return True


@st.cache_resource(show_spinner=False)
def import_page_modules() -> None:
    """Import the modules of :func:`page_imports` and :data:`STREAMLIT_LAZY_MODULES`, then
    freeze what is alive (see the module notes), once per server."""
    for name in [*page_imports(), *STREAMLIT_LAZY_MODULES]:
        import_if_module(name)
    gc.collect()
    gc.freeze()
