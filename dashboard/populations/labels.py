"""Words for the human populations: the picker's groupings and each population's name.

What INEP's codes mean is its data dictionary's business (``enem.codebook``); this module keeps
only how the Populations page words them. The grouping titles stay here: they are the picker's
UI text, naming the microdata column in brackets only as a hint to the reader.
"""

from __future__ import annotations

from enem.codebook import CODE_LABELS, SCHOOL_TYPES

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
    words = CODE_LABELS.get(kind, {}).get(value)
    return f"{words} ({value})" if words else f"{kind} {value}"


def population_phrase(kind: str, value: str) -> str:
    """The population as a noun phrase for sentences: 'candidates in SP', 'all candidates'."""
    if kind == "all":
        return "all candidates"
    if kind == "state":
        return f"candidates in {value}"
    return f"candidates with {GROUPING_TITLES.get(kind, kind).split(' (')[0].lower()}: " \
           f"{value_label(kind, value)}"
