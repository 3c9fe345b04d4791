"""Plain-text tables the benchmarks print: a header row, a rule, then left-aligned first
column and right-aligned numbers."""

from __future__ import annotations

from collections.abc import Sequence


def print_aligned(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print ``rows`` (cells already formatted as text) under ``header``, columns padded to
    their widest cell."""
    table = [tuple(header)] + [tuple(row) for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    for k, line in enumerate(table):
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                        for i, (cell, w) in enumerate(zip(line, widths, strict=True))))
        if k == 0:
            print("  ".join("-" * w for w in widths))
