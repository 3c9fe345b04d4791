"""Prompts exactly as the paper administers ENEM to a model (docs/methods.md, "Administering
an exam to a model").

Layout of a k-shot prompt (English; ``\\n`` are newlines, blocks are separated by a blank line;
``← k``: the solved example is repeated k times)::

    Here are some questions from a college entrance exam. Choose the correct answer to the best
    of your ability, and output in the following format:\\nAnswer: (Option)\\n\\n
    Question: {shot stem}\\nOptions:\\n(A) …\\n(B) …\\n(C) …\\n(D) …\\n(E) …\\nAnswer: (C)\\n\\n ← k
    Question: {stem}\\nOptions:\\n(A) …\\n(B) …\\n(C) …\\n(D) …\\n(E) …\\nAnswer: (

Portuguese uses its own instruction (written for this project) and the labels ``Questão:``,
``Alternativas:`` and ``Resposta:``. A run's prompt variant (``inference.prompt_variants``)
replaces the instruction, and a chain-of-thought variant the final ``Answer: (`` by its cue to
reason; the default is the paper's instruction above. Stems and options are used with outer
whitespace stripped. The prompt is plain completion text; it ends with ``(`` so the next token is
the letter.

:class:`PromptParts` splits the text into ``prefix`` (instruction + solved examples: shared by
every item of a run), ``stem`` (``Question: …\\nOptions:\\n``: shared by all shuffles of an item),
``options_block`` (``(A) …\\n`` × 5: the only part that differs between shuffles) and ``suffix``
(``Answer: (``). The full prompt is always ``prefix + stem + options_block + suffix``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from enem.areas import AREAS
from enem.areas import OPTION_LETTERS as LETTERS
from inference.backends.base import ScoreRequest
from inference.prompt_variants import BASE, BASE_VARIANT, parts, variant
from inference.protocol import SHOT_SETTINGS
from inference.questions import Question
from inference.shuffles import apply_permutation, item_rng, key_permutation, stable_hash


@dataclass(frozen=True)
class PromptTemplate:
    """The words of one prompt language."""

    language: str
    instruction: str
    question_label: str
    options_label: str
    answer_label: str


TEMPLATES: dict[str, PromptTemplate] = {
    "en": PromptTemplate(
        language="en",
        instruction=BASE.instruction("en"),
        question_label="Question:",
        options_label="Options:",
        answer_label="Answer:",
    ),
    "pt": PromptTemplate(
        language="pt",
        instruction=BASE.instruction("pt"),
        question_label="Questão:",
        options_label="Alternativas:",
        answer_label="Resposta:",
    ),
}


def template(language: str) -> PromptTemplate:
    """The template of ``language`` ("pt" or "en")."""
    try:
        return TEMPLATES[language]
    except KeyError:
        raise ValueError(f"no prompt template for language {language!r}") from None


@dataclass(frozen=True)
class PromptParts:
    """A prompt split at the boundaries the KV-cache reuse exploits (see module docstring)."""

    prefix: str
    stem: str
    options_block: str
    suffix: str

    @property
    def text(self) -> str:
        """The exact full prompt."""
        return self.prefix + self.stem + self.options_block + self.suffix


def render_options_block(options: Sequence[str]) -> str:
    """``(A) opt\\n(B) opt\\n…(E) opt\\n`` for five options in displayed order."""
    if len(options) != len(LETTERS):
        raise ValueError(f"expected 5 options, got {len(options)}")
    return "".join(f"({letter}) {option.strip()}\n"
                   for letter, option in zip(LETTERS, options, strict=True))


def render_stem(stem: str, language: str) -> str:
    """``Question: {stem}\\nOptions:\\n`` in ``language``."""
    t = template(language)
    return f"{t.question_label} {stem.strip()}\n{t.options_label}\n"


def render_suffix(language: str, prompt_variant: str = BASE_VARIANT) -> str:
    """``Answer: (`` in ``language`` (the next token is the letter), or, for a chain-of-thought
    ``prompt_variant``, its cue to reason (``inference.prompt_variants``)."""
    if variant(prompt_variant).reasoning:
        return parts(language).reasoning_cue
    return f"{template(language).answer_label} ("


def render_shot(shot: Question, language: str) -> str:
    """A solved example: question block + ``Answer: (K)`` (no trailing newline)."""
    if shot.key is None:
        raise ValueError(f"an annulled item cannot be a solved example: {shot.uid}")
    return (
        render_stem(shot.stem, language)
        + render_options_block(shot.options)
        + f"{render_suffix(language)}{shot.key})"
    )


def build_prefix(shots: Sequence[Question], language: str,
                 prompt_variant: str = BASE_VARIANT) -> str:
    """Instruction (of ``prompt_variant``) + solved examples, each followed by a blank line."""
    for shot in shots:
        if shot.language != language:
            raise ValueError(
                f"shot {shot.uid} is in {shot.language!r}, the prompt is in {language!r}"
            )
    blocks = [variant(prompt_variant).instruction(language)] + [render_shot(s, language)
                                                                for s in shots]
    return "\n\n".join(blocks) + "\n\n"


def build_prompt_parts(
    question: Question,
    shots: Sequence[Question] = (),
    options: Sequence[str] | None = None,
    prompt_variant: str = BASE_VARIANT,
) -> PromptParts:
    """The prompt of ``question`` in its language with ``shots`` as solved examples, under the
    named ``prompt_variant`` (``inference.prompt_variants``; the paper's prompt by default).

    ``options`` are the options in displayed order (default: the original order).
    """
    language = question.language
    return PromptParts(
        prefix=build_prefix(shots, language, prompt_variant),
        stem=render_stem(question.stem, language),
        options_block=render_options_block(question.options if options is None else options),
        suffix=render_suffix(language, prompt_variant),
    )


def render_prompt(
    question: Question,
    shots: Sequence[Question] = (),
    options: Sequence[str] | None = None,
    prompt_variant: str = BASE_VARIANT,
) -> str:
    """The exact full prompt text (what the UI and CLI show)."""
    return build_prompt_parts(question, shots, options, prompt_variant).text


def build_request(
    question: Question,
    shots: Sequence[Question],
    permutations: np.ndarray,
    *,
    key: str | None = None,
    seed: int = 0,
    prompt_variant: str = BASE_VARIANT,
) -> ScoreRequest:
    """A backend request for ``question``: one options block per permutation row.

    ``permutations`` has shape (n_shuffles, 5) (see ``inference.shuffles``); ``key`` defaults to
    ``question.uid``. Under a chain-of-thought ``prompt_variant`` the request's ``meta`` says
    ``reasoning``: the generated answer's letter is its last one.
    """
    prompt = build_prompt_parts(question, shots, prompt_variant=prompt_variant)
    shown = tuple(apply_permutation(question.options, perm) for perm in permutations)
    blocks = tuple(render_options_block(options) for options in shown)
    return ScoreRequest(
        key=question.uid if key is None else key,
        prefix=prompt.prefix,
        stem=prompt.stem,
        option_blocks=blocks,
        suffix=prompt.suffix,
        seed=seed,
        # The displayed options, for answer methods that score or read the options' text.
        meta={"options": shown, "reasoning": variant(prompt_variant).reasoning},
    )


def choose_shot_examples(
    candidates: Sequence[Question],
    difficulties: Sequence[float],
    area: str,
    shots: int,
    seed: int = 0,
    *,
    before_year: int | None = None,
    language: str | None = None,
    area_order: Sequence[str] = AREAS,
) -> list[Question]:
    """The solved examples of a k-shot prompt, as the paper chooses them.

    ``candidates`` are questions of another exam (the caller passes the items of the exam
    ``inference.plan.shot_exam`` chooses, 2021 as in the paper when the store has it;
    ``before_year`` additionally drops candidates of that year or later) with their IRT
    difficulties ``difficulties`` (b, same length; NaN = abandoned, skipped). Annulled candidates
    and, when ``language`` is given, other languages are skipped. Ties in b are broken by
    (year, uid) so the choice is deterministic.

    * 0 shots: [].
    * 1 shot: the easiest (lowest b) candidate of ``area``, options in original order.
    * 4 shots: the easiest candidate of each area, in ``area_order``; options are permuted so
      the four keys fall on four different letters. The letters and permutations depend only on
      ``seed``, so every item of a run shares one prefix.
    """
    if shots not in SHOT_SETTINGS:
        raise ValueError(f"shots must be one of {SHOT_SETTINGS}, got {shots}")
    if len(candidates) != len(difficulties):
        raise ValueError(
            f"{len(candidates)} candidates but {len(difficulties)} difficulties"
        )
    if shots == 0:
        return []
    easiest: dict[str, tuple[float, int, str, Question]] = {}
    for q, b in zip(candidates, difficulties, strict=True):
        b = float(b)
        if math.isnan(b) or q.annulled or q.key is None:
            continue
        if before_year is not None and q.year >= before_year:
            continue
        if language is not None and q.language != language:
            continue
        rank = (b, q.year, q.uid, q)
        if q.area not in easiest or rank[:3] < easiest[q.area][:3]:
            easiest[q.area] = rank
    wanted = [area.upper()] if shots == 1 else [a.upper() for a in area_order]
    missing = [a for a in wanted if a not in easiest]
    if missing:
        raise ValueError(f"no usable shot candidate for area(s) {', '.join(missing)}")
    chosen = [easiest[a][3] for a in wanted]
    if shots == 1:
        return chosen
    rng = item_rng(seed, "4-shot", stable_hash("keys"))
    targets = rng.permutation(len(LETTERS))[: len(chosen)]
    out = []
    for q, target in zip(chosen, targets, strict=True):
        key_index = q.key_index
        assert key_index is not None  # candidates without a key were skipped above
        perm = key_permutation(key_index, int(target), rng)
        out.append(
            dataclasses.replace(
                q, options=apply_permutation(q.options, perm), key=LETTERS[int(target)]
            )
        )
    return out
