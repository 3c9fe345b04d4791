"""Key/value-cache reuse for a local causal LM: the engine both transformers scorers run on.

Every scored text is tokenised whole; the parts several texts share are found on the token
ids and run once (see ``transformers_backend`` for the letter scorer's three levels, prefix →
stem → tails, and ``transformers_answers`` for the full-answer scorer's four). This module holds
what both do the same way:

* the token-id arithmetic: :func:`common_prefix_length`, :func:`prefix_reuse` and
  :func:`stem_end` (where the reused and the shared tokens of a group of texts end);
* padding: :func:`right_pad` (continuations on top of a cache) and :func:`left_pad` (whole
  texts in one forward, the plain baselines);
* cache handling: :func:`extract_kv`, :func:`slice_kv`, :func:`select_rows`,
  :func:`cache_for_batch` — cached tensors are never mutated: every forward gets a fresh
  ``DynamicCache`` built from them (broadcast views for one row; ``torch.cat`` in the cache
  makes new tensors);
* :class:`KVReuseEngine`: one forward with explicit positions and mask, the LRU-kept prefix
  caches, the stems of a block of :class:`Segment` run on top of a cache, and the chunked
  forwards of continuation rows on top of a block's cache (``batch_size`` rows, fewer where
  the broadcast cache would pass ``kv_budget`` bytes).

Models whose cache is not a plain full-attention ``DynamicCache`` (sliding-window or linear
attention layers) raise :class:`NoReuse`; the scorer then falls back to whole-text forwards.
"""

from __future__ import annotations

import contextlib
import inspect
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer

#: A cache as tensors: per layer (keys, values), each (rows, heads, tokens, head_dim).
KV = list[tuple[torch.Tensor, torch.Tensor]]

#: A continuation row: (entry of the block whose cache it runs on, which of its texts).
Row = tuple[int, int]


class NoReuse(Exception):
    """The model's cache cannot be reused across forwards by this engine."""


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


def prefix_reuse(prefix_ids: Sequence[int], seqs: Sequence[Sequence[int]], limit: int) -> int:
    """How many leading tokens every text of ``seqs`` can take from the cache of ``prefix_ids``:
    their longest common prefix with it, at most ``limit`` (a token merge across the prefix's
    end only moves this back a token)."""
    return min([common_prefix_length(prefix_ids, s) for s in seqs] + [limit])


def stem_end(seqs: Sequence[Sequence[int]], start: int, limit: int) -> int:
    """End of the tokens every text of ``seqs`` shares, at least ``start`` and otherwise at most
    ``limit`` (so that each text keeps the tokens the caller must score itself)."""
    return max(start, min(common_prefix_length_all(seqs), limit))


@dataclass
class Segment:
    """A group of texts run on one cache row: their full token ids and two boundaries.

    ``l1``: tokens taken from the cache below (the prefix, or the item's stem); ``l2``: tokens
    shared by every text of the group (l1 ≤ l2 < len of every text, so each text keeps at least
    one token of its own). ``index`` and ``key`` say which request (or shuffle) it is.
    """

    index: int
    key: str
    seqs: list[list[int]]
    l1: int
    l2: int


