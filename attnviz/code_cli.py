"""``attnviz code``: the current inputs and settings of a preset or a file, as a script, on stdout.

    attnviz code --framework tensorflow --preset additive-toy > snippet.py
    attnviz code --framework jax --load work.attnviz
    attnviz code --framework mxnet --load bert.attnviz-capture --layer 3 --head 5
    attnviz code --framework pytorch --load big.npz --data big_inputs.npz

The script is plain PyTorch, TensorFlow, MXNet or JAX code (``attnviz.snippets``) or, with
``--framework attnviz``, a call of ``attnviz.engine.attend``; run, it prints the weights and the
output (``--save-weights PATH`` also saves the weights). Inputs too big to be written into the
script go to the data file ``--data`` names, which the script loads.

Files are read as ``attnviz render`` reads them (sessions, captures, tensor files with ``--role``),
and it fails as render does: exit status 1 and ONE line on stderr for a file or an input that
cannot be written as code, 2 for a bad command line; notes go to stderr, so stdout is the script
alone. Lines are in the system's language.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from .model_run import Focus
from .render import RenderError, _load, _say, _Voice
from .render import _focus as _focus_head
from .tr import QT_TRANSLATE_NOOP, Source, exception_message, message, one_line

__all__ = ["build_parser", "code_main", "main"]

PROG = "attnviz code"
EXIT_FAILED = 1
EXIT_USAGE = 2
#: The frameworks, as ``attnviz.snippets.FRAMEWORKS`` lists them (here without importing it: the
#: parser must answer --help before torch loads).
FRAMEWORK_CHOICES = ("pytorch", "tensorflow", "mxnet", "jax", "attnviz")
# "<what>: <what is wrong>": the same shape in every language shipped (as render's).
_LINE = Source("", "{name}: {problem}")


class CodeError(Exception):
    """A reason to stop, phrased for the user (one line, translatable)."""

    def __init__(self, text: str, status: int = EXIT_FAILED) -> None:
        super().__init__(one_line(text))
        self.status = status


class _Parser(argparse.ArgumentParser):
    def error(self, text: str) -> NoReturn:  # argparse prints several lines; one is promised
        raise CodeError(
            message(QT_TRANSLATE_NOOP("Code", "{error} (see {prog} --help)"), error=text, prog=PROG), EXIT_USAGE
        )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Print the inputs, learnable parameters and settings of a preset or a file as a script "
        "in plain PyTorch, TensorFlow, MXNet or JAX (or attnviz) that computes the same attention weights. "
        "Exit status 1 when the input cannot be read or written as code, 2 for a bad command line.",
    )
    parser.add_argument(
        "--framework",
        choices=FRAMEWORK_CHOICES,
        default="pytorch",
        help="the framework the script is written in (default: pytorch)",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--preset", metavar="NAME", help="one of the presets (attnviz --list-presets)")
    source.add_argument("--load", metavar="FILE", help="a session (.attnviz), capture or tensor file")
    parser.add_argument("--layer", type=int, metavar="N", help="layer of a model's tensors (default 0)")
    parser.add_argument("--head", type=int, metavar="N", help="head of a model's tensors (default 0)")
    parser.add_argument(
        "--role",
        action="append",
        default=[],
        metavar="ROLE=NAME",
        help="which array of a tensor file plays a role, as for attnviz render (repeatable)",
    )
    parser.add_argument(
        "--data",
        metavar="FILE",
        help="where to write the arrays too big to print into the script (a .npz the script loads)",
    )
    return parser


def code_main(argv: Sequence[str] | None = None) -> int:
    """Run ``attnviz code`` with ``argv`` (without the word "code"); returns the exit status."""
    voice = _Voice()
    try:
        return _code(list(sys.argv[1:] if argv is None else argv), voice)
    except (CodeError, RenderError) as exc:
        _say(f"{PROG}: {voice.text(exception_message(exc))}", sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        interrupted = QT_TRANSLATE_NOOP("Code", "interrupted")
        _say(f"{PROG}: {voice.text(interrupted)}", sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
        unexpected = message(
            QT_TRANSLATE_NOOP("Code", "unexpected error: {error}"), error=f"{type(exc).__name__}: {exc}"
        )
        _say(f"{PROG}: {voice.text(unexpected)}", sys.stderr)
        return EXIT_FAILED
    finally:
        voice.close()


def main() -> int:
    """Console-script entry point (``attnviz-code``)."""
    return code_main(sys.argv[1:])


def _code(argv: list[str], voice: _Voice) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help prints and exits 0
        return int(exc.code or 0)
    args.heads = None  # what render's reader asks: one head, not the grid
    data_path = Path(args.data) if args.data else None
    if data_path is not None and not (data_path.parent if str(data_path.parent) else Path(".")).is_dir():
        raise CodeError(
            message(
                QT_TRANSLATE_NOOP("Code", "--data {path}: the folder {folder} does not exist"),
                path=str(data_path),
                folder=str(data_path.parent),
            ),
            EXIT_USAGE,
        )
    from .presets import PRESETS

    notes: list[str] = []
    if args.preset is not None:
        if args.preset not in PRESETS:
            raise CodeError(
                message(
                    QT_TRANSLATE_NOOP("Code", "unknown preset {name}; choose one of {choices}"),
                    name=repr(args.preset),
                    choices=", ".join(PRESETS),
                ),
                EXIT_USAGE,
            )
        state, shown, source = PRESETS[args.preset].build(), Focus(), args.preset
    else:
        state, shown, source = _load(args, notes)
    # --layer/--head as render takes them; else the head the file shows first (a session's own).
    focus = _focus_head(state, shown, args, source)
    # torch loads only once the input is read.
    from .snippets import DATA_FILE, SnippetError, make_snippet

    data_file = DATA_FILE if data_path is None else data_path.resolve().as_posix()
    try:
        snippet = make_snippet(state, args.framework, data_file=data_file, focus=focus)
    except SnippetError as exc:
        raise CodeError(message(_LINE, name=source, problem=exc.args[0])) from exc
    if snippet.data:
        if data_path is None:
            raise CodeError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Code",
                        "{name}: its arrays are too big to print into the script; give --data FILE to write them "
                        "to FILE, which the script loads",
                    ),
                    name=source,
                ),
                EXIT_USAGE,
            )
        try:
            snippet.save_data(data_path)
        except OSError as exc:
            raise CodeError(
                message(
                    QT_TRANSLATE_NOOP("Code", "cannot write {path}: {error}"),
                    path=str(data_path),
                    error=exc.strerror or str(exc),
                )
            ) from exc
        notes.append(
            message(QT_TRANSLATE_NOOP("Code", "the script loads its larger arrays from {path}"), path=data_file)
        )
    for note in notes:
        _say(voice.text(message(QT_TRANSLATE_NOOP("Code", "note: {note}"), note=note)), sys.stderr)
    sys.stdout.write(snippet.code)
    return 0
