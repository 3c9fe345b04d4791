"""INEP's data dictionary: what the codes of the candidates' background columns mean.

The ``examinees`` table keeps INEP's codes as they are in the microdata (``TP_ESCOLA`` 2, ``Q001``
'C', …; ``store.examinee_sql`` says which microdata column fills which table column). These
dicts give each code its words, in English, once for every layer that shows or reports them.
Keys are the codes as text, the form in which the populations and histograms are stored.
"""

from __future__ import annotations

#: TP_ESCOLA (school type at the end of secondary school). RESULTADOS years have no TP_ESCOLA;
#: ingest maps their TP_DEPENDENCIA_ADM_ESC onto codes 2 and 3. '?' is the store's value for a
#: candidate without one (not an INEP code).
SCHOOL_TYPES: dict[str, str] = {"1": "not answered", "2": "public", "3": "private",
                                "4": "abroad", "?": "unknown"}
#: TP_DEPENDENCIA_ADM_ESC (who runs the school).
SCHOOL_ADMIN: dict[str, str] = {"1": "federal", "2": "state", "3": "municipal", "4": "private"}
#: TP_SEXO.
SEX: dict[str, str] = {"M": "male", "F": "female"}
#: TP_COR_RACA (self-declared colour/race, IBGE's categories).
RACE: dict[str, str] = {"0": "not declared", "1": "white", "2": "black", "3": "brown (parda)",
                        "4": "yellow (amarela)", "5": "Indigenous", "6": "no information"}
#: TP_FAIXA_ETARIA: codes 2–10 are single years of age (17–25), 11–19 five-year bands.
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
#: Q025 (internet access at home).
INTERNET: dict[str, str] = {"A": "no internet at home", "B": "internet at home"}

#: ``examinees`` column → the labels of its codes, for the columns whose codes have words here.
#: ``state`` (SG_UF_PROVA) is shown as its code; ``income`` (Q006) as its band letter.
CODE_LABELS: dict[str, dict[str, str]] = {
    "school_type": SCHOOL_TYPES, "school_admin": SCHOOL_ADMIN, "sex": SEX, "race": RACE,
    "age_band": AGE_BAND, "father_education": EDUCATION, "mother_education": EDUCATION,
    "internet": INTERNET,
}
