"""The ``openai`` backend: any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp server, …).

- ``scorer``: :class:`~inference.backends.openai.scorer.OpenAIScorer`, the ``letter-prob``
  answer method, its requests, retries and thread pool;
- ``answers``: the ``generate`` and ``full-answer-prob`` answer methods on the same requests,
  the registry's entry (``openai_scorer``) and the endpoint probe;
- ``key``: which key, if any, a base URL is sent (no client import: checked before a run);
- ``client``: the OpenAI client built with that key and the deadline;
- ``deadline``: a wall-clock deadline for each request, whatever the server sends.

Nothing is imported here: importing the backend registry never loads the OpenAI client.
"""
