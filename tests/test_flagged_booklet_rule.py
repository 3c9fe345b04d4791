"""The flagged-booklet rule has one Python predicate (``enem.score_batches.booklet_flagged``)
and one SQL expression (``store.audit_queries.FLAGGED_BOOKLET``); every reader of it (the
ingest's summary lines, the population rows built at ingest, the ones rebuilt from the store,
the Data page's audit table) must flag the same booklets, also right at the 99% edge."""

from __future__ import annotations

import duckdb
import pytest

from enem.score_batches import (
    REPRODUCED_SHARE_FLOOR,
    BookletAudit,
    booklet_flagged,
    reproduced_share_text,
    unreproduced_lines,
)
from store import populations
from store.audit_queries import booklet_audit, flagged_booklets
from store.schema import ensure_schema
from store.year_tables import write_booklet_audit

YEAR = 2023
BILLION = 1_000_000_000
#: (booklet id, nota_checked, nota_matched): shares at 0.99 − 1e-9, 0.99 and 0.99 + 1e-9 with a
#: billion notas checked, the same edge with a hundred, a count whose 0.99 share is not a whole
#: number, nothing reproduced, everything reproduced, and no official nota at all.
COUNTS = [
    (1, BILLION, 990_000_000 - 1), (2, BILLION, 990_000_000), (3, BILLION, 990_000_000 + 1),
    (4, 100, 98), (5, 100, 99), (6, 100, 100),
    (7, 7_654_321, 7_577_777), (8, 7_654_321, 7_577_778),
    (9, 50, 0), (10, 50, 50), (11, 0, 0),
]


def _audits() -> list[BookletAudit]:
    return [BookletAudit(booklet, "CN", present=checked, scored=checked, nota_checked=checked,
                         nota_matched=matched) for booklet, checked, matched in COUNTS]


@pytest.fixture()
def con():
    connection = duckdb.connect(":memory:")
    ensure_schema(connection)
    write_booklet_audit(connection, YEAR, _audits())
    yield connection
    connection.close()


def test_shares_at_the_floor_are_flagged_only_below_it():
    assert REPRODUCED_SHARE_FLOOR == 0.99
    flagged = [a.booklet_id for a in _audits() if booklet_flagged(a.nota_matched, a.nota_checked)]
    # 0.99 − 1e-9, 98 of 100, 7,577,777 of 7,654,321 (under 0.99 · 7,654,321 = 7,577,777.79),
    # and none of 50; never a booklet without a checked nota.
    assert flagged == [1, 4, 7, 9]
    assert booklet_flagged(99, 100, floor=0.99 + 1e-9)
    assert not booklet_flagged(99, 100, floor=0.99 - 1e-9)


def test_sql_and_python_flag_the_same_booklets(con):
    python = [a.booklet_id for a in _audits() if booklet_flagged(a.nota_matched, a.nota_checked)]
    table = booklet_audit(con, YEAR)
    shown = sorted(int(b) for b in table.loc[table["flagged"], "booklet_id"])
    assert flagged_booklets(con, YEAR) == python
    assert populations.flagged_booklets(con, YEAR) == python
    assert populations.reproduced_below_share(_audits()) == python
    assert shown == python
    listed = sorted(int(line.split()[1]) for line in unreproduced_lines(_audits())[1:])
    assert listed == python


def test_summary_names_the_floor_as_ui_text():
    assert reproduced_share_text() == "99%"
    assert reproduced_share_text(0.995) == "99.5%"
    assert unreproduced_lines(_audits())[0] == (
        "  booklets with under 99% of official NU_NOTA reproduced: 4")
