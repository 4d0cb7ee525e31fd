"""``attnviz check MODULE:FACTORY``: invariance checks on a script's live model, for CI.

    attnviz check mypackage.models:tiny_llama
    attnviz check scripts/model.py:build --checks padding,kv_cache
    attnviz check mypackage.models:tiny_llama --dtypes float16 --tol 1e-4
    attnviz check mypackage.models:tiny_llama --strict     # a check that cannot run fails

``FACTORY`` is a function of ``MODULE`` (a module to import, or a ``.py`` file) taking no
argument and returning ``(model, inputs)``: the model, and its keyword arguments as a dict (a
tokenizer's batch with ``input_ids`` and ``attention_mask``). ``attnviz.check_invariance`` runs
the checks; one line per finding, as the doctor prints them, then a summary. Exit status, as
``attnviz doctor``'s:

* 0: no finding is an error;
* 1: a finding is an error (two identical runs that differ: a model in training mode; a mask
  that does not follow the batch's padding; a sequence that changes with its padding or its
  positions; a cached step that differs from the full forward; implementations that disagree;
  rows that go NaN in another dtype), or, with ``--strict``, a check asked for could not run
  (without it, such a check is a warning: the line says why and what to change, and the summary
  counts it);
* 2: a bad command line;
* 3: the model cannot be had or does not run (the module does not import, the factory is
  missing, raises or returns something else, the model raises while a check runs it): one line
  on stderr naming where (the import, the factory or the forward), what was raised and the line
  of the user's code it came from, never a traceback. Whatever the user's code raises counts:
  ``sys.exit(0)``, ``sys.exit("msg")``, ``GeneratorExit``, any ``BaseException``; only
  ``KeyboardInterrupt`` stops the command as Ctrl+C does (130).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from attnviz.cli.doctor import EXIT_CLEAN, EXIT_ERRORS, EXIT_UNREADABLE, DoctorError, counted
from attnviz.output.terminal import EXIT_USAGE, OneLineParser, Voice, entry_point, say
from attnviz.text.tr import QT_TRANSLATE_NOOP, exception_message, message

__all__ = ["build_parser", "check_main", "load_factory", "main"]

PROG = "attnviz check"


class CheckError(DoctorError):
    """A reason to stop, phrased for the user (one line, translatable), with the doctor's exit
    statuses."""


#: The command lines that end ``--help``.
EXAMPLES = (
    "attnviz check tiny_gpt2.py:build",
    "attnviz check scripts/model.py:build --checks padding,kv_cache",
    "attnviz check mypackage.models:tiny_llama --dtypes float16 --tol 1e-4",
)


def build_parser() -> OneLineParser:
    from attnviz.compare.invariance import CHECKS  # the command's work needs torch anyway

    parser = OneLineParser(
        prog=PROG,
        examples=EXAMPLES,
        description="Run invariance checks on a live model: two identical runs first (a model in training mode), "
        "each sequence alone against the padded batch "
        "(right and left), a full forward against cached steps, eager attention against SDPA, float32 against "
        "bfloat16 and float16. MODULE:FACTORY names a function returning (model, inputs). Exit status 0 when no "
        "finding is an error, 1 when one is (or, with --strict, when a check asked for could not run), 2 for a bad "
        "command line, 3 when the model cannot be had.",
    )
    parser.add_argument("target", metavar="MODULE:FACTORY", help="e.g. mypackage.models:tiny_llama or model.py:build")
    parser.add_argument(
        "--checks",
        default=",".join(CHECKS),
        metavar="NAME,...",
        help=f"which checks, separated by commas (default: {','.join(CHECKS)})",
    )
    parser.add_argument(
        "--dtypes", default="bfloat16,float16", metavar="NAME,...", help="the dtypes of the dtype check"
    )
    parser.add_argument(
        "--implementations",
        default="eager,sdpa",
        metavar="NAME,...",
        help="the attention implementations compared (add flex_attention where the model has it)",
    )
    parser.add_argument(
        "--tol", type=float, default=1e-4, metavar="X", help="largest float32 difference that agrees (default 1e-4)"
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="a check that was asked for and could not run is an error (exit 1), not a warning",
    )
    parser.add_argument(
        "--pad-token-id", type=int, default=None, metavar="ID", help="the id that pads (default: the config's, else 0)"
    )
    return parser


def _check(args: argparse.Namespace, voice: Voice) -> int:
    from attnviz.compare.invariance import CHECKS

    checks = tuple(part.strip() for part in args.checks.split(",") if part.strip())
    unknown = [c for c in checks if c not in CHECKS]
    if not checks or unknown:
        raise CheckError(
            message(
                QT_TRANSLATE_NOOP("Invariance", "--checks {value}: expected some of {known}"),
                value=repr(args.checks),
                known=",".join(CHECKS),
            ),
            EXIT_USAGE,
        )
    if not args.tol >= 0:
        raise CheckError(
            message(
                QT_TRANSLATE_NOOP("Invariance", "--tol {value}: expected a number >= 0, e.g. 1e-4"),
                value=repr(args.tol),
            ),
            EXIT_USAGE,
        )
    dtypes = tuple(part.strip() for part in args.dtypes.split(",") if part.strip())
    implementations = tuple(part.strip() for part in args.implementations.split(",") if part.strip())
    from attnviz.compare.invariance import InvarianceArgumentError, UserCodeError, check_invariance, check_names

    try:
        # The names first: a typo is a bad command line, said before the model is built.
        check_names(dtypes, implementations, tuple(c for c in checks if c != "implementations"))
    except InvarianceArgumentError as exc:
        raise CheckError(message("--{problem}", problem=exception_message(exc)), EXIT_USAGE) from exc
    model, inputs = load_factory(args.target)
    try:
        # Implementations once the user's module has run: it may register its own
        # (transformers' AttentionInterface.register), which are then known.
        check_names((), implementations, tuple(c for c in checks if c == "implementations"))
    except InvarianceArgumentError as exc:
        raise CheckError(message("--{problem}", problem=exception_message(exc)), EXIT_USAGE) from exc
    from attnviz.capture.doctor import format_finding

    try:
        findings = check_invariance(
            model,
            inputs,
            checks,
            tol=args.tol,
            pad_token_id=args.pad_token_id,
            dtypes=dtypes,
            implementations=implementations,
        )
    except UserCodeError as exc:
        raise _failure(
            QT_TRANSLATE_NOOP("Invariance", "the model's forward raised {error}"), exc.error, target=args.target
        ) from exc
    except InvarianceArgumentError as exc:
        raise CheckError(exception_message(exc), EXIT_USAGE) from exc
    for finding in findings:
        say(voice.text(format_finding(finding)), sys.stdout)
    # A check asked for that could not run is never silence: a clean summary would claim it passed.
    skipped = (
        QT_TRANSLATE_NOOP("Invariance", "error: {note}")
        if args.strict
        else QT_TRANSLATE_NOOP("Invariance", "warning: {note}")
    )
    for note in findings.notes:
        say(voice.text(message(skipped, note=note)), sys.stdout)
    errors = sum(f.severity == "error" for f in findings) + (len(findings.notes) if args.strict else 0)
    summary = message(
        QT_TRANSLATE_NOOP("Invariance", "{errors}, {warnings} from {checks}"),
        **counted(errors, len(findings) + len(findings.notes)),
        checks=", ".join(checks),
    )
    say(voice.text(summary), sys.stdout)
    return EXIT_ERRORS if errors else EXIT_CLEAN


#: Run ``attnviz check`` with ``argv`` (without the word "check"); returns the exit status.
check_main = entry_point(build_parser, _check, failed=EXIT_UNREADABLE)
#: The console script ``attnviz-check`` (its arguments are the process's).
main = check_main


def load_factory(target: str) -> tuple[Any, dict[str, Any]]:
    """Import ``MODULE:FACTORY`` and call the factory: (model, inputs). Raises ``CheckError``."""
    module_name, sep, attr = target.rpartition(":")
    if not sep or not module_name or not attr:
        raise CheckError(
            message(
                QT_TRANSLATE_NOOP("Invariance", "{target}: expected MODULE:FACTORY, e.g. mypackage.models:tiny_llama"),
                target=repr(target),
            ),
            EXIT_USAGE,
        )
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise FileNotFoundError(f"no such file: {path}")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot import {path}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - whatever the script raises (sys.exit too) is said in one line
        raise _failure(
            QT_TRANSLATE_NOOP("Invariance", "{module} cannot be imported: {error}"), exc, module=module_name
        ) from exc
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise CheckError(
            message(QT_TRANSLATE_NOOP("Invariance", "{module} has no function {name}"), module=module_name, name=attr)
        )
    try:
        made = factory()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - sys.exit(0) in a factory must not end the check as a pass
        raise _failure(
            QT_TRANSLATE_NOOP("Invariance", "the factory {target} raised {error}"), exc, target=target
        ) from exc
    if isinstance(made, tuple) and len(made) == 2 and not callable(made[0]):
        raise CheckError(
            message(
                QT_TRANSLATE_NOOP(
                    "Invariance", "{target} returned {type} as the model; expected a torch.nn.Module (a callable)"
                ),
                target=target,
                type="None" if made[0] is None else type(made[0]).__name__,
            )
        )
    if not (isinstance(made, tuple) and len(made) == 2 and hasattr(made[1], "keys")):
        raise CheckError(
            message(
                QT_TRANSLATE_NOOP(
                    "Invariance", "{target} must return (model, inputs), inputs a dict; it returned {type}"
                ),
                target=target,
                type=type(made).__name__,
            )
        )
    return made[0], dict(made[1])


def _failure(text: str, exc: BaseException, **names: object) -> CheckError:
    """``text`` with ``{error}`` what the user's code raised (its type and words: the script's own
    exception may say nothing without its type; ``sys.exit()``'s code, None included, is said as
    such), then the line of the user's code it came from."""
    from attnviz.compare.invariance import user_frame

    if isinstance(exc, SystemExit):
        error = f"SystemExit({exc.code!r})"
    else:
        words = str(exc)
        error = f"{type(exc).__name__}: {words}" if words else type(exc).__name__
    where = user_frame(exc)
    found = message(text, error=error, **names)
    if where is None:
        return CheckError(found)
    return CheckError(message(QT_TRANSLATE_NOOP("Invariance", "{found} (at {where})"), found=found, where=where))