def right_pad(seqs: Sequence[Sequence[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids (n, width) right-padded with ``pad``, mask (n, width) 1 on real tokens), on CPU."""
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for r, seq in enumerate(seqs):
        ids[r, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask[r, : len(seq)] = 1
    return ids, mask


def left_pad(
    seqs: Sequence[Sequence[int]], pad: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Whole texts as one batch, on CPU: (ids (n, width) left-padded with ``pad``, mask
    (n, width) 1 on real tokens, position ids (n, width) counting from 0 at each text's first
    token). Token t of text r sits at column ``width - len(seqs[r]) + t``."""
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for r, seq in enumerate(seqs):
        ids[r, width - len(seq):] = torch.tensor(seq)
        mask[r, width - len(seq):] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids, mask, positions


def cache_for_batch(past: KV, batch: int) -> DynamicCache:
    """A fresh DynamicCache holding ``past``, broadcast to ``batch`` rows if it has one.

    Broadcast layers hold stride-0 views; the forward's ``torch.cat`` then materialises each
    layer once. ``past`` itself is never written to.
    """
    cache = DynamicCache(ddp_cache_data=past)
    if batch > 1 and past[0][0].shape[0] == 1:
        for layer in cache.layers:
            # Built from tensors, so every layer is a filled DynamicLayer.
            assert isinstance(layer, DynamicLayer)
            assert layer.keys is not None and layer.values is not None
            layer.keys = layer.keys.expand(batch, -1, -1, -1)
            layer.values = layer.values.expand(batch, -1, -1, -1)
    return cache


def extract_kv(cache: Any) -> KV:
    """The (keys, values) tensors per layer of a plain full-attention DynamicCache; raises
    :class:`NoReuse` for any other cache."""
    layers = getattr(cache, "layers", None)
    if not isinstance(cache, DynamicCache) or not layers:
        raise NoReuse(f"cache type {type(cache).__name__}")
    if any(type(layer) is not DynamicLayer for layer in layers):
        kinds = sorted({type(layer).__name__ for layer in layers})
        raise NoReuse(f"cache layers {kinds}")
    return [(layer.keys, layer.values) for layer in layers]


def slice_kv(kv: KV | None, length: int) -> KV | None:
    """The first ``length`` cached tokens (views), or None when there are none."""
    if kv is None or length == 0:
        return None
    return [(k[:, :, :length], v[:, :, :length]) for k, v in kv]


def select_rows(kv: KV, index: torch.Tensor) -> KV:
    """The cache rows ``index`` (int tensor (b,); materialised)."""
    return [(k.index_select(0, index), v.index_select(0, index)) for k, v in kv]


def bytes_per_token(kv: KV) -> int:
    """Bytes of keys + values per cached token of one row."""
    return sum(
        (k.shape[1] * k.shape[3]) * k.element_size() + (v.shape[1] * v.shape[3]) * v.element_size()
        for k, v in kv
    )


class KVReuseEngine:
    """Forwards of one causal LM that reuse cached keys and values.

    Parameters
    ----------
    model
        The loaded ``transformers`` causal LM (eval mode, on ``device``).
    device
        Where the model runs; every tensor handed to it is moved there.
    pad_id
        Token id written in padded positions (always masked out).
    batch_size
        The most rows of one continuation forward.
    kv_budget
        The most bytes the broadcast cache of one continuation forward may take.
    prefix_cache_size
        Distinct prefixes whose caches are kept (least recently used dropped first).
    avoid_cudnn_attention
        On CUDA, keep SDPA off the cuDNN backend (:meth:`attention_backends`).
    """

    def __init__(
        self,
        model: Any,
        device: torch.device,
        *,
        pad_id: int,
        batch_size: int,
        kv_budget: int,
        prefix_cache_size: int,
        avoid_cudnn_attention: bool,
    ):
        self.model = model
        self.device = device
        self.pad_id = pad_id
        self.batch_size = batch_size
        self.kv_budget = kv_budget
        self.prefix_cache_size = prefix_cache_size
        self.avoid_cudnn_attention = avoid_cudnn_attention
        self.prefix_cache: OrderedDict[tuple[int, ...], KV | None] = OrderedDict()
        self._has_logits_to_keep = "logits_to_keep" in inspect.signature(model.forward).parameters

    # ------------------------------------------------------------------ one forward

    def attention_backends(self) -> contextlib.AbstractContextManager[Any]:
        """On CUDA, keep PyTorch's SDPA off the cuDNN backend: it builds a plan for every new
        shape, and shared-prefix forwards have a new (rows, tail, cache) shape almost every
        time. Flash / memory-efficient / math kernels need no plans."""
        if self.device.type != "cuda" or not self.avoid_cudnn_attention:
            return contextlib.nullcontext()
        from torch.nn.attention import SDPBackend, sdpa_kernel

        return sdpa_kernel(
            [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
        )

    def forward(
        self,
        input_ids: torch.Tensor,
        past: KV | None,
        position_ids: torch.Tensor,
        keep: torch.Tensor | int | None,
        attention_mask: torch.Tensor | None = None,
        want_cache: bool = False,
    ) -> tuple[torch.Tensor, Any]:
        """One forward on top of ``past``; returns (logits, output cache).

        ``input_ids``, ``position_ids``: (b, T) on the device; ``attention_mask``: (b, cached +
        T) or None. ``past`` holds batch-1 tensors (broadcast to the batch) or batch-b tensors.
        ``keep`` picks the logits: 1 → (b, V) at the last column; an int tensor (b,) → (b, V)
        at each row's own column; None → (b, T, V) at every column.
        """
        b = input_ids.shape[0]
        cache = None if past is None else cache_for_batch(past, b)
        kwargs: dict[str, Any] = {
            "input_ids": input_ids,
            "position_ids": position_ids,
            "attention_mask": attention_mask,
            "past_key_values": cache,
            "use_cache": want_cache or cache is not None,
        }
        column = keep
        if self._has_logits_to_keep and keep is not None:
            if isinstance(keep, int):
                kwargs["logits_to_keep"] = keep
            else:
                # A 1-D logits_to_keep (the same positions for every row) works across
                # transformers 5.x; each row then takes the column of its own last position.
                kept, column = torch.unique(keep, return_inverse=True)
                kwargs["logits_to_keep"] = kept
        with self.attention_backends():
            out = self.model(**kwargs)
        if keep is None:
            logits = out.logits
        elif isinstance(keep, int):
            logits = out.logits[:, -1, :]
        else:
            logits = out.logits[torch.arange(b, device=input_ids.device), column]
        return logits, out.past_key_values

    # ------------------------------------------------------------------ cached levels

    def prefix_kv(self, ids: tuple[int, ...]) -> KV | None:
        """The cached KV (batch 1) of a prefix token sequence (computed once, LRU-kept); None
        for an empty prefix."""
        if ids in self.prefix_cache:
            self.prefix_cache.move_to_end(ids)
            return self.prefix_cache[ids]
        kv = None
        if ids:
            input_ids = torch.tensor([list(ids)], device=self.device)
            positions = torch.arange(len(ids), device=self.device)[None, :]
            _, cache = self.forward(input_ids, None, positions, 1, want_cache=True)
            kv = extract_kv(cache)
        self.prefix_cache[ids] = kv
        while len(self.prefix_cache) > self.prefix_cache_size:
            self.prefix_cache.popitem(last=False)
        return kv

    def run_stems(self, base_kv: KV | None, block: Sequence[Segment]
                  ) -> tuple[KV | None, torch.Tensor]:
        """Run each segment's stem (tokens l1..l2 of its first text) on top of ``base_kv``
        (one row, or one per segment), batched across the block.

        Returns the KV (len(block) or 1 rows, width W) and the mask (len(block), W) of real
        tokens: a shorter stem leaves right padding inside the cache, masked out for everything
        after it.
        """
        l1 = min(it.l1 for it in block)
        base = slice_kv(base_kv, l1)
        stems = [it.seqs[0][l1:it.l2] for it in block]
        ones = torch.ones((len(block), l1), dtype=torch.long)
        if max(len(s) for s in stems) == 0:
            return base, ones.to(self.device)
        ids, stem_mask = right_pad(stems, self.pad_id)
        mask = torch.cat([ones, stem_mask], dim=1).to(self.device)
        positions = torch.arange(l1, l1 + ids.shape[1], device=self.device)[None, :]
        _, cache = self.forward(
            ids.to(self.device), base, positions.expand(len(block), -1), 1,
            attention_mask=mask, want_cache=True,
        )
        return extract_kv(cache), mask

    def rows_per_forward(self, kv: KV | None, width: int, longest: int) -> int:
        """Rows of one continuation forward: ``batch_size``, fewer where a cache of ``width``
        tokens plus ``longest`` new ones per row would pass ``kv_budget``."""
        per_token = bytes_per_token(kv) if kv is not None else 0
        limit = self.batch_size
        if per_token:
            limit = max(1, min(limit, self.kv_budget // (per_token * (width + longest))))
        return limit

    def run_tails(
        self, kv: KV | None, mask: torch.Tensor, block: Sequence[Segment], rows: Sequence[Row],
        last_only: bool,
    ) -> Iterator[tuple[Sequence[Row], torch.Tensor, torch.Tensor]]:
        """Run each row's own tokens on top of its segment's cached stem, in chunks.

        Row (b, s) is text s of ``block[b]`` from its token ``l2`` on, on top of row b of
        ``kv`` / ``mask`` (from :meth:`run_stems`), positions continuing from l2. Rows are
        taken in the order given, :meth:`rows_per_forward` at a time, right-padded.

        Yields (the chunk's rows, their tail ids (n, T) on CPU, logits): with ``last_only``
        (n, V) at each row's last real token, otherwise (n, T, V), column j predicting token
        l2 + j + 1 of the row's text.
        """
        longest = max(len(it.seqs[s]) - it.l2 for it in block for s in range(len(it.seqs)))
        limit = self.rows_per_forward(kv, mask.shape[1], longest)
        for at in range(0, len(rows), limit):
            chunk = rows[at:at + limit]
            owners = torch.tensor([b for b, _ in chunk], device=self.device)
            tails = [block[b].seqs[s][block[b].l2:] for b, s in chunk]
            ids, tail_mask = right_pad(tails, self.pad_id)
            starts = torch.tensor([block[b].l2 for b, _ in chunk], device=self.device)
            positions = starts[:, None] + torch.arange(ids.shape[1], device=self.device)[None, :]
            past = kv
            if kv is not None and kv[0][0].shape[0] > 1:
                # One owner: a broadcast view of its row instead of copies of it.
                single = bool((owners == owners[0]).all())
                past = (
                    [(k[owners[0]][None], v[owners[0]][None]) for k, v in kv]
                    if single else select_rows(kv, owners)
                )
            attention = torch.cat([mask.index_select(0, owners), tail_mask.to(self.device)], 1)
            keep = torch.tensor([len(t) - 1 for t in tails], device=self.device) if last_only \
                else None
            logits, _ = self.forward(
                ids.to(self.device), past, positions, keep, attention_mask=attention
            )
            yield chunk, ids, logits
