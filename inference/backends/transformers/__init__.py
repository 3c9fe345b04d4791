"""The ``transformers`` backend: local causal language models through transformers.

- ``scorer``: :class:`~inference.backends.transformers.scorer.TransformersScorer`, letter
  scoring (``letter-prob``) and Min-K% Prob;
- ``answers``: the ``full-answer-prob`` and ``generate`` answer methods and the registry's entry
  (``transformers_scorer``);
- ``kv_reuse``: the forwards, KV caches and padding both share (a prompt's common prefix run
  once);
- ``loading``: loading models from folders, hub ids and GGUF files, and the letters' tokens.

Nothing is imported here: importing the backend registry never loads torch.
"""
