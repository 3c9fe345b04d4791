"""Prompt text (exact strings), shot selection, option shuffles, the random baseline."""

from __future__ import annotations

import numpy as np
import pytest

from inference.backends import make_scorer
from inference.prompts import (
    build_prompt_parts,
    build_request,
    choose_shot_examples,
    render_prompt,
)
from inference.questions import Question
from inference.shuffles import (
    apply_permutation,
    displayed_key,
    option_permutations,
    to_original_choices,
    to_original_letter,
    to_original_probs,
)

EN_HEAD = (
    "Here are some questions from a college entrance exam. Choose the correct answer to the best "
    "of your ability, and output in the following format:\nAnswer: (Option)\n\n"
)
PT_HEAD = (
    "A seguir estão algumas questões de um exame de admissão ao ensino superior. Escolha a "
    "alternativa correta da melhor forma possível e responda no seguinte formato:\n"
    "Resposta: (Alternativa)\n\n"
)


def q(area="MT", language="en", stem="What is 2 + 3?", options=("4", "5", "6", "7", "8"),
      key="B", year=2022, item_id=1, **kw) -> Question:
    return Question(year=year, area=area, language=language, stem=stem, options=options,
                    key=key, annulled=key is None, item_id=item_id, source="test", **kw)


def candidates(language="en"):
    """2021 items: two per area with difficulties; the easiest of each area is 'easy <area>'."""
    items, bs = [], []
    for n, area in enumerate(("CN", "CH", "LC", "MT")):
        for hard in (False, True):
            items.append(q(area=area, language=language, year=2021, item_id=100 + 2 * n + hard,
                           stem=f"{'hard' if hard else 'easy'} {area}",
                           options=tuple(f"{area}{i}" for i in range(5)), key="ABCDE"[n]))
            bs.append(1.5 if hard else -1.0 - n / 10)
    return items, bs


def test_zero_shot_exact_english_and_portuguese():
    assert render_prompt(q()) == (
        EN_HEAD + "Question: What is 2 + 3?\nOptions:\n(A) 4\n(B) 5\n(C) 6\n(D) 7\n(E) 8\n"
        "Answer: ("
    )
    pt = q(language="pt", stem="  Quanto é 2 + 3?\n ", options=("4", " 5", "6", "7", "oito"))
    assert render_prompt(pt) == (
        PT_HEAD + "Questão: Quanto é 2 + 3?\nAlternativas:\n(A) 4\n(B) 5\n(C) 6\n(D) 7\n"
        "(E) oito\nResposta: ("
    )


def test_one_shot_exact_english_and_portuguese():
    items, bs = candidates()
    shots = choose_shot_examples(items, bs, "CH", 1, before_year=2022)
    assert [s.stem for s in shots] == ["easy CH"]
    assert render_prompt(q(), shots) == (
        EN_HEAD
        + "Question: easy CH\nOptions:\n(A) CH0\n(B) CH1\n(C) CH2\n(D) CH3\n(E) CH4\nAnswer: (B)"
        + "\n\n"
        + "Question: What is 2 + 3?\nOptions:\n(A) 4\n(B) 5\n(C) 6\n(D) 7\n(E) 8\nAnswer: ("
    )
    pt_items, bs = candidates("pt")
    shots = choose_shot_examples(pt_items, bs, "MT", 1, language="pt")
    assert render_prompt(q(language="pt", stem="Quanto é 2 + 3?"), shots) == (
        PT_HEAD
        + "Questão: easy MT\nAlternativas:\n(A) MT0\n(B) MT1\n(C) MT2\n(D) MT3\n(E) MT4\n"
        + "Resposta: (D)\n\n"
        + "Questão: Quanto é 2 + 3?\nAlternativas:\n(A) 4\n(B) 5\n(C) 6\n(D) 7\n(E) 8\n"
        + "Resposta: ("
    )


def test_four_shot_exact_and_keys_on_four_letters():
    items, bs = candidates()
    shots = choose_shot_examples(items, bs, "MT", 4, seed=0)
    assert [s.stem for s in shots] == ["easy CN", "easy CH", "easy LC", "easy MT"]
    keys = [s.key for s in shots]
    assert len(set(keys)) == 4
    assert keys == ["E", "A", "D", "C"]  # golden: fixed by seed 0
    for shot, original in zip(shots, [items[0], items[2], items[4], items[6]], strict=True):
        assert sorted(shot.options) == sorted(original.options)
        assert shot.options[shot.key_index] == original.options[original.key_index]
    assert shots[0].options == ("CN2", "CN3", "CN1", "CN4", "CN0")  # golden permutation
    # the same seed gives the same prefix for every area; another seed moves the keys
    assert choose_shot_examples(items, bs, "CN", 4, seed=0) == shots
    assert any(
        [s.key for s in choose_shot_examples(items, bs, "MT", 4, seed=s)] != keys
        for s in range(1, 5)
    )
    blocks = "".join(
        f"Question: {s.stem}\nOptions:\n"
        + "".join(f"({L}) {o}\n" for L, o in zip("ABCDE", s.options, strict=True))
        + f"Answer: ({s.key})\n\n"
        for s in shots
    )
    assert render_prompt(q(), shots) == (
        EN_HEAD + blocks
        + "Question: What is 2 + 3?\nOptions:\n(A) 4\n(B) 5\n(C) 6\n(D) 7\n(E) 8\nAnswer: ("
    )


