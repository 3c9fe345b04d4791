"""The caption under a Response patterns figure: what a row, a cell and the columns are, the
l_z column, the human row, which booklet's positions the columns follow and the items marked
as misfitting the humans."""

from __future__ import annotations

import numpy as np

from dashboard.item_fit import MARK, MARK_LEGEND
from dashboard.patterns.data import PatternPanel
from inference.protocol import PROMPT_LANGUAGE_NAMES


def booklet_sentence(panel: PatternPanel) -> str:
    """Which booklet the columns follow and, when it differs, which one(s) the models took."""
    shown = f"booklet {panel.booklet}" + (f" ({panel.colour})" if panel.colour else "")
    taken = ", ".join(str(b) for b in panel.model_booklets)
    if set(panel.model_booklets) == {panel.booklet}:
        return f"Positions are those of {shown}, the booklet the models took."
    several = "s" if len(panel.model_booklets) > 1 else ""
    dropped = (f" {panel.dropped} answered item(s) not in {shown} are left out."
               if panel.dropped else "")
    return (f"The models took booklet{several} {taken}; their answers are placed on {shown} "
            f"through the item ids (same items, another order), and positions are {shown}'s."
            + dropped)


def misfit_sentence(panel: PatternPanel) -> str:
    """What the marks under the item axis are, on which booklet's candidates, and how many; or
    why there are none."""
    if panel.misfit is None:
        return (f"No {MARK} item-fit marks: the store holds no per-score item tables of "
                f"booklet {panel.booklet}'s candidates (a year stored from its item file "
                "alone, or ingested before the tables existed: ingest it again).")
    count = f"{len(panel.misfit)} of the {len(panel.items)}" if panel.misfit else "none"
    return (f"{MARK_LEGEND}, on the candidates of booklet {panel.booklet}: {count}, marked "
            "under the item axis.")


def panel_caption(panel: PatternPanel, shots: str, shared_tail: str, provenance: str,
                  humans_note: str = "") -> str:
    """The caption under one area's figure, ending with the page's provenance sentence;
    ``shots`` is the shots setting in words ('0-shot', 'few-shot (no count given)')."""
    languages = " and ".join(PROMPT_LANGUAGE_NAMES.get(lang, lang) for lang in panel.languages)
    tail = f" (every series: {shared_tail})" if shared_tail else ""
    unit = ("Rows: one per repetition (a shuffle or seed of one run); cell black = answered "
            "correctly, white = wrong" if panel.per_repetition else
            "Rows: run series × prompt language; cell = share of the row's repetitions "
            "(shuffles or seeds) that answered the item correctly, 0 white to 1 black")
    lz = ("Right: that repetition's l_z." if panel.per_repetition else
          "Right: mean l_z (SD) over the row's repetitions.")
    humans = (" Top row: the share of the candidates who saw each item that answered it "
              "correctly (every booklet pooled; for the foreign-language items, the candidates "
              "of that language)." if panel.human is not None else humans_note)
    unanswered = " Grey: not answered." if np.isnan(panel.share).any() else ""
    no_b = int(panel.items["b"].isna().sum())
    abandoned = f"; {no_b} without b (abandoned) at the right end" if no_b else ""
    return (f"{panel.area}, {shots}, {languages} prompts{tail}. {unit}. Columns: the "
            f"{len(panel.items)} items of booklet {panel.booklet} sorted by IRT difficulty b "
            f"(curve above), easiest left{abandoned}. {lz}{unanswered}{humans} "
            f"{booklet_sentence(panel)} {misfit_sentence(panel)} Click a cell to open its "
            "item." + provenance)
