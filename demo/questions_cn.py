"""Natural-science (CN) templates: unit conversions, physics formulas and fact tables."""

from __future__ import annotations

import numpy as np

from demo import facts
from demo.question_core import (
    Draft,
    fact_draft,
    num,
    numeric_draft,
    other_rows,
    pick,
    unit,
)


def cn_speed_units(rng: np.random.Generator, _: int = 0) -> Draft:
    kmh = 18 * int(rng.integers(1, 9))
    stem = {
        "pt": f"Um ciclista mantém velocidade constante de {kmh} km/h. Qual é essa velocidade em "
              "metros por segundo?",
        "en": f"A cyclist keeps a constant speed of {kmh} km/h. What is this speed in metres per "
              "second?",
    }
    wrong = [kmh * 3.6, kmh / 60, kmh / 36, kmh * 1000 / 60]
    return numeric_draft("cn_speed_units", {"kmh": kmh}, stem, kmh / 3.6, wrong, unit("m/s"))


def cn_density(rng: np.random.Generator, _: int = 0) -> Draft:
    volume = int(pick(rng, (10, 20, 25, 40, 50, 100)))
    rho = float(pick(rng, (0.8, 1.2, 2.5, 2.7, 7.8, 8.9, 11.3, 19.3)))
    mass = round(rho * volume, 1)
    stem = {
        "pt": f"Um objeto maciço de massa {num(mass, 'pt')} g ocupa um volume de {volume} cm³. "
        "Qual é a densidade do material?",
        "en": f"A solid object with a mass of {num(mass, 'en')} g takes up a volume of {volume} "
              "cm³. What is the density of the material?",
    }
    wrong = [volume / mass, mass * volume, mass - volume, rho * 10, rho / 10]
    return numeric_draft(
        "cn_density",
        {"mass": mass, "volume": volume},
        stem,
        mass / volume,
        wrong,
        unit("g/cm³", decimals=3),
    )


def cn_newton(rng: np.random.Generator, _: int = 0) -> Draft:
    mass = int(rng.integers(2, 61))
    acc = float(pick(rng, (0.5, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0)))
    stem = {
        "pt": f"Qual é a intensidade da força resultante que imprime a um corpo de {mass} kg uma "
              f"aceleração de {num(acc, 'pt')} m/s²?",
        "en": f"What is the magnitude of the net force that gives a body of mass {mass} kg an "
              f"acceleration of {num(acc, 'en')} m/s²?",
    }
    wrong = [mass / acc, mass + acc, mass * acc * 10, mass * acc / 2]
    return numeric_draft(
        "cn_newton", {"mass": mass, "acc": acc}, stem, mass * acc, wrong, unit("N")
    )


def cn_ohm(rng: np.random.Generator, _: int = 0) -> Draft:
    resistance = int(pick(rng, (10, 20, 40, 50, 100, 200)))
    current = float(pick(rng, (0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 4.0)))
    voltage = resistance * current
    stem = {
        "pt": f"Um resistor ôhmico de {resistance} Ω é ligado a uma tensão de {num(voltage, 'pt')} "
              "V. Qual é a corrente elétrica que o atravessa?",
        "en": f"An ohmic resistor of {resistance} Ω is connected to a voltage of "
              f"{num(voltage, 'en')} V. What electric current flows through it?",
    }
    wrong = [resistance / voltage, voltage * resistance, current * 10, current / 10]
    return numeric_draft(
        "cn_ohm",
        {"resistance": resistance, "voltage": voltage},
        stem,
        current,
        wrong,
        unit("A", decimals=3),
    )


def cn_kinetic(rng: np.random.Generator, _: int = 0) -> Draft:
    mass = int(pick(rng, (2, 4, 5, 10, 20, 50, 60, 80)))
    speed = int(rng.integers(2, 31))
    stem = {
        "pt": f"Qual é a energia cinética de um corpo de {mass} kg que se move a {speed} m/s?",
        "en": f"What is the kinetic energy of a body of mass {mass} kg moving at {speed} m/s?",
    }
    wrong = [mass * speed, mass * speed**2, mass * speed / 2, mass**2 * speed / 2]
    return numeric_draft(
        "cn_kinetic", {"mass": mass, "speed": speed}, stem, mass * speed**2 / 2, wrong, unit("J")
    )


def cn_temperature(rng: np.random.Generator, _: int = 0) -> Draft:
    celsius = 5 * int(rng.integers(-4, 21))
    stem = {
        "pt": f"Um termômetro marca {celsius} °C. Qual é essa temperatura na escala Fahrenheit?",
        "en": f"A thermometer reads {celsius} °C. What is this temperature on the Fahrenheit "
              "scale?",
    }
    correct = 1.8 * celsius + 32
    wrong = [1.8 * celsius, celsius + 32, 1.8 * celsius - 32, (celsius - 32) / 1.8, correct + 10]
    return numeric_draft(
        "cn_temperature",
        {"celsius": celsius},
        stem,
        correct,
        wrong,
        unit("°F", decimals=1),
        positive=False,
    )


