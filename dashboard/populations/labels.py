"""Words for the human populations: the groupings and the codes of INEP's data dictionary."""

from __future__ import annotations

from dashboard.state import SCHOOL_TYPES

#: Grouping kind → what the picker calls it (in the order offered).
GROUPING_TITLES: dict[str, str] = {
    "state": "State (SG_UF_PROVA)",
    "school_type": "School type (TP_ESCOLA)",
    "state_school": "State × school type",
    "school_admin": "School administration (TP_DEPENDENCIA_ADM_ESC)",
    "sex": "Sex (TP_SEXO)",
    "race": "Colour/race (TP_COR_RACA)",
    "age_band": "Age band (TP_FAIXA_ETARIA)",
    "income": "Family income (Q006)",
    "father_education": "Father's education (Q001)",
    "mother_education": "Mother's education (Q002)",
    "internet": "Internet at home (Q025)",
}

SCHOOL_ADMIN: dict[str, str] = {"1": "federal", "2": "state", "3": "municipal", "4": "private"}
SEX: dict[str, str] = {"M": "male", "F": "female"}
RACE: dict[str, str] = {"0": "not declared", "1": "white", "2": "black", "3": "brown (parda)",
                        "4": "yellow (amarela)", "5": "Indigenous", "6": "no information"}
AGE_BAND: dict[str, str] = {"1": "under 17", **{str(code): str(code + 15) for code in
                                                  range(2, 11)},
                            "11": "26–30", "12": "31–35", "13": "36–40", "14": "41–45",
                            "15": "46–50", "16": "51–55", "17": "56–60", "18": "61–65",
                            "19": "66–70", "20": "over 70"}
#: Q001/Q002 (2019–2023 questionnaires): the parent's highest schooling.
EDUCATION: dict[str, str] = {
    "A": "never studied", "B": "primary 1st–4th incomplete", "C": "primary 4th done, not 8th",
    "D": "primary done, not secondary", "E": "secondary done, not college",
    "F": "college done", "G": "postgraduate", "H": "does not know"}
INTERNET: dict[str, str] = {"A": "no internet at home", "B": "internet at home"}

_VALUES: dict[str, dict[str, str]] = {
    "school_type": SCHOOL_TYPES, "school_admin": SCHOOL_ADMIN, "sex": SEX, "race": RACE,
    "age_band": AGE_BAND, "father_education": EDUCATION, "mother_education": EDUCATION,
    "internet": INTERNET,
}
#: What the empty value ('?') means in every grouping.
NOT_GIVEN = "not given"


def value_label(kind: str, value: str) -> str:
    """Words for one population, e.g. 'private school (3)', 'SP · public school', 'income C'."""
    if kind == "all":
        return "all candidates"
    if kind == "state_school":
        state, school = value.split("|", 1)
        return f"{value_label('state', state)} · {value_label('school_type', school)}"
    if value == "?":
        return NOT_GIVEN
    if kind == "state":
        return value
    if kind == "school_type":
        return f"{SCHOOL_TYPES.get(value, value)} school"
    if kind == "income":
        return "no family income (A)" if value == "A" else f"income band {value}"
    words = _VALUES.get(kind, {}).get(value)
    return f"{words} ({value})" if words else f"{kind} {value}"


def population_phrase(kind: str, value: str) -> str:
    """The population as a noun phrase for sentences: 'candidates in SP', 'all candidates'."""
    if kind == "all":
        return "all candidates"
    if kind == "state":
        return f"candidates in {value}"
    return f"candidates with {GROUPING_TITLES.get(kind, kind).split(' (')[0].lower()}: " \
           f"{value_label(kind, value)}"
