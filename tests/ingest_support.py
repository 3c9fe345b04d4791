"""What the ingest tests share: writing a damaged copy of a generated INEP file.

Reading the database back is :func:`tests.db_support.query_rows`.
"""

from __future__ import annotations


def write_lines(path, lines, end="\n", prefix=b""):
    """Write ``lines`` joined by line ends (then ``end``) to ``path`` in Latin-1, as INEP's
    files are, after the raw bytes ``prefix`` (a BOM, say); return ``path``."""
    path.write_bytes(prefix + ("\n".join(lines) + end).encode("latin-1"))
    return path