def cn_wave(rng: np.random.Generator, _: int = 0) -> Draft:
    freq = int(pick(rng, (2, 4, 5, 10, 20, 50, 100)))
    wavelength = float(pick(rng, (0.5, 1.0, 1.5, 2.0, 3.4, 5.0)))
    stem = {
        "pt": f"Uma onda tem frequência de {freq} Hz e comprimento de onda de "
              f"{num(wavelength, 'pt')} m. Qual é a sua velocidade de propagação?",
        "en": f"A wave has a frequency of {freq} Hz and a wavelength of {num(wavelength, 'en')} m. "
        "What is its propagation speed?",
    }
    wrong = [wavelength / freq, freq / wavelength, wavelength + freq, wavelength * freq / 2]
    return numeric_draft(
        "cn_wave",
        {"freq": freq, "wavelength": wavelength},
        stem,
        wavelength * freq,
        wrong,
        unit("m/s", decimals=3),
    )


def cn_molar_mass(rng: np.random.Generator, row: int) -> Draft:
    name_pt, name_en, formula, atoms = facts.MOLECULES[row]
    masses_pt = ", ".join(f"{el} = {num(facts.ATOMIC_MASS[el], 'pt')}" for el in atoms)
    masses_en = ", ".join(f"{el} = {num(facts.ATOMIC_MASS[el], 'en')}" for el in atoms)
    stem = {
        "pt": f"Dadas as massas molares {masses_pt} (em g/mol), qual é a massa molar de {name_pt} "
              f"({formula})?",
        "en": f"Given the molar masses {masses_en} (in g/mol), what is the molar mass of {name_en} "
              f"({formula})?",
    }
    correct = sum(facts.ATOMIC_MASS[el] * k for el, k in atoms.items())
    no_subscripts = sum(facts.ATOMIC_MASS[el] for el in atoms)
    wrong = [no_subscripts, correct + 16, correct * 2, correct - 1, correct + 2]
    return numeric_draft(
        "cn_molar_mass", {"formula": formula}, stem, correct, wrong, unit("g/mol", decimals=1)
    )


def cn_symbol(rng: np.random.Generator, row: int) -> Draft:
    name_pt, name_en, symbol = facts.ELEMENTS[row]
    similar = [
        i
        for i, (p, e, s) in enumerate(facts.ELEMENTS)
        if s[0] in (name_pt[0].upper(), name_en[0].upper()) or s[0] == symbol[0]
    ]
    others = other_rows(rng, len(facts.ELEMENTS), row, prefer=similar)
    options = [symbol] + [facts.ELEMENTS[i][2] for i in others]
    stem = {
        "pt": f"Qual é o símbolo químico do elemento {name_pt}?",
        "en": f"What is the chemical symbol of the element {name_en}?",
    }
    return fact_draft("cn_symbol", {"element": name_en}, stem, options, options)


def cn_planet(rng: np.random.Generator, row: int) -> Draft:
    others = other_rows(rng, 8, row)
    stem = {
        "pt": f"Qual é o {facts.ORDINALS_PT[row]} planeta do Sistema Solar em ordem de distância "
              "ao Sol?",
        "en": f"Which is the {facts.ORDINALS_EN[row]} planet of the Solar System in order of "
              "distance from the Sun?",
    }
    return fact_draft(
        "cn_planet",
        {"order": row + 1},
        stem,
        [facts.PLANETS_PT[i] for i in [row, *others]],
        [facts.PLANETS_EN[i] for i in [row, *others]],
    )


def cn_organelle(rng: np.random.Generator, row: int) -> Draft:
    table = facts.ORGANELLES
    others = other_rows(rng, len(table), row)
    stem = {
        "pt": f"Qual estrutura celular tem como principal função {table[row][0]}?",
        "en": f"Which cell structure is mainly responsible for {table[row][1]}?",
    }
    return fact_draft(
        "cn_organelle",
        {"row": row},
        stem,
        [table[i][2] for i in [row, *others]],
        [table[i][3] for i in [row, *others]],
    )


def cn_fact(rng: np.random.Generator, row: int) -> Draft:
    stem_pt, stem_en, pt, en = facts.SCIENCE_FACTS[row]
    return fact_draft("cn_fact", {"row": row}, {"pt": stem_pt, "en": stem_en}, pt, en)
