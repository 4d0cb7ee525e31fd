"""Why attnviz cannot reproduce a call: the computations a model's own attention code commonly
gets otherwise, tried one at a time on the call's recorded queries, keys and values against its
recorded output (numpy and the engine through ``recompute_call``; no Qt).

* another **grouping of the KV heads**: query head h reading KV head h % H_kv (``repeat``)
  where attnviz, SDPA and transformers' ``repeat_kv`` give it h // (H / H_kv), or every query
  head reading one KV head (a grouped model's keys read as multi-query attention's);
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

__all__ = ["fidelity_cause", "grouping_problem", "grouping_text", "other_groupings", "tiled_heads"]


def _fidelity(call: AttentionCall) -> float | None:
    from .doctor_paths import measured_fidelity

    return measured_fidelity(replace(call, fidelity=None))


def tiled_heads(heads: int, kv_heads: int) -> list[int]:
    """The KV head each query head reads when KV heads were expanded with ``repeat`` (tiled:
    ``h % kv``) where ``repeat_interleave`` (``h // groups``, SDPA's and repeat_kv's) is meant."""
    return [head % kv_heads for head in range(heads)]


def other_groupings(heads: int, kv_heads: int) -> list[list[int]]:
    """The groupings of KV heads a path gets by mistake, each as the KV head every query head
    reads: tiled (``repeat``), then every head on one KV head (only the first of them kept
    where the model has one KV head per group of query heads: multi-query attention read into a
    grouped model). None of them is the usual ``h // groups``."""
    if not 0 < kv_heads < heads or heads % kv_heads:
        return []
    usual = [head // (heads // kv_heads) for head in range(heads)]
    found = [tiled_heads(heads, kv_heads)] + [[kv] * heads for kv in range(kv_heads)]
    return [mapping for mapping in found if mapping != usual]


def grouping_cause(mapping: list[int], kv_heads: int) -> str:
    """How a path came to read ``mapping`` (the KV head of each query head), in a clause."""
    if len(set(mapping)) == 1:
        return message(
            QT_TRANSLATE_NOOP(
                "Doctor",
                "every query head reads KV head {kv}: the keys and values of one KV head were expanded to all the "
                "heads (multi-query attention's grouping) where the model has {count}",
            ),
            kv=mapping[0],
            count=kv_heads,
        )
    return QT_TRANSLATE_NOOP("Doctor", "its KV heads were expanded with repeat where repeat_interleave is meant")


def grouping_text(mapping: list[int], kv_heads: int) -> str:
    """The doctor's clause for a call reproduced when its query heads read ``mapping``."""
    h = len(mapping)
    return message(
        QT_TRANSLATE_NOOP(
            "Doctor",
            "the head grouping: query heads 0-{last} read KV heads [{got}], not [{expected}] (h // {groups}) as SDPA "
            "and repeat_kv group them: {cause}",
        ),
        last=h - 1,
        got=", ".join(str(g) for g in mapping),
        expected=", ".join(str(head // (h // kv_heads)) for head in range(h)),
        groups=h // kv_heads,
        cause=grouping_cause(mapping, kv_heads),
    )


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
    for mapping in other_groupings(h, kv or 0):
        keys = np.asarray(call.keys)[:, mapping]
        values = np.asarray(call.values)[:, mapping]
        found = _fidelity(replace(call, keys=keys, values=values))
        if found is not None and found <= limit:
            return message(
                QT_TRANSLATE_NOOP(
                    "Doctor", "{grouping}; grouped this way, the model's output is reproduced within {found:.2g}"
                ),
                grouping=grouping_text(mapping, kv or 0),
                found=found,
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
