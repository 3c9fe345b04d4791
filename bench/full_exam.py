"""Benchmark: a full exam through the real run pipeline (4 areas × 45 items × N shuffles).

    python -m bench.full_exam --model PATH [--shots 4] [--shuffles 30] [--mode shared|plain]
    python -m bench.full_exam --random-from-config DIR ...   # same architecture, random weights

Builds a small demo database (the exam and question texts are the demo's; the number of
candidates does not matter here), then times ``execute_run`` end to end: planning, prompt
building, letter scoring, checkpoints, pattern scoring and publishing. ``--random-from-config``
instantiates a model from a saved config and tokenizer with random weights, which costs the same
compute as the trained model and needs no weights file (for machines that cannot fetch one).
Prints seconds, items/s and prompts/s; the device (CUDA when present) is printed too.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

from inference.backends import make_scorer
from inference.plan import RunSpec
from inference.protocol import SHOT_SETTINGS
from workflows.demo_build import build_demo_database
from workflows.run_execution import execute_run


def random_model(config_dir: Path, target: Path) -> Path:
    """Save a randomly initialised model of ``config_dir``'s architecture with its tokenizer."""
    torch.manual_seed(0)
    config = AutoConfig.from_pretrained(config_dir)
    model = AutoModelForCausalLM.from_config(config)
    if torch.cuda.is_available():
        model = model.to(torch.bfloat16)  # what the backend runs on CUDA anyway; halves the file
    model.save_pretrained(target)
    AutoTokenizer.from_pretrained(config_dir).save_pretrained(target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a model folder or hub id transformers can load")
    source.add_argument("--random-from-config", type=Path,
                        help="folder with config.json and tokenizer files")
    parser.add_argument("--shots", type=int, default=4, choices=SHOT_SETTINGS)
    parser.add_argument("--shuffles", type=int, default=30)
    parser.add_argument("--mode", default="shared", choices=("shared", "plain"))
    parser.add_argument("--batch-items", type=int, default=8)
    parser.add_argument("--examinees", type=int, default=5000)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="full_exam_"))
    db = work / "demo.duckdb"
    build_demo_database(db, n_examinees=args.examinees, files_dir=work / "files", progress=False)
    model = args.model or str(random_model(args.random_from_config, work / "model"))
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"device: {torch.cuda.get_device_name(0) if device == 'cuda' else 'cpu'}")

    started = time.monotonic()
    scorer = make_scorer("transformers", model=model, mode=args.mode)
    loaded = time.monotonic() - started
    spec = RunSpec(model=model, backend="transformers", year=2023, languages=("pt",),
                   shots=(args.shots,), n_shuffles=args.shuffles, seed=0)
    started = time.monotonic()
    outcome = execute_run(spec, db, work / "runs", scorer=scorer, batch_items=args.batch_items)
    seconds = time.monotonic() - started
    prompts = outcome.units_done * args.shuffles
    print(f"model load: {loaded:.1f} s; mode {args.mode}, {args.shots}-shot, "
          f"{args.shuffles} shuffles")
    print(f"full exam: {outcome.units_done} items × {args.shuffles} shuffles = {prompts:,} prompts "
          f"in {seconds:.1f} s → {outcome.units_done / seconds:.2f} items/s, "
          f"{prompts / seconds:.0f} prompts/s (run pipeline end to end, published to DuckDB)")


if __name__ == "__main__":
    main()
