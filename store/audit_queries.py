"""The booklet audit stored by each ingest (which booklets' official notas the published
parameters reproduce) and the flagged-booklet rule as the one SQL expression every reader of it
uses (:data:`FLAGGED_BOOKLET`). Read-only; every value is a bound parameter."""

from __future__ import annotations

import duckdb
import pandas as pd

from enem.score_batches import REPRODUCED_SHARE_FLOOR
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions

#: The flagged-booklet rule (``enem.score_batches.booklet_flagged``) over the columns of
#: ``booklet_audit``, for every query that needs it: at least one official nota checked and
#: fewer than ``$share`` (bound to ``enem.score_batches.REPRODUCED_SHARE_FLOOR``) of them
#: matched. False, never NULL, where the counts are missing.
FLAGGED_BOOKLET = "coalesce(nota_checked > 0 AND nota_matched < $share * nota_checked, false)"


def flagged_booklets(con: duckdb.DuckDBPyConnection, year: int) -> list[int]:
    """The booklet ids of ``year`` that :data:`FLAGGED_BOOKLET` flags, ascending (the stored
    counts only: unlike :func:`booklet_audit`, whatever recipe the audit used)."""
    return [int(r[0]) for r in con.execute(
        f"""SELECT booklet_id FROM booklet_audit WHERE year = $year AND {FLAGGED_BOOKLET}
            ORDER BY booklet_id""",
        {"year": int(year), "share": REPRODUCED_SHARE_FLOOR}).fetchall()]


def booklet_audit(con: duckdb.DuckDBPyConnection, year: int) -> pd.DataFrame:
    """Per booklet of a year: booklet_id, area, colour, note, present, scored, nota_checked,
    nota_matched, reproduced (share of checked notas matched to the decimal, NaN when none were
    checked), inep_recipe and flagged (:data:`FLAGGED_BOOKLET`: reproduced below
    ``enem.score_batches.REPRODUCED_SHARE_FLOOR``).

    The audit compares INEP's official recipe with ``NU_NOTA`` whatever settings the year
    displays. Files ingested before it did compared the display settings' nota: where those
    were not INEP's recipe the counts say nothing about the parameters, so ``inep_recipe`` is
    False and no booklet is flagged (re-ingesting the year audits it again)."""
    frame = con.execute(
        f"""SELECT a.booklet_id, a.area, b.colour, b.note, a.present, a.scored, a.nota_checked,
                  a.nota_matched,
                  CASE WHEN a.nota_checked > 0 THEN a.nota_matched / a.nota_checked END
                      AS reproduced,
                  {FLAGGED_BOOKLET} AS flagged
           FROM booklet_audit a
           LEFT JOIN booklets b ON b.year = a.year AND b.booklet_id = a.booklet_id
           WHERE a.year = $year ORDER BY a.area, a.present DESC, a.booklet_id""",
        {"year": int(year), "share": REPRODUCED_SHARE_FLOOR},
    ).df()
    row = con.execute(
        """SELECT coalesce(audit_scoring, scoring) FROM ingests WHERE year = ?
           ORDER BY ingest_id DESC LIMIT 1""", [int(year)]).fetchone()
    recipe = row[0] if row else None
    inep = ScoringOptions.from_stored(recipe) == DEFAULT_OPTIONS
    frame.insert(len(frame.columns) - 1, "inep_recipe", inep)
    frame["flagged"] = frame["flagged"].astype(bool) & inep
    return frame
