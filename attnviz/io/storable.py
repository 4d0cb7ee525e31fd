"""What a file can keep of a live capture: ``storable(run)``.

A capture holds FlexAttention's ``mask_mod`` and ``score_mod`` as the functions the model
passed (so the app evaluates them as the model did, a block at a time, at any length). A file
(a capture or a session) keeps arrays: a ``mask_mod`` becomes the boolean ``attn_mask`` it
amounts to (combined with the call's own), a ``score_mod`` that adds a bias becomes that bias,
and one that does more is left out (said in the call's note, its fidelity dropped, since it
described the call with it). Both are evaluated here as FlexAttention evaluates them, with
plain torch (the engine is above the files): a ``mask_mod`` on broadcast index tensors per
(batch, head), a ``score_mod`` under ``torch.vmap``. torch is imported only for such a run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from attnviz.io._limits import format_bytes
from attnviz.model_run import AttentionCall, CallTerm, ModelRun, ModelRunError
from attnviz.tr import QT_TRANSLATE_NOOP, message

__all__ = ["MAX_DENSE_MASK_BYTES", "storable"]

#: The dense boolean mask a mask_mod becomes in a file (and a score_mod's bias) may take at most this.
MAX_DENSE_MASK_BYTES = 256 * 2**20


def storable(run: ModelRun) -> ModelRun:
    """``run`` as a capture file can keep it (see the module's note); the run itself when no
    call holds a function. Raises :class:`ModelRunError` when a mask_mod's dense mask would be
    larger than ``MAX_DENSE_MASK_BYTES``."""
    if not any(_live(call) for call in run.calls):
        return run
    calls = tuple(_storable(call) if _live(call) else call for call in run.calls)
    if all(a is b for a, b in zip(calls, run.calls)):
        return run
    return replace(run, calls=calls)


def _live(call: AttentionCall) -> bool:
    return call.masks.mask_mod is not None or any(term.kind == "score_mod" for term in call.terms)


def _storable(call: AttentionCall) -> AttentionCall:
    """``call`` as a file can keep it: a FlexAttention ``mask_mod`` evaluated into the boolean
    ``attn_mask`` it amounts to (combined with the call's own); a ``score_mod`` that adds a bias
    kept as that bias, and one that does more left out (said in the note, and the fidelity, which
    described the call with it, dropped)."""
    masks, terms, note, fidelity = call.masks, list(call.terms), call.note, call.fidelity
    if masks.mask_mod is not None:
        dense = _dense_mask_mod(call)
        attn = masks.attn_mask
        if attn is None:
            combined = dense
        elif attn.dtype == np.bool_:
            combined = np.logical_and(attn, dense)
        else:
            combined = np.where(dense, attn, -np.inf).astype(attn.dtype)
        masks = replace(masks, attn_mask=combined, mask_mod=None)
    kept: list[CallTerm] = []
    for term in terms:
        if term.kind != "score_mod":
            kept.append(term)
            continue
        bias = _score_mod_bias(call, term)
        if bias is not None:
            kept.append(CallTerm("bias", term.name, values=bias))
        else:
            text = message(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "its score_mod does more than add a bias and is not kept in the file: recomputed without it",
                )
            )
            note = f"{note}; {text}" if note else text
            fidelity = None
    if masks is call.masks and kept == list(call.terms):
        return call
    return replace(call, masks=masks, terms=tuple(kept), note=note, fidelity=fidelity)


def _dense_mask_mod(call: AttentionCall) -> np.ndarray:
    """(B, H, L_q, L_k) booleans of the call's mask_mod, refused past ``MAX_DENSE_MASK_BYTES``."""
    b, h, n_q, n_k = call.shape
    if b * h * n_q * n_k > MAX_DENSE_MASK_BYTES:
        raise ModelRunError(
            message(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "the mask_mod of call '{name}' would take {size} as the dense mask a file keeps (at most "
                    "{limit}): record fewer or shorter calls to save them",
                ),
                name=call.name,
                size=format_bytes(b * h * n_q * n_k),
                limit=format_bytes(MAX_DENSE_MASK_BYTES),
            )
        )
    import torch

    fn = call.masks.mask_mod
    q, kv = torch.arange(n_q)[:, None], torch.arange(n_k)[None, :]
    out = np.empty((b, h, n_q, n_k), dtype=bool)
    for e in range(b):
        for head in range(h):
            allowed = fn(torch.tensor(e), torch.tensor(head), q, kv)
            out[e, head] = torch.broadcast_to(torch.as_tensor(allowed, dtype=torch.bool), (n_q, n_k)).numpy()
    return out


def _score_mod_bias(call: AttentionCall, term: CallTerm) -> np.ndarray | None:
    """The bias a score_mod adds, (B, H, L_q, L_k), when it adds one (the same at scores 0 and 1,
    and -3.5), else None."""
    import torch

    b, h, n_q, n_k = call.shape
    if term.fn is None or b * h * n_q * n_k * 8 > MAX_DENSE_MASK_BYTES:
        return None
    # vmap over kv_idx, then q_idx, as FlexAttention evaluates a score_mod.
    rows: Any = torch.vmap(torch.vmap(term.fn, in_dims=(0, None, None, None, 0)), in_dims=(0, None, None, 0, None))
    q, kv = torch.arange(n_q), torch.arange(n_k)
    try:
        at = [
            torch.stack(
                [
                    rows(
                        torch.full((n_q, n_k), v, dtype=torch.float64), torch.tensor(n // h), torch.tensor(n % h), q, kv
                    )
                    for n in range(b * h)
                ]
            ).double()
            - v
            for v in (0, 1, -3.5)
        ]
    except Exception:  # noqa: BLE001 - a score_mod that cannot be evaluated so is no bias
        return None
    if not all(torch.allclose(at[0], other, rtol=0, atol=1e-9) for other in at[1:]) or not bool(
        torch.isfinite(at[0]).all()
    ):
        return None
    return at[0].reshape(b, h, n_q, n_k).numpy()
