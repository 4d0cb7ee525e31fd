"""Invariance checks on a live model: two runs that must agree, compared on real tokens only.

    findings = attnviz.check_invariance(model, batch)            # every check that applies
    findings = attnviz.check_invariance(model, batch, checks=("padding", "kv_cache"))
    for f in findings:
        print(attnviz.capture.format_finding(f))
    findings.notes                                               # checks that did not apply, and why

How masking bugs are found in practice: not in one run, but in a difference between two runs
that must agree. Each check runs the model twice under a capture and compares, call by call,
the attention weights of real tokens (attnviz's recomputation of what each call was given) and
then the model's output:

* ``"padding"``: each sequence alone against its row in a batch padded on the right and on the
  left (the batch's real tokens, from its ``attention_mask``, re-padded with one pad more than the
  longest needs). A left-padding difference that adjusted ``position_ids`` removes is named so.
* ``"kv_cache"``: a full forward against a prefill, a one-token cached step and a several-token
  cached step (the KV cache: ``past_key_values``, ``cache`` on transformers 5.24); the steps' rows
  against the same rows of the full forward.
* ``"implementations"``: transformers' eager attention against SDPA (``set_attn_implementation``;
  ``implementations=`` adds others, such as "flex_attention").
* ``"dtype"``: float32 against bfloat16 and float16 (a copy of the model): which calls' rows go
  NaN or infinite where float32's are finite, and whether a mask's fill overflows to -inf.

Findings are the doctor's (:class:`attnviz.capture.Finding`): the first call where the runs part
(its heads, batch elements and query rows, in the checked batch's positions) and a sentence with
the likely cause and the fix; ``call`` is -1 where only the model's output differs. A check that
does not apply (no KV-cache argument, not a transformers model, ...) is skipped and said in
``notes``, in words that say what to change; ``attnviz check`` counts it as a warning.

Each check is a module of ``attnviz.compare.checks`` (one ``InvarianceCheck`` subclass over the
shared ``Subject``); this module composes them in the order asked, determinism first.
"""

from __future__ import annotations

import os
import sysconfig
import types
from collections.abc import Iterable, Sequence
from typing import Any

import torch

from attnviz.capture.doctor import Finding
from attnviz.compare.checks.base import (
    InvarianceArgumentError,
    InvarianceCheck,
    InvarianceFinding,
    Subject,
    UserCodeError,
    run_user,
)
from attnviz.compare.checks.determinism import DeterminismCheck
from attnviz.compare.checks.dtype import DtypeCheck
from attnviz.compare.checks.implementations import ImplementationsCheck
from attnviz.compare.checks.kv_cache import KvCacheCheck
from attnviz.compare.checks.padding import PaddingCheck
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "CHECKS",
    "Findings",
    "InvarianceArgumentError",
    "InvarianceFinding",
    "UserCodeError",
    "check_invariance",
    "run_user",
    "check_names",
    "implementation_names",
    "user_frame",
]

CHECKS = ("determinism", "padding", "kv_cache", "implementations", "dtype")
#: float32 runs of one model on other batch shapes, kernels or cache layouts agree to ~1e-6.
DEFAULT_TOLERANCE = 1e-4


def user_frame(error: BaseException) -> str | None:
    """``file:line`` of the deepest frame of ``error``'s traceback in the user's code (outside
    attnviz, PyTorch, transformers and the standard library), None when there is none."""
    skipped = [os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.abspath(torch.__file__))]
    for key in ("stdlib", "platstdlib"):
        with_path = sysconfig.get_paths().get(key)
        if with_path:
            skipped.append(os.path.abspath(with_path))
    try:
        import transformers

        skipped.append(os.path.dirname(os.path.abspath(transformers.__file__)))
    except ImportError:
        pass
    found: str | None = None
    tb: types.TracebackType | None = error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not name.startswith("<") and not any(os.path.abspath(name).startswith(p + os.sep) for p in skipped):
            found = f"{name}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def implementation_names() -> tuple[str, ...]:
    """The attention implementations transformers knows here ("eager" and its registry's)."""
    try:
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    except ImportError:
        return ("eager", "sdpa")
    return ("eager", *(name for name in ALL_ATTENTION_FUNCTIONS.valid_keys() if name != "eager"))


class Findings(list[Finding]):
    """The findings, in check order; ``notes``: the checks skipped, and why."""

    def __init__(self, findings: Iterable[Finding] = (), notes: Sequence[str] = ()) -> None:
        super().__init__(findings)
        self.notes = list(notes)


