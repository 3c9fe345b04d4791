"""The transformers backend's other two answer methods (see ``inference.answer_methods``).

:class:`FullAnswerScorer` (``full-answer-prob``). For shuffle s and displayed letter d the scored
text is ``prompt(s) + continuation(d, option)``, tokenised as one string (exactly as the
letter scorer tokenises its prompts). Its *continuation tokens* are those after its longest
common token prefix with the tokenised prompt alone (a merge across the boundary moves it back
a token). The score of d is the mean log-probability of its continuation tokens; ``probs`` are
the softmax of the five scores (so the argmax is the option with the highest mean) and
``letter_mass`` is NaN. The shared part is computed once per item: the run's prefix from the
prefix cache, then the tokens every shuffle and option of the item share (the stem) in one
forward; then each shuffle's own tokens before its continuations (its options block and the
suffix) once per shuffle, and on top of those the five continuations, rows batched. The
forwards, caches and padding are :mod:`inference.backends.transformers.kv_reuse`'s, as the letter
scorer's.

:class:`GenerateScorer` (``generate``). Each shuffle's prompt is completed by sampling
``max_new_tokens`` tokens at ``temperature`` (greedy at 0) with the seed
``inference.answer_methods.sampling_seed`` draws from (request seed, request key,
shuffle), one prompt at a time, so a completion
depends on nothing else in the batch. The letter is parsed from the completion
(``inference.answer_methods.parse_letter``); ``probs`` are one-hot on it, or uniform with
``choice = NO_CHOICE`` when it is unparsed. The completions are kept in ``ItemScores.texts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from enem.areas import OPTION_LETTERS
from inference.answer_methods import (
    DEFAULT_ANSWER_METHOD,
    DEFAULT_MAX_NEW_TOKENS,
    DEFAULT_TEMPERATURE,
    check_method,
    continuation,
    sampling_seed,
)
from inference.backends.base import (
    ItemScores,
    LetterScores,
    ScoreRequest,
    ScoringError,
    displayed_options,
)
from inference.backends.transformers.kv_reuse import (
    KV,
    Row,
    Segment,
    common_prefix_length,
    left_pad,
    prefix_reuse,
    stem_end,
)
from inference.backends.transformers.scorer import TransformersScorer


def transformers_scorer(model: str, *, answer_method: str = DEFAULT_ANSWER_METHOD,
                        **options: Any) -> TransformersScorer:
    """The transformers backend for one answer method (the registry's entry): the letter scorer
    (``letter-prob``), :class:`FullAnswerScorer` or :class:`GenerateScorer`, with
    ``options`` (``temperature`` and ``max_new_tokens`` for ``generate`` only)."""
    scorers = {"letter-prob": LetterProbScorer, "full-answer-prob": FullAnswerScorer,
               "generate": GenerateScorer}
    sampling = {"temperature", "max_new_tokens"} & set(options)
    if sampling and check_method(answer_method) != "generate":
        raise ValueError(f"{', '.join(sorted(sampling))} apply to the generate answer method "
                         f"only, not {answer_method}")
    return scorers[check_method(answer_method)](model, **options)


class LetterProbScorer(TransformersScorer):
    """``letter-prob`` (:class:`TransformersScorer`), its run record naming the method."""

    answer_method = "letter-prob"

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "answer_method": self.answer_method}


class FullAnswerScorer(TransformersScorer):
    """``full-answer-prob`` on a local causal LM; the options of :class:`TransformersScorer`."""

    answer_method = "full-answer-prob"

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "answer_method": self.answer_method}

    def score(self, requests: Sequence[ScoreRequest]) -> LetterScores:
        """Full-answer scores of every shuffle; ``mode='plain'`` runs every (shuffle, option)
        text in its own full forward pass (the baseline) instead of reusing the shared part."""
        if self.mode == "plain":
            return [self._score_item_plain(req) for req in requests]
        return [self._score_item(i, req) for i, req in enumerate(requests)]

    def texts(self, req: ScoreRequest) -> tuple[list[list[int]], list[int]]:
        """Token ids of every (shuffle, letter) text, shuffle-major (n_shuffles·5,), and where
        each one's continuation tokens start."""
        prompt_texts = self.full_texts(req)[1]
        prompts = self.encode(prompt_texts)
        full, starts = [], []
        for shuffle, row in enumerate(displayed_options(req)):
            texts = [prompt_texts[shuffle] + continuation(letter, option)
                     for letter, option in zip(OPTION_LETTERS, row, strict=True)]
            for ids in self.encode(texts):
                start = max(1, common_prefix_length(prompts[shuffle], ids))
                if start >= len(ids):
                    raise ScoringError(f"{req.key}: an option adds no token to the prompt")
                full.append(ids)
                starts.append(start)
        return full, starts

    @torch.inference_mode()
    def _score_item(self, index: int, req: ScoreRequest) -> ItemScores:
        """Shared path: the prefix (cached), the item's stem once, each shuffle's own tokens
        before its continuations (options block and suffix) once, then the continuations."""
        seqs, starts = self.texts(req)
        self.check_lengths(req.key, seqs)
        prefix_ids = self.prefix_token_ids(self.full_texts(req)[0])
        # Every scored token needs the logits of the token before it from the last forward.
        last = min(starts) - 1
        l1 = prefix_reuse(prefix_ids, seqs, last)
        l2 = stem_end(seqs, l1, last)
        # One item: its stem has no padding, so its cache mask is all ones.
        kv, _ = self.engine.run_stems(self.engine.prefix_kv(prefix_ids),
                                      [Segment(index, req.key, seqs, l1, l2)])
        n_options = len(OPTION_LETTERS)
        shuffles = []
        for shuffle, at in enumerate(range(0, len(seqs), n_options)):
            own = seqs[at:at + n_options]
            shuffles.append(Segment(shuffle, req.key, own, l2,
                                    stem_end(own, l2, min(starts[at:at + n_options]) - 1)))
        means = np.empty(len(seqs))
        per_block = max(1, self.engine.batch_size // n_options)
        for at in range(0, len(shuffles), per_block):
            block = shuffles[at:at + per_block]
            block_kv, block_mask = self.engine.run_stems(kv, block)
            rows = [(b, d) for b in range(len(block)) for d in range(n_options)]
            found = self._continuation_means(block_kv, block_mask, block, rows, starts)
            for (b, d), mean in zip(rows, found, strict=True):
                means[block[b].index * n_options + d] = mean
        return self._item_scores(req, means)

    @torch.inference_mode()
    def _score_item_plain(self, req: ScoreRequest) -> ItemScores:
        """The baseline: each text whole, rows batched with left padding."""
        seqs, starts = self.texts(req)
        self.check_lengths(req.key, seqs)
        means = np.empty(len(seqs))
        for at in range(0, len(seqs), self.engine.batch_size):
            rows = range(at, min(at + self.engine.batch_size, len(seqs)))
            ids, mask, positions = left_pad([seqs[r] for r in rows], self.engine.pad_id)
            width = ids.shape[1]
            logits, _ = self.engine.forward(ids.to(self.device), None, positions.to(self.device),
                                            None, attention_mask=mask.to(self.device))
            for i, r in enumerate(rows):
                shift = width - len(seqs[r])  # token t of the text sits at column shift + t
                logp = torch.log_softmax(
                    logits[i, shift + starts[r] - 1:width - 1].to(torch.float64), dim=-1)
                target = ids[i, shift + starts[r]:].to(logp.device)
                means[r] = float(logp.gather(1, target[:, None]).mean())
        return self._item_scores(req, means)

    def _item_scores(self, req: ScoreRequest, means: np.ndarray) -> ItemScores:
        """Scores of one request from its (n_shuffles·5,) shuffle-major mean log-probabilities."""
        return ItemScores.from_option_scores(
            req.key, means.reshape(req.n_shuffles, len(OPTION_LETTERS)))

    def _continuation_means(self, kv: KV | None, mask: torch.Tensor, block: list[Segment],
                            rows: list[Row], starts: Sequence[int]) -> list[float]:
        """Mean log-probability of the continuation tokens of each row (b, d): text d of
        ``block[b]``, run from its token ``l2`` on top of row b of the block's cache (``kv``: one
        row per block entry, or one shared row; ``mask``: one row per entry), by the engine's
        chunked forwards."""
        n_options = len(OPTION_LETTERS)
        means = []
        for chunk, ids, logits in self.engine.run_tails(kv, mask, block, rows, last_only=False):
            for r, (b, d) in enumerate(chunk):
                item = block[b]
                start = starts[item.index * n_options + d]
                # Tail position j predicts token l2 + j + 1.
                first, end = start - item.l2 - 1, len(item.seqs[d]) - item.l2 - 1
                logp = torch.log_softmax(logits[r, first:end].to(torch.float64), dim=-1)
                target = ids[r, first + 1:end + 1].to(logp.device)
                means.append(float(logp.gather(1, target[:, None]).mean()))
        return means


class GenerateScorer(TransformersScorer):
    """``generate`` on a local causal LM: :class:`TransformersScorer`'s options plus
    ``temperature`` (0 = greedy; the paper used 0.6) and ``max_new_tokens``."""

    answer_method = "generate"

    def __init__(self, model: str, *, temperature: float = DEFAULT_TEMPERATURE,
                 max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
                 **options: Any):
        super().__init__(model, **options)
        if temperature < 0 or max_new_tokens < 1:
            raise ValueError("temperature must be >= 0 and max_new_tokens >= 1")
        self.temperature = float(temperature)
        self.max_new_tokens = int(max_new_tokens)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "answer_method": self.answer_method,
                "temperature": self.temperature, "max_new_tokens": self.max_new_tokens}

    def score(self, requests: Sequence[ScoreRequest]) -> LetterScores:
        return [ItemScores.from_generated(req.key, [
            self.complete(prompt, self.seed_of(req, shuffle))
            for shuffle, prompt in enumerate(self.full_texts(req)[1])],
            bool(req.meta.get("reasoning"))) for req in requests]

    @staticmethod
    def seed_of(req: ScoreRequest, shuffle: int) -> int:
        """The sampling seed of one shuffle (``inference.answer_methods.sampling_seed``)."""
        return sampling_seed(req.seed, req.key, shuffle)

    @torch.inference_mode()
    def complete(self, prompt: str, seed: int) -> str:
        """The completion of ``prompt`` (new tokens only, decoded without special tokens)."""
        ids = torch.tensor([self.encode([prompt])[0]], device=self.device)
        sampling = self.temperature > 0
        torch.manual_seed(seed)
        # transformers' stubs make ``generate`` look like a module attribute (a Tensor).
        generated = self.model.generate(  # type: ignore[operator]
            input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=sampling,
            temperature=self.temperature if sampling else None, top_k=0 if sampling else None,
            top_p=1.0 if sampling else None, max_new_tokens=self.max_new_tokens,
            pad_token_id=self.engine.pad_id)
        return self.tokenizer.decode(generated[0, ids.shape[1]:], skip_special_tokens=True)
