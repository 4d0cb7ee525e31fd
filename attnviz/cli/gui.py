"""Entry point: ``attnviz`` opens the app; ``--help`` and ``--version`` need no display.

Qt and torch are imported only once they are needed, and torch only on the compute thread, so
the window is on screen while PyTorch is still loading.
"""

from __future__ import annotations

import argparse
import sys

from attnviz import __version__
from attnviz.output.terminal import ExamplesFormatter

#: Every command: its name, what it does in one line, an example. ``attnviz --help`` lists them;
#: ``attnviz COMMAND --help`` says more.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("render", "draw attention weights into a PNG/SVG (or .npy/.csv) without a window",
     "attnviz render --preset additive-toy --out weights.png"),
    ("code", "print the inputs and settings as a PyTorch, TensorFlow, MXNet or JAX script",
     "attnviz code --framework jax --preset dot-toy"),
    ("doctor", "list the mask problems of a captured model run",
     "attnviz doctor run.attnviz-capture"),
    ("diff", "compare two captured runs call by call",
     "attnviz diff before.attnviz-capture after.attnviz-capture"),
    ("check", "run invariance checks (padding, KV cache, implementations, dtypes) on a live model",
     "attnviz check tiny_gpt2.py:build"),
    ("bench", "print the benchmark figures (engine, app, long, capture, safety, snippets, sweep)",
     "attnviz bench engine --quick"),
)  # fmt: skip


def _commands_epilog() -> str:
    lines = ["commands (attnviz COMMAND --help for each one's options and examples):"]
    for name, line, example in COMMANDS:
        lines += [f"  {name:8}{line}", f"  {'':8}e.g. {example}"]
    lines += [
        "",
        "examples:",
        "  attnviz                           open the window on the book's additive-attention toy",
        "  attnviz work.attnviz              open a session (or a capture, .npz, .pt ...)",
        "  attnviz --preset pitfall-zero-length",
    ]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attnviz",
        usage="attnviz [-h] [--version] [--preset NAME] [--list-presets] [--language L] [file]\n"
        "       attnviz {" + ",".join(name for name, _, _ in COMMANDS) + "} ...",
        description="See and debug attention: edit queries, keys, values and masks, and watch "
        "every stage of the computation change. With no command, opens the window.",
        epilog=_commands_epilog(),
        formatter_class=ExamplesFormatter,
    )
    parser.add_argument(
        "file",
        nargs="?",
        default=None,
        help="a session, capture or tensor file to open (.attnviz, .attnviz-capture, .npz, .pt, ...)",
    )
    parser.add_argument("--version", action="version", version=f"attnviz {__version__}")
    parser.add_argument(
        "--preset",
        metavar="NAME",
        default=None,
        help="preset or lesson to open (default: the book's additive-attention toy; see --list-presets)",
    )
    parser.add_argument("--list-presets", action="store_true", help="list the presets and lessons and exit")
    parser.add_argument(
        "--language",
        metavar="L",
        choices=("system", "en", "pt_BR"),
        default=None,
        help="language of the window for this run: system, en or pt_BR "
        "(default: as chosen under View > Language, else the system's)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["render"]:
        from attnviz.cli.render import render_main

        return render_main(argv[1:])
    if argv[:1] == ["doctor"]:
        from attnviz.cli.doctor import doctor_main

        return doctor_main(argv[1:])
    if argv[:1] == ["diff"]:
        from attnviz.cli.diff import diff_main

        return diff_main(argv[1:])
    if argv[:1] == ["check"]:
        from attnviz.cli.check import check_main

        return check_main(argv[1:])
    if argv[:1] == ["code"]:
        from attnviz.cli.code import code_main

        return code_main(argv[1:])
    if argv[:1] == ["bench"]:
        from attnviz.bench.__main__ import main as bench_main

        return bench_main(argv[1:], prog="attnviz bench")
    args = build_parser().parse_args(argv)
    from attnviz.teaching.lessons import ALL_PRESETS, LESSONS
    from attnviz.teaching.presets import DEFAULT_PRESET, PRESETS

    if args.list_presets:
        for each in ALL_PRESETS.values():
            print(f"{each.name:22} {each.title}")
        return 0
    preset = args.preset or DEFAULT_PRESET
    if preset not in ALL_PRESETS:
        print(f"attnviz: unknown preset {preset!r}; try --list-presets", file=sys.stderr)
        return 2
    from attnviz.cli.display import window_problem

    problem = window_problem()  # before Qt, which aborts with a core dump where it cannot open
    if problem is not None:
        print(problem, file=sys.stderr)
        return 1
    from PySide6.QtCore import Qt

    from attnviz.ui.app.startup import application

    app = application(args.language)
    from attnviz.ui.window.main_window import MainWindow

    window = MainWindow(preset if preset in PRESETS else DEFAULT_PRESET)
    window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    window.show()
    if preset in LESSONS:
        window.lessons.load(preset)  # a lesson opens with its question beside it, as from the menu
    restored = window.file_actions.offer_restore()
    if not restored and args.file is None and preset not in LESSONS:
        from attnviz.ui.preferences import default_settings
        from attnviz.ui.window.first_launch import offer_first_steps

        offer_first_steps(window, default_settings())  # once, on the very first launch
    if args.file is not None:
        window.file_actions.open_file(args.file)  # read off the GUI thread; errors shown in the window
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
