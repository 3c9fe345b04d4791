"""Colour-blind-safe colours (Okabe & Ito 2008) and the greys of the human density background."""

from __future__ import annotations

from collections.abc import Sequence

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


def model_styles(model_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """A stable (colour, symbol) per model: sorted ids, colours first, then symbols."""
    styles = {}
    colours = OKABE_ITO[:7]
    for index, model in enumerate(sorted(set(model_ids))):
        colour = colours[index % len(colours)]
        symbol = SYMBOLS[(index // len(colours)) % len(SYMBOLS)]
        styles[model] = (colour, symbol)
    return styles


def with_alpha(colour: str, alpha: float) -> str:
    """``#RRGGBB`` as an ``rgba()`` string with the given opacity."""
    colour = colour.lstrip("#")
    red, green, blue = (int(colour[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({red}, {green}, {blue}, {alpha})"
