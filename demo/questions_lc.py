"""Languages (LC) templates: Portuguese vocabulary and grammar, English and Spanish words in
context."""

from __future__ import annotations

import numpy as np

from demo import facts
from demo.question_core import (
    Draft,
    fact_draft,
)


def lc_synonym(rng: np.random.Generator, row: int) -> Draft:
    sentence, word, correct, wrong = facts.SYNONYMS[row]
    stem = {
        "pt": f'Na frase "{sentence}", a expressão "{word}" pode ser substituída, sem alteração '
        "de sentido, por:",
        "en": f'In the Portuguese sentence "{sentence}", the expression "{word}" can be replaced, '
        "without a change in meaning, by:",
    }
    return fact_draft("lc_synonym", {"row": row}, stem, [correct, *wrong], [correct, *wrong])


def lc_antonym(rng: np.random.Generator, row: int) -> Draft:
    sentence, word, correct, wrong = facts.ANTONYMS[row]
    stem = {
        "pt": f'Na frase "{sentence}", qual palavra tem sentido oposto ao de "{word}"?',
        "en": f'In the Portuguese sentence "{sentence}", which word has the opposite meaning of '
              f'"{word}"?',
    }
    return fact_draft("lc_antonym", {"row": row}, stem, [correct, *wrong], [correct, *wrong])


def lc_word_class(rng: np.random.Generator, row: int) -> Draft:
    sentence, word, cls = facts.WORD_CLASS[row]
    order = [cls] + [int(i) for i in rng.permutation(5) if i != cls]
    stem = {
        "pt": f'Na frase "{sentence}", a palavra "{word}" pertence a qual classe gramatical?',
        "en": f'In the Portuguese sentence "{sentence}", the word "{word}" belongs to which word '
              'class?',
    }
    return fact_draft(
        "lc_word_class",
        {"row": row},
        stem,
        [facts.WORD_CLASSES_PT[i] for i in order],
        [facts.WORD_CLASSES_EN[i] for i in order],
    )


def lc_plural(rng: np.random.Generator, row: int) -> Draft:
    singular, plural, wrong = facts.PLURALS[row]
    stem = {
        "pt": f'Segundo a norma-padrão, qual é o plural de "{singular}"?',
        "en": f'According to standard Portuguese, what is the plural of "{singular}"?',
    }
    return fact_draft("lc_plural", {"row": row}, stem, [plural, *wrong], [plural, *wrong])


def lc_english(rng: np.random.Generator, row: int) -> Draft:
    sentence, word, pt, en = facts.ENGLISH_WORDS[row]
    stem = {
        "pt": f'Na frase em inglês "{sentence}", a palavra "{word}" tem o sentido de:',
        "en": f'In the sentence "{sentence}", the word "{word}" has the same meaning as:',
    }
    return fact_draft("lc_english", {"row": row}, stem, pt, en)


def lc_spanish(rng: np.random.Generator, row: int) -> Draft:
    sentence, word, pt, en = facts.SPANISH_WORDS[row]
    stem = {
        "pt": f'Na frase em espanhol "{sentence}", a palavra "{word}" significa:',
        "en": f'In the Spanish sentence "{sentence}", the word "{word}" means:',
    }
    return fact_draft("lc_spanish", {"row": row}, stem, pt, en)
