"""Calls as the kernel computes them: batch and head axes of size 1 broadcast.

SDPA and the eager functions' ``matmul`` broadcast a leading axis of size 1: a Q-Former's learned
queries (batch 1) attend to the keys of every batch element (batch 27, granite_speech's
projector). The recorded call is that computation with the broadcast made explicit, so every
consumer (the engine, files, the window) sees one batch and one set of heads; the call's note
says so. Keys and values of one head against several query heads are grouped-query attention
with one group, which the engine computes as such (no copies)."""

from __future__ import annotations

import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP, message


def broadcast(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, bool, str]:
    """(q, k, v) with a size-1 batch axis (dimension 0) expanded to the others' and queries of one
    head expanded to the keys' heads (4-D calls), as the kernel broadcasts them; whether keys of
    one head now serve several query heads (grouped-query attention), and a note ("" when
    nothing was broadcast). Shapes that do not broadcast are returned as they are (the
    engine's own refusal then says what differs)."""
    notes: list[str] = []
    batches = {q.shape[0], k.shape[0], v.shape[0]}
    if q.dim() == k.dim() == v.dim() and len(batches) == 2 and 1 in batches:
        b = max(batches)
        queries = q.shape[0] == 1
        q, k, v = (t.expand(b, *t.shape[1:]) if t.shape[0] == 1 else t for t in (q, k, v))
        notes.append(
            message(
                QT_TRANSLATE_NOOP("Capture", "queries of batch 1 broadcast against batch {batch}, as the kernel does")
                if queries
                else QT_TRANSLATE_NOOP(
                    "Capture", "keys and values of batch 1 broadcast against batch {batch}, as the kernel does"
                ),
                batch=b,
            )
        )
    gqa = False
    if q.dim() == 4 == k.dim() == v.dim() and k.shape[1] == v.shape[1]:
        h_q, h_k = q.shape[1], k.shape[1]
        if h_q == 1 and h_k > 1:
            q = q.expand(q.shape[0], h_k, *q.shape[2:])
            notes.append(
                message(
                    QT_TRANSLATE_NOOP(
                        "Capture", "queries of 1 head broadcast against {heads} key heads, as the kernel does"
                    ),
                    heads=h_k,
                )
            )
        elif h_k == 1 and h_q > 1:
            gqa = True
    return q, k, v, gqa, "; ".join(notes)
