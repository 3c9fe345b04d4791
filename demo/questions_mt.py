"""Mathematics (MT) templates: word problems whose answers are computed from the parameters."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from demo.question_core import (
    LANGS,
    Draft,
    join_list,
    money,
    num,
    numeric_draft,
    pick,
    unit,
)

PRODUCTS: tuple[tuple[str, str], ...] = (
    ("uma bicicleta", "a bicycle"),
    ("uma geladeira", "a refrigerator"),
    ("uma mochila", "a backpack"),
    ("um celular", "a mobile phone"),
    ("um par de tênis", "a pair of trainers"),
    ("uma cadeira", "a chair"),
)


def mt_discount(rng: np.random.Generator, _: int = 0) -> Draft:
    prod_pt, prod_en = pick(rng, PRODUCTS)
    price = int(rng.integers(8, 200)) * 10
    pct = int(pick(rng, (5, 10, 15, 20, 25, 30, 40)))
    stem = {
        "pt": f"Uma loja anuncia {pct}% de desconto em {prod_pt} que custa {money(price, 'pt')}. "
        "Qual é o preço a pagar com o desconto?",
        "en": f"A shop offers a {pct}% discount on {prod_en} that costs {money(price, 'en')}. "
        "What is the price to pay after the discount?",
    }
    correct = price * (100 - pct) / 100
    wrong = [
        price * pct / 100,
        price * (100 + pct) / 100,
        price - pct,
        price * (100 - 2 * pct) / 100,
    ]
    return numeric_draft("mt_discount", {"price": price, "pct": pct}, stem, correct, wrong, money)


def mt_perimeter(rng: np.random.Generator, _: int = 0) -> Draft:
    w, h = (int(v) for v in rng.choice(np.arange(5, 61), size=2, replace=False))
    stem = {
        "pt": f"Um terreno retangular mede {w} m por {h} m. Quantos metros de cerca são "
              "necessários para contorná-lo uma única vez?",
        "en": f"A rectangular plot measures {w} m by {h} m. How many metres of fence are needed to "
              "go around it once?",
    }
    wrong = [w * h, w + h, 2 * w + h, 4 * max(w, h)]
    return numeric_draft("mt_perimeter", {"w": w, "h": h}, stem, 2 * (w + h), wrong, unit("m"))


def mt_tiles(rng: np.random.Generator, _: int = 0) -> Draft:
    side = int(pick(rng, (20, 25, 50)))
    w, h = int(rng.integers(2, 13)), int(rng.integers(2, 13))
    per_m = 100 // side
    stem = {
        "pt": f"Uma sala retangular de {w} m por {h} m será coberta com pisos quadrados de {side} "
              "cm de lado, sem sobras nem cortes. Quantos pisos serão usados?",
        "en": f"A rectangular room of {w} m by {h} m will be covered with square tiles of side "
              f"{side} cm, with no gaps or cuts. How many tiles are used?",
    }
    correct = w * h * per_m * per_m
    wrong = [w * h * per_m, w * h * 100 * per_m, 2 * (w + h) * per_m, correct // 2]
    return numeric_draft(
        "mt_tiles", {"w": w, "h": h, "side": side}, stem, correct, wrong, unit("pisos", "tiles", 0)
    )


def mt_mean(rng: np.random.Generator, _: int = 0) -> Draft:
    grades = [int(g) for g in rng.integers(3, 11, 5)]
    mean = sum(grades) / 5
    stem = {
        lang: (
            "As notas de uma estudante em cinco provas foram "
            f"{join_list([str(g) for g in grades], 'pt')}. Qual é a média aritmética dessas notas?"
            if lang == "pt"
            else "A student's marks in five tests were "
                 f"{join_list([str(g) for g in grades], 'en')}. What is the arithmetic mean of "
                 "these marks?"
        )
        for lang in LANGS
    }
    wrong = [
        float(np.median(grades)),
        sum(grades) / 4,
        max(grades) - min(grades),
        mean + 1,
        mean - 0.5,
    ]
    return numeric_draft(
        "mt_mean", {"grades": grades}, stem, mean, wrong, lambda x, lang: num(x, lang, 1)
    )


def mt_interest(rng: np.random.Generator, _: int = 0) -> Draft:
    capital = int(rng.integers(2, 21)) * 500
    rate = int(rng.integers(1, 6))
    months = int(rng.integers(2, 13))
    stem = {
        "pt": f"Uma pessoa aplicou {money(capital, 'pt')} a juros simples de {rate}% ao mês. "
        f"Qual será o montante após {months} meses?",
        "en": f"A person invested {money(capital, 'en')} at simple interest of {rate}% per month. "
        f"What will the total amount be after {months} months?",
    }
    correct = capital * (1 + rate * months / 100)
    wrong = [
        capital * rate * months / 100,
        capital * (1 + rate / 100) ** months,
        capital + rate * months,
        capital * (1 + rate * (months + 1) / 100),
    ]
    return numeric_draft(
        "mt_interest",
        {"capital": capital, "rate": rate, "months": months},
        stem,
        correct,
        wrong,
        money,
    )


def mt_inverse_proportion(rng: np.random.Generator, _: int = 0) -> Draft:
    while True:
        workers, days = int(rng.integers(2, 10)), int(rng.integers(4, 31))
        options = [m for m in range(2, 21) if m != workers and (workers * days) % m == 0]
        if options:
            break
    new = int(pick(rng, options))
    stem = {
        "pt": f"{workers} pedreiros, trabalhando no mesmo ritmo, constroem um muro em {days} dias. "
        f"Em quantos dias {new} pedreiros, no mesmo ritmo, construiriam o mesmo muro?",
        "en": f"{workers} bricklayers working at the same pace build a wall in {days} days. "
        f"In how many days would {new} bricklayers, at the same pace, build the same wall?",
    }
    correct = workers * days / new
    wrong = [days * new / workers, workers * days, days + workers - new, days]
    return numeric_draft(
        "mt_inverse_proportion",
        {"workers": workers, "days": days, "new": new},
        stem,
        correct,
        wrong,
        unit("dias", "days", 1),
    )


def _duration(minutes: float, lang: str) -> str:
    total = round(minutes)
    h, m = divmod(total, 60)
    if h == 0:
        return f"{m} min"
    return f"{h} h" if m == 0 else f"{h} h {m:02d} min"


def mt_travel_time(rng: np.random.Generator, _: int = 0) -> Draft:
    while True:
        speed = int(pick(rng, (40, 50, 60, 75, 80, 90, 100, 120)))
        minutes = int(rng.integers(2, 25)) * 15
        if (speed * minutes) % 60 == 0:
            break
    dist = speed * minutes // 60
    stem = {
        "pt": f"Um ônibus percorre {dist} km com velocidade média de {speed} km/h. Quanto tempo "
              "dura a viagem?",
        "en": f"A bus travels {dist} km at an average speed of {speed} km/h. How long does the "
              "trip take?",
    }
    hours = dist / speed
    misread = int(hours) * 60 + round((hours - int(hours)) * 100)
    wrong = [misread, minutes + 30, minutes - 30, minutes + 60, minutes * 2]
    return numeric_draft(
        "mt_travel_time", {"dist": dist, "speed": speed}, stem, minutes, wrong, _duration
    )


def _fraction(x: float, lang: str) -> str:
    f = Fraction(x).limit_denominator(1000)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def mt_probability(rng: np.random.Generator, _: int = 0) -> Draft:
    red, blue, green = (int(v) for v in rng.integers(1, 10, 3))
    total = red + blue + green
    stem = {
        "pt": f"Uma urna contém {red} bolas vermelhas, {blue} azuis e {green} verdes, todas iguais "
              "ao tato. Retirando-se uma bola ao acaso, qual é a probabilidade de ela ser "
              "vermelha?",
        "en": f"A bag holds {red} red, {blue} blue and {green} green balls that feel identical. "
        "If one ball is drawn at random, what is the probability that it is red?",
    }
    correct = Fraction(red, total)
    wrong = [
        Fraction(red, blue + green),
        Fraction(blue, total),
        Fraction(green, total),
        Fraction(1, total),
        Fraction(red, total + red),
        Fraction(red + 1, total),
    ]
    return numeric_draft(
        "mt_probability",
        {"red": red, "blue": blue, "green": green},
        stem,
        float(correct),
        [float(w) for w in wrong],
        _fraction,
    )


def mt_box_volume(rng: np.random.Generator, _: int = 0) -> Draft:
    dims = [int(v) * 10 for v in rng.integers(1, 9, 3)]
    length, width, height = dims
    stem = {
        "pt": f"Uma caixa-d'água tem forma de paralelepípedo com medidas internas de {length} cm, "
              f"{width} cm e {height} cm. Qual é a sua capacidade?",
        "en": f"A water tank is a rectangular box with inner dimensions {length} cm, {width} cm "
              f"and {height} cm. What is its capacity?",
    }
    vol = length * width * height
    wrong = [
        vol / 100,
        vol / 10_000,
        2 * (length * width + length * height + width * height) / 1000,
        length + width + height,
    ]
    return numeric_draft(
        "mt_box_volume", {"dims": dims}, stem, vol / 1000, wrong, unit("litros", "litres", 2)
    )


PYTHAGOREAN: tuple[tuple[int, int, int], ...] = (
    (3, 4, 5),
    (6, 8, 10),
    (5, 12, 13),
    (8, 15, 17),
    (9, 12, 15),
    (12, 16, 20),
    (7, 24, 25),
    (15, 20, 25),
)


def mt_pythagoras(rng: np.random.Generator, _: int = 0) -> Draft:
    a, b, c = pick(rng, PYTHAGOREAN)
    if rng.random() < 0.5:
        a, b = b, a
    stem = {
        "pt": f"Um cabo esticado de {c} m liga o topo de um poste vertical a um ponto do chão "
              f"plano situado a {a} m da base do poste. Qual é a altura do poste?",
        "en": f"A taut cable {c} m long joins the top of a vertical pole to a point on flat ground "
              f"{a} m from the foot of the pole. How tall is the pole?",
    }
    wrong = [c - a, c + a, a, round(float(np.hypot(a, c)), 1)]
    return numeric_draft(
        "mt_pythagoras", {"hyp": c, "base": a}, stem, b, wrong, unit("m", decimals=1)
    )


def mt_taxi(rng: np.random.Generator, _: int = 0) -> Draft:
    fixed = float(pick(rng, (4.0, 4.5, 5.0, 5.5, 6.0)))
    per_km = float(pick(rng, (1.5, 2.0, 2.5, 3.0, 3.5)))
    km = int(rng.integers(5, 31))
    stem = {
        "pt": f"Em uma cidade, a corrida de táxi custa {money(fixed, 'pt')} de bandeirada mais "
        f"{money(per_km, 'pt')} por quilômetro rodado. Quanto custa uma corrida de {km} km?",
        "en": f"In a city, a taxi ride costs a fixed fee of {money(fixed, 'en')} plus "
              f"{money(per_km, 'en')} per kilometre. How much does a {km} km ride cost?",
    }
    wrong = [per_km * km, (fixed + per_km) * km, fixed * km + per_km, fixed + per_km * (km - 1)]
    return numeric_draft(
        "mt_taxi",
        {"fixed": fixed, "per_km": per_km, "km": km},
        stem,
        fixed + per_km * km,
        wrong,
        money,
    )


def mt_percent_of(rng: np.random.Generator, _: int = 0) -> Draft:
    total = int(rng.integers(5, 51)) * 40
    pct = int(pick(rng, (5, 10, 15, 20, 25, 30, 35, 40, 45, 60, 75)))
    stem = {
        "pt": f"Uma escola tem {num(total, 'pt')} estudantes, e {pct}% deles vão à escola de "
              "ônibus. Quantos estudantes vão de ônibus?",
        "en": f"A school has {num(total, 'en')} students, and {pct}% of them go to school by bus. "
        "How many students go by bus?",
    }
    correct = total * pct / 100
    wrong = [total - correct, total * pct / 10, total * pct / 1000, pct * 10]
    return numeric_draft(
        "mt_percent_of",
        {"total": total, "pct": pct},
        stem,
        correct,
        wrong,
        unit("estudantes", "students", 1),
    )
