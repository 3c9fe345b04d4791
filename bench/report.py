"""Report benchmark: the whole report of a selection, step by step, against its target.

    .venv/bin/python -m bench.report [--db PATH] [--url '?year=2023'] [--pdf] [--images]

Without ``--db`` it builds (once, cached under bench/out/) the shipped demo: 100,000 synthetic
candidates, the demo's model runs and the random baseline, exactly as ``enem-llm demo``. Then it
times ``workflows.report.build.build_report`` for the selection (default: the dashboard's default
view, every area and run): running every page headless (the baseline: what the dashboard itself does
to show them once, cold caches), writing the HTML report and slides, and on request the PDF and the
SVG/PNG figures through headless Chromium. Targets: the demo's report ≤ 20 s, a full-size year's ≤
60 s (pass a full-size store, e.g. the one ``bench.pages`` builds).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from workflows.demo_build import build_demo_database
from workflows.report.build import Selection, build_report

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
DEMO_TARGET, FULL_TARGET = 20.0, 60.0


def demo_database() -> Path:
    """The shipped demo (100k candidates), built once under bench/out/."""
    path = OUT / "report_demo.duckdb"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        build_demo_database(path, files_dir=OUT / "report_demo_files", progress=False)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="store to report on (default: the demo, built once)")
    parser.add_argument("--url", default="", help="dashboard selection, e.g. '?year=2023'")
    parser.add_argument("--pdf", action="store_true", help="also print the PDF")
    parser.add_argument("--images", action="store_true", help="also write SVG/PNG figures")
    parser.add_argument("--full-size", action="store_true",
                        help=f"judge against the full-size target ({FULL_TARGET:.0f} s)")
    args = parser.parse_args()
    db = Path(args.db) if args.db else demo_database()
    target = FULL_TARGET if args.full_size else DEMO_TARGET
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        files = build_report(db, Selection.from_url(args.url), Path(out), pdf=args.pdf,
                             images=args.images)
        total = time.perf_counter() - start
        size = files.html.stat().st_size / 1e6
    print(f"report of {db.name}: {len(files.pages)} pages, {files.figures} figures, "
          f"{files.tables} tables, HTML {size:.1f} MB")
    for step, seconds in files.seconds.items():
        print(f"  {step:<8} {seconds:7.2f} s")
    report_only = total - files.seconds.get("pdf", 0.0) - files.seconds.get("images", 0.0)
    print(f"  total    {total:7.2f} s   (HTML + slides {report_only:.2f} s)")
    print(f"  report / page runs alone: {report_only / files.seconds['pages']:.2f}×")
    print(f"  HTML report / target {target:.0f} s: {report_only / target:.2f} "
          f"({'met' if report_only <= target else 'MISSED'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
