"""Entry point: ``attnviz`` opens the app; ``--help`` and ``--version`` need no display.

Qt and torch are imported only once they are needed, and torch only on the compute thread, so
the window is on screen while PyTorch is still loading.
"""

from __future__ import annotations

import argparse
import sys

from . import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attnviz",
        description="See and debug attention: edit queries, keys, values and masks, and watch "
        "every stage of the computation change. `attnviz render --help` renders heatmaps "
        "without a window; `attnviz doctor --help` lists the mask problems of a captured model run; "
        "`attnviz diff --help` compares two captured runs; `attnviz check --help` checks a live model's masks "
        "for invariances (padding, KV cache, implementations, dtypes); `attnviz code --help` prints the inputs "
        "as a PyTorch, TensorFlow, MXNet or JAX script.",
    )
    parser.add_argument(
        "file",
        nargs="?",
        default=None,
        help="a session, capture or tensor file to open (.attnviz, .attnviz-capture, .npz, .pt, ...)",
    )
    parser.add_argument("--version", action="version", version=f"attnviz {__version__}")
    parser.add_argument("--preset", default=None, help="preset to open (default: the book's additive-attention toy)")
    parser.add_argument("--list-presets", action="store_true", help="list the presets and exit")
    parser.add_argument(
        "--language",
        choices=("system", "en", "pt_BR"),
        default=None,
        help="language of the window for this run (default: as chosen under View > Language, else the system's)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["render"]:
        from .render import render_main

        return render_main(argv[1:])
    if argv[:1] == ["doctor"]:
        from .doctor_cli import doctor_main

        return doctor_main(argv[1:])
    if argv[:1] == ["diff"]:
        from .diff_cli import diff_main

        return diff_main(argv[1:])
    if argv[:1] == ["check"]:
        from .check_cli import check_main

        return check_main(argv[1:])
    if argv[:1] == ["code"]:
        from .code_cli import code_main

        return code_main(argv[1:])
    args = build_parser().parse_args(argv)
    from .presets import DEFAULT_PRESET, PRESETS

    if args.list_presets:
        for each in PRESETS.values():
            print(f"{each.name:22} {each.title}")
        return 0
    preset = args.preset or DEFAULT_PRESET
    if preset not in PRESETS:
        print(f"attnviz: unknown preset {preset!r}; try --list-presets", file=sys.stderr)
        return 2
    from PySide6.QtCore import Qt

    from .ui.app.startup import application

    app = application(args.language)
    from .ui.app.main_window import MainWindow

    window = MainWindow(preset)
    window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    window.show()
    window.file_actions.offer_restore()
    if args.file is not None:
        window.file_actions.open_file(args.file)  # read off the GUI thread; errors shown in the window
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
