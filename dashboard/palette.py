"""Colour-blind-safe colours (Okabe & Ito 2008) and the greys of the human density background."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

#: Okabe–Ito qualitative palette, black last (kept for reference lines).
OKABE_ITO: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
    "#000000",  # black
)

#: The colours of model series: Okabe–Ito without black (it marks reference lines) and without
#: yellow (its markers vanish on the light greys of the human density).
MODEL_COLOURS: tuple[str, ...] = tuple(c for c in OKABE_ITO if c not in ("#000000", "#F0E442"))

#: Marker symbols cycled after the colours run out, so >7 models stay distinguishable.
SYMBOLS: tuple[str, ...] = ("circle", "diamond", "square", "triangle-up", "cross", "x")

HUMAN_COLOUR = "#6E6E6E"
REFERENCE_COLOUR = "#000000"
INFORMATIVE_FILL = "rgba(0, 158, 115, 0.12)"

#: Light-to-dark greys for the human density (white = nobody, dark = many candidates).
HUMAN_DENSITY_SCALE: list[list] = [
    [0.0, "rgba(255,255,255,0)"],
    [0.02, "#F0F0F0"],
    [0.35, "#BDBDBD"],
    [0.7, "#858585"],
    [1.0, "#404040"],
]

#: Grey scale of the response-pattern heatmap: white = never correct, black = always.
CORRECT_SCALE: list[list] = [[0.0, "#FFFFFF"], [1.0, "#000000"]]


def preferred_slot(label: str, colours: int = len(MODEL_COLOURS)) -> int:
    """The colour a series label asks for: a stable hash (SHA-256, the same in every process,
    unlike Python's ``hash``) of the label, modulo the number of colours; in [0, colours)."""
    digest = hashlib.sha256(label.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % colours


def model_styles(model_ids: Iterable[str],
                 catalogue: Iterable[str] | None = None) -> dict[str, tuple[str, str]]:
    """A (colour, marker symbol) per series label in ``model_ids`` that does not depend on which
    other series are shown.

    Each label of ``catalogue`` (every series of the database, in the catalogue's order),
    then each label of ``model_ids`` missing from it (sorted), in turn takes the colour its
    :func:`preferred_slot` names, or when an earlier label holds that colour the next free
    one (cyclically); once all :data:`MODEL_COLOURS` are taken, the next round reuses them with
    the next marker of :data:`SYMBOLS`. So a model keeps its colour whatever else is selected,
    as long as the catalogue is the same. Without ``catalogue`` (the old call) the given labels
    are the catalogue: colours then stay stable only while no two labels ask for one colour.
    Returns label → (``#RRGGBB``, plotly symbol name) for the labels of ``model_ids``.
    """
    wanted = list(dict.fromkeys(model_ids))
    order = list(dict.fromkeys(catalogue if catalogue is not None else sorted(wanted)))
    order += sorted(set(wanted) - set(order))
    colours = len(MODEL_COLOURS)
    taken: set[int] = set()
    slots: dict[str, int] = {}
    for label in order:
        preferred = preferred_slot(label, colours)
        start = (len(taken) // colours) * colours
        slot = next(start + (preferred + step) % colours for step in range(colours)
                    if start + (preferred + step) % colours not in taken)
        taken.add(slot)
        slots[label] = slot
    return {label: (MODEL_COLOURS[slots[label] % colours],
                    SYMBOLS[(slots[label] // colours) % len(SYMBOLS)]) for label in wanted}


def with_alpha(colour: str, alpha: float) -> str:
    """``#RRGGBB`` as an ``rgba()`` string with the given opacity."""
    colour = colour.lstrip("#")
    red, green, blue = (int(colour[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({red}, {green}, {blue}, {alpha})"
