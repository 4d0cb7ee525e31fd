"""Why attnviz cannot reproduce a call: the computations a model's own attention code commonly
gets otherwise, tried one at a time on the call's recorded queries, keys and values against its
recorded output (numpy and the engine through ``recompute_call``; no Qt).

* another **grouping of the KV heads**: query head h reading KV head h % H_kv (``repeat``)
  where attnviz, SDPA and transformers' ``repeat_kv`` give it h // (H / H_kv);
* another **scale** of the scores: 1, 1/d, 1/sqrt(d) or sqrt(d) where the call says another.

``fidelity_cause(call, limit)`` returns one clause naming what reproduces the output within
``limit``, or None when none does (then the doctor's sentence lists the usual suspects).

A call recorded at its softmax (weights only) has no output to reproduce; the grouping its code
used is read from the values its weights were multiplied by (``CallPath.value_heads``):
``grouping_problem(call)`` names a grouping other than SDPA's, with the query heads it moves.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from attnviz.state.run import AttentionCall
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["fidelity_cause", "grouping_problem"]


def _fidelity(call: AttentionCall) -> float | None:
    from .doctor_paths import measured_fidelity

    return measured_fidelity(replace(call, fidelity=None))


def tiled_heads(heads: int, kv_heads: int) -> list[int]:
    """The KV head each query head reads when KV heads were expanded with ``repeat`` (tiled:
    ``h % kv``) where ``repeat_interleave`` (``h // groups``, SDPA's and repeat_kv's) is meant."""
    return [head % kv_heads for head in range(heads)]


def other_scales(d: int, scale: float) -> list[tuple[str, float]]:
    """The scales a path applies by mistake (1, 1/d, 1/sqrt(d), sqrt(d)), those that are not
    ``scale``: each as (its label, its value)."""
    candidates = (("1", 1.0), ("1/d", 1 / d), ("1/sqrt(d)", 1 / math.sqrt(d)), ("sqrt(d)", math.sqrt(d)))
    return [(label, other) for label, other in candidates if not math.isclose(other, scale)]


def fidelity_cause(call: AttentionCall, limit: float) -> str | None:
    """The computation that reproduces ``call``'s output within ``limit``, as a clause; None."""
    if call.queries is None or call.keys is None or call.values is None or call.output is None:
        return None
    h, kv = call.shape[1], call.kv_heads
    d = int(call.queries.shape[-1])
    if kv and kv < h and h % kv == 0:
        mapping = tiled_heads(h, kv)
        keys = np.asarray(call.keys)[:, mapping]
        values = np.asarray(call.values)[:, mapping]
        found = _fidelity(replace(call, keys=keys, values=values))
        if found is not None and found <= limit:
            return message(
                QT_TRANSLATE_NOOP(
                    "Doctor",
                    "the head grouping: the model's output is reproduced (within {found:.2g}) when query head h reads "
                    "KV head h % {kv} (KV heads [{got}]), not h // {groups} ([{expected}]) as SDPA and repeat_kv "
                    "group them: its KV heads were expanded with repeat where repeat_interleave is meant",
                ),
                found=found,
                kv=kv,
                groups=h // kv,
                got=", ".join(str(g) for g in mapping),
                expected=", ".join(str(head // (h // kv)) for head in range(h)),
            )
    scale = call.scale if call.scale is not None else 1 / math.sqrt(d)
    for label, other in other_scales(d, scale):
        found = _fidelity(replace(call, scale=other))
        if found is not None and found <= limit:
            return message(
                QT_TRANSLATE_NOOP(
                    "Doctor",
                    "the scale: the model's output is reproduced (within {found:.2g}) with its scores scaled by "
                    "{label} ({used:.4g}), not the {expected:.4g} the call was given",
                ),
                found=found,
                label=label,
                used=other,
                expected=scale,
            )
    return None


def grouping_problem(call: AttentionCall) -> tuple[str, tuple[int, ...]] | None:
    """The sentence and the query heads, when the KV heads a weights-only call's code used
    (``CallPath.value_heads``) are grouped otherwise than ``h // groups`` (SDPA's
    ``enable_gqa``, FlashAttention, transformers' ``repeat_kv``); None otherwise."""
    read = None if call.path is None else call.path.value_heads
    if read is None or len(read) != call.shape[1]:
        return None
    h, kv = len(read), max(read) + 1
    if kv >= h or h % kv:
        return None
    groups = h // kv
    expected = [head // groups for head in range(h)]
    if list(read) == expected:
        return None
    moved = tuple(head for head in range(h) if read[head] != expected[head])
    got = ", ".join(str(g) for g in read)
    wanted = ", ".join(str(g) for g in expected)
    if list(read) == tiled_heads(h, kv):
        text = message(
            QT_TRANSLATE_NOOP(
                "Doctor",
                "the KV heads are grouped by tiling (repeat) where repeat_interleave is meant: the values this "
                "call's weights were multiplied by are {kv} KV heads expanded to {h} query heads so that query "
                "head h reads KV head h % {kv} (KV heads [{got}]), where SDPA (enable_gqa), FlashAttention and "
                "transformers' repeat_kv give it KV head h // {groups} ([{wanted}]); the model's other attention "
                "paths compute different attention for the same mask; expand them with "
                "repeat_interleave({groups}, dim=1) (or repeat_kv); the mask is not the cause",
            ),
            kv=kv,
            h=h,
            got=got,
            groups=groups,
            wanted=wanted,
        )
    else:
        text = message(
            QT_TRANSLATE_NOOP(
                "Doctor",
                "the KV heads are grouped otherwise than SDPA groups them: the values this call's weights were "
                "multiplied by are {kv} KV heads expanded to {h} query heads as KV heads [{got}], where SDPA "
                "(enable_gqa), FlashAttention and transformers' repeat_kv give query head h KV head h // {groups} "
                "([{wanted}]); the model's other attention paths compute different attention for the same mask; "
                "the mask is not the cause",
            ),
            kv=kv,
            h=h,
            got=got,
            groups=groups,
            wanted=wanted,
        )
    return text, moved
