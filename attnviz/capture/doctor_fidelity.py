"""Why attnviz cannot reproduce a call: the computations a model's own attention code commonly
gets otherwise, tried one at a time on the call's recorded queries, keys and values against its
recorded output (numpy and the engine through ``recompute_call``; no Qt).

* another **grouping of the KV heads**: query head h reading KV head h % H_kv (``repeat``)
  where attnviz, SDPA and transformers' ``repeat_kv`` give it h // (H / H_kv);
* another **scale** of the scores: 1, 1/d, 1/sqrt(d) or sqrt(d) where the call says another.

``fidelity_cause(call, limit)`` returns one clause naming what reproduces the output within
``limit``, or None when none does (then the doctor's sentence lists the usual suspects).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from attnviz.state.run import AttentionCall
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["fidelity_cause"]


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
