"""Results files in the paper's published layout (the columns of
``../shared/data/real/paper-results``), generated on a store's booklets: for the import tests
(``tests/test_import_streaming.py``, ``tests/test_cli_hostile_values.py``) and the import's
memory benchmark (``bench.import_memory``)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from enem.areas import AREAS
from enem.items import BookletForm
from store.model_runs import default_booklet, load_form
from workflows.paper_results import PAPER_LC_LANGUAGE

#: The year the generated files answer unless told otherwise (the demo's).
YEAR = 2023
MODELS = (("bench-model", "7b"), ("bench-model", "13b"))
LANGUAGES = ("en", "pt-br")


def paper_forms(con, year: int = YEAR) -> dict[str, BookletForm]:
    """Per area, the stored form the paper's layout answers: the lowest valid booklet (LC: its
    Spanish form)."""
    forms = {}
    for area in AREAS:
        booklet = default_booklet(con, year, area)
        forms[area] = load_form(con, year, booklet, PAPER_LC_LANGUAGE if area == "LC" else None)
    return forms


def _strings(codes: np.ndarray) -> pa.StringArray:
    """(n, width) uint8 ASCII codes as n strings of ``width`` characters, without Python
    objects per row."""
    n, width = codes.shape
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets),
                                       pa.py_buffer(np.ascontiguousarray(codes).tobytes()))


def _block(form: BookletForm, year: int, model: tuple[str, str], language: str,
           repetitions: int, rng: np.random.Generator, shuffle: bool) -> pa.Table:
    """``repetitions`` rows of one model, booklet and prompt language: repetition k is
    sampling seed 1000 + k (the same seed in every booklet and language), or shuffle-k."""
    k = form.n_items
    ability = rng.normal(0.0, 1.0, (repetitions, 1))
    correct = rng.random((repetitions, k)) < 1.0 / (1.0 + np.exp(-ability - 0.3))
    keys = np.where(form.keys > 0, form.keys, ord("A")).astype(np.uint8)
    wrong = (keys - ord("A") + 1 + rng.integers(0, 4, (repetitions, k))) % 5 + ord("A")
    letters = np.where(correct, keys, wrong).astype(np.uint8)
    gabarito = "".join(chr(c) if c else "X" for c in form.keys)
    index = np.arange(repetitions)
    n = repetitions

    def repeat(value, kind=None) -> pa.Array:
        return pa.array([value] * n, kind)

    return pa.table({
        "MODEL_NAME": repeat(model[0]), "MODEL_SIZE": repeat(model[1]),
        "TEMPERATURE": repeat(0.6, pa.float64()), "SYSTEM_PROMPT_TYPE": repeat("few-shot"),
        "ENEM_EXAM": repeat(f"ENEM_{year}_{form.area}_CO_PROVA_{form.booklet_id}"),
        "ENEM_EXAM_TYPE": (pa.array(np.char.add("shuffle-", index.astype(str)))
                           if shuffle else repeat("default")),
        "LANGUAGE": repeat(language),
        "SEED": pa.array(1000 + index, pa.int64()),
        "CTT_SCORE": pa.array(correct.sum(axis=1).astype(np.int32)),
        "TX_RESPOSTAS": _strings(letters), "TX_GABARITO": repeat(gabarito),
        "RESPONSE_PATTERN": _strings(correct.astype(np.uint8) + ord("0")),
        "CO_PROVA": repeat(str(form.booklet_id)), "EXAM_YEAR": repeat(str(year)),
        "EXAM_SUBJECT": repeat(form.area),
        "IRT_SCORE": pa.array(ability[:, 0]),
        "IRT_SCORE_SE": pa.array(0.2 + 0.1 * rng.random(n)),
        "LZ_SCORE": pa.array(np.round(rng.normal(0.0, 1.0, n), 4)),
    })


def paper_results_table(forms: dict[str, BookletForm], n_rows: int, *, year: int = YEAR,
                        seed: int = 0, shuffle: bool = False,
                        models: tuple[tuple[str, str], ...] = MODELS) -> pa.Table:
    """``n_rows`` results in the paper's layout: ``models`` × the forms' areas × LANGUAGES ×
    as many repetitions as it takes, rows in a random order (a file need not be sorted)."""
    cells = len(models) * len(forms) * len(LANGUAGES)
    repetitions = -(-n_rows // cells)
    rng = np.random.default_rng(seed)
    blocks = [_block(form, year, model, language, repetitions, rng, shuffle)
              for model in models for form in forms.values() for language in LANGUAGES]
    table = pa.concat_tables(blocks).slice(0, n_rows)
    return table.take(pa.array(rng.permutation(table.num_rows)))
