"""The Runs page's view of the prompt variants (``inference.prompt_variants``): a table of
every variant's instruction, and the caption under an exact prompt."""

from __future__ import annotations

import pandas as pd

from inference.prompt_variants import VARIANTS, variant


def variant_table(languages: list[str]) -> pd.DataFrame:
    """One row per prompt variant: name, kind, what it changes, and its instruction in each of
    ``languages`` (columns ``instruction (pt)``, …)."""
    return pd.DataFrame([
        {"variant": name, "kind": chosen.kind, "changes": chosen.about,
         **{f"instruction ({language})": chosen.instruction(language)
            for language in languages}}
        for name, chosen in VARIANTS.items()])


def prompt_caption(name: str) -> str:
    """What the exact prompt of variant ``name`` is scored on."""
    if variant(name).reasoning:
        return ("Exactly what the model reads. It ends with a cue to reason: only the generate "
                "answer method can read this answer, from the last option the model names "
                "(`Answer: (C)`). Same as `enem-llm prompt` with these settings.")
    return ("Exactly what the model reads; it is scored on the next token after the final "
            "'(' (one of A–E). Same as `enem-llm prompt` with these settings.")
