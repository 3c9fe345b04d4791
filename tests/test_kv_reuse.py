"""The KV-reuse engine's pieces on their own: token-id boundaries, padding and cache handling.

The scorers built on them are checked against independent whole-text forwards in
test_inference_transformers.py and test_answer_methods.py; these pin the contracts the two
scorers rely on (boundaries never take a scored token, padding layouts, caches never written).
"""

from __future__ import annotations

from tests.lazy_import_support import lazy_module, lazy_names

# torch (and transformers, under kv_reuse) are imported by the first test, not at collection.
torch = lazy_module("torch")
(cache_for_batch, common_prefix_length, common_prefix_length_all, left_pad, prefix_reuse,
 right_pad, select_rows, slice_kv, stem_end) = lazy_names(
    "inference.backends.transformers.kv_reuse", "cache_for_batch", "common_prefix_length",
    "common_prefix_length_all", "left_pad", "prefix_reuse", "right_pad", "select_rows",
    "slice_kv", "stem_end")


def test_common_prefix_lengths():
    assert common_prefix_length([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix_length([1, 2], [1, 2, 3]) == 2
    assert common_prefix_length([], [1]) == 0
    assert common_prefix_length_all([[1, 2, 3], [1, 2, 9], [1, 7]]) == 1
    assert common_prefix_length_all([[4, 5, 6]]) == 3


def test_boundaries_leave_every_text_its_own_tokens():
    seqs = [[1, 2, 3, 4, 5], [1, 2, 3, 9], [1, 2, 3, 4, 8, 8]]
    # The prefix's last token merged differently in the texts: reuse stops before it.
    assert prefix_reuse((1, 2, 7), seqs, limit=3) == 2
    # A prefix as long as a text is capped at the limit (the text keeps its last token).
    assert prefix_reuse((1, 2, 3, 4), [[1, 2, 3, 4]], limit=3) == 3
    assert stem_end(seqs, start=2, limit=3) == 3
    assert stem_end(seqs, start=2, limit=1) == 2  # never before what is already reused
    assert stem_end([[1, 2, 3], [1, 2, 3, 4]], start=0, limit=2) == 2


def test_right_and_left_padding_layouts():
    seqs = [[5, 6, 7], [8]]
    ids, mask = right_pad(seqs, pad=0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0]]
    ids, mask, positions = left_pad(seqs, pad=0)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 1]]
    assert positions.tolist() == [[0, 1, 2], [0, 0, 0]]
    assert ids.dtype == mask.dtype == torch.long


def _kv(rows: int, tokens: int, layers: int = 2) -> list[tuple[torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(rows * 100 + tokens)
    return [(torch.randn(rows, 2, tokens, 4, generator=gen),
             torch.randn(rows, 2, tokens, 4, generator=gen)) for _ in range(layers)]


def test_slice_and_select_rows():
    kv = _kv(3, 5)
    assert slice_kv(kv, 0) is None and slice_kv(None, 4) is None
    head = slice_kv(kv, 2)
    assert head is not None and all(k.shape == (3, 2, 2, 4) for k, _ in head)
    picked = select_rows(kv, torch.tensor([2, 0, 2]))
    for (k, v), (pk, pv) in zip(kv, picked, strict=True):
        assert torch.equal(pk, k[[2, 0, 2]]) and torch.equal(pv, v[[2, 0, 2]])


def test_cache_for_batch_broadcasts_one_row_and_never_writes_the_past():
    past = _kv(1, 3)
    before = [(k.clone(), v.clone()) for k, v in past]
    cache = cache_for_batch(past, 4)
    for layer, (k, _) in zip(cache.layers, before, strict=True):
        assert layer.keys.shape == (4, 2, 3, 4) and layer.keys.stride(0) == 0
        assert torch.equal(layer.keys[3], k[0])
    # A forward appends new tokens; the tensors handed in stay as they were.
    cache.update(torch.ones(4, 2, 1, 4), torch.ones(4, 2, 1, 4), 0)
    for (k, v), (k0, v0) in zip(past, before, strict=True):
        assert torch.equal(k, k0) and torch.equal(v, v0)
    # Several rows are used as they are.
    rows = _kv(2, 3)
    assert cache_for_batch(rows, 2).layers[0].keys.shape[0] == 2
