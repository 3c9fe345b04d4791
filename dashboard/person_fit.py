"""The Person fit page's choice of person-fit statistic, l_z or l_z*, and the humans' histograms
and 5th percentiles it draws.

The switch is kept in the URL (``statistic=lz_star``), like the page's overlay. l_z* is drawn
from the humans' stored (θ, l_z*) histogram (``agg_theta_lz_star``); a year ingested before that
table existed has none, and the page then says so and draws l_z. The trust table's person-fit
check stays on l_z whichever is drawn (``enem.trust.RULE`` is defined on l_z), so the l_z
percentiles are read for it too (:func:`lz_fifth_percentiles`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd
import streamlit as st

from dashboard import queries
from dashboard.figures import LZ_STAR_TITLE, LZ_TITLE
from dashboard.state.filters import Filters
from dashboard.state.url import seed_page_choice, write_page_choice
from dashboard.summaries import histogram_quantile
from store.histograms import LZ_BIN_WIDTH

#: The query parameter and session key of the switch.
STATISTIC_PARAM = "statistic"
STATISTIC_KEY = "fit.statistic"
#: The humans' percentile drawn dashed (and the trust table's person-fit threshold).
P5 = 0.05


@dataclass(frozen=True)
class FitStatistic:
    """One person-fit statistic the page can draw.

    Attributes
    ----------
    column
        The score column (``model_points``' ``lz`` or ``lz_star``), also the ``statistic``
        argument of ``human_theta_lz`` and the URL's value.
    symbol
        Its name in captions and legends ('l_z', 'l_z*').
    axis_title
        The axis title of the figures.
    """

    column: str
    symbol: str
    axis_title: str


LZ = FitStatistic("lz", "l_z", LZ_TITLE)
LZ_STAR = FitStatistic("lz_star", "l_z*", LZ_STAR_TITLE)
#: The switch's options, by URL value; the first is the default.
STATISTICS: dict[str, FitStatistic] = {s.column: s for s in (LZ, LZ_STAR)}
#: What l_z* is, in one sentence for captions.
LZ_STAR_WORDS = ("l_z* is l_z corrected for θ being estimated from the same answers "
                 "(Snijders 2001), so it is closer to N(0, 1) on a test as short as ENEM's.")


def statistic_control() -> FitStatistic:
    """Draw the l_z | l_z* switch (its value read from and written to the URL); returns the
    chosen statistic."""
    options = list(STATISTICS)
    seed_page_choice(STATISTIC_PARAM, options, STATISTIC_KEY, LZ.column)
    chosen = st.segmented_control(
        "Person-fit statistic", options, key=STATISTIC_KEY, required=True,
        format_func=lambda column: STATISTICS[column].symbol,
        help=(f"Draw l_z (Drasgow, Levine & Williams 1985) or l_z*. {LZ_STAR_WORDS} The "
              "trust table stays on l_z."))
    write_page_choice(STATISTIC_PARAM, STATISTIC_KEY)
    return STATISTICS.get(str(chosen), LZ)


def drawn_statistic(year: int, chosen: FitStatistic) -> FitStatistic:
    """``chosen``, or l_z with an info box when l_z* is chosen and the store lacks the year's
    l_z* histogram (ingested before it was kept)."""
    if chosen == LZ_STAR and queries.lz_star_missing(year):
        st.info(f"The humans' l_z* histogram of {year} is not in this store: the year was "
                "ingested before it was kept. Ingest the year again to see l_z*; l_z is "
                "drawn meanwhile.")
        return LZ
    return chosen


def human_densities(filters: Filters, statistic: FitStatistic) -> dict[str, pd.DataFrame]:
    """Per area of ``filters``, the humans' (θ bin, ``statistic`` bin) counts: theta_bin,
    lz_bin (lower edges; ``lz_bin`` holds the bin of ``statistic``), n."""
    densities = {}
    for area in filters.areas:
        # Named, so the statistic cannot land on a filter argument.
        year, _, booklet, kind, value, excluded, include_blank = filters.human_args(area)
        densities[area] = queries.human_theta_lz(
            year, area, booklet, kind, value, excluded, include_blank,
            statistic=statistic.column)
    return densities


def blank_free_densities(filters: Filters, statistic: FitStatistic
                         ) -> dict[str, pd.DataFrame]:
    """:func:`human_densities` with the all-blank tests left out."""
    return human_densities(replace(filters, include_blank=False), statistic)


def marginals(densities: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Per area, the person-fit marginal of a 2-D histogram: lz_bin (lower edge), n."""
    return {area: frame.groupby("lz_bin", as_index=False)["n"].sum()
            for area, frame in densities.items()}


def fifth_percentiles(marginal: dict[str, pd.DataFrame]) -> dict[str, float]:
    """Per area, the humans' 5th percentile of the statistic (NaN: no humans), interpolated
    inside the 0.1-wide bins (``dashboard.summaries.histogram_quantile``)."""
    return {area: histogram_quantile(m["lz_bin"], m["n"], LZ_BIN_WIDTH, P5)
            for area, m in marginal.items()}


def lz_fifth_percentiles(filters: Filters, drawn: FitStatistic,
                         drawn_p5: dict[str, float]) -> dict[str, float]:
    """The humans' 5th percentile of l_z per area, for the trust table: ``drawn_p5`` when l_z
    is drawn, else read from the l_z histogram."""
    if drawn == LZ:
        return drawn_p5
    return fifth_percentiles(marginals(human_densities(filters, LZ)))
