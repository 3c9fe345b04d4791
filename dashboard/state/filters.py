"""What the sidebar selected, as a plain value every page reads.

:class:`Filters` holds the selection and what follows from it without asking the database
(series names, caption sentences, the human-query arguments); the questions that do ask it
(which booklet gives an area's test information, the selected runs' points, the empty-state
sentence) are functions taking a Filters in :mod:`dashboard.state.selection` and
:mod:`dashboard.state.frame`. Nothing here draws or queries, so a Filters can be built and
checked without Streamlit or a database.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dashboard.runs.picker import UNCOUNTED_PROMPT_TYPE, pooling_sentence, shots_words
from dashboard.summaries import scoring_words
from enem.codebook import SCHOOL_TYPES


@dataclass(frozen=True)
class Filters:
    """What the sidebar selected. ``models`` are the selected runs' labels, already resolved
    (never 'all'); ``pooled`` asks for the runs of each model to be pooled into one series."""

    year: int
    areas: tuple[str, ...]
    booklet: int | None
    booklet_area: str | None
    language: str
    shots: int
    models: tuple[str, ...]
    group_kind: str
    group_value: str
    image_format: str = "png"
    catalogue: pd.DataFrame = field(default_factory=pd.DataFrame, compare=False, repr=False)
    #: Booklets left out of the human reference (their notas are not reproduced).
    excluded: tuple[int, ...] = ()
    #: False: all-blank tests (no answer marked) are left out of the human reference.
    include_blank: bool = True
    #: True: the selected runs of each model form one series named by the model id.
    pooled: bool = False
    #: The year's booklet audit (``store.audit_queries.booklet_audit``).
    audit: pd.DataFrame = field(default_factory=pd.DataFrame, compare=False, repr=False)
    #: The year's live ingest (``store.catalogue_queries.year_profile``).
    profile: dict = field(default_factory=dict, compare=False, repr=False)
    #: (area, why) for each chosen area where the human filters leave no candidate to draw.
    no_humans: tuple[tuple[str, str], ...] = ()
    #: The prompt types of the year's runs stored without a shot count ('few-shot').
    uncounted_prompt_types: str = UNCOUNTED_PROMPT_TYPE

    @property
    def series(self) -> tuple[str, ...]:
        """The series names pages draw: the run labels, or the model ids when pooled."""
        if not self.pooled or self.catalogue.empty:
            return self.models
        chosen = self.catalogue[self.catalogue["model"].isin(self.models)]
        return tuple(dict.fromkeys(chosen["model_id"].astype(str)))

    @property
    def series_order(self) -> list[str]:
        """Every series name of the database in catalogue order (stable colours)."""
        if self.catalogue.empty:
            return []
        column = "model_id" if self.pooled else "model"
        return list(dict.fromkeys(self.catalogue[column].astype(str)))

    def human_args(self, area: str) -> tuple:
        """The arguments every human-histogram query takes for ``area``: year, area, booklet,
        subgroup kind and value, booklets left out, whether all-blank tests count."""
        return (self.year, area, self.booklet_for(area), self.group_kind, self.group_value,
                self.excluded, self.include_blank)

    @property
    def has_humans(self) -> bool:
        """False for a year stored from its item file alone (no candidates)."""
        return not self.profile.get("items_only", False)

    @property
    def provenance(self) -> str:
        """The sentence every figure caption ends with: how θ was scored, which humans."""
        humans = ("no candidates (item file only)" if not self.has_humans else
                  f"{len(self.excluded)} booklet(s) whose notas are not reproduced left out"
                  if self.excluded else "every scored booklet")
        if self.has_humans:
            humans += ("" if self.include_blank else ", all-blank tests left out")
            if self.no_humans:
                humans += ("; none drawn in " + "; ".join(f"{area} ({why})"
                                                         for area, why in self.no_humans))
        runs = self._run_scorings() - {self.scoring}
        models = (f" Model runs scored otherwise: {'; '.join(sorted(runs))}." if runs else "")
        pooled = pooling_sentence(self.catalogue, self.models) if self.pooled else ""
        return f" θ: {self.scoring}. Humans: {humans}.{models}{pooled}"

    def _run_scorings(self) -> set[str]:
        """The scoring settings (in words) of the selected series' runs."""
        if self.catalogue.empty or "scorings" not in self.catalogue:
            return set()
        chosen = self.catalogue[self.catalogue["model"].isin(self.models)]
        # A series whose runs stored no settings has a missing (NA) list.
        return {scoring_words(stored) for stored_list in chosen["scorings"]
                if isinstance(stored_list, (list, tuple, np.ndarray)) for stored in stored_list}

    @property
    def scoring(self) -> str:
        """The year's scoring settings in words, for captions."""
        return scoring_words(self.profile.get("scoring"))

    def booklet_for(self, area: str) -> int | None:
        """The chosen booklet when it belongs to ``area``, else None (every booklet)."""
        return self.booklet if self.booklet_area == area else None

    @property
    def group_label(self) -> str:
        """Words for the human subgroup, e.g. 'candidates in SP'."""
        return group_label(self.group_kind, self.group_value)

    @property
    def shots_words(self) -> str:
        """The shots setting in words: '0-shot', or 'few-shot (no count given)' for runs
        imported with a prompt type that names no count."""
        return shots_words(self.shots, self.uncounted_prompt_types)

    @property
    def prompt_label(self) -> str:
        """Words for the prompt variant, e.g. 'pt, 0-shot' or 'pt, few-shot (no count
        given)'."""
        return f"{self.language}, {self.shots_words}"


def group_label(kind: str, value: str) -> str:
    """Words for a human subgroup."""
    if kind == "state":
        return f"candidates in {value}"
    if kind == "school_type":
        return f"{SCHOOL_TYPES.get(value, value)} school candidates"
    return "all candidates"

