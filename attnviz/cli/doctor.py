"""``attnviz doctor FILE``: the mask doctor's findings on a capture file, as text, for CI.

    attnviz doctor run.attnviz-capture
    attnviz doctor run.attnviz-capture --pad-token "<|endoftext|>"
    attnviz doctor run.attnviz-capture --max-fidelity 1e-5 --calls
    attnviz doctor rank0.attnviz-capture rank1.attnviz-capture     # the ranks of one run, merged

One line per finding ("error: call 3 (encoder.layer.3.attention.self), batch 1, rows 5-7: ..."),
then a summary with the calls' largest fidelity (``--calls``: a line per call, with the path it
ran and its fidelity). Several files are the ranks of one distributed run
(``attnviz.capture.merge``). Exit status, so that CI tells a bug in the model from a broken
artifact:

* 0: no finding is an error (warnings alone pass: a call that could not be verified is one);
* 1: a finding is an error (a mask bug, weights that are no distribution, scores that overflow,
  a call attnviz cannot reproduce: a fidelity above ``--max-fidelity``, by default above 1e-3 for
  float32 calls and 16 steps of their precision for half-precision ones);
* 2: a bad command line;
* 3: the file cannot be read (missing, not a capture, damaged, from a newer attnviz) or could
  not be diagnosed: one line on stderr naming it, never a traceback.

Lines are in the system's language, as ``attnviz render`` prints them.
"""

from __future__ import annotations

import argparse
import sys

from attnviz.output.terminal import EXIT_USAGE, CommandError, OneLineParser, Voice, entry_point, say
from attnviz.text.tr import QT_TRANSLATE_NOOP, Message, exception_message, message, plural

__all__ = [
    "EXIT_CLEAN",
    "EXIT_ERRORS",
    "EXIT_UNREADABLE",
    "EXIT_USAGE",
    "build_parser",
    "counted",
    "doctor_main",
    "main",
]

PROG = "attnviz doctor"
EXIT_CLEAN = 0
EXIT_ERRORS = 1
EXIT_UNREADABLE = 3


class DoctorError(CommandError):
    """A reason to stop, phrased for the user (one line, translatable)."""

    def __init__(self, text: str, status: int = EXIT_UNREADABLE) -> None:
        super().__init__(text, status)


#: The command lines that end ``--help``.
EXAMPLES = (
    "attnviz doctor run.attnviz-capture",
    'attnviz doctor run.attnviz-capture --pad-token "<|endoftext|>"',
    "attnviz doctor rank0.attnviz-capture rank1.attnviz-capture",
)


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=PROG,
        examples=EXAMPLES,
        description="List what is wrong with the masks of a captured model run "
        "(attnviz.capture(model).save(FILE)): one line per finding. Exit status 0 when no finding is an "
        "error, 1 when one is, 2 for a bad command line, 3 when the file cannot be read.",
    )
    parser.add_argument(
        "files",
        metavar="FILE",
        nargs="+",
        help="a capture file (.attnviz-capture); several: the ranks of one distributed run, merged",
    )
    parser.add_argument(
        "--pad-token",
        action="append",
        default=[],
        metavar="TOKEN",
        help="a token that pads sequences, besides [PAD], <pad> and <|pad|> (repeatable; GPT-2 pads "
        "with <|endoftext|>)",
    )
    parser.add_argument(
        "--max-fidelity",
        type=float,
        metavar="X",
        help="an error for every call whose recomputation differs from the model's output by more than X "
        "(default: 1e-3 for float32 calls, 16 steps of their precision for float16 and bfloat16 ones)",
    )
    parser.add_argument("--calls", action="store_true", help="a line per call: the path it ran and its fidelity")
    parser.add_argument(
        "--lengths",
        metavar="N,N,...",
        help="the real length of each batch element (right padding), when the capture holds no tokens",
    )
    return parser


