"""``attnviz diff A B``: where two captured runs' attention differs, as text, for CI.

    attnviz diff before.attnviz-capture after.attnviz-capture
    attnviz diff a.attnviz-capture b.attnviz-capture --tol 1e-4 --top 3

One line per call that differs beyond the tolerance, the worst first ("call 3 (name): weights
differ by up to 0.51 (batch 1, head 0), outputs by up to 0.3"), a line per call found on one side
only, then a summary. Exit status, as ``attnviz doctor``'s:

* 0: every call matched and no weight or output differs by more than ``--tol``;
* 1: a difference beyond ``--tol``, or calls on one side only;
* 2: a bad command line;
* 3: a file cannot be read (missing, not a capture, damaged, from a newer attnviz): one line on
  stderr naming it, never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from attnviz.cli.doctor import EXIT_CLEAN, EXIT_ERRORS, EXIT_UNREADABLE, DoctorError
from attnviz.output.terminal import EXIT_USAGE, OneLineParser, Voice, entry_point, say
from attnviz.text.tr import QT_TRANSLATE_NOOP, exception_message, message, plural

__all__ = ["DEFAULT_TOLERANCE", "build_parser", "diff_main", "main"]

PROG = "attnviz diff"
#: Two runs of one model on one machine agree exactly; another kernel or batch size, to ~1e-6.
DEFAULT_TOLERANCE = 1e-5


class DiffError(DoctorError):
    """A reason to stop, phrased for the user (one line, translatable), with the doctor's exit
    statuses."""


#: The command lines that end ``--help``.
EXAMPLES = (
    "attnviz diff before.attnviz-capture after.attnviz-capture",
    "attnviz diff a.attnviz-capture b.attnviz-capture --tol 1e-4 --top 3",
)


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=PROG,
        examples=EXAMPLES,
        description="Compare two captured runs (attnviz.capture(model).save(FILE)) call by call: the "
        "largest weight and output difference per call, the worst first. Exit status 0 within --tol, 1 "
        "beyond it (or calls on one side only), 2 for a bad command line, 3 when a file cannot be read.",
    )
    parser.add_argument("a", metavar="A", help="a capture file (.attnviz-capture)")
    parser.add_argument("b", metavar="B", help="the capture file to compare it with")
    parser.add_argument(
        "--tol",
        type=float,
        default=DEFAULT_TOLERANCE,
        metavar="X",
        help=f"largest difference allowed (default {DEFAULT_TOLERANCE:g})",
    )
    parser.add_argument("--top", type=int, default=10, metavar="N", help="lines for at most N calls (default 10)")
    return parser


def _diff(args: argparse.Namespace, voice: Voice) -> int:
    tol = args.tol
    if not tol >= 0:  # NaN too
        raise DiffError(
            message(QT_TRANSLATE_NOOP("Compare", "--tol {value}: expected a number >= 0, e.g. 1e-5"), value=repr(tol)),
            EXIT_USAGE,
        )
    if args.top < 0:
        raise DiffError(
            message(QT_TRANSLATE_NOOP("Compare", "--top {value}: expected a whole number >= 0"), value=args.top),
            EXIT_USAGE,
        )
    from attnviz.io import AttnvizFileError, load_capture

    try:
        run_a, run_b = load_capture(args.a), load_capture(args.b)
    except AttnvizFileError as exc:
        raise DiffError(exception_message(exc)) from exc
    from attnviz.compare import compare
    from attnviz.engine import AttentionInputError, MemoryBudgetError

    try:
        result = compare(run_a, run_b)
    except (AttentionInputError, MemoryBudgetError) as exc:
        raise DiffError(exception_message(exc)) from exc
    beyond = [c for c in result.worst() if c.max_diff > tol]
    for each in beyond[: args.top]:
        say(voice.text(call_line(each)), sys.stdout)
    for side, names in (("A", result.only_a), ("B", result.only_b)):
        for name in names:
            say(
                voice.text(message(QT_TRANSLATE_NOOP("Compare", "only in {side}: {name}"), side=side, name=name)),
                sys.stdout,
            )
    calls = plural(
        len(result.calls), QT_TRANSLATE_NOOP("Compare", "{n} call"), QT_TRANSLATE_NOOP("Compare", "{n} calls")
    )
    if beyond or not result.matched:
        summary = message(
            QT_TRANSLATE_NOOP(
                "Compare",
                "{count} of {calls} differ by more than {tol:g}, {unmatched} unmatched; the largest weight "
                "difference {weights:.3g}, output difference {outputs:.3g}",
            )
            if result.outputs_compared
            else QT_TRANSLATE_NOOP(
                "Compare",
                "{count} of {calls} differ by more than {tol:g}, {unmatched} unmatched; the largest weight "
                "difference {weights:.3g}; outputs not compared (no call's outputs were recorded in both runs)",
            ),
            count=len(beyond),
            calls=calls,
            tol=tol,
            unmatched=len(result.only_a) + len(result.only_b),
            weights=result.max_weight_diff,
            outputs=result.max_output_diff,
        )
    else:
        summary = message(
            QT_TRANSLATE_NOOP("Compare", "the runs agree within {tol:g} in {calls} (largest difference {largest:.3g})"),
            tol=tol,
            calls=calls,
            largest=max(result.max_weight_diff, result.max_output_diff),
        )
    say(voice.text(summary), sys.stdout)
    return EXIT_ERRORS if beyond or not result.matched else EXIT_CLEAN


#: Run ``attnviz diff`` with ``argv`` (without the word "diff"); returns the exit status.
diff_main = entry_point(build_parser, _diff, failed=EXIT_UNREADABLE)
#: The console script ``attnviz-diff`` (its arguments are the process's).
main = diff_main


def call_line(each: object) -> str:
    """ "call 3 (name): weights differ by up to 0.51 (batch 1, head 0), outputs by up to 0.3"."""
    from attnviz.compare import CallDifference

    assert isinstance(each, CallDifference)
    if each.note:
        return message(QT_TRANSLATE_NOOP("Compare", "call {index}: {note}"), index=each.index_a, note=each.note)
    batch, head = each.worst
    return message(
        QT_TRANSLATE_NOOP(
            "Compare",
            "call {index} ({name}): weights differ by up to {weights:.3g} (batch {batch}, head {head}), outputs by "
            "up to {outputs:.3g}",
        )
        if each.outputs_compared
        else QT_TRANSLATE_NOOP(
            "Compare",
            "call {index} ({name}): weights differ by up to {weights:.3g} (batch {batch}, head {head}); outputs "
            "not compared (not recorded on both sides)",
        ),
        index=each.index_a,
        name=each.name,
        weights=each.max_weight_diff,
        batch=batch,
        head=head,
        outputs=each.max_output_diff,
    )
