"""Runs made with other evaluation tools, in and out (docs/harness.md).

In: ``import-results --format lm-eval|lighteval`` turns lm-evaluation-harness's per-sample
log or lighteval's details into a run of this project, each answer linked to its item
(``linking``, ``matching``), read as the option it chose (``inference.harness.choices``) and
re-scored like every import (``runs``). ``lm_eval`` and ``lighteval`` hold what is particular
to each tool; ``dispatch`` picks the reader of a file. Out: ``export-task`` writes a booklet as
an lm-eval task with the project's prompts (``export_task``, ``documents``), whose samples
import back without ``--booklet`` flags.
"""

from workflows.harness.dispatch import RESULT_FORMATS, import_results_file
from workflows.harness.export_task import DEFAULT_OUTPUT, export_task

__all__ = ["DEFAULT_OUTPUT", "RESULT_FORMATS", "export_task", "import_results_file"]
