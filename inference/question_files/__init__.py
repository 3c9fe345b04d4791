"""Question files: one module per format, each reading records into validated ``Question`` s.

* ``project``: the project's own JSONL, one :class:`~inference.questions.Question` per line
  (read and written).
* ``paper_csv``: the per-booklet CSV of the paper *Beyond accuracy* (read).
* ``maritaca``: maritaca-ai's ``enem`` JSONL (read).

``records`` holds what the readers share: building a Question with the file and line in its
error, and raising or skipping invalid records (``on_invalid="skip"`` logs the problem and drops
the record, for bulk imports where a few image-only items are expected). Every reader raises
:class:`~inference.questions.QuestionFormatError` naming the file, the line (JSONL) or row (CSV)
and the problem.

A new format is one new module here with a ``load_…`` function returning ``list[Question]``, and
one entry in ``workflows.question_import.QUESTION_READERS`` (the ``--format`` choices of
``import-questions``).
"""
