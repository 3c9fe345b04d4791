"""Local causal LMs through transformers: letter scoring with KV-cache reuse, and Min-K% Prob.

Letter scoring. The prompt ends with ``(``; the scores are the next-token probabilities of the
letters A–E. Each letter's probability is the sum over all its single-token forms ("A", " A",
…; see :func:`~inference.backends.hf_loading.letter_token_ids`). ``letter_mass`` is the sum over
the five letters before normalising. The raw prompt text is used (completion style, as the
paper); ``chat_template=True`` instead wraps prefix + stem + options as one user message and
puts the suffix (``Answer: (``) at the start of the assistant turn.

Two modes give the same probabilities (up to floating-point noise):

* ``plain``: one forward pass per full prompt, batched across prompts with left padding,
  explicit attention mask and position ids. The baseline.
* ``shared`` (default): every prompt is tokenised as one full string, exactly as in ``plain``.
  The shared parts are then found *on the token ids*: the prefix's key/value cache is computed
  once (per distinct prefix) and reused for the longest common token prefix L1 between the
  tokenised prefix text and every prompt of the item; the item's stem is run once on top of it up
  to L2, the longest common token prefix of all shuffles of the item; only the tails (options
  block + suffix) run per shuffle, batched with right padding (pads come after the real tokens,
  so causality keeps them out), position ids continuing from L2, and logits taken at each row's
  last real token. Because the cached tokens are a prefix of each prompt's own full-string
  tokenisation, a token merge across a text boundary (e.g. "\\n\\n" + "Question" → "\\n", "\\n",
  "Question" in byte-level BPE) cannot make the two modes differ: the boundary simply moves back
  by a token. Cached tensors are never mutated: each forward gets a fresh ``DynamicCache`` built
  from them (``torch.cat`` in the cache makes new tensors).

  Models whose cache is not a plain full-attention ``DynamicCache`` (sliding-window or linear
  attention layers) fall back to ``plain`` with a logged warning.
"""

from __future__ import annotations

import inspect
import logging
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import transformers
from transformers.cache_utils import DynamicCache, DynamicLayer

from inference.backends.base import ItemScores, LetterScores, ScoreRequest, ScoringError
from inference.backends.hf_loading import LoadedModel, letter_token_ids, load_model
from inference.min_k import DEFAULT_K_PERCENT, min_k_from_logprobs

logger = logging.getLogger(__name__)

KV = list[tuple[torch.Tensor, torch.Tensor]]
Mode = Literal["shared", "plain"]


class _NoReuse(Exception):
    """The model's cache cannot be reused across forwards by this backend."""


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token id sequences."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def common_prefix_length_all(seqs: Sequence[Sequence[int]]) -> int:
    """Length of the longest prefix shared by every sequence in ``seqs``."""
    first = seqs[0]
    return min((common_prefix_length(first, s) for s in seqs[1:]), default=len(first))


