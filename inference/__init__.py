"""Administering ENEM items to models: question texts, prompts, option shuffles, run plans,
backends, and scoring a run's answers.

No database code: no module here imports ``store`` or ``duckdb`` or opens a database. A run plan
reads the exam through the :class:`~inference.plan.ExamSource` protocol (``inference.plan``),
which ``store.model_runs.ExamReader`` implements; executing, publishing and managing runs (files,
checkpoints, the store) live in ``workflows``. Importing this package does not import torch or
any API client (backends load lazily via ``inference.backends.make_scorer``).

* ``protocol``: the administration's constants (prompt languages, shot settings).
* ``questions``: the :class:`~inference.questions.Question` model and its validation.
* ``question_files``: reading (and writing) question files, one module per format. A new format
  goes there as one module, plus one entry in ``workflows.question_import.QUESTION_READERS``.
* ``prompts``, ``shuffles``: the exact prompt text, solved examples, option orders.
* ``plan``: a run's spec and its work units; ``run_scoring``: answers → response patterns → θ.
* ``backends``: models behind one letter-scoring interface. A new backend is one file in
  ``inference/backends`` and one line in ``inference.backends.BACKENDS``.
* ``min_k``: the Min-K% Prob contamination probe.

The method (prompt layout, shots, shuffles, letter scoring) is described in docs/methods.md,
"Administering an exam to a model"; the contamination probe in "Min-K% Prob".
"""
