"""``attnviz doctor FILE``: the mask doctor's findings on a capture file, as text, for CI.

    attnviz doctor run.attnviz-capture
    attnviz doctor run.attnviz-capture --pad-token "<|endoftext|>"

One line per finding ("error: call 3 (encoder.layer.3.attention.self), batch 1, rows 5-7: ..."),
then a summary. Exit status, so that CI tells a bug in the model from a broken artifact:

* 0: no finding is an error (warnings alone pass);
* 1: a finding is an error (a mask bug, weights that are no distribution, scores that overflow);
* 2: a bad command line;
* 3: the file cannot be read (missing, not a capture, damaged, from a newer attnviz) or could
  not be diagnosed: one line on stderr naming it, never a traceback.

Lines are in the system's language, as ``attnviz render`` prints them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .terminal import EXIT_USAGE, CommandError, OneLineParser, Voice, run_command, say
from .tr import QT_TRANSLATE_NOOP, exception_message, message, plural

__all__ = ["EXIT_CLEAN", "EXIT_ERRORS", "EXIT_UNREADABLE", "EXIT_USAGE", "build_parser", "doctor_main", "main"]

PROG = "attnviz doctor"
EXIT_CLEAN = 0
EXIT_ERRORS = 1
EXIT_UNREADABLE = 3


class DoctorError(CommandError):
    """A reason to stop, phrased for the user (one line, translatable)."""

    def __init__(self, text: str, status: int = EXIT_UNREADABLE) -> None:
        super().__init__(text, status)


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=PROG,
        description="List what is wrong with the masks of a captured model run "
        "(attnviz.capture(model).save(FILE)): one line per finding. Exit status 0 when no finding is an "
        "error, 1 when one is, 2 for a bad command line, 3 when the file cannot be read.",
    )
    parser.add_argument("file", metavar="FILE", help="a capture file (.attnviz-capture)")
    parser.add_argument(
        "--pad-token",
        action="append",
        default=[],
        metavar="TOKEN",
        help="a token that pads sequences, besides [PAD], <pad> and <|pad|> (repeatable; GPT-2 pads "
        "with <|endoftext|>)",
    )
    parser.add_argument(
        "--lengths",
        metavar="N,N,...",
        help="the real length of each batch element (right padding), when the capture holds no tokens",
    )
    return parser


def doctor_main(argv: Sequence[str] | None = None) -> int:
    """Run ``attnviz doctor`` with ``argv`` (without the word "doctor"); returns the exit status."""
    return run_command(build_parser(), _doctor, argv, failed=EXIT_UNREADABLE)


#: The console script ``attnviz-doctor`` (its arguments are the process's).
main = doctor_main


def _doctor(args: argparse.Namespace, voice: Voice) -> int:
    lengths = _parse_lengths(args.lengths) if args.lengths else None
    from .io import AttnvizFileError, load_capture

    try:
        run = load_capture(args.file)
    except AttnvizFileError as exc:
        raise DoctorError(exception_message(exc)) from exc
    # torch loads only once the file is known to be a capture.
    from .capture.doctor import DEFAULT_PAD_TOKENS, diagnose_run, format_finding

    try:
        findings = diagnose_run(run, pad_tokens=(*DEFAULT_PAD_TOKENS, *args.pad_token), lengths=lengths)
    except ValueError as exc:  # lengths that do not fit the batch
        raise DoctorError(exception_message(exc), EXIT_USAGE) from exc
    for finding in findings:
        say(voice.text(format_finding(finding)), sys.stdout)
    errors = sum(f.severity == "error" for f in findings)
    calls = plural(run.layers, QT_TRANSLATE_NOOP("Doctor", "{n} call"), QT_TRANSLATE_NOOP("Doctor", "{n} calls"))
    if findings:
        summary = message(
            QT_TRANSLATE_NOOP("Doctor", "{errors}, {warnings} in {calls}"),
            errors=plural(errors, QT_TRANSLATE_NOOP("Doctor", "{n} error"), QT_TRANSLATE_NOOP("Doctor", "{n} errors")),
            warnings=plural(
                len(findings) - errors,
                QT_TRANSLATE_NOOP("Doctor", "{n} warning"),
                QT_TRANSLATE_NOOP("Doctor", "{n} warnings"),
            ),
            calls=calls,
        )
    else:
        summary = message(QT_TRANSLATE_NOOP("Doctor", "no mask problem found in {calls}"), calls=calls)
    say(voice.text(summary), sys.stdout)
    return EXIT_ERRORS if errors else EXIT_CLEAN


def _parse_lengths(text: str) -> list[int]:
    try:
        lengths = [int(part) for part in text.split(",")]
    except ValueError:
        lengths = []
    if not lengths or min(lengths) < 0:
        raise DoctorError(
            message(
                QT_TRANSLATE_NOOP(
                    "Doctor", "--lengths {text}: expected whole numbers >= 0 separated by commas, e.g. 7,5,3"
                ),
                text=repr(text),
            ),
            EXIT_USAGE,
        )
    return lengths