def test_shot_selection_rules():
    items, bs = candidates()
    assert choose_shot_examples(items, bs, "CN", 0) == []
    # NaN (abandoned) and annulled candidates are skipped; ties break by year then uid
    bs2 = list(bs)
    bs2[0] = float("nan")
    assert choose_shot_examples(items, bs2, "CN", 1)[0].stem == "hard CN"
    annulled = q(area="CN", year=2020, item_id=7, key=None, stem="annulled")
    tie = q(area="CN", year=2020, item_id=8, stem="older tie", key="A")
    got = choose_shot_examples([*items, annulled, tie], [*bs, -9.0, -1.0], "CN", 1)
    assert got[0].stem == "older tie"
    with pytest.raises(ValueError, match="no usable shot candidate for area"):
        choose_shot_examples(items, bs, "CN", 1, before_year=2021)
    with pytest.raises(ValueError, match="shots must be one of"):
        choose_shot_examples(items, bs, "CN", 2)
    with pytest.raises(ValueError, match="candidates but"):
        choose_shot_examples(items, bs[:-1], "CN", 1)
    with pytest.raises(ValueError, match="is in 'en'"):
        render_prompt(q(language="pt"), choose_shot_examples(items, bs, "MT", 1))


def test_prompt_parts_split():
    items, bs = candidates()
    shots = choose_shot_examples(items, bs, "MT", 4)
    parts = build_prompt_parts(q(), shots)
    assert parts.prefix.startswith(EN_HEAD) and parts.prefix.endswith("Answer: (C)\n\n")
    assert parts.stem == "Question: What is 2 + 3?\nOptions:\n"
    assert parts.options_block == "(A) 4\n(B) 5\n(C) 6\n(D) 7\n(E) 8\n"
    assert parts.suffix == "Answer: ("
    assert parts.text == render_prompt(q(), shots)


# --------------------------------------------------------------------------- shuffles


def test_option_permutations_deterministic_distinct_identity_first():
    perms = option_permutations(30, seed=7, item_key="item:123")
    assert perms.shape == (30, 5) and perms.dtype == np.int64
    assert (perms[0] == np.arange(5)).all()
    assert len({tuple(p) for p in perms}) == 30
    assert all(sorted(p) == [0, 1, 2, 3, 4] for p in perms.tolist())
    assert (option_permutations(30, seed=7, item_key="item:123") == perms).all()
    assert not (option_permutations(30, seed=7, item_key="item:124") == perms).all()
    assert not (option_permutations(30, seed=8, item_key="item:123") == perms).all()
    assert option_permutations(120, seed=1, item_key=5).shape == (120, 5)
    assert option_permutations(3, 1, "x", identity_first=False)[0].tolist() == [3, 0, 1, 4, 2]
    free = option_permutations(200, seed=1, item_key="x", distinct=False)
    assert free.shape == (200, 5) and (free[0] == np.arange(5)).all()
    with pytest.raises(ValueError):
        option_permutations(121)


def test_mapping_back_to_original_letters():
    options = ("zero", "one", "two", "three", "four")
    perm = np.array([3, 0, 4, 1, 2])
    shown = apply_permutation(options, perm)
    assert shown == ("three", "zero", "four", "one", "two")
    assert displayed_key("B", perm) == "D"  # original B ("one") is shown under D
    assert to_original_letter("D", perm) == "B" and to_original_letter(0, perm) == "D"
    probs = np.array([0.1, 0.2, 0.3, 0.15, 0.25])  # displayed order
    original = to_original_probs(probs, perm)
    assert original[3] == 0.1 and original[0] == 0.2 and original[4] == 0.3
    assert original[1] == 0.15 and original[2] == 0.25
    # an oracle that always picks the option whose text is the key's text
    perms = option_permutations(30, seed=3, item_key="oracle")
    chosen = np.array([list(apply_permutation(options, p)).index("one") for p in perms])
    assert (to_original_choices(chosen, perms) == 1).all()
    assert to_original_choices(np.array([-1, 0]), perms[:2]).tolist() == [-1, perms[1][0]]
    stacked = to_original_probs(np.tile(probs, (30, 1)), perms)
    assert np.allclose(stacked.sum(axis=1), 1)
    assert all(stacked[i, perms[i][0]] == 0.1 for i in range(30))


def test_build_request_matches_rendered_prompts():
    items, bs = candidates()
    shots = choose_shot_examples(items, bs, "MT", 4)
    question = q()
    perms = option_permutations(30, seed=0, item_key=question.uid)
    req = build_request(question, shots, perms, seed=4)
    assert req.key == "item:1" and req.n_shuffles == 30 and req.seed == 4
    for s in (0, 7, 29):
        assert req.prompt(s) == render_prompt(question, shots, apply_permutation(question.options,
                                                                                 perms[s]))
    assert req.prompt(0) == render_prompt(question, shots)


# --------------------------------------------------------------------------- random baseline


def test_random_baseline_is_deterministic_and_uniform():
    items, _bs = candidates()
    reqs = [
        build_request(item, [], option_permutations(30, 0, item.uid)) for item in items
    ]
    scorer = make_scorer("random", seed=11)
    first = scorer.score(reqs)
    again = make_scorer("random", seed=11).score(list(reversed(reqs)))[::-1]
    for a, b in zip(first, again, strict=True):
        assert (a.choice == b.choice).all()
        assert (a.probs[np.arange(30), a.choice] == 1).all() and (a.probs.sum(axis=1) == 1).all()
        assert np.isnan(a.letter_mass).all()
    other = make_scorer("random", seed=12).score(reqs)
    assert any((a.choice != b.choice).any() for a, b in zip(first, other, strict=True))
    many = make_scorer("random").score(
        [build_request(q(item_id=i), [], np.tile(np.arange(5), (30, 1))) for i in range(200)]
    )
    counts = np.bincount(np.concatenate([m.choice for m in many]), minlength=5)
    assert counts.min() > 0.17 * 6000 and counts.max() < 0.23 * 6000
    with pytest.raises(ValueError, match="unknown backend"):
        make_scorer("nope")
