"""The four ENEM areas and their fixed facts."""

AREAS: tuple[str, ...] = ("CN", "CH", "LC", "MT")

AREA_NAMES: dict[str, str] = {
    "CN": "Natural Sciences",
    "CH": "Humanities",
    "LC": "Languages and Codes",
    "MT": "Mathematics",
}

ITEMS_PER_AREA = 45

#: TP_LINGUA codes for the foreign-language block of LC.
LANGUAGE_NAMES: dict[int, str] = {0: "English", 1: "Spanish"}

#: Characters that may appear in TX_RESPOSTAS_*: the five options, blank, multiple marks and the
#: filler INEP writes for the unchosen LC language block in 2014–2021.
OPTION_LETTERS = "ABCDE"
N_OPTIONS = len(OPTION_LETTERS)
BLANK_MARK = "."
MULTIPLE_MARK = "*"
UNCHOSEN_MARK = "9"


def check_area(area: str) -> str:
    """Return ``area`` upper-cased, or raise ValueError naming the valid areas."""
    code = str(area).upper()
    if code not in AREAS:
        raise ValueError(f"unknown area {area!r}; expected one of {', '.join(AREAS)}")
    return code
