"""The administration protocol of *Beyond accuracy* as constants: prompt languages and shots.

Defined once here; the command line, the run spec and the dashboard's pickers all read them.
"""

from __future__ import annotations

#: Prompt languages, each with its own template (``inference.prompts.TEMPLATES``).
PROMPT_LANGUAGES: tuple[str, ...] = ("pt", "en")
#: How each prompt language is named on screen.
PROMPT_LANGUAGE_NAMES: dict[str, str] = {"pt": "Portuguese (pt)", "en": "English (en)"}
#: Language labels found in question and results files → prompt language.
LANGUAGE_ALIASES: dict[str, str] = {"portuguese": "pt", "pt": "pt", "pt-br": "pt",
                                    "english": "en", "en": "en"}
#: Solved examples before the asked item: 0-, 1- and 4-shot, as in the paper.
SHOT_SETTINGS: tuple[int, ...] = (0, 1, 4)
