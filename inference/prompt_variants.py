"""Named prompt variants: the instruction a run opens with, and how its question ends.

A variant rewrites only the instruction at the head of the prompt (and, for chain of thought,
the words after the options); the solved examples, the questions and the options block are the
base prompt's (``inference.prompts``). Every variant exists in each prompt language and is a
pure function of the language's template, so a run that names a variant is reproducible from
its name alone; its exact text is still stored with the run (``variant_texts``), and the Runs
page shows it.

Three kinds, after the seeds:

- **perturbation** (PATCH, its 10 small perturbations of one base system prompt: a lowercased
  heading, reordered unordered bullets, …): :data:`PATCH_PERTURBATIONS`, mechanical edits of
  the base instruction's three parts (heading sentence, task sentence, answer format line) that
  keep its meaning: case, line breaks, bullets, numbering, order.
- **alternative** (Khayyam's prompts 0/1/2, differently worded instructions asking the same
  thing): two wordings written for this project.
- **chain of thought** (Khayyam's reasoning prompt): the model is asked to reason before it
  answers, and the question ends with an invitation to reason instead of ``Answer: (``. Only
  the ``generate`` answer method can read such an answer; its letter is the *last* answer the
  text gives (``inference.answer_methods.parse_letter`` with ``reasoning=True``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from inference.protocol import PROMPT_LANGUAGES

#: The paper's prompt, unchanged: every run made before variants existed used it.
BASE_VARIANT = "base"
#: Tokens a chain-of-thought answer may take when the run sets none (the letter comes last).
REASONING_MAX_NEW_TOKENS = 512


@dataclass(frozen=True)
class InstructionParts:
    """The base instruction of one language, cut where the perturbations act: ``heading`` (what
    follows: questions from an entrance exam), ``task`` (choose the right option, answer in this
    format:) and ``answer_format`` (``Answer: (Option)``). The base instruction is
    ``f"{heading} {task}\\n{answer_format}"``."""

    heading: str
    task: str
    answer_format: str
    reasoning_task: str
    reasoning_cue: str
    student: str
    terse: str


#: Each prompt language's instruction parts. The base wording is the paper's (English) and the
#: project's own translation (Portuguese); the alternative and reasoning wordings are the
#: project's own.
INSTRUCTION_PARTS: dict[str, InstructionParts] = {
    "en": InstructionParts(
        heading="Here are some questions from a college entrance exam.",
        task=("Choose the correct answer to the best of your ability, and output in the "
              "following format:"),
        answer_format="Answer: (Option)",
        reasoning_task=("Reason about each question step by step, and end with the final "
                        "answer in the following format:"),
        reasoning_cue="Let's think step by step.",
        student=("You are a student sitting Brazil's national high-school exam. Read each "
                 "question, pick the one option you believe is right and reply in the "
                 "following format:"),
        terse="Multiple-choice questions follow. Reply with the letter of the right option:",
    ),
    "pt": InstructionParts(
        heading=("A seguir estão algumas questões de um exame de admissão ao ensino "
                 "superior."),
        task=("Escolha a alternativa correta da melhor forma possível e responda no seguinte "
              "formato:"),
        answer_format="Resposta: (Alternativa)",
        reasoning_task=("Raciocine passo a passo sobre cada questão e termine com a resposta "
                        "final no seguinte formato:"),
        reasoning_cue="Vamos pensar passo a passo.",
        student=("Você é um estudante fazendo o Exame Nacional do Ensino Médio. Leia cada "
                 "questão, escolha a única alternativa que considera correta e responda no "
                 "seguinte formato:"),
        terse="Seguem questões de múltipla escolha. Responda com a letra da alternativa certa:",
    ),
}


def _base(p: InstructionParts) -> str:
    return f"{p.heading} {p.task}\n{p.answer_format}"


def _lowered_first(text: str) -> str:
    return text[:1].lower() + text[1:]


@dataclass(frozen=True)
class PromptVariant:
    """One named variant: its ``kind`` (base, perturbation, alternative, chain of thought), what
    it changes (``about``), how it writes the instruction from a language's parts, and whether
    the question ends in a cue to reason (``reasoning``) instead of the answer label."""

    name: str
    kind: str
    about: str
    write: Callable[[InstructionParts], str]
    reasoning: bool = False

    def instruction(self, language: str) -> str:
        """The instruction text in ``language`` ("pt" or "en")."""
        return self.write(parts(language))


def parts(language: str) -> InstructionParts:
    """The instruction parts of ``language`` (ValueError for a language without a template)."""
    try:
        return INSTRUCTION_PARTS[language]
    except KeyError:
        raise ValueError(f"no prompt template for language {language!r}") from None


BASE = PromptVariant(BASE_VARIANT, "base", "the paper's prompt", _base)

#: PATCH's recipe: ten small perturbations of the base prompt, each keeping its meaning.
PATCH_PERTURBATIONS: tuple[PromptVariant, ...] = (
    PromptVariant("lowercase-heading", "perturbation", "the heading sentence lower-cased",
                  lambda p: f"{_lowered_first(p.heading)} {p.task}\n{p.answer_format}"),
    PromptVariant("uppercase-heading", "perturbation", "the heading sentence in capitals",
                  lambda p: f"{p.heading.upper()} {p.task}\n{p.answer_format}"),
    PromptVariant("heading-apart", "perturbation", "a blank line after the heading sentence",
                  lambda p: f"{p.heading}\n\n{p.task}\n{p.answer_format}"),
    PromptVariant("markdown-heading", "perturbation", "the heading as a Markdown title",
                  lambda p: f"# {p.heading}\n{p.task}\n{p.answer_format}"),
    PromptVariant("bullets", "perturbation", "the two sentences as bullet points",
                  lambda p: f"- {p.heading}\n- {p.task}\n{p.answer_format}"),
    PromptVariant("bullets-reordered", "perturbation",
                  "the bullet points in the other order",
                  lambda p: f"- {p.task}\n  {p.answer_format}\n- {p.heading}"),
    PromptVariant("numbered", "perturbation", "the two sentences as a numbered list",
                  lambda p: f"1. {p.heading}\n2. {p.task}\n{p.answer_format}"),
    PromptVariant("sentences-reordered", "perturbation", "the task before the heading",
                  lambda p: f"{p.task}\n{p.answer_format}\n{p.heading}"),
    PromptVariant("heading-unpunctuated", "perturbation",
                  "the heading's full stop replaced by a line break",
                  lambda p: f"{p.heading.rstrip('.')}\n{p.task}\n{p.answer_format}"),
    PromptVariant("double-spaced", "perturbation",
                  "two spaces between sentences, a blank line before the format",
                  lambda p: f"{p.heading}  {p.task}\n\n{p.answer_format}"),
)

#: Khayyam-style alternatives: the same request in other words.
ALTERNATIVES: tuple[PromptVariant, ...] = (
    PromptVariant("alternative-student", "alternative",
                  "another wording: the model is told it sits the exam as a student",
                  lambda p: f"{p.student}\n{p.answer_format}"),
    PromptVariant("alternative-terse", "alternative", "another wording: one short sentence",
                  lambda p: f"{p.terse}\n{p.answer_format}"),
)

CHAIN_OF_THOUGHT = PromptVariant(
    "chain-of-thought", "chain of thought",
    "reason step by step, then give the answer (generate answer method only)",
    lambda p: f"{p.heading} {p.reasoning_task}\n{p.answer_format}", reasoning=True)

#: Every variant, by name, in the order they are offered.
VARIANTS: dict[str, PromptVariant] = {
    v.name: v for v in (BASE, *PATCH_PERTURBATIONS, *ALTERNATIVES, CHAIN_OF_THOUGHT)}

#: Names that stand for several variants (``--prompt-variants patch``).
VARIANT_SETS: dict[str, tuple[str, ...]] = {
    "patch": (BASE_VARIANT, *(v.name for v in PATCH_PERTURBATIONS)),
    "alternatives": (BASE_VARIANT, *(v.name for v in ALTERNATIVES)),
}


def variant(name: str) -> PromptVariant:
    """The variant called ``name`` (ValueError naming the known ones)."""
    try:
        return VARIANTS[name]
    except KeyError:
        raise ValueError(f"unknown prompt variant {name!r}; expected one of "
                         f"{', '.join(VARIANTS)} (or a set: {', '.join(VARIANT_SETS)})") from None


def expand_variant_names(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """``names`` with each set name (:data:`VARIANT_SETS`) replaced by its variants, checked,
    duplicates dropped, order kept."""
    out: list[str] = []
    for name in names:
        for each in VARIANT_SETS.get(name, (name,)):
            variant(each)
            if each not in out:
                out.append(each)
    return tuple(out)


def variant_texts(name: str, languages: tuple[str, ...] = PROMPT_LANGUAGES) -> dict[str, object]:
    """What a run stores about its variant: name, kind, about, and per language the
    instruction and the words its question ends with (the text the Runs page shows)."""
    chosen = variant(name)
    return {"name": chosen.name, "kind": chosen.kind, "about": chosen.about,
            "reasoning": chosen.reasoning,
            "instructions": {language: chosen.instruction(language) for language in languages}}
