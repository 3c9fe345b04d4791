"""Question templates of the demo exam, by area (Portuguese and English, computed answers).

The templates live in ``questions_mt`` / ``questions_cn`` / ``questions_ch`` / ``questions_lc``
and their fact tables in :mod:`demo.facts`; this module lists which templates each area uses.
Assembly into one question per item, with the key letter from the item bank, is in
:mod:`demo.question_bank`.
"""

from __future__ import annotations

from demo import facts
from demo import questions_ch as ch
from demo import questions_cn as cn
from demo import questions_lc as lc
from demo import questions_mt as mt
from demo.question_core import Template

TEMPLATES: dict[str, tuple[Template, ...]] = {
    "MT": tuple(
        Template(f.__name__, f)
        for f in (
            mt.mt_discount,
            mt.mt_perimeter,
            mt.mt_tiles,
            mt.mt_mean,
            mt.mt_interest,
            mt.mt_inverse_proportion,
            mt.mt_travel_time,
            mt.mt_probability,
            mt.mt_box_volume,
            mt.mt_pythagoras,
            mt.mt_taxi,
            mt.mt_percent_of,
        )
    ),
    "CN": tuple(
        Template(f.__name__, f)
        for f in (
            cn.cn_speed_units,
            cn.cn_density,
            cn.cn_newton,
            cn.cn_ohm,
            cn.cn_kinetic,
            cn.cn_temperature,
            cn.cn_wave,
        )
    )
    + (
        Template("cn_molar_mass", cn.cn_molar_mass, len(facts.MOLECULES)),
        Template("cn_symbol", cn.cn_symbol, len(facts.ELEMENTS)),
        Template("cn_planet", cn.cn_planet, len(facts.PLANETS_PT)),
        Template("cn_organelle", cn.cn_organelle, len(facts.ORGANELLES)),
        Template("cn_fact", cn.cn_fact, len(facts.SCIENCE_FACTS)),
    ),
    "CH": (
        Template("ch_capital", ch.ch_capital, len(ch.UFS), 2.0),
        Template("ch_region", ch.ch_region, len(ch.UFS)),
        Template("ch_event_year", ch.ch_event_year, len(facts.EVENTS), 1.5),
        Template("ch_century", ch.ch_century, len(ch.CENTURY_ROWS)),
        Template("ch_continent", ch.ch_continent, len(facts.COUNTRIES)),
        Template("ch_years_between", ch.ch_years_between),
        Template("ch_map_scale", ch.ch_map_scale),
        Template("ch_density", ch.ch_density),
        Template("ch_time_zone", ch.ch_time_zone),
    ),
    "LC": (
        Template("lc_synonym", lc.lc_synonym, len(facts.SYNONYMS)),
        Template("lc_antonym", lc.lc_antonym, len(facts.ANTONYMS)),
        Template("lc_word_class", lc.lc_word_class, len(facts.WORD_CLASS)),
        Template("lc_plural", lc.lc_plural, len(facts.PLURALS)),
    ),
}
"""Templates for the common items of each area (the LC language items use lc_english /
lc_spanish)."""

LANGUAGE_TEMPLATES: dict[int, Template] = {
    0: Template("lc_english", lc.lc_english, len(facts.ENGLISH_WORDS)),
    1: Template("lc_spanish", lc.lc_spanish, len(facts.SPANISH_WORDS)),
}
