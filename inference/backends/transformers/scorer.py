"""Local causal LMs through transformers: letter scoring with KV-cache reuse, and Min-K% Prob.

Letter scoring. The prompt ends with ``(``; the scores are the next-token probabilities of the
letters A–E. Each letter's probability is the sum over all its single-token forms ("A", " A",
…; see :func:`~inference.backends.transformers.loading.letter_token_ids`). ``letter_mass`` is the
sum over the five letters before normalising. The raw prompt text is used (completion style, as the
paper); ``chat_template=True`` instead wraps prefix + stem + options as one user message and puts
the suffix (``Answer: (``) at the start of the assistant turn.

Two modes give the same probabilities (up to floating-point noise):

* ``plain``: one forward pass per full prompt, batched across prompts with left padding,
  explicit attention mask and position ids. The baseline.
* ``shared`` (default): every prompt is still tokenised as one full string, exactly as in
  ``plain``, and the shared parts are found *on the token ids*:

  1. prefix: the key/value cache of the tokenised prefix text is computed once per distinct
     prefix (LRU-kept across calls). An item reuses its first L1 tokens, L1 = the longest common
     prefix of those ids with every one of the item's prompts. A token merge across the text
     boundary (e.g. "\n\n" alone vs "\n", "\n" + "Question" in byte-level BPE) just moves the
     boundary back a token, so it can never make the modes differ.
  2. stem: tokens L1..L2 (L2 = the longest common prefix of all shuffles of the item) run once
     per item, on top of the prefix cache, batched across items with right padding; the pads
     stay inside the cache and are masked out for everything after them.
  3. tails: each shuffle's remaining tokens (options block + suffix) run on top of its item's
     cache, rows (item, shuffle) batched up to ``batch_size`` rows and the ``kv_budget``,
     right-padded, with per-row position ids continuing from the row's true length L2, and the
     logits taken at each row's last real token (``logits_to_keep``).

  The forwards, caches and padding are :mod:`inference.backends.transformers.kv_reuse`'s (shared
  with the full-answer scorer). Models whose cache is not a plain full-attention ``DynamicCache``
  (sliding-window or linear attention layers) fall back to ``plain`` with a logged warning. On CUDA
  the cuDNN SDPA backend is avoided (``avoid_cudnn_attention``): it plans per shape, and shared-mode
  shapes rarely repeat.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import transformers

from enem.areas import OPTION_LETTERS
from inference.backends.base import ItemScores, LetterScores, ScoreRequest, ScoringError
from inference.backends.transformers.kv_reuse import (
    KV,
    KVReuseEngine,
    NoReuse,
    Segment,
    left_pad,
    prefix_reuse,
    right_pad,
    stem_end,
)
from inference.backends.transformers.loading import LoadedModel, letter_token_ids, load_model
from inference.min_k import DEFAULT_K_PERCENT, min_k_from_logprobs

logger = logging.getLogger(__name__)

Mode = Literal["shared", "plain"]

#: Distinct prefix texts whose token ids are remembered (cleared whole when full).
PREFIX_IDS_KEPT = 64


class TransformersScorer:
    """Letter scorer for a local (or hub) causal LM.

    Options: ``model`` (folder, hub id or ``.gguf`` path), ``gguf_file``, ``device``, ``dtype``,
    ``mode`` ("shared" or "plain"), ``batch_size`` (most rows per forward: (item, shuffle) rows
    in shared mode — items are grouped so that a forward holds up to ``batch_size`` rows —,
    prompts in plain mode; default 64 on CUDA, 8 on CPU), ``kv_budget_gb`` (the most memory the
    broadcast key/value cache of one forward may take; rows are reduced to fit; default a fifth
    of the GPU's memory, or 1 GB on CPU), ``cache_dir`` (GGUF safetensors cache),
    ``chat_template``, ``prefix_cache_size`` (distinct prefixes kept, e.g. one per area for
    1-shot), ``avoid_cudnn_attention`` (CUDA only; see module docstring), ``revision``,
    ``trust_remote_code``, ``local_files_only``.

    The forwards run on :attr:`engine`
    (:class:`~inference.backends.transformers.kv_reuse.KVReuseEngine`), which holds the settings of
    the forwards (``batch_size``, ``kv_budget`` in bytes, ``avoid_cudnn_attention``, ``pad_id``) and
    the prefix caches.
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
        kv_budget_gb: float | None = None,
        cache_dir: str | Path | None = None,
        chat_template: bool = False,
        prefix_cache_size: int = 4,
        avoid_cudnn_attention: bool = True,
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
        cuda = self.device.type == "cuda"
        if kv_budget_gb is None:
            total = torch.cuda.get_device_properties(self.device).total_memory if cuda else 5 << 30
            kv_budget = int(total / 5)
        else:
            kv_budget = int(kv_budget_gb * (1 << 30))
        self.chat_template = chat_template
        if chat_template and not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(f"{model!r} has no chat template")
        self.letter_ids = letter_token_ids(self.tokenizer)
        flat = [i for ids in self.letter_ids for i in ids]
        owner = [n for n, ids in enumerate(self.letter_ids) for _ in ids]
        self._letter_flat = torch.tensor(flat, device=self.device)
        self._letter_owner = torch.tensor(owner, device=self.device)
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        self.engine = KVReuseEngine(
            self.model, self.device, pad_id=0 if pad is None else int(pad),
            batch_size=max(1, batch_size or (64 if cuda else 8)), kv_budget=kv_budget,
            prefix_cache_size=max(1, prefix_cache_size),
            avoid_cudnn_attention=avoid_cudnn_attention,
        )
        config = self.model.config
        self._max_positions = getattr(config, "max_position_embeddings", None) or getattr(
            config, "n_positions", None
        )
        self._prefix_ids: dict[str, tuple[int, ...]] = {}
        self._reuse_ok = True

    @property
    def _prefix_cache(self) -> OrderedDict[tuple[int, ...], KV | None]:
        """The engine's prefix caches (the tests and the benchmark empty and count them)."""
        return self.engine.prefix_cache

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
            "batch_size": self.engine.batch_size,
            "kv_budget_gb": round(self.engine.kv_budget / (1 << 30), 3),
            "avoid_cudnn_attention": self.engine.avoid_cudnn_attention,
            "letter_token_ids": {L: list(ids)
                                 for L, ids in zip(OPTION_LETTERS, self.letter_ids, strict=True)},
            "letter_tokens": {
                L: [self.tokenizer.convert_ids_to_tokens(i) for i in ids]
                for L, ids in zip(OPTION_LETTERS, self.letter_ids, strict=True)
            },
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        }

    def score(self, requests: Sequence[ScoreRequest]) -> LetterScores:
        """Letter probabilities of every shuffle of every request (see module docstring)."""
        if self.mode == "plain" or not self._reuse_ok:
            return self.score_plain(requests)
        try:
            return self.score_shared(requests)
        except NoReuse as exc:
            self._reuse_ok = False
            logger.warning("KV-cache reuse unavailable (%s); scoring in plain mode", exc)
            return self.score_plain(requests)

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

    def prefix_token_ids(self, prefix_text: str) -> tuple[int, ...]:
        """Token ids of a prefix text alone (remembered per text; () for no prefix)."""
        prefix_ids = self._prefix_ids.get(prefix_text)
        if prefix_ids is None:
            prefix_ids = tuple(self.encode([prefix_text])[0]) if prefix_text else ()
            if len(self._prefix_ids) >= PREFIX_IDS_KEPT:
                self._prefix_ids.clear()
            self._prefix_ids[prefix_text] = prefix_ids
        return prefix_ids

    def check_lengths(self, key: str, seqs: Sequence[Sequence[int]]) -> None:
        """Raise ScoringError when a text of request ``key`` is empty or longer than the model's
        context."""
        longest = max(len(s) for s in seqs)
        if min(len(s) for s in seqs) == 0:
            raise ScoringError(f"{key}: empty prompt")
        if self._max_positions and longest > self._max_positions:
            raise ScoringError(
                f"{key}: prompt has {longest} tokens; the model takes at most {self._max_positions}"
            )

    def _letter_probs(self, logits: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
        """Logits (b, V) → unnormalised letter probabilities (b, 5) and letter mass (b,)."""
        p = torch.softmax(logits.to(torch.float64), dim=-1)
        raw = torch.zeros(p.shape[0], 5, dtype=torch.float64, device=p.device)
        raw.index_add_(1, self._letter_owner, p[:, self._letter_flat])
        raw_np = raw.cpu().numpy()
        return raw_np, raw_np.sum(axis=1)

    # ------------------------------------------------------------------ shared-prefix mode

    def _prepare(self, index: int, req: ScoreRequest) -> tuple[tuple[int, ...], Segment]:
        """Tokenise one request's full prompts and find its reuse boundaries."""
        prefix_text, texts = self.full_texts(req)
        seqs = self.encode(texts)
        self.check_lengths(req.key, seqs)
        prefix_ids = self.prefix_token_ids(prefix_text)
        # Each shuffle keeps at least its last token: its logits are the scores.
        last = min(len(s) for s in seqs) - 1
        l1 = prefix_reuse(prefix_ids, seqs, last)
        if l1 < len(prefix_ids):
            logger.debug("%s: reusing %d of %d prefix tokens", req.key, l1, len(prefix_ids))
        return prefix_ids, Segment(index, req.key, seqs, l1, stem_end(seqs, l1, last))

    @torch.inference_mode()
    def score_shared(self, requests: Sequence[ScoreRequest]) -> LetterScores:
        """Shared-prefix scoring (module docstring): prefix once, stems once per item (batched
        across items), option tails batched across shuffles and items."""
        groups: dict[tuple[int, ...], list[Segment]] = {}
        for i, req in enumerate(requests):
            prefix_ids, item = self._prepare(i, req)
            groups.setdefault(prefix_ids, []).append(item)
        out: list[ItemScores | None] = [None] * len(requests)
        for prefix_ids, items in groups.items():
            prefix_kv = self.engine.prefix_kv(prefix_ids)
            per_block = max(1, self.engine.batch_size // max(len(it.seqs) for it in items))
            for at in range(0, len(items), per_block):
                block = items[at:at + per_block]
                kv, mask = self.engine.run_stems(prefix_kv, block)
                for item, (raw, mass) in zip(block, self._run_tails(kv, mask, block), strict=True):
                    out[item.index] = ItemScores.from_letter_probs(item.key, raw, mass)
        scores = [o for o in out if o is not None]
        assert len(scores) == len(out)  # every request belongs to one group
        return scores

    def _run_tails(
        self, kv: KV | None, mask: torch.Tensor, block: list[Segment]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Score every shuffle's own tokens (after l2) on top of its item's cached stem.

        Rows are (item, shuffle) pairs ordered by item then tail length (similar widths share a
        forward, and an item's rows share their cache row), cut by the engine into forwards of
        at most ``batch_size`` rows whose broadcast cache fits ``kv_budget``. Returns per item
        (unnormalised letter probs (S, 5), letter mass (S,)).
        """
        rows = sorted(
            ((b, s) for b, it in enumerate(block) for s in range(len(it.seqs))),
            key=lambda r: (r[0], len(block[r[0]].seqs[r[1]]) - block[r[0]].l2),
        )
        results = [(np.empty((len(it.seqs), 5)), np.empty(len(it.seqs))) for it in block]
        for chunk, _, logits in self.engine.run_tails(kv, mask, block, rows, last_only=True):
            raw, mass = self._letter_probs(logits)
            for r, (b, s) in enumerate(chunk):
                results[b][0][s] = raw[r]
                results[b][1][s] = mass[r]
        return results

    # ------------------------------------------------------------------ plain mode

    @torch.inference_mode()
    def score_plain(self, requests: Sequence[ScoreRequest]) -> LetterScores:
        """One forward pass per full prompt (batched with left padding): the baseline."""
        seqs: list[list[int]] = []
        for req in requests:
            item_seqs = self.encode(self.full_texts(req)[1])
            self.check_lengths(req.key, item_seqs)
            seqs.extend(item_seqs)
        n = len(seqs)
        raw = np.empty((n, 5))
        mass = np.empty(n)
        order = sorted(range(n), key=lambda i: len(seqs[i]))
        for at in range(0, n, self.engine.batch_size):
            rows = order[at:at + self.engine.batch_size]
            ids, mask, positions = left_pad([seqs[i] for i in rows], self.engine.pad_id)
            logits, _ = self.engine.forward(
                ids.to(self.device), None, positions.to(self.device), 1,
                attention_mask=mask.to(self.device),
            )
            raw[rows], mass[rows] = self._letter_probs(logits)
        out = []
        start = 0
        for req in requests:
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
        order = sorted((i for i in range(len(seqs)) if len(seqs[i]) > 1),
                       key=lambda i: len(seqs[i]))
        for at in range(0, len(order), batch_size):
            rows = order[at:at + batch_size]
            # No mask: a row's pads come after its tokens, so causal attention never sees them.
            ids, _ = right_pad([seqs[i] for i in rows], self.engine.pad_id)
            width = ids.shape[1]
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

        Minus the mean of the lowest ``k_percent`` % of the text's token log-probabilities
        (Eq. 4 of *Beyond accuracy*, ``inference.min_k``). Texts are scored raw (no chat
        template, no prompt around them).
        """
        logprobs = self._token_logprobs_batch(texts, batch_size)
        return np.array([min_k_from_logprobs(lp, k_percent) for lp in logprobs], dtype=np.float64)
