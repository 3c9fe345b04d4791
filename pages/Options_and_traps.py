"""Options and traps (the Khayyam Challenge's option-level view): which wrong options draw the
humans, whether models fall for the same ones, where models' chosen options were shown, and
how accuracy and text lengths relate to correct answers: one tab per question, drawn (and
computed) when it is opened; the open tab is the URL's ``section=``.

Humans' option counts are pre-aggregated at ingest (in total and per θ bin); model answers are
mapped back to the original letters, and their shown positions follow from each prompt's
option order. The numbers come from ``dashboard.options.data`` and
``dashboard.options.comparisons``, the sections from ``dashboard.options.sections``; the
definitions are stated on the page.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.figures import series_styles
from dashboard.options.data import NEAR
from dashboard.options.loading import option_results
from dashboard.options.sections import (
    show_bands,
    show_key_positions,
    show_lengths,
    show_pair,
    show_positions,
    show_traps,
)
from dashboard.state.frame import note_missing_runs, open_page
from dashboard.state.url import section_tabs

#: The page's sections, one tab each (its label is the URL's ``section=``); only the open
#: tab's section is drawn and computed.
SECTIONS = {
    "Traps": show_traps,
    "Two runs": show_pair,
    "Position bias": show_positions,
    "Key position": show_key_positions,
    "Difficulty": show_bands,
    "Lengths": show_lengths,
}

filters = open_page("Options and traps")
st.markdown(
    "**Definitions.** The *most chosen distractor* of an item is the wrong option the most "
    "candidates marked (blanks and multiple marks are no option). An item is a **trap** when "
    "that distractor draws at least as many candidates as the key. Hard items drift toward "
    "traps simply because few candidates know them, so the **θ-conditional trap** asks the "
    f"same among the candidates whose θ lies within ±{NEAR} of the item's difficulty b, where "
    "a well-behaved 3PL item is answered correctly more often than any single wrong option. "
    "**Distractor agreement**: among a model's wrong answers, the share that chose the humans' "
    "most chosen distractor; by chance (a wrong answer spread evenly over four wrong options) "
    "it is 1/4. Accuracy is the mean over items of the share of answers that are correct.")

results = option_results(filters)
answers, series = results.answers, results.series
note_missing_runs(filters, pd.DataFrame({"area": answers["area"].unique() if len(answers)
                                         else []}))
styles = series_styles(series, filters.series_order) if series else {}
stem = f"options_{filters.year}_{'_'.join(filters.areas)}"

tabs = section_tabs(list(SECTIONS))
for tab, show in zip(tabs, SECTIONS.values(), strict=True):
    with tab:
        if tab.open:
            show(filters, results, styles, stem)
