"""Inputs a detector takes as text items flattened across the batch, and the state it keeps
between forwards, made from the forward's signature and docstring alone.

* Grouped items: a forward that takes a few text items per image flattened into one tensor
  (OmDet-Turbo's class names: ``classes_input_ids`` of shape ``(total_classes, sequence_length)``)
  says how many belong to each image in a ``(batch_size)`` tensor named with the same prefix
  (``classes_structure``). The generic fill (``sweep_named.fill``) sizes each of those alone,
  so the counts did not add up to the rows, and it shaped the mask by a docstring line that
  disagrees with the code (``(total_classes, num_classes, sequence_length)`` for a mask the code
  indexes like the ids). ``fill`` makes the three together: ``ITEMS`` items per image, the ids
  random tokens of the vocabulary that avoid its special ids, the mask the ids' own shape.
* Kept state: ``forget_earlier_forwards`` empties the caches a model keeps of earlier forwards'
  results (OmDet-Turbo's LRU caches of its text embeddings, keyed on the token ids), so the
  captured forward runs the text tower rather than reading what the sweep's first forward left.

Used by ``sweep_inputs.build`` (``fill``) and ``capture_sweep.sweep_implementation``.
"""

from __future__ import annotations

import re
from typing import Any

from attnviz.bench import sweep_named

#: Items (class names) per image: more than one, so the per-image regrouping is exercised.
ITEMS = 3
#: Tokens per item.
LENGTH = 6

# "total_classes (>= batch_size)": a dimension that counts items across the whole batch
_TOTAL = re.compile(r"^total_(\w+)")


def grouped(model: Any, params: Any) -> list[tuple[str, str | None, str]]:
    """(ids, mask or None, counts) for each group of flattened items the forward requires:
    ``<p>_input_ids`` whose docstring's first dimension is ``total_*`` and a ``<p>_structure``
    (or ``<p>_counts``) beside it."""
    shapes = sweep_named.doc_shapes(model.forward)
    out = []
    for name in params:
        if not name.endswith("_input_ids"):
            continue
        dims = shapes.get(name, ("", []))[1]
        if not dims or not _TOTAL.match(dims[0].split()[0]):
            continue
        prefix = name[: -len("_input_ids")]
        counts = next((f"{prefix}_{s}" for s in ("structure", "counts") if f"{prefix}_{s}" in params), None)
        if counts is None:
            continue
        mask = f"{prefix}_attention_mask" if f"{prefix}_attention_mask" in params else None
        out.append((name, mask, counts))
    return out


def fill(model: Any, config: Any, params: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """``inputs`` with each group of flattened items (``grouped``) the forward requires and they
    lack: ``ITEMS`` per batch element of the inputs already made."""
    import torch

    from attnviz.bench.sweep_inputs import BATCH, _text_ids, _vocab

    groups = [g for g in grouped(model, params) if g[0] not in inputs]
    if not groups:
        return inputs
    batch = next((int(v.shape[0]) for v in inputs.values() if hasattr(v, "dim") and v.dim() >= 1), BATCH)
    out = dict(inputs)
    generator = torch.Generator().manual_seed(4)
    for ids_name, mask_name, counts_name in groups:
        draws = -(-batch * ITEMS // BATCH)  # each draw is BATCH rows
        ids = torch.cat([_text_ids(config, _vocab(config), LENGTH, generator) for _ in range(draws)])[: batch * ITEMS]
        out[ids_name] = ids
        if mask_name is not None:
            out[mask_name] = torch.ones_like(ids)
        out[counts_name] = torch.full((batch,), ITEMS, dtype=torch.long)
    return out


def forget_earlier_forwards(model: Any) -> int:
    """Empty every least-recently-used cache a module of ``model`` keeps of earlier forwards
    (an object with a ``cache`` mapping and ``has``/``get``/``put``); how many were emptied."""
    emptied = 0
    for module in model.modules():
        for value in list(vars(module).values()):
            cache = getattr(value, "cache", None)
            if not (isinstance(cache, dict) and all(callable(getattr(value, m, None)) for m in ("has", "get", "put"))):
                continue
            cache.clear()
            if hasattr(value, "current_load"):  # OmDet-Turbo's count of what it holds
                value.current_load = 0
            emptied += 1
    return emptied
