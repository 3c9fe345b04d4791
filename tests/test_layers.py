"""The import graph: every module imports only from layers below its own (or its own package).

Layers, lowest first (packages on one line must not import each other):

    analytics                     pure psychometrics
    enem                          INEP formats and conventions
    inference | store | demo      model prompts and backends | DuckDB | the synthetic year
    workflows                     orchestration (ingest, demo build, runs service, imports)
    cli | dashboard               the command line | the dashboard's shared pieces
    pages | app                   the Streamlit views and frame

Imports are read from the source with ``ast`` (not by importing), so an import inside a
function counts exactly like one at the top. A project import inside a function is refused
outright: it is how cycles used to be hidden.
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
)


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


def _imported_names(tree: ast.AST) -> list[tuple[str, int, bool]]:
    """(top-level imported name, line, inside a function) for every absolute import."""
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((alias.name.split(".")[0], child.lineno, in_function)
                             for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append((child.module.split(".")[0], child.lineno, in_function))
            visit(child, nested)

    visit(tree, False)
    return found


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
            if in_function:
                problems.append(f"{where} inside a function (import it at the top)")
            elif level[name] > level[own]:
                problems.append(f"{where}, a layer above {own}")
            elif level[name] == level[own]:
                problems.append(f"{where}, a sibling of {own} in the same layer")
    return problems


def test_every_module_imports_only_downwards():
    assert layer_violations(ROOT) == []


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


def test_the_check_catches_siblings_and_function_local_imports(tmp_path):
    root = _tree(tmp_path, {
        "store/model_runs.py": "def f():\n    from workflows import runs\n",
        "inference/plan.py": "import store.model_runs\nimport numpy\nimport inference.shuffles\n",
    })
    assert sorted(layer_violations(root)) == [
        "inference/plan.py:1 imports store, a sibling of inference in the same layer",
        "store/model_runs.py:2 imports workflows inside a function (import it at the top)",
    ]