def _doctor(args: argparse.Namespace, voice: Voice) -> int:
    lengths = _parse_lengths(args.lengths) if args.lengths else None
    limit = args.max_fidelity
    if limit is not None and not limit >= 0:  # NaN too
        raise DoctorError(
            message(
                QT_TRANSLATE_NOOP("Doctor", "--max-fidelity {value}: expected a number >= 0, e.g. 1e-5"),
                value=repr(limit),
            ),
            EXIT_USAGE,
        )
    from attnviz.io import AttnvizFileError, load_capture
    from attnviz.state.run import ModelRunError

    try:
        runs = [load_capture(path) for path in args.files]
    except AttnvizFileError as exc:
        raise DoctorError(exception_message(exc)) from exc
    # torch loads only once the files are known to be captures.
    from attnviz.capture.doctor import DEFAULT_PAD_TOKENS, diagnose_run, format_finding

    if len(runs) > 1:
        from attnviz.capture.merge import merge_runs

        try:
            run = merge_runs(runs)
        except ModelRunError as exc:
            raise DoctorError(exception_message(exc)) from exc
    else:
        run = runs[0]
    try:
        findings = diagnose_run(
            run, pad_tokens=(*DEFAULT_PAD_TOKENS, *args.pad_token), lengths=lengths, max_fidelity=limit
        )
    except ValueError as exc:  # lengths that do not fit the batch
        raise DoctorError(exception_message(exc), EXIT_USAGE) from exc
    for finding in findings:
        say(voice.text(format_finding(finding)), sys.stdout)
    # What the capture could not be checked for (positions it does not show): said, never an error.
    for note in getattr(findings, "notes", ()):
        say(voice.text(message(QT_TRANSLATE_NOOP("Doctor", "note: {note}"), note=note)), sys.stdout)
    if args.calls:
        for index, call in enumerate(run.calls):
            say(voice.text(_call_line(index, call)), sys.stdout)
    errors = sum(f.severity == "error" for f in findings)
    calls = plural(run.layers, QT_TRANSLATE_NOOP("Doctor", "{n} call"), QT_TRANSLATE_NOOP("Doctor", "{n} calls"))
    if findings:
        summary = message(
            QT_TRANSLATE_NOOP("Doctor", "{errors}, {warnings} in {calls}"),
            calls=calls,
            **counted(errors, len(findings)),
        )
    else:
        summary = message(QT_TRANSLATE_NOOP("Doctor", "no mask problem found in {calls}"), calls=calls)
    measured = [c.fidelity for c in run.calls if c.fidelity is not None]
    if measured:
        summary = message(
            QT_TRANSLATE_NOOP("Doctor", "{summary}; fidelity at most {fidelity:.2g}"),
            summary=summary,
            fidelity=max(measured),
        )
    say(voice.text(summary), sys.stdout)
    return EXIT_ERRORS if errors else EXIT_CLEAN


#: Run ``attnviz doctor`` with ``argv`` (without the word "doctor"); returns the exit status.
doctor_main = entry_point(build_parser, _doctor, failed=EXIT_UNREADABLE)
#: The console script ``attnviz-doctor`` (its arguments are the process's).
main = doctor_main


def counted(errors: int, findings: int) -> dict[str, Message]:
    """ "2 errors" and "1 warning" of a summary (``errors`` of the ``findings``), as ``{errors}``
    and ``{warnings}``."""
    return {
        "errors": plural(errors, QT_TRANSLATE_NOOP("Doctor", "{n} error"), QT_TRANSLATE_NOOP("Doctor", "{n} errors")),
        "warnings": plural(
            findings - errors, QT_TRANSLATE_NOOP("Doctor", "{n} warning"), QT_TRANSLATE_NOOP("Doctor", "{n} warnings")
        ),
    }


def _call_line(index: int, call: object) -> str:
    """ "call 3 (name): sdpa, fidelity 2.4e-07" (or why it has none)."""
    from attnviz.state.run import AttentionCall

    assert isinstance(call, AttentionCall)
    path = call.path.implementation if call.path is not None else QT_TRANSLATE_NOOP("Doctor", "path not recorded")
    fidelity: str
    if call.weights_only:
        fidelity = QT_TRANSLATE_NOOP("Doctor", "weights only, as recorded")
    elif call.fidelity is None:
        fidelity = QT_TRANSLATE_NOOP("Doctor", "fidelity not measured")
    else:
        fidelity = message(QT_TRANSLATE_NOOP("Doctor", "fidelity {value:.2g}"), value=call.fidelity)
    return message(
        QT_TRANSLATE_NOOP("Doctor", "call {index} ({name}): {path}, {fidelity}"),
        index=index,
        name=call.name,
        path=path,
        fidelity=fidelity,
    )


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
