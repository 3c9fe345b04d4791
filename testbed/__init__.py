"""What the tests and the benchmarks both build, in one place: a tiny transformers model
(``tiny_model``), synthetic model runs in a copy of a demo store (``fake_runs``), results files
in the paper's published layout (``paper_results``), and the real dashboard served for Chromium
(``browser``).

A layer of its own above the packages (``tests/test_layers.py``): the benchmarks import it and
the tests import it; neither imports it from the other. Nothing here is installed or shipped.
"""
