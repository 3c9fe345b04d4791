"""What an import of another tool's answers reports: the usual import summary, plus how many
of the file's answers were linked to the store's items, skipped or unknown, and why."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from workflows.imported_runs import ImportSummary

#: Reasons listed per kind in the printed summary (the rest are counted together).
SHOWN_REASONS = 5


@dataclass
class HarnessImportSummary(ImportSummary):
    """An :class:`ImportSummary` of one lm-eval or lighteval file.

    ``linked``: answers stored; ``skipped`` and ``unknown``: answers not stored, by reason
    (see ``workflows.harness.linking``); ``abandoned``: items of the booklets used that no
    answer reached (the image questions a tool leaves out), abandoned for the run, never
    counted wrong; ``unparsed``: generated answers with no letter, stored and left out of
    the patterns; ``norm_disagreements``: answers whose per-character (acc_norm) choice
    differs from the stored one; ``notes``: further lines (which answers were read).
    """

    linked: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    unknown: Counter[str] = field(default_factory=Counter)
    abandoned: int = 0
    unparsed: int = 0
    norm_disagreements: int = 0
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The summary as the command line prints it."""
        out = super().lines()
        totals = (f"samples: {self.linked:,} linked, {sum(self.skipped.values()):,} skipped, "
                  f"{sum(self.unknown.values()):,} unknown")
        counts = [totals]
        for kind, reasons in (("skipped", self.skipped), ("unknown", self.unknown)):
            counts += _reason_lines(kind, reasons)
        counts.append(f"items without an answer, abandoned for this run (never counted "
                      f"wrong): {self.abandoned:,}")
        if self.unparsed:
            counts.append(f"generated answers with no letter (left out of the patterns): "
                          f"{self.unparsed:,}")
        return out[:2] + counts + self.notes + out[2:]


def _reason_lines(kind: str, reasons: Counter[str]) -> list[str]:
    lines = [f"  {kind}: {reason}: {count:,}"
             for reason, count in reasons.most_common(SHOWN_REASONS)]
    rest = sum(count for _, count in reasons.most_common()[SHOWN_REASONS:])
    if rest:
        lines.append(f"  {kind}: other reasons: {rest:,}")
    return lines
