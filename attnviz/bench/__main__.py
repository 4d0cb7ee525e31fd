"""``python -m attnviz.bench engine|app|long|capture|safety|snippets|sweep``: print the benchmark figures side
by side (snippets: every framework's copy-as-code snippet run in its own environment, against the app;
sweep: every architecture of the installed transformers captured on each implementation it offers)."""

from __future__ import annotations

import argparse
import sys

from attnviz.output.terminal import ExamplesFormatter, examples_epilog

EXAMPLES = (
    "attnviz bench engine --quick",
    "attnviz bench app --quick",
    "attnviz bench snippets --frameworks pytorch,jax --venvs ~/.cache/attnviz-venvs",
    "attnviz bench sweep --help",
)


def main(argv: list[str] | None = None, prog: str = "attnviz-bench") -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["sweep"]:  # options of its own (--only, --workers, --json)
        from attnviz.bench.capture_sweep import main as sweep

        return sweep(argv[1:])
    parser = argparse.ArgumentParser(
        prog=prog,
        description=__doc__,
        epilog=examples_epilog(EXAMPLES),
        formatter_class=ExamplesFormatter,
    )
    parser.add_argument(
        "which",
        choices=["engine", "app", "long", "capture", "safety", "snippets", "sweep"],
        help="what to benchmark (safety: the memory, crash and exit figures of a large session beside their targets)",
    )
    parser.add_argument("--repeats", type=int, default=15, help="timed runs per figure (median reported)")
    parser.add_argument("--quick", action="store_true", help="small sizes only, for a smoke test")
    parser.add_argument("--kills", type=int, default=100, help="safety: saves killed with SIGKILL")
    parser.add_argument(
        "--venvs", metavar="DIR", help="snippets: keep (and reuse) the frameworks' environments in DIR, not a temp dir"
    )
    parser.add_argument(
        "--frameworks",
        default="pytorch,tensorflow,mxnet,jax",
        help="snippets: the frameworks to run, comma-separated (default: all four)",
    )
    parser.add_argument("--cases", default="", help="snippets: only these cases, comma-separated")
    args = parser.parse_args(argv)
    if args.which == "snippets":
        from attnviz.bench.snippets_bench import run as run_snippets

        frameworks = tuple(f for f in args.frameworks.split(",") if f)
        cases = tuple(c for c in args.cases.split(",") if c)
        return run_snippets(frameworks=frameworks, venvs=args.venvs, cases=cases)
    if args.which == "safety":
        from attnviz.bench.safety import run as run_safety

        return run_safety(kills=10 if args.quick else args.kills)
    if args.which == "engine":
        from attnviz.bench.engine_bench import run

        if args.quick:
            return run(sizes=(256,), repeats=3, memory=False)
        return run(repeats=args.repeats)
    if args.which == "long":
        from attnviz.bench.long_bench import run as run_long

        return run_long(quick=args.quick)
    if args.which == "capture":
        from attnviz.bench.capture_bench import run as run_capture

        return run_capture(repeats=3 if args.quick else args.repeats, quick=args.quick)
    from attnviz.bench.app_bench import run as run_app

    return run_app(quick=args.quick)


if __name__ == "__main__":
    sys.exit(main())
