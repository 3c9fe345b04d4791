"""The full-answer and generate answer methods on tiny random models, each against a slow
reference written independently here (one plain forward per option; a token-by-token
generation loop), and the letter patterns of generated answers (Portuguese and English)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from inference.answer_methods import (
    ANSWER_METHODS,
    LETTER_PATTERNS,
    UNPARSED,
    check_method,
    continuation,
    parse_letter,
)
from inference.backends import NO_CHOICE
from inference.prompts import build_request, choose_shot_examples
from inference.questions import Question
from inference.shuffles import option_permutations
from testbed.tiny_model import build_tiny_model
from tests.float_support import picks_a_maximum
from tests.lazy_import_support import lazy_module, lazy_names

# torch and transformers are imported by the first test that uses them, not at collection.
torch = lazy_module("torch")
FullAnswerScorer, GenerateScorer = lazy_names("inference.backends.transformers.answers",
                                              "FullAnswerScorer", "GenerateScorer")

LETTERS = "ABCDE"


def _question(i: int, area: str, language: str = "pt", year: int = 2022) -> Question:
    stems = {"en": f"Item {i}: which gas do plants absorb, and how much ({i} g)?",
             "pt": f"Item {i}: qual gás as plantas absorvem, e quanto ({i} g)?"}
    options = ("Oxygen", "Carbon dioxide", f"Nitrogen {i}", "Helium and neon", "Hydrogen")
    return Question(year=year, area=area, language=language, stem=stems[language],
                    options=options, key=LETTERS[i % 5], annulled=False,
                    item_id=1000 * year + i, source="test")


def _requests(language: str, shots: int, n_items: int = 2, n_shuffles: int = 3):
    pool = [_question(i, a, language, 2021) for i, a in enumerate(("CN", "CH", "LC", "MT"))]
    examples = choose_shot_examples(pool, [0.5, -1.0, 0.2, 0.1], "CN", shots, seed=1)
    items = [_question(10 + i, "CN", language) for i in range(n_items)]
    return [build_request(it, examples, option_permutations(n_shuffles, 0, it.uid), seed=7)
            for it in items]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_answers")
    return {arch: build_tiny_model(root / arch, arch=arch) for arch in ("llama", "gpt2")}


def _reference_means(scorer, request) -> np.ndarray:
    """(n_shuffles, 5): for each shuffle and letter, one forward pass over prompt +
    continuation; the mean log-probability of the tokens the continuation adds."""
    tokenizer, model = scorer.tokenizer, scorer.model
    means = np.empty((request.n_shuffles, 5))
    for s in range(request.n_shuffles):
        prompt = request.prompt(s)
        prompt_ids = tokenizer(prompt)["input_ids"]
        for d, option in enumerate(request.meta["options"][s]):
            ids = tokenizer(prompt + f"{LETTERS[d]}) {option.strip()}")["input_ids"]
            start = 0
            while start < len(prompt_ids) and ids[start] == prompt_ids[start]:
                start += 1
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([ids])).logits[0].double()
            logp = torch.log_softmax(logits, dim=-1)
            means[s, d] = np.mean([float(logp[t - 1, ids[t]]) for t in range(start, len(ids))])
    return means


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
@pytest.mark.parametrize(("language", "shots"), [("pt", 0), ("en", 4)])
def test_full_answer_scores_equal_one_forward_per_option(tiny, arch, language, shots):
    scorer = FullAnswerScorer(str(tiny[arch]), device="cpu", batch_size=4)
    requests = _requests(language, shots)
    results = scorer.score(requests)
    for request, result in zip(requests, results, strict=True):
        expected = _reference_means(scorer, request)
        got = np.log(result.probs)
        # probs are the softmax of the means: equal up to one constant per shuffle.
        np.testing.assert_allclose(got - got[:, :1], expected - expected[:, :1], atol=1e-5)
        # The choice is a best option of the reference, to the precision the means agree to.
        assert picks_a_maximum(expected, result.choice, rel=0.0, atol=2e-5).all()
        assert np.isnan(result.letter_mass).all()
    assert scorer.describe()["answer_method"] == "full-answer-prob"


def test_full_answer_needs_the_displayed_options(tiny):
    scorer = FullAnswerScorer(str(tiny["llama"]), device="cpu")
    request = _requests("pt", 0, n_items=1)[0]
    bare = type(request)(key=request.key, prefix=request.prefix, stem=request.stem,
                         option_blocks=request.option_blocks, suffix=request.suffix)
    with pytest.raises(Exception, match="displayed options"):
        scorer.score([bare])


def _reference_completion(scorer: GenerateScorer, prompt: str, seed: int) -> str:
    """Token by token, one full forward per new token: argmax at temperature 0, else one
    multinomial draw from softmax(logits / T) after seeding torch with ``seed``."""
    ids = scorer.tokenizer(prompt)["input_ids"]
    new: list[int] = []
    torch.manual_seed(seed)
    for _ in range(scorer.max_new_tokens):
        with torch.no_grad():
            logits = scorer.model(input_ids=torch.tensor([ids + new])).logits[0, -1]
        if scorer.temperature == 0:
            token = int(logits.argmax())
        else:
            probs = torch.softmax(logits / scorer.temperature, dim=-1)
            token = int(torch.multinomial(probs[None, :], num_samples=1)[0, 0])
        new.append(token)
        if token == scorer.tokenizer.eos_token_id:
            break
    return scorer.tokenizer.decode(new, skip_special_tokens=True)


@pytest.mark.parametrize("temperature", [0.0, 0.6])
def test_generated_answers_equal_a_token_by_token_reference(tiny, temperature):
    scorer = GenerateScorer(str(tiny["llama"]), device="cpu", temperature=temperature,
                            max_new_tokens=6)
    requests = _requests("pt", 1)
    results = scorer.score(requests)
    for request, result in zip(requests, results, strict=True):
        assert result.texts is not None and len(result.texts) == request.n_shuffles
        for s, text in enumerate(result.texts):
            expected = _reference_completion(scorer, request.prompt(s),
                                             GenerateScorer.seed_of(request, s))
            assert text == expected
            letter = parse_letter(text)
            assert result.choice[s] == (letter if letter != UNPARSED else NO_CHOICE)
    again = scorer.score(requests)
    assert [r.texts for r in again] == [r.texts for r in results]  # seeded: reproducible
    described = scorer.describe()
    assert (described["answer_method"], described["temperature"]) == ("generate", temperature)


def test_an_answer_matching_no_pattern_is_reported_unparsed(tiny, monkeypatch):
    scorer = GenerateScorer(str(tiny["llama"]), device="cpu")
    answers = iter(["Não sei responder.", "Resposta: (D)", "(C) Nitrogen"])
    monkeypatch.setattr(scorer, "complete", lambda prompt, seed: next(answers))
    result = scorer.score(_requests("pt", 0, n_items=1))[0]
    assert result.texts == ("Não sei responder.", "Resposta: (D)", "(C) Nitrogen")
    assert result.choice.tolist() == [NO_CHOICE, 3, 2]
    np.testing.assert_allclose(result.probs[0], np.full(5, 0.2))
    np.testing.assert_array_equal(result.probs[1], np.eye(5)[3])


@pytest.mark.parametrize(("text", "letter"), [
    ("B) Gás carbônico", "B"), ("C", "C"), (" D. porque…", "D"), ("E\nporque", "E"),
    ("Resposta: (B)", "B"), ("Answer: E", "E"), ("A resposta é C.", "C"),
    ("The answer is (A).", "A"), ("A alternativa correta é a D", "D"), ("letra E", "E"),
    ("Option B", "B"), ("Acho que (C) está certa", "C"), ("A alternativa B", "B"),
])
def test_letter_patterns_read_portuguese_and_english_answers(text, letter):
    assert parse_letter(text) == LETTERS.index(letter)


@pytest.mark.parametrize("text", ["a casa", "Não sei", "Alternativas", "", "answer: f",
                                  "A resposta depende"])
def test_texts_without_an_answer_are_unparsed(text):
    assert parse_letter(text) == UNPARSED


def test_patterns_agree_with_a_plain_regex_on_opening_letters():
    plain = re.compile(r"^\s*([A-E])\)")
    for letter in LETTERS:
        text = f"{letter}) something"
        assert parse_letter(text) == LETTERS.index(plain.match(text).group(1))
    assert [name for name, _ in LETTER_PATTERNS] == ["opening letter", "answer label",
                                                     "letter in parentheses"]


def test_methods_and_continuations():
    assert ANSWER_METHODS == ("letter-prob", "full-answer-prob", "generate")
    assert check_method("generate") == "generate"
    with pytest.raises(ValueError, match="letter-prob"):
        check_method("regex")
    assert continuation("B", "  Carbon dioxide ") == "B) Carbon dioxide"


def test_full_answer_with_one_shuffle_scores_every_continuation_token(tiny):
    """With one shuffle the five texts share the whole prompt: the first continuation token
    must still be predicted from the prompt's last position."""
    scorer = FullAnswerScorer(str(tiny["llama"]), device="cpu")
    request = _requests("en", 0, n_items=1, n_shuffles=1)[0]
    got = np.log(scorer.score([request])[0].probs)
    expected = _reference_means(scorer, request)
    np.testing.assert_allclose(got - got[:, :1], expected - expected[:, :1], atol=1e-5)


def test_full_answer_plain_mode_equals_the_shared_one(tiny):
    requests = _requests("pt", 1, n_items=2, n_shuffles=4)
    shared = FullAnswerScorer(str(tiny["llama"]), device="cpu", batch_size=6).score(requests)
    plain_scorer = FullAnswerScorer(str(tiny["llama"]), device="cpu", batch_size=6, mode="plain")
    for a, b, request in zip(shared, plain_scorer.score(requests), requests, strict=True):
        np.testing.assert_allclose(a.probs, b.probs, atol=1e-6)
        expected = _reference_means(plain_scorer, request)
        got = np.log(b.probs)
        np.testing.assert_allclose(got - got[:, :1], expected - expected[:, :1], atol=1e-5)
