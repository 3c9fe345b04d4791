"""What the store holds already, asked before anything is downloaded: imports of model
results and question texts link to the items of their years, so those years must be in."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from store.connection import connected
from store.queries import overview


def stored_item_years(db_path: Path) -> set[int]:
    """The years whose items the store at ``db_path`` holds (none when there is no store)."""
    if not Path(db_path).is_file():
        return set()
    with connected(Path(db_path), read_only=True) as con:
        table = overview(con)
    return {int(year) for year, items in zip(table["year"], table["items"], strict=True) if items}


def require_item_years(db_path: Path, years: Iterable[int], what: str) -> None:
    """ValueError naming the fetch that adds them when some of ``years`` are not stored."""
    stored = stored_item_years(db_path)
    missing = sorted(set(years) - stored)
    if not missing:
        return
    flags = " ".join(f"--year {year}" for year in missing)
    raise ValueError(
        f"{what} link to the items of {', '.join(map(str, missing))}, which the store "
        f"{db_path} lacks: add them first with `enem-llm fetch inep --items-only {flags} "
        f"--db {db_path}` (or a whole year without --items-only)")
