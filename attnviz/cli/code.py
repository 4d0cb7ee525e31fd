"""``attnviz code``: the current inputs and settings of a preset or a file, as a script, on stdout.

    attnviz code --framework tensorflow --preset additive-toy > snippet.py
    attnviz code --framework jax --load work.attnviz
    attnviz code --framework mxnet --load bert.attnviz-capture --layer 1 --head 5
    attnviz code --framework pytorch --load big.npz --data big_inputs.npz
    attnviz code --framework pytorch --preset dot-toy --mask-mode strict --window 4

The script is plain PyTorch, TensorFlow, MXNet or JAX code (``attnviz.snippets``) or, with
``--framework attnviz``, a call of ``attnviz.engine.attend``; run, it prints the weights and the
output (``--save-weights PATH`` also saves the weights). Inputs too big to be written into the
script go to the data file ``--data`` names, which the script loads.

Files are read as ``attnviz render`` reads them (sessions, captures, tensor files with ``--role``),
and it fails as render does: exit status 1 and ONE line on stderr for a file or an input that
cannot be written as code, 2 for a bad command line; notes go to stderr, so stdout is the script
alone. Lines are in the system's language. The settings take the same options as render's (one
per setting declared in ``attnviz.state.settings``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attnviz.cli.command_inputs import LINE, add_input_options, add_setting_options, command_state, input_paths
from attnviz.output.terminal import EXIT_USAGE, CommandError, OneLineParser, Voice, entry_point, say
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["build_parser", "code_main", "main"]

PROG = "attnviz code"
EXIT_FAILED = 1
#: The frameworks, as ``attnviz.snippets.FRAMEWORKS`` lists them (here without importing it: the
#: parser must answer --help before torch loads).
FRAMEWORK_CHOICES = ("pytorch", "tensorflow", "mxnet", "jax", "attnviz")


class CodeError(CommandError):
    """A reason to stop, phrased for the user (one line, translatable)."""


#: The command lines that end ``--help``.
EXAMPLES = (
    "attnviz code --framework tensorflow --preset additive-toy > snippet.py",
    "attnviz code --framework jax --load work.attnviz",
    "attnviz code --framework pytorch --load big.npz --data big_inputs.npz",
)


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=PROG,
        examples=EXAMPLES,
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
    add_input_options(parser, role_help="which array of a tensor file plays a role, as for attnviz render (repeatable)")
    parser.add_argument("--head", type=int, metavar="N", help="head of a model's tensors (default 0)")
    parser.add_argument(
        "--data",
        metavar="FILE",
        help="write every array too big to print (over 2000 numbers) to FILE, a .npz the script loads, "
        "instead of embedding it in the script",
    )
    add_setting_options(parser)  # the settings last, as render's --help lists them
    return parser


def _code(args: argparse.Namespace, voice: Voice) -> int:
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
    if data_path is not None:
        _check_data_path(data_path, args)
    notes: list[str] = []
    # --layer/--head as render takes them; else the head the file shows first (a session's own).
    state, focus, source = command_state(args, notes, file_head=args.head)
    # torch loads only once the input is read.
    from attnviz.snippets import DATA_FILE, MAX_EMBEDDED, MAX_INLINE, SnippetError, make_snippet

    data_file = DATA_FILE if data_path is None else data_path.resolve().as_posix()
    # Given a data file, every array too big to print goes there rather than into the script as
    # base64: asking for the file says the script should stay readable.
    most_embedded = MAX_EMBEDDED if data_path is None else MAX_INLINE
    try:
        snippet = make_snippet(state, args.framework, data_file=data_file, focus=focus, max_embedded=most_embedded)
    except SnippetError as exc:
        raise CodeError(message(LINE, name=source, problem=exc.args[0])) from exc
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
            snippet.save_data(data_path, inputs=input_paths(args))
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
        say(voice.text(message(QT_TRANSLATE_NOOP("Code", "note: {note}"), note=note)), sys.stderr)
    sys.stdout.write(snippet.code)
    return 0


def _check_data_path(data_path: Path, args: argparse.Namespace) -> None:
    """Refuse ``--data`` naming an input, a FIFO (opening it would block for ever), a device or a
    folder before anything is read or computed (checked again when it is written)."""
    from attnviz.io.paths import OutputRefused, check_output

    try:
        check_output(data_path, input_paths(args))
    except OutputRefused as exc:
        raise CodeError(
            message(QT_TRANSLATE_NOOP("Code", "--data {path}: {error}"), path=str(data_path), error=exc.strerror),
            EXIT_USAGE,
        ) from exc


#: Run ``attnviz code`` with ``argv`` (without the word "code"); returns the exit status.
code_main = entry_point(build_parser, _code, failed=EXIT_FAILED)
#: The console script ``attnviz-code`` (its arguments are the process's).
main = code_main
