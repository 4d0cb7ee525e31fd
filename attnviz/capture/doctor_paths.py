"""What the mask doctor says about how a call was computed rather than what its mask holds.

* ``fidelity_problems``: a call with tensors whose fidelity (attnviz's recomputation against
  the model's own output) was never measured is a warning: what it shows is not verified,
  never a silent pass; above a threshold asked for, or else above the default tolerance of the
  call's dtype (``default_tolerance``), an error: a call attnviz cannot reproduce is not a pass.
* a call the capture says was given attention dropout (``dropout_p > 0``: a model left in
  training mode) is an error: its weights are random.
* ``weights_paths``: asking for the weights (``output_attentions=True``, ``need_weights``)
  can switch a model to another code path (transformers' eager attention instead of SDPA, which
  once ran Llama without its causal mask); when the calls of one stack ran on different paths
  and the odd ones are those that were asked for weights, that is said.
* ``block_table_problems``: a FlexAttention call on the CPU whose block table skips blocks its
  mask_mod allows (``CallPath.unhonoured_blocks``): PyTorch's CPU flex_attention computed them,
  a GPU skips them, and what is shown is what the CPU computed: a warning naming the share.

Both read only what a run records (``AttentionCall.fidelity``, ``AttentionCall.path``); no torch.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np

from attnviz.state.run import AttentionCall, ModelRun
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "block_table_problems",
    "default_tolerance",
    "fidelity_problems",
    "measured_fidelity",
    "stack_group",
    "weights_paths",
]

#: The largest fidelity of a float32 (or float64) call that counts as reproduced: attnviz
#: recomputes in float64, so a faithful float32 call differs by ~1e-6; masks or score terms the
#: capture did not see differ by far more than 1e-3.
FLOAT32_TOLERANCE = 1e-3
#: Half precision rounds each weight and output to 8 (bfloat16) or 11 (float16) bits; a faithful
#: call differs by a few of its steps: 16 of them.
_HALF_STEPS = 16

#: The capture's note on a call given dropout_p > 0 (its "dropout (p = {p})" kept in translations).
_DROPOUT = re.compile(r"dropout \(p = ([^)]+)\)")

#: (kind, severity, sentence) of one finding about a call.
Problem = tuple[str, str, str]


def measured_fidelity(call: AttentionCall) -> float | None:
    """The call's fidelity: as recorded, else measured now against its output (None when it has
    no output, or cannot be recomputed)."""
    if call.fidelity is not None or call.output is None or call.weights_only:
        return call.fidelity
    from .calls import largest_difference, recompute_call

    try:
        _weights, output = recompute_call(call)
    except Exception:  # noqa: BLE001 - AttentionInputError, MemoryBudgetError: not verifiable
        return None
    import torch

    return largest_difference(output, torch.from_numpy(np.asarray(call.output)))


def default_tolerance(dtype: str | None) -> float:
    """The largest fidelity that counts as reproduced for a call computed in ``dtype``."""
    if dtype in ("float16", "bfloat16"):
        import torch

        return _HALF_STEPS * float(torch.finfo(getattr(torch, dtype)).eps)
    return FLOAT32_TOLERANCE


def fidelity_problems(call: AttentionCall, max_fidelity: float | None, captured: bool = True) -> list[Problem]:
    """ "unverified" when the capture said it could not check the call (or it has no output to
    check against); the fidelity is measured where it was not yet, and is an error above
    ``max_fidelity`` (None: the default tolerance of the call's dtype). ``captured``: the run was
    recorded from a model (a run of tensors typed or loaded without outputs claims no model to
    be faithful to)."""
    dropout = _DROPOUT.search(call.note)
    if dropout is not None:
        return [
            (
                "dropout",
                "error",
                message(
                    QT_TRANSLATE_NOOP(
                        "Doctor",
                        "attention dropout (p = {p}) was active in this call: the model ran in training mode, so its "
                        "attention is random and not what inference computes; call model.eval() before running it",
                    ),
                    p=dropout.group(1),
                ),
            )
        ]
    if call.weights_only or (call.output is None and call.fidelity is None and not captured):
        return []  # the model's own weights, as recorded; or tensors that claim no model
    fidelity = call.fidelity
    if fidelity is None and call.output is not None and not call.note and max_fidelity is None and not captured:
        return []  # tensors typed or loaded with outputs of their own, and no threshold asked for
    if fidelity is None and call.output is not None and not call.note:
        # Never checked (a captured run shown before its fidelity was measured, a file's own calls):
        # checked now: "no problem found" is never said of a model's call not reproduced.
        fidelity = measured_fidelity(call)
    if fidelity is None:
        return [
            (
                "unverified",
                "warning",
                message(
                    QT_TRANSLATE_NOOP(
                        "Doctor",
                        "attnviz could not check this call against the model's own output ({reason}): what it "
                        "shows is not verified",
                    ),
                    reason=call.note or QT_TRANSLATE_NOOP("Doctor", "no output was recorded to compare with"),
                ),
            )
        ]
    limit = default_tolerance(_dtype(call)) if max_fidelity is None else max_fidelity
    if math.isinf(fidelity) or fidelity > limit:
        from .doctor_fidelity import fidelity_cause

        cause = fidelity_cause(call, limit)
        if cause is not None:
            return [
                (
                    "fidelity",
                    "error",
                    message(
                        QT_TRANSLATE_NOOP(
                            "Doctor",
                            "attnviz's recomputation differs from the model's output by {fidelity:.3g}, more than the "
                            "{limit:.3g} allowed: attnviz cannot reproduce this call as recorded, and the mask is not "
                            "the cause: the model computes it otherwise, in {cause}",
                        ),
                        fidelity=fidelity,
                        limit=limit,
                        cause=cause,
                    ),
                )
            ]
        return [
            (
                "fidelity",
                "error",
                message(
                    QT_TRANSLATE_NOOP(
                        "Doctor",
                        "attnviz's recomputation differs from the model's output by {fidelity:.3g}, more than the "
                        "{limit:.3g} allowed: attnviz cannot reproduce this call, so what is shown may not be what "
                        "ran (masks, score terms or a head grouping the capture did not see, another dtype or "
                        "kernel); compare the paths or implementations it can run (attnviz check)",
                    ),
                    fidelity=fidelity,
                    limit=limit,
                ),
            )
        ]
    return []


def _dtype(call: AttentionCall) -> str | None:
    """The dtype the call computed in: as recorded, else its arrays' (float16 is numpy's own)."""
    if call.dtype is not None:
        return call.dtype
    return None if call.queries is None else str(np.asarray(call.queries[:0]).dtype)


def stack_group(name: str) -> str:
    """The stack a call belongs to: its module path with the layer numbers (and a repeat's " #2") out."""
    return re.sub(r"\d+", "#", re.sub(r" #\d+$", "", name))


def weights_paths(run: ModelRun) -> dict[int, list[Problem]]:
    """For each call that ran on another path than most of its stack because its weights were
    asked for: the warning."""
    groups: dict[str, list[int]] = {}
    for index, call in enumerate(run.calls):
        if call.path is not None:
            groups.setdefault(stack_group(call.name), []).append(index)
    found: dict[int, list[Problem]] = {}
    for members in groups.values():
        paths = Counter(run.calls[i].path.implementation for i in members)  # type: ignore[union-attr]
        if len(paths) < 2:
            continue
        usual, _count = paths.most_common(1)[0]
        for index in members:
            path = run.calls[index].path
            assert path is not None
            if path.implementation != usual and path.weights_requested:
                found.setdefault(index, []).append(
                    (
                        "weights_path",
                        "warning",
                        message(
                            QT_TRANSLATE_NOOP(
                                "Doctor",
                                "asking for the weights ran this call on the {path} path while the other calls of "
                                "its stack ran {usual}: what you see may not be what runs without "
                                "output_attentions (compare a capture without it: a causal mask or a kernel's "
                                "handling of empty rows can differ between paths)",
                            ),
                            path=path.implementation,
                            usual=usual,
                        ),
                    )
                )
    return found


def block_table_problems(call: AttentionCall) -> list[Problem]:
    """ "block_table" when the call's block table skips blocks its mask_mod allows and they were
    computed (PyTorch's CPU flex_attention ignores the table): block sparsity that attnviz shows
    as computed because the kernel that ran computed it, and a GPU would not."""
    share = None if call.path is None else call.path.unhonoured_blocks
    if not share:
        return []
    return [
        (
            "block_table",
            "warning",
            message(
                QT_TRANSLATE_NOOP(
                    "Doctor",
                    "its FlexAttention block table skips {share}% of blocks that its mask_mod allows; PyTorch's CPU "
                    "flex_attention ignored the table and computed them, so they are shown with weight here, but a "
                    "GPU skips them: what runs there differs (put that sparsity in the mask_mod to have it on both)",
                ),
                share=f"{100 * share:.1f}",
            ),
        )
    ]
