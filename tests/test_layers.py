"""The import graph: every module imports only from layers below its own (or its own package).

Layers, lowest first (packages on one line must not import each other):

    analytics                     pure psychometrics
    enem                          INEP formats and conventions
    inference | store | demo      model prompts and backends | DuckDB | the synthetic year
    workflows                     orchestration (ingest, demo build, runs service, imports)
    cli | dashboard               the command line | the dashboard's shared pieces
    pages | app                   the Streamlit views and frame
    testbed                       what the tests and the benchmarks both build
    bench                         the benchmarks
    tests                         the tests (a test may import a benchmark to test it)

Imports are read from the source with ``ast`` (not by importing), so an import inside a
function counts exactly like one at the top. A project import inside a function is refused
outright: it is how cycles used to be hidden. Only the tests may import inside a function:
nothing imports a test, so there it hides no cycle. Within tests/, a test module never imports
another test module: what tests share lives in conftest.py and the ``*_support.py`` modules, the
only other modules there.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LAYERS: tuple[tuple[str, ...], ...] = (
    ("analytics",),
    ("enem",),
    ("inference", "store", "demo"),
    ("workflows",),
    ("cli", "dashboard"),
    ("pages", "app"),
    ("testbed",),
    ("bench",),
    ("tests",),
)

#: The components whose modules may import inside a function (see the docstring).
LOCAL_IMPORTS_ALLOWED = ("tests",)


def _layer_of() -> dict[str, int]:
    return {name: level for level, names in enumerate(LAYERS) for name in names}


def project_modules(root: Path) -> dict[str, Path]:
    """Top-level component name → its source files, for every component in ``LAYERS``."""
    files: dict[str, Path] = {}
    for name in _layer_of():
        package = root / name
        if package.is_dir():
            for path in sorted(package.rglob("*.py")):
                files[str(path.relative_to(root))] = path
        elif (root / f"{name}.py").is_file():
            files[f"{name}.py"] = root / f"{name}.py"
    return files


def _component(path: str) -> str:
    return Path(path).parts[0].removesuffix(".py")


def _imported_modules(tree: ast.AST) -> list[tuple[str, int, bool]]:
    """(imported module's dotted name, line, inside a function) for every absolute import;
    ``from package import module`` names ``package.module`` too (it may be a module)."""
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append((child.module, child.lineno, in_function))
                found.extend((f"{child.module}.{alias.name}", child.lineno, in_function)
                             for alias in child.names)
            visit(child, nested)

    visit(tree, False)
    return found


def _imported_names(tree: ast.AST) -> list[tuple[str, int, bool]]:
    """(top-level imported name, line, inside a function) for every absolute import."""
    return sorted({(name.split(".")[0], line, inside)
                   for name, line, inside in _imported_modules(tree)},
                  key=lambda found: (found[1], found[0]))


def layer_violations(root: Path) -> list[str]:
    """Every import that reaches a higher layer, a sibling package, or hides in a function."""
    level = _layer_of()
    problems = []
    for relative, path in project_modules(root).items():
        own = _component(relative)
        for name, line, in_function in _imported_names(ast.parse(path.read_text(), relative)):
            if name not in level or name == own:
                continue
            where = f"{relative}:{line} imports {name}"
            if in_function and own not in LOCAL_IMPORTS_ALLOWED:
                problems.append(f"{where} inside a function (import it at the top)")
            elif level[name] > level[own]:
                problems.append(f"{where}, a layer above {own}")
            elif level[name] == level[own]:
                problems.append(f"{where}, a sibling of {own} in the same layer")
    return problems


def imports_of_test_modules(root: Path) -> list[str]:
    """Every import of a test module by another module of tests/ (what tests share belongs in
    conftest.py or a ``*_support.py`` module)."""
    problems = []
    for path in sorted((root / "tests").glob("*.py")):
        relative = str(path.relative_to(root))
        for name, line, _ in _imported_modules(ast.parse(path.read_text(), relative)):
            parts = name.split(".")
            if parts[0] == "tests" and len(parts) > 1 and parts[1].startswith("test_"):
                problems.append(f"{relative}:{line} imports the test module {parts[0]}.{parts[1]}")
    return sorted(set(problems))


def misnamed_test_helpers(root: Path) -> list[str]:
    """Every module of tests/ that is neither a test module, conftest.py, nor a ``*_support.py``
    helper (the README's layout names the helpers so)."""
    return sorted(str(path.relative_to(root)) for path in (root / "tests").glob("*.py")
                  if not path.name.startswith("test_") and not path.name.endswith("_support.py")
                  and path.name not in ("__init__.py", "conftest.py"))


def test_every_module_imports_only_downwards():
    assert layer_violations(ROOT) == []


def test_no_test_module_imports_another():
    assert imports_of_test_modules(ROOT) == []


def test_test_helpers_are_support_modules():
    assert misnamed_test_helpers(ROOT) == []


def test_every_layered_component_exists():
    present = {_component(path) for path in project_modules(ROOT)}
    assert present == set(_layer_of())


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_check_catches_an_upward_import(tmp_path):
    root = _tree(tmp_path, {"analytics/irt.py": "from store.connection import connected\n",
                            "store/connection.py": "import analytics.irt\n"})
    assert layer_violations(root) == [
        "analytics/irt.py:1 imports store, a layer above analytics"]


def test_the_check_catches_a_benchmark_importing_a_test_helper(tmp_path):
    root = _tree(tmp_path, {"bench/pages.py": "from tests.page_support import HOME\n",
                            "testbed/fake_runs.py": "import bench.pages\n",
                            "tests/test_bench.py": "def test():\n    import bench.pages\n"})
    assert sorted(layer_violations(root)) == [
        "bench/pages.py:1 imports tests, a layer above bench",
        "testbed/fake_runs.py:1 imports bench, a layer above testbed",
    ]


def test_the_check_catches_a_test_importing_another_test(tmp_path):
    root = _tree(tmp_path, {"tests/test_a.py": "from tests.test_b import LETTERS\n",
                            "tests/test_c.py": "from tests import test_b\nimport tests.b_support\n",
                            "tests/test_b.py": "LETTERS = 'ABCDE'\n"})
    assert imports_of_test_modules(root) == [
        "tests/test_a.py:1 imports the test module tests.test_b",
        "tests/test_c.py:1 imports the test module tests.test_b"]


def test_the_check_catches_a_misnamed_test_helper(tmp_path):
    root = _tree(tmp_path, {"tests/conftest.py": "", "tests/__init__.py": "",
                            "tests/test_a.py": "", "tests/db_support.py": "",
                            "tests/fixtures.py": ""})
    assert misnamed_test_helpers(root) == ["tests/fixtures.py"]


def test_the_check_catches_siblings_and_function_local_imports(tmp_path):
    root = _tree(tmp_path, {
        "store/model_runs.py": "def f():\n    from workflows import runs\n",
        "inference/plan.py": "import store.model_runs\nimport numpy\nimport inference.shuffles\n",
    })
    assert sorted(layer_violations(root)) == [
        "inference/plan.py:1 imports store, a sibling of inference in the same layer",
        "store/model_runs.py:2 imports workflows inside a function (import it at the top)",
    ]
