"""Colour-blind-safe colours (Okabe & Ito 2008) and the greys of the human density background."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

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

#: Marker symbols: the runs of one model differ by symbol, and models that share a colour (more
#: models than colours) start at different symbols, so no two series share (colour, symbol).
SYMBOLS: tuple[str, ...] = ("circle", "diamond", "square", "triangle-up", "cross", "x",
                            "star", "hexagon", "triangle-down", "pentagon", "hourglass",
                            "star-square")

#: Line dashes of series drawn as lines (contours, CAT paths), paired with :data:`SYMBOLS`.
#: Plotly's plain "dash" is left out: a dashed line already means a region drawn as a convex
#: hull (too few points for a density, see ``dashboard.figures.region_trace``).
DASHES: tuple[str, ...] = ("solid", "dot", "dashdot", "longdash", "longdashdot",
                           "2px,6px", "10px,3px,2px,3px,2px,3px")

#: Bar fill patterns of series drawn as bars, paired with :data:`SYMBOLS` ('' = plain fill):
#: bars have no marker symbol, so the runs of one model differ by hatching.
PATTERNS: tuple[str, ...] = ("", "/", ".", "x", "-", "|", "+", "\\")

#: What separates a run label's parts: the model id comes first (``model · prompt · reps``).
LABEL_SEPARATOR = " · "

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


def series_model(label: str, models: Mapping[str, str] | None = None) -> str:
    """The model a series belongs to: ``models[label]`` when given (a run label → model id
    map, e.g. from the catalogue), else the label's part before the first " · " (run labels
    start with the model id; a pooled series is named by the model id itself)."""
    if models and label in models:
        return str(models[label])
    return str(label).split(LABEL_SEPARATOR, 1)[0].strip()


@dataclass(frozen=True)
class SeriesStyle:
    """How one series is drawn: its model's colour, its own marker symbol, line dash and bar
    pattern."""

    colour: str
    symbol: str
    dash: str
    pattern: str = ""


def series_style_table(labels: Iterable[str], catalogue: Iterable[str] | None = None,
                       models: Mapping[str, str] | None = None) -> dict[str, SeriesStyle]:
    """A :class:`SeriesStyle` per series label in ``labels``, which does not depend on which
    other series are shown, nor on whether runs are pooled.

    The colour belongs to the MODEL (:func:`series_model`), not to the run: every model of
    ``catalogue`` (every series of the database in catalogue order, then the labels missing
    from it, sorted), in order of first appearance, takes the colour its
    :func:`preferred_slot` names, or the next free one when an earlier model holds it; once
    all :data:`MODEL_COLOURS` are taken, a next round of models reuses them. The runs of one
    model share its colour and differ by symbol, dash and bar pattern: the v-th run of a model of
    round r takes symbol, dash and pattern number ``r + v × rounds``, so two series shown together
    never share (colour, symbol) while a colour is shared by fewer than ``len(SYMBOLS)`` series. A
    pooled series (named by its model) is its model's first and takes the model's first style.
    """
    wanted = list(dict.fromkeys(labels))
    order = list(dict.fromkeys(catalogue if catalogue is not None else sorted(wanted)))
    order += sorted(set(wanted) - set(order))
    runs: dict[str, list[str]] = {}
    for label in order:
        runs.setdefault(series_model(label, models), []).append(label)
    colours = len(MODEL_COLOURS)
    taken: set[int] = set()
    slots: dict[str, int] = {}
    for model in runs:
        preferred = preferred_slot(model, colours)
        start = (len(taken) // colours) * colours
        slot = next(start + (preferred + step) % colours for step in range(colours)
                    if start + (preferred + step) % colours not in taken)
        taken.add(slot)
        slots[model] = slot
    rounds = max(1, -(-len(runs) // colours))
    styles: dict[str, SeriesStyle] = {}
    for model, model_runs in runs.items():
        colour, round_ = MODEL_COLOURS[slots[model] % colours], slots[model] // colours
        for variant, label in enumerate(model_runs):
            number = round_ + variant * rounds
            styles[label] = SeriesStyle(colour, SYMBOLS[number % len(SYMBOLS)],
                                        symbol_dash(SYMBOLS[number % len(SYMBOLS)]),
                                        symbol_pattern(SYMBOLS[number % len(SYMBOLS)]))
    return {label: styles[label] for label in wanted}


def model_styles(model_ids: Iterable[str], catalogue: Iterable[str] | None = None,
                 models: Mapping[str, str] | None = None) -> dict[str, tuple[str, str]]:
    """(colour, marker symbol) per series label in ``model_ids``: :func:`series_style_table`
    without the dash, the shape every page unpacks. Without ``catalogue`` the given labels are
    the catalogue, so a run's symbol may then depend on which runs of its model are shown."""
    return {label: (style.colour, style.symbol)
            for label, style in series_style_table(model_ids, catalogue, models).items()}


def series_dash(label: str, catalogue: Iterable[str] | None = None,
                models: Mapping[str, str] | None = None) -> str:
    """The plotly line dash of one series (see :func:`series_style_table`): 'solid' for a
    model's first run, another dash for its other runs and for models sharing a colour."""
    return series_style_table([label], catalogue, models)[label].dash


def symbol_pattern(symbol: str) -> str:
    """The bar pattern that goes with a series' marker symbol (the same number in
    :data:`SYMBOLS` and :data:`PATTERNS`), so a figure that gets only (colour, symbol) can
    hatch a model's other runs' bars; '' for the first symbol and unknown ones."""
    return PATTERNS[SYMBOLS.index(symbol) % len(PATTERNS)] if symbol in SYMBOLS else ""


def symbol_dash(symbol: str) -> str:
    """The line dash that goes with a series' marker symbol (the same number in
    :data:`SYMBOLS` and :data:`DASHES`), for figures that get only (colour, symbol); 'solid'
    for the first symbol and unknown ones."""
    return DASHES[SYMBOLS.index(symbol) % len(DASHES)] if symbol in SYMBOLS else "solid"


def bar_pattern(shape: str) -> dict | None:
    """A bar marker's ``pattern`` for a series' :attr:`SeriesStyle.pattern`: white hatching
    over the bar's own colour (None for a plain bar)."""
    if not shape:
        return None
    return {"shape": shape, "fillmode": "overlay", "fgcolor": "white", "size": 7, "solidity": 0.3}


def with_alpha(colour: str, alpha: float) -> str:
    """``#RRGGBB`` as an ``rgba()`` string with the given opacity."""
    colour = colour.lstrip("#")
    red, green, blue = (int(colour[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({red}, {green}, {blue}, {alpha})"
