"""The model-run commands: run, runs, remove-run, cancel, prompt, import-results, export-run,
export-task and import-questions. Each is a thin wrapper around ``workflows`` (the runs service
for runs)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from tqdm import tqdm

from cli.arguments import (
    add_db,
    add_runs_dir,
    add_scoring_overrides,
    db_path,
    named_path,
    output_file,
    positive_int,
    positive_seconds,
    run_seed,
    scoring_overrides,
    temperature,
)
from cli.errors import INTERRUPTED, UsageError
from enem.areas import AREAS
from inference.answer_methods import (
    ANSWER_METHOD_BACKENDS,
    ANSWER_METHODS,
    DEFAULT_MAX_NEW_TOKENS,
    TEMPERATURE_SOURCES,
)
from inference.backends import available_backends
from inference.plan import PAPER_SHOT_YEAR, RunSpec, model_or_default, run_grid
from inference.prompt_variants import BASE_VARIANT, VARIANTS
from inference.protocol import PROMPT_LANGUAGES, SHOT_SETTINGS
from store.connection import connected
from workflows.harness import DEFAULT_OUTPUT, RESULT_FORMATS, export_task, import_results_file
from workflows.question_import import QUESTION_FORMATS, import_questions
from workflows.results_io import export_run
from workflows.runs import service as runs_service
from workflows.runs.execution import BATCH_ITEMS, RunCancelled, check_run, execute_run

#: Backend options the ``run`` flags set: option -> (flag, the backends that take it).
BACKEND_FLAGS = {
    "gguf_file": ("--gguf-file", ("transformers",)),
    "device": ("--device", ("transformers",)),
    "batch_size": ("--batch-size", ("transformers",)),
    "answer_method": ("--answer-method", ANSWER_METHOD_BACKENDS),
    "temperature": ("--temperature", ANSWER_METHOD_BACKENDS),
    "max_new_tokens": ("--max-new-tokens", ANSWER_METHOD_BACKENDS),
    "base_url": ("--base-url", ("openai",)),
    "timeout": ("--request-timeout", ("openai",)),
    "concurrency": ("--concurrency", ("openai",)),
}

#: The help of --base-url and --request-timeout (``run`` and ``cat-run``).
BASE_URL_HELP = ("OpenAI-compatible endpoint (openai backend; default the OpenAI API, "
                 "whatever $OPENAI_BASE_URL says). A key is sent only when the operator's "
                 "operator.toml pairs this endpoint with the variable holding it (the OpenAI "
                 "API: OPENAI_API_KEY); any other URL gets no key (docs/serving.md)")
REQUEST_TIMEOUT_HELP = ("seconds each attempt of a request may take in all, from connecting "
                        "to the answer's last byte (openai backend; default 60); a request "
                        "that times out twice fails")


def runs_directory(args: argparse.Namespace) -> Path:
    """Run folders live in ``--runs-dir``, else ``runs/`` beside the database."""
    return runs_service.runs_directory(db_path(args), getattr(args, "runs_dir", None))


def add_run_parser(commands) -> None:
    run = commands.add_parser(
        "run", help="administer an exam to a model (resumable; run again to continue)")
    add_db(run)
    add_runs_dir(run)
    run.add_argument("--model", help="local path, hub id or GGUF file (transformers), API model "
                                     "name (openai); default random-baseline for --backend random")
    run.add_argument("--backend", choices=available_backends(), default="transformers")
    run.add_argument("--year", type=int, required=True)
    run.add_argument("--areas", nargs="+", default=list(AREAS), choices=AREAS)
    run.add_argument("--languages", nargs="+", default=["pt"], choices=PROMPT_LANGUAGES)
    run.add_argument("--shots", nargs="+", type=int, default=[0], choices=SHOT_SETTINGS,
                     help="solved examples per prompt (default 0). As the paper (Beyond "
                          "accuracy, A.4): 1-shot shows the easiest (lowest b) item of the "
                          f"asked subject from the {PAPER_SHOT_YEAR} exam, 4-shot the four "
                          "subjects' examples with their options shuffled so the keys fall on "
                          f"different letters; without {PAPER_SHOT_YEAR} in the store, the "
                          "latest earlier exam, then a later one, then the asked exam itself "
                          "(the run records which as its shots_source)")
    run.add_argument("--shuffles", type=int, default=30,
                     help="option permutations per item (default 30, the paper's)")
    run.add_argument("--seed", type=run_seed, default=0,
                     help="seed of the option orders and sampling (0 to 2**63 - 1; default 0)")
    run.add_argument("--lc-language", type=int, choices=(0, 1), default=1,
                     help="foreign language of the LC form (1 Spanish, as in the paper)")
    run.add_argument("--booklet", action="append", default=[], metavar="AREA=CO_PROVA",
                     help="booklet per area (default: the lowest valid CO_PROVA)")
    run.add_argument("--gguf-file", help="GGUF file name inside --model (transformers)")
    run.add_argument("--device", help="cuda / cpu (transformers; default: cuda when present)")
    run.add_argument("--batch-size", type=positive_int,
                     help="prompts per forward pass (transformers)")
    run.add_argument("--answer-method", choices=ANSWER_METHODS,
                     help="how the answer is read (transformers and openai; default "
                          "letter-prob: the letters' next-token probabilities; "
                          "full-answer-prob: the mean log-probability of each option's text "
                          "(openai: a server that returns prompt log-probabilities); "
                          "generate: a sampled completion, its letter parsed)")
    run.add_argument("--temperature", type=temperature, nargs="+",
                     help="sampling temperature of --answer-method generate ("
                          + TEMPERATURE_SOURCES + "; 0 = greedy); several values make one "
                          "run per temperature (a sweep: how often the answers change). "
                          "letter-prob and full-answer-prob read probabilities and sample "
                          "nothing")
    run.add_argument("--prompt-variants", nargs="+", default=[BASE_VARIANT],
                     metavar="VARIANT",
                     help="the prompt's instruction, one run per variant (default base, the "
                          "paper's): " + ", ".join(VARIANTS) + "; or a set: patch (base and "
                          "PATCH's ten perturbations), alternatives (base and the two other "
                          "wordings). chain-of-thought needs --answer-method generate. The "
                          "texts: `enem-llm prompt --prompt-variant NAME`, docs/prompt_variants.md")
    run.add_argument("--max-new-tokens", type=positive_int,
                     help="tokens generated per answer with --answer-method generate "
                          f"(default {DEFAULT_MAX_NEW_TOKENS}, the project's own: no seed "
                          "paper fixes one)")
    run.add_argument("--base-url", help=BASE_URL_HELP)
    run.add_argument("--request-timeout", type=positive_seconds, metavar="SECONDS",
                     help=REQUEST_TIMEOUT_HELP + "; like every backend option, part of the "
                                                 "run's settings")
    run.add_argument("--concurrency", type=positive_int, metavar="N",
                     help="requests in flight at once (openai backend; default 4; an engine "
                          "on your own GPUs takes 32–128: docs/answer_methods.md)")
    run.add_argument("--model-name", help="name shown in the dashboard (default: the GGUF "
                                          "file's or the model folder's name)")
    run.add_argument("--family", help="model family, for grouping in the dashboard")
    run.add_argument("--instruction-tuned", action=argparse.BooleanOptionalAction, default=None)
    run.add_argument("--batch-items", type=positive_int, default=BATCH_ITEMS,
                     help="items scored between two checkpoints (default 4)")
    run.add_argument("--background", action="store_true",
                     help="start the run as a background process and return at once")
    run.add_argument("--quiet", action="store_true")
    run.set_defaults(run=cmd_run)

    runs = commands.add_parser(
        "runs", help="list model runs: run folders with their progress and the runs in the "
                     "database (published and imported), each marked where it lives")
    add_db(runs)
    add_runs_dir(runs)
    runs.set_defaults(run=cmd_runs)

    remove = commands.add_parser(
        "remove-run", help="remove a failed, cancelled or stopped run: its folder and any "
                           "unpublished rows (never a running or published run)")
    remove.add_argument("run_id")
    add_db(remove)
    add_runs_dir(remove)
    remove.set_defaults(run=cmd_remove_run)

    cancel = commands.add_parser("cancel", help="ask a running model run to stop")
    cancel.add_argument("run_id")
    add_db(cancel)
    add_runs_dir(cancel)
    cancel.set_defaults(run=cmd_cancel)

    imports = commands.add_parser(
        "import-results", help="load published results (the paper's parquet), a run export, or "
                               "lm-eval / lighteval per-sample files (docs/harness.md)")
    imports.add_argument("path", help="a .parquet file, or lm-eval's samples_<task>_<date>.jsonl")
    imports.add_argument("--format", default="auto", choices=RESULT_FORMATS,
                         help="results: a run export or the paper's parquet; lm-eval: a "
                              "--log_samples JSONL; lighteval: a details parquet (default auto: "
                              "by the file's name and columns)")
    imports.add_argument("--booklet", action="append", default=[], metavar="AREA=CO_PROVA",
                         help="lm-eval / lighteval: the booklet an exam's question numbers "
                              "refer to (once per area and year)")
    add_db(imports)
    add_scoring_overrides(imports)
    imports.set_defaults(run=cmd_import_results)

    task = commands.add_parser(
        "export-task", help="write a booklet as an lm-eval task with the project's prompts")
    add_db(task)
    task.add_argument("--year", type=int, required=True)
    task.add_argument("--area", required=True, choices=AREAS)
    task.add_argument("--booklet", type=int, help="CO_PROVA (default: the lowest valid one)")
    task.add_argument("--language", default="pt", choices=PROMPT_LANGUAGES)
    task.add_argument("--shots", type=int, default=0, choices=SHOT_SETTINGS)
    task.add_argument("--shuffles", type=positive_int, default=30,
                      help="option orders per item (default 30, as a run)")
    task.add_argument("--seed", type=run_seed, default=0,
                      help="seed of the option orders, as a run's (0 to 2**63 - 1; default 0)")
    task.add_argument("--lc-language", type=int, choices=(0, 1), default=1)
    task.add_argument("--output", type=named_path, default=str(DEFAULT_OUTPUT),
                      help=f"folder for the task's YAML and documents (default {DEFAULT_OUTPUT})")
    task.set_defaults(run=cmd_export_task)

    questions = commands.add_parser(
        "import-questions", help="load question texts (project JSONL, the paper's CSV, "
                                 "maritaca JSONL) and link them to the booklets' items")
    questions.add_argument("path", help="a file, or a folder: every file of the format in it "
                                         "and its sub-folders (e.g. paper-questions-2022/)")
    questions.add_argument("--format", required=True, choices=QUESTION_FORMATS)
    questions.add_argument("--booklet", action="append", default=[], metavar="AREA=CO_PROVA",
                           help="booklet the positions refer to (maritaca; paper-csv: "
                                "default from the file name ENEM_2022_LC_CO_PROVA_1072.csv)")
    questions.add_argument("--area", choices=AREAS,
                           help="area of a paper-csv file (default: its test column or name)")
    questions.add_argument("--year", type=int, help="keep only this exam year's texts")
    questions.add_argument("--language", choices=PROMPT_LANGUAGES,
                           help="prompt language of the texts (paper-csv default: the folder "
                                "name, pt/ or en/; project: keep only this language)")
    add_db(questions)
    questions.set_defaults(run=cmd_import_questions)

    export = commands.add_parser("export-run", help="write one run's answers to a parquet file")
    export.add_argument("run_id")
    export.add_argument("output")
    add_db(export)
    export.set_defaults(run=cmd_export_run)

    prompt = commands.add_parser("prompt", help="print the exact prompt of one item and shuffle")
    add_db(prompt)
    prompt.add_argument("--year", type=int, required=True)
    prompt.add_argument("--area", required=True, choices=AREAS)
    prompt.add_argument("--position", type=int, required=True, help="sorted position 1..45")
    prompt.add_argument("--language", default="pt", choices=PROMPT_LANGUAGES)
    prompt.add_argument("--shots", type=int, default=0, choices=SHOT_SETTINGS)
    prompt.add_argument("--shuffle", type=int, default=0)
    prompt.add_argument("--shuffles", type=int, default=30)
    prompt.add_argument("--seed", type=run_seed, default=0)
    prompt.add_argument("--lc-language", type=int, choices=(0, 1), default=1)
    prompt.add_argument("--booklet", type=int, help="CO_PROVA (default: the lowest valid one)")
    prompt.add_argument("--prompt-variant", default=BASE_VARIANT, choices=list(VARIANTS),
                        help="the prompt's instruction (default base, the paper's)")
    prompt.set_defaults(run=cmd_prompt)


def specs_from_args(args: argparse.Namespace) -> list[RunSpec]:
    """The runs the ``run`` flags describe: one per prompt variant and temperature."""
    temperatures = getattr(args, "temperature", None) or []
    try:
        return run_grid(spec_from_args(args), getattr(args, "prompt_variants", [BASE_VARIANT]),
                        temperatures if len(temperatures) > 1 else ())
    except ValueError as error:
        raise UsageError(str(error)) from None


def spec_from_args(args: argparse.Namespace) -> RunSpec:
    """The run spec the ``run`` flags describe (the first temperature, the base prompt)."""
    model = model_or_default(args.backend, args.model)
    if not model:
        raise UsageError("--model is required for this backend")
    given = {"gguf_file": args.gguf_file, "device": args.device, "batch_size": args.batch_size,
             "base_url": args.base_url, "timeout": getattr(args, "request_timeout", None),
             "concurrency": getattr(args, "concurrency", None),
             "answer_method": getattr(args, "answer_method", None),
             "temperature": (getattr(args, "temperature", None) or [None])[0],
             "max_new_tokens": getattr(args, "max_new_tokens", None)}
    options = {k: v for k, v in given.items() if v is not None}
    sampling = [BACKEND_FLAGS[k][0] for k in ("temperature", "max_new_tokens") if k in options]
    if sampling and options.get("answer_method") != "generate":
        raise UsageError(f"{' and '.join(sampling)} apply to --answer-method generate only")
    for option in options:
        flag, backends = BACKEND_FLAGS[option]
        if args.backend not in backends:
            raise UsageError(f"{flag} applies to --backend {' or '.join(backends)} only, "
                             f"not {args.backend}")
    return RunSpec(model=model, backend=args.backend, year=args.year, areas=tuple(args.areas),
                   languages=tuple(args.languages), shots=tuple(args.shots),
                   n_shuffles=args.shuffles, seed=args.seed, lc_language=args.lc_language,
                   booklets=booklet_flags(args.booklet), backend_options=options,
                   family=args.family, instruction_tuned=args.instruction_tuned,
                   model_name=args.model_name)


def booklet_flags(values: list[str]) -> dict[str, int]:
    """``AREA=CO_PROVA`` flags as a dict."""
    booklets = {}
    for item in values:
        area, _, booklet = item.partition("=")
        if area.upper() not in AREAS or not re.fullmatch(r"[0-9]{1,9}", booklet):
            raise UsageError(f"--booklet expects AREA=CO_PROVA, got {item!r}")
        booklets[area.upper()] = int(booklet)
    return booklets


def cmd_run(args: argparse.Namespace) -> int:
    specs = specs_from_args(args)
    db, runs_dir = db_path(args), runs_directory(args)
    for spec in specs:
        check_run(spec, db)  # refuse bad input before a run folder is made or a request is sent
    if args.background:
        # Several runs of one sweep queue behind each other: one model loaded at a time.
        slots = 1 if len(specs) > 1 else None
        for spec in specs:
            launched = runs_service.start_in_background(spec, db, runs_dir,
                                                        batch_items=args.batch_items, slots=slots)
            print(json.dumps({"run_id": launched.run_id, "pid": launched.pid,
                              "folder": str(launched.folder)}))
        return 0
    for spec in specs:
        code = _run_in_foreground(spec, args, db, runs_dir)
        if code:
            return code
    return 0


def _run_in_foreground(spec: RunSpec, args: argparse.Namespace, db: Path,
                       runs_dir: Path) -> int:
    """One run with a progress bar; its outcome line; INTERRUPTED (130) when it was
    cancelled."""
    bars: list[tqdm] = []

    def report(status: dict) -> None:
        if args.quiet:
            return
        if not bars:
            # Drawn from the first finished batch on, so a run refused at its start prints
            # nothing but its error. The rate and ETA come from the runner, which counts only
            # items scored by this process (tqdm's own rate would count resumed ones too).
            bars.append(tqdm(unit="item", desc=spec.run_id,
                             bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                                        "[{elapsed}{postfix}]"))
        bar = bars[0]
        bar.total = status.get("units_total")
        bar.n = status.get("units_done", 0)
        rate, eta = status.get("items_per_s"), status.get("eta_s")
        if rate:
            bar.set_postfix_str(f"{rate:.2f} items/s, ETA {eta:.0f} s", refresh=False)
        bar.refresh()

    try:
        outcome = execute_run(spec, db, runs_dir, batch_items=args.batch_items, progress=report)
    except RunCancelled as stopped:
        print(stopped, file=sys.stderr)
        return INTERRUPTED
    finally:
        for bar in bars:
            bar.close()
    variant_words = ("" if spec.prompt_variant == BASE_VARIANT
                     else f" (prompt {spec.prompt_variant})")
    print(f"run {outcome.run_id}{variant_words} {outcome.status}: {outcome.units_done}/"
          f"{outcome.units_total} items in {outcome.seconds:.1f} s")
    if outcome.unparsed:
        print(f"{outcome.unparsed:,} generated answers matched no letter pattern: stored as "
              "unparsed ('?') with their text and left out of the scores")
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    runs_dir = runs_directory(args)
    if runs_dir.exists() and not runs_dir.is_dir():
        raise UsageError(f"{runs_dir} is not a folder of runs")
    if getattr(args, "runs_dir", None) is None and not runs_dir.exists():
        path = db_path(args)
        if not path.exists():
            raise FileNotFoundError(f"no database at {path} (and no runs beside it); "
                                    "run `enem-llm demo` or ingest a year")
    path = db_path(args)
    listed = runs_service.list_all_runs(path, runs_dir)
    if not listed:
        print(f"no runs yet: no run folder in {runs_dir} and no run in the database {path}")
        return 0
    for run in listed:
        print(run.line())
    return 0


def cmd_remove_run(args: argparse.Namespace) -> int:
    print(runs_service.remove_run(args.run_id, db_path(args), runs_directory(args)))
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    print(runs_service.cancel(args.run_id, runs_directory(args)))
    return 0


def cmd_prompt(args: argparse.Namespace) -> int:
    print(runs_service.prompt_text(
        db_path(args), year=args.year, area=args.area, position=args.position,
        language=args.language, shots=args.shots, shuffle=args.shuffle,
        n_shuffles=args.shuffles, seed=args.seed, lc_language=args.lc_language,
        booklet=args.booklet, prompt_variant=args.prompt_variant))
    return 0


def cmd_import_results(args: argparse.Namespace) -> int:
    overrides = scoring_overrides(args)
    with connected(db_path(args)) as con:
        summary = import_results_file(con, Path(args.path), args.format, overrides,
                                      args.booklet)
    print("\n".join(summary.lines()))
    return 0


def cmd_export_task(args: argparse.Namespace) -> int:
    exported = export_task(db_path(args), year=args.year, area=args.area, booklet=args.booklet,
                           language=args.language, shots=args.shots, n_shuffles=args.shuffles,
                           seed=args.seed, lc_language=args.lc_language,
                           output=Path(args.output))
    print("\n".join(exported.lines()))
    return 0


def cmd_export_run(args: argparse.Namespace) -> int:
    output = output_file(args.output)
    with connected(db_path(args), read_only=True) as con:
        rows = export_run(con, args.run_id, output)
    print(f"wrote {rows:,} answers of {args.run_id} to {args.output}")
    return 0


def cmd_import_questions(args: argparse.Namespace) -> int:
    summary = import_questions(
        db_path(args), Path(args.path), args.format, booklet_flags(args.booklet),
        area=args.area, year=args.year, language=args.language)
    print("\n".join(summary.lines()))
    for title, messages in (("key differs", summary.key_disagreements),
                            ("not linked", summary.unlinked)):
        for message in messages[:20]:
            print(f"  {title}: {message}", file=sys.stderr)
        if len(messages) > 20:
            print(f"  … and {len(messages) - 20} more", file=sys.stderr)
    if not summary.stored:
        print(f"error: no question text of {args.path} was stored", file=sys.stderr)
        return 1
    return 0