class TransformersScorer:
    """Letter scorer for a local (or hub) causal LM.

    Options: ``model`` (folder, hub id or ``.gguf`` path), ``gguf_file``, ``device``, ``dtype``,
    ``mode`` ("shared" or "plain"), ``batch_size`` (rows per forward: shuffles in shared mode,
    prompts in plain mode; default 32 on CUDA, 8 on CPU), ``cache_dir`` (GGUF safetensors cache),
    ``chat_template``, ``prefix_cache_size`` (distinct prefixes kept, e.g. one per area for
    1-shot), ``revision``, ``trust_remote_code``, ``local_files_only``.
    """

    name = "transformers"

    def __init__(
        self,
        model: str,
        *,
        gguf_file: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        mode: Mode = "shared",
        batch_size: int | None = None,
        cache_dir: str | Path | None = None,
        chat_template: bool = False,
        prefix_cache_size: int = 4,
        revision: str | None = None,
        trust_remote_code: bool = False,
        local_files_only: bool = False,
    ):
        if mode not in ("shared", "plain"):
            raise ValueError(f"mode must be 'shared' or 'plain', got {mode!r}")
        self.loaded: LoadedModel = load_model(
            model, gguf_file=gguf_file, device=device, dtype=dtype, cache_dir=cache_dir,
            revision=revision, trust_remote_code=trust_remote_code,
            local_files_only=local_files_only,
        )
        self.model = self.loaded.model
        self.tokenizer = self.loaded.tokenizer
        self.device = self.loaded.device
        self.mode: Mode = mode
        self.batch_size = batch_size or (32 if self.device.type == "cuda" else 8)
        self.chat_template = chat_template
        if chat_template and not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(f"{model!r} has no chat template")
        self.prefix_cache_size = max(1, prefix_cache_size)
        self.letter_ids = letter_token_ids(self.tokenizer)
        flat = [i for ids in self.letter_ids for i in ids]
        owner = [n for n, ids in enumerate(self.letter_ids) for _ in ids]
        self._letter_flat = torch.tensor(flat, device=self.device)
        self._letter_owner = torch.tensor(owner, device=self.device)
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        self._pad_id = 0 if pad is None else int(pad)
        params = inspect.signature(self.model.forward).parameters
        self._has_logits_to_keep = "logits_to_keep" in params
        self._max_positions = getattr(self.model.config, "max_position_embeddings", None) or getattr(
            self.model.config, "n_positions", None
        )
        self._prefix_cache: OrderedDict[tuple[int, ...], KV | None] = OrderedDict()
        self._reuse_ok = True

    # ------------------------------------------------------------------ interface

    def __repr__(self) -> str:
        return (
            f"TransformersScorer(model={self.loaded.source!r}, device={self.device}, "
            f"dtype={self.loaded.dtype}, mode={self.mode!r})"
        )

    def describe(self) -> dict[str, Any]:
        """Settings for the run record (JSON-serialisable)."""
        return {
            "backend": self.name,
            "model": self.loaded.source,
            "gguf_file": self.loaded.gguf_file,
            "loaded_from": self.loaded.loaded_from,
            "device": str(self.device),
            "dtype": str(self.loaded.dtype).replace("torch.", ""),
            "mode": self.mode,
            "chat_template": self.chat_template,
            "batch_size": self.batch_size,
            "letter_token_ids": {L: list(ids) for L, ids in zip("ABCDE", self.letter_ids)},
            "letter_tokens": {
                L: [self.tokenizer.convert_ids_to_tokens(i) for i in ids]
                for L, ids in zip("ABCDE", self.letter_ids)
            },
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        }

    def score(self, requests: Sequence[ScoreRequest]) -> LetterScores:
        """Letter probabilities of every shuffle of every request (see module docstring)."""
        if self.mode == "plain":
            return self.score_plain(requests)
        out = []
        for req in requests:
            if self._reuse_ok:
                try:
                    out.append(self._score_shared_one(req))
                    continue
                except _NoReuse as exc:
                    self._reuse_ok = False
                    logger.warning("KV-cache reuse unavailable (%s); scoring in plain mode", exc)
            out.extend(self.score_plain([req]))
        return out

    # ------------------------------------------------------------------ text → token ids

    def full_texts(self, req: ScoreRequest) -> tuple[str, list[str]]:
        """(text of the shared prefix, exact full text of each shuffle) as tokenised."""
        if not self.chat_template:
            return req.prefix, req.prompts()
        texts = []
        for block in req.option_blocks:
            messages = [{"role": "user", "content": req.prefix + req.stem + block}]
            rendered = self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            texts.append(rendered + req.suffix)
        at = texts[0].find(req.prefix)
        head = texts[0][: at + len(req.prefix)] if at >= 0 else ""
        return head, texts

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, exactly as scored (special tokens added in raw mode)."""
        if not texts:
            return []
        enc = self.tokenizer(
            list(texts), add_special_tokens=not self.chat_template, return_attention_mask=False
        )
        return [list(ids) for ids in enc["input_ids"]]

    def _check_lengths(self, key: str, seqs: Sequence[Sequence[int]]) -> None:
        longest = max(len(s) for s in seqs)
        if min(len(s) for s in seqs) == 0:
            raise ScoringError(f"{key}: empty prompt")
        if self._max_positions and longest > self._max_positions:
            raise ScoringError(
                f"{key}: prompt has {longest} tokens; the model takes at most {self._max_positions}"
            )

    # ------------------------------------------------------------------ forward helpers

    def _forward(
        self,
        input_ids: torch.Tensor,
        past: KV | None,
        position_ids: torch.Tensor,
        keep: torch.Tensor | int,
        attention_mask: torch.Tensor | None = None,
        want_cache: bool = False,
    ) -> tuple[torch.Tensor, Any]:
        """One forward; returns (logits (b, V) float at the kept position, output cache).

        ``keep`` is 1 (last position) or an int tensor (b,) of per-row positions.
        """
        b = input_ids.shape[0]
        cache = None if past is None else self._cache_for_batch(past, b)
        kwargs: dict[str, Any] = {
            "input_ids": input_ids,
            "position_ids": position_ids,
            "attention_mask": attention_mask,
            "past_key_values": cache,
            "use_cache": want_cache or cache is not None,
        }
        rows = torch.arange(b, device=input_ids.device)
        column = keep
        if self._has_logits_to_keep:
            if isinstance(keep, int):
                kwargs["logits_to_keep"] = keep
            else:
                # A 1-D logits_to_keep (the same positions for every row) works across
                # transformers 5.x; each row then takes the column of its own last position.
                kept, column = torch.unique(keep, return_inverse=True)
                kwargs["logits_to_keep"] = kept
        out = self.model(**kwargs)
        if isinstance(keep, int):
            logits = out.logits[:, -1, :]
        else:
            logits = out.logits[rows, column]
        return logits, out.past_key_values

    @staticmethod
    def _cache_for_batch(past: KV, batch: int) -> DynamicCache:
        """A fresh DynamicCache holding ``past`` (batch 1) broadcast to ``batch`` rows.

        The layers hold stride-0 views; the forward's ``torch.cat`` then materialises each layer
        once. ``past`` itself is never written to.
        """
        cache = DynamicCache(ddp_cache_data=past)
        if batch > 1:
            for layer in cache.layers:
                layer.keys = layer.keys.expand(batch, -1, -1, -1)
                layer.values = layer.values.expand(batch, -1, -1, -1)
        return cache

    @staticmethod
    def _extract(cache: Any) -> KV:
        """The (keys, values) tensors per layer of a plain full-attention DynamicCache."""
        layers = getattr(cache, "layers", None)
        if not isinstance(cache, DynamicCache) or not layers:
            raise _NoReuse(f"cache type {type(cache).__name__}")
        if any(type(layer) is not DynamicLayer for layer in layers):
            kinds = sorted({type(layer).__name__ for layer in layers})
            raise _NoReuse(f"cache layers {kinds}")
        return [(layer.keys, layer.values) for layer in layers]

    @staticmethod
    def _slice(kv: KV | None, length: int) -> KV | None:
        if kv is None or length == 0:
            return None
        return [(k[:, :, :length], v[:, :, :length]) for k, v in kv]

    def _run_segment(self, kv: KV | None, ids: Sequence[int], start: int) -> KV:
        """Append ``ids`` (one sequence) after the cached ``start`` tokens; return the new KV."""
        input_ids = torch.tensor([list(ids)], device=self.device)
        positions = torch.arange(start, start + len(ids), device=self.device)[None, :]
        _, cache = self._forward(input_ids, kv, positions, 1, want_cache=True)
        return self._extract(cache)

    def _prefix_kv(self, ids: list[int]) -> KV | None:
        """The cached KV of a prefix token sequence (computed on first use, LRU-kept)."""
        key = tuple(ids)
        if key in self._prefix_cache:
            self._prefix_cache.move_to_end(key)
            return self._prefix_cache[key]
        kv = self._run_segment(None, ids, 0) if ids else None
        self._prefix_cache[key] = kv
        while len(self._prefix_cache) > self.prefix_cache_size:
            self._prefix_cache.popitem(last=False)
        return kv

    def _letter_probs(self, logits: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
        """Logits (b, V) → unnormalised letter probabilities (b, 5) and letter mass (b,)."""
        p = torch.softmax(logits.to(torch.float64), dim=-1)
        raw = torch.zeros(p.shape[0], 5, dtype=torch.float64, device=p.device)
        raw.index_add_(1, self._letter_owner, p[:, self._letter_flat])
        raw_np = raw.cpu().numpy()
        return raw_np, raw_np.sum(axis=1)

    # ------------------------------------------------------------------ shared-prefix mode

    @torch.inference_mode()
    def _score_shared_one(self, req: ScoreRequest) -> ItemScores:
        prefix_text, texts = self.full_texts(req)
        seqs = self.encode(texts)
        self._check_lengths(req.key, seqs)
        shortest = min(len(s) for s in seqs)
        prefix_ids = self.encode([prefix_text])[0] if prefix_text else []
        l1 = min([common_prefix_length(prefix_ids, s) for s in seqs] + [shortest - 1])
        l2 = max(l1, min(common_prefix_length_all(seqs), shortest - 1))
        if l1 < len(prefix_ids):
            logger.debug("%s: reusing %d of %d prefix tokens", req.key, l1, len(prefix_ids))
        kv = self._slice(self._prefix_kv(prefix_ids), l1)
        if l2 > l1:
            kv = self._run_segment(kv, seqs[0][l1:l2], l1)
        raw, mass = self._score_tails(kv, [s[l2:] for s in seqs], l2)
        return ItemScores.from_letter_probs(req.key, raw, mass)

    def _score_tails(
        self, kv: KV | None, tails: list[list[int]], start: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Score token tails that continue the cached ``start`` tokens; rows are right-padded."""
        n = len(tails)
        raw = np.empty((n, 5))
        mass = np.empty(n)
        order = sorted(range(n), key=lambda i: len(tails[i]))
        for at in range(0, n, self.batch_size):
            rows = order[at:at + self.batch_size]
            width = max(len(tails[i]) for i in rows)
            ids = torch.full((len(rows), width), self._pad_id, dtype=torch.long)
            for r, i in enumerate(rows):
                ids[r, : len(tails[i])] = torch.tensor(tails[i])
            last = torch.tensor([len(tails[i]) - 1 for i in rows], device=self.device)
            positions = torch.arange(start, start + width, device=self.device)[None, :]
            positions = positions.expand(len(rows), -1)
            logits, _ = self._forward(ids.to(self.device), kv, positions, last)
            raw[rows], mass[rows] = self._letter_probs(logits)
        return raw, mass

    # ------------------------------------------------------------------ plain mode

    @torch.inference_mode()
    def score_plain(self, requests: Sequence[ScoreRequest]) -> LetterScores:
        """One forward pass per full prompt (batched with left padding): the baseline."""
        seqs: list[list[int]] = []
        owners: list[int] = []
        for r, req in enumerate(requests):
            item_seqs = self.encode(self.full_texts(req)[1])
            self._check_lengths(req.key, item_seqs)
            seqs.extend(item_seqs)
            owners.extend([r] * len(item_seqs))
        n = len(seqs)
        raw = np.empty((n, 5))
        mass = np.empty(n)
        order = sorted(range(n), key=lambda i: len(seqs[i]))
        for at in range(0, n, self.batch_size):
            rows = order[at:at + self.batch_size]
            width = max(len(seqs[i]) for i in rows)
            ids = torch.full((len(rows), width), self._pad_id, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for r, i in enumerate(rows):
                ids[r, width - len(seqs[i]):] = torch.tensor(seqs[i])
                mask[r, width - len(seqs[i]):] = 1
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            logits, _ = self._forward(
                ids.to(self.device), None, positions.to(self.device), 1,
                attention_mask=mask.to(self.device),
            )
            raw[rows], mass[rows] = self._letter_probs(logits)
        out = []
        start = 0
        for r, req in enumerate(requests):
            stop = start + req.n_shuffles
            out.append(ItemScores.from_letter_probs(req.key, raw[start:stop], mass[start:stop]))
            start = stop
        return out

    # ------------------------------------------------------------------ Min-K% Prob

    @torch.inference_mode()
    def token_logprobs(self, text: str) -> np.ndarray:
        """log p(x_t | x_<t) of every token of ``text`` after the first, float64 (n_tokens - 1,)."""
        return self._token_logprobs_batch([text], 1)[0]

    def _token_logprobs_batch(self, texts: Sequence[str], batch_size: int) -> list[np.ndarray]:
        enc = self.tokenizer(list(texts), add_special_tokens=True, return_attention_mask=False)
        seqs = [list(ids) for ids in enc["input_ids"]]
        out: list[np.ndarray] = [np.empty(0)] * len(seqs)
        order = sorted((i for i in range(len(seqs)) if len(seqs[i]) > 1), key=lambda i: len(seqs[i]))
        for at in range(0, len(order), batch_size):
            rows = order[at:at + batch_size]
            width = max(len(seqs[i]) for i in rows)
            ids = torch.full((len(rows), width), self._pad_id, dtype=torch.long)
            for r, i in enumerate(rows):
                ids[r, : len(seqs[i])] = torch.tensor(seqs[i])
            positions = torch.arange(width)[None, :].expand(len(rows), -1)
            logits = self.model(
                input_ids=ids.to(self.device), position_ids=positions.to(self.device),
                use_cache=False,
            ).logits
            for r, i in enumerate(rows):
                n = len(seqs[i])
                logp = torch.log_softmax(logits[r, : n - 1].to(torch.float64), dim=-1)
                target = ids[r, 1:n].to(logp.device)
                out[i] = logp.gather(1, target[:, None])[:, 0].cpu().numpy()
        return out

    @torch.inference_mode()
    def min_k_percent_prob(
        self, texts: Sequence[str], k_percent: float = DEFAULT_K_PERCENT, batch_size: int = 4
    ) -> np.ndarray:
        """Min-K% Prob of each text, float64 (n,); NaN for texts of fewer than two tokens.

        Mean of the lowest ``k_percent`` % of the text's token log-probabilities (see
        ``inference.min_k``). Texts are scored raw (no chat template, no prompt around them).
        """
        logprobs = self._token_logprobs_batch(texts, batch_size)
        return np.array([min_k_from_logprobs(lp, k_percent) for lp in logprobs], dtype=np.float64)