def check_invariance(
    model: torch.nn.Module,
    inputs: dict[str, Any],
    checks: Sequence[str] = CHECKS,
    *,
    tol: float = DEFAULT_TOLERANCE,
    pad_token_id: int | None = None,
    dtypes: Sequence[str] = ("bfloat16", "float16"),
    implementations: Sequence[str] = ("eager", "sdpa"),
) -> Findings:
    """Run the ``checks`` (see the module's note) on ``model`` with ``inputs`` (its keyword
    arguments: a tokenizer's batch with ``input_ids`` and ``attention_mask``). ``tol``: the largest
    weight or output difference of float32 runs that counts as agreement. ``pad_token_id``: what
    pads (default: the model config's, else 0). ``dtypes``: the dtypes compared with float32.
    ``implementations``: transformers' attention implementations compared with SDPA (add
    "flex_attention" where the model has it: on the CPU it compiles, tens of seconds).

    Example::

        findings = attnviz.check_invariance(model, tokenizer(["a b", "c"], padding=True, return_tensors="pt"))
        print(findings)                      # one line per finding, as ``attnviz check`` prints them
    """
    unknown = [c for c in checks if c not in CHECKS]
    if isinstance(checks, str) or unknown:
        raise InvarianceArgumentError(
            message(
                QT_TRANSLATE_NOOP("Invariance", "checks: {given} is not among {known}"),
                given=repr(checks if isinstance(checks, str) else unknown[0]),
                known=", ".join(CHECKS),
            )
        )
    if not callable(model):
        raise TypeError(
            message(
                QT_TRANSLATE_NOOP("Invariance", "model must be a torch.nn.Module (a callable), not {type}"),
                type=type(model).__name__,
            )
        )
    if not isinstance(inputs, dict) and not (hasattr(inputs, "keys") and hasattr(inputs, "__getitem__")):
        raise TypeError(
            QT_TRANSLATE_NOOP(
                "Invariance", "inputs must be the model's keyword arguments (a dict, a tokenizer's batch)"
            )
        )
    check_names(dtypes, implementations, checks)
    inputs = dict(inputs)
    out = Findings()
    subject = Subject(model, inputs, tol, pad_token_id)
    # Two identical runs first, whatever was asked: a model whose runs differ by themselves would
    # have every other check blame padding, caches or paths for its noise.
    noise, _ = DeterminismCheck(subject).run()
    if noise:
        out.extend(noise)
        rest = [c for c in checks if c != "determinism"]
        if rest:
            out.notes.append(
                message(
                    QT_TRANSLATE_NOOP(
                        "Invariance",
                        "{checks}: not checked (two identical runs of the model differ: every difference would be "
                        "that noise)",
                    ),
                    checks=", ".join(rest),
                )
            )
        return out
    for name in checks:
        if name == "determinism":
            continue
        found, note = _check(name, subject, dtypes, implementations).run()
        out.extend(found)
        if note:
            out.notes.append(note)
    return out


def _check(name: str, subject: Subject, dtypes: Sequence[str], implementations: Sequence[str]) -> InvarianceCheck:
    """The check called ``name`` (one of CHECKS but determinism) on ``subject``."""
    kinds: dict[str, type[InvarianceCheck]] = {
        "padding": PaddingCheck,
        "kv_cache": KvCacheCheck,
        "implementations": ImplementationsCheck,
        "dtype": DtypeCheck,
    }
    return kinds[name](subject, {"dtype": dtypes, "implementations": implementations}.get(name, ()))


def check_names(dtypes: Sequence[str], implementations: Sequence[str], checks: Sequence[str]) -> None:
    """Refuse a dtype or implementation name before the model runs (not after minutes of checks)."""
    if "dtype" in checks:
        for name in dtypes:
            dtype = getattr(torch, name, None) if isinstance(name, str) else None
            if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
                raise InvarianceArgumentError(
                    message(QT_TRANSLATE_NOOP("Invariance", "dtypes: {name} is not a floating dtype"), name=repr(name))
                )
    if "implementations" in checks:
        known = implementation_names()
        if isinstance(implementations, str) or not implementations:
            bad: object = implementations
        else:
            bad = next((name for name in implementations if name not in known), None)
        if bad is not None:
            raise InvarianceArgumentError(
                message(
                    QT_TRANSLATE_NOOP("Invariance", "implementations: {name} is not one of {known}"),
                    name=repr(bad),
                    known=", ".join(known),
                )
            )


# ----------------------------------------------------------------------------- one run
