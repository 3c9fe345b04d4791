"""The server's first run imports what every page imports (dashboard.warm_start)."""

from __future__ import annotations

import gc
import sys

import pytest

from dashboard import warm_start


def test_imported_names_lists_modules_and_the_names_taken_from_them_once():
    source = ("from __future__ import annotations\nimport os.path, json\n"
              "from a.b import c, d as e\nfrom . import local\nimport json\n"
              "def f():\n    import inner.module\n")
    assert warm_start.imported_names(source) == [
        "__future__", "__future__.annotations", "os.path", "json", "a.b", "a.b.c", "a.b.d",
        "inner.module"]


def test_import_if_module_tells_modules_from_other_names():
    assert warm_start.import_if_module("json.decoder")
    assert not warm_start.import_if_module("json.loads")  # a function of a module
    assert not warm_start.import_if_module("no_such_package_anywhere")


def test_an_error_inside_an_existing_module_is_raised(tmp_path, monkeypatch):
    (tmp_path / "broken_for_warm_start.py").write_text("import no_such_dependency_here\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_here"):
        warm_start.import_if_module("broken_for_warm_start")


def test_every_module_a_page_imports_is_imported_with_streamlits_lazy_ones():
    warm_start.import_page_modules()
    names = warm_start.page_imports()
    # The Adaptive testing page takes submodules from the dashboard.cat package by name.
    assert "dashboard.cat.figures" in names
    for name in names:
        parent = name.rpartition(".")[0]
        assert name in sys.modules or (parent in sys.modules and hasattr(sys.modules[parent],
                                                                         name.rpartition(".")[2]))
    assert "streamlit.emojis" in sys.modules
    # What was alive then is out of the collector's generations.
    assert gc.get_freeze_count() > 1000
