"""Reading the per-sample files other evaluation tools write, as plain records.

* ``lm_eval_samples``: lm-evaluation-harness's ``--log_samples`` JSONL
  (``samples_<task>_<date>.jsonl``) and its ``results_<date>.json``.
* ``lighteval_details``: lighteval's details parquet (``details_<task>_<date>.parquet``), in
  both of its layouts.
* ``records``: the record both readers produce (:class:`~inference.harness.records.ToolAnswer`)
  and their error.
* ``choices``: which option an answer chose, from per-choice log-likelihoods or a generated
  text.

Pure parsing: nothing here opens the store. Linking the answers to the store's items and
storing them as runs is ``workflows.harness``; docs/harness.md describes the formats.
"""
