"""What the harness tests share: an lm-eval samples file's lines, written as lm-eval's
``save_results_samples`` writes them (EleutherAI/lm-evaluation-harness
``lm_eval/loggers/evaluation_tracker.py``; every leaf of ``resps`` / ``filtered_resps`` a
string, ``lm_eval/utils.py`` ``sanitize_list``), for the imports of tests/test_harness_imports.py
and the round trip of tests/test_export_task.py."""

from __future__ import annotations

import hashlib
import json
from typing import Any

LETTERS = "ABCDE"
STAMP = "2024-05-01T12-00-00.123456"


def sanitized(value: Any) -> Any:
    """lm-eval's ``sanitize_list``: nested lists kept, every leaf made a string."""
    if isinstance(value, (list, tuple)):
        return [sanitized(item) for item in value]
    return str(value)


def sha(text: str) -> str:
    """The SHA-256 hex digest lm-eval stores of a document, prompt or target."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def lm_eval_line(doc_id: int, doc: dict, target: str, requests: list[tuple],
                 resps: list, filtered: list, metrics: dict, filter_name: str) -> str:
    """One line of a samples file, as ``save_results_samples`` writes it."""
    arguments = {f"gen_args_{i}": {f"arg_{j}": arg for j, arg in enumerate(request)}
                 for i, request in enumerate(requests)}
    sample = {"doc_id": doc_id, "doc": doc, "target": str(target), "arguments": arguments,
              "resps": sanitized(resps), "filtered_resps": sanitized(filtered),
              "filter": filter_name, "metrics": list(metrics),
              "doc_hash": sha(json.dumps(doc, indent=2, ensure_ascii=False)),
              "prompt_hash": sha(str(requests[0][0])), "target_hash": sha(str(target)),
              **metrics}
    return json.dumps(sample, ensure_ascii=False) + "\n"
