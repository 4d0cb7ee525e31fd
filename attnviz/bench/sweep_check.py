"""Whether a capture holds every attention call of a model, each one right: the sweep's verdict
on one family and implementation.

Every recorded call is checked against a reference of its own: its recomputation from the
recorded Q, K, V against the output the model computed in that call (fidelity), so a vision or
audio tower's calls are checked like the language model's. Where the model also reports maps
(``output_attentions``: a language model's ``attentions``, and every tower's ``*_attentions``
anywhere in the output, nested outputs included), each reported map must be one a call recorded:
a call of the same shape whose weights (attnviz's recomputation, or the weights recorded) are the
map within the tolerance. A verdict is one of

* exact: every call within the tolerance (a call recorded through its weights only, the model's
  own softmax output with nothing to recompute it from: weights over its keys), every reported
  map found;
* partial: some call or map is not, with the reasons (the first is the verdict's one line);
* none: no call recorded where the model reports maps;
* no attention: no call, no map (convolutional, recurrent, state-space models).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

TOLERANCE = 1e-4


def reported_maps(output: Any, where: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    """(where, map) for every (B, H, L_q, L_k) attention map a model's output reports (or
    (B * H, L_q, L_k), or chunked or blocked 5-D): any field
    whose name ends in ``attentions``, in the output and the outputs nested in it. Maps that are
    no distribution over the keys (a linear attention's state) are left out; rows that sum to
    less than 1 are kept where the weights are all in [0, 1] (a sink's share left out of them:
    gpt-oss, Inkling 2)."""
    import torch

    found: list[tuple[str, Any]] = []
    if depth > 3 or output is None:
        return found
    items: list[tuple[str, Any]]
    if isinstance(output, dict):
        items = list(output.items())
    elif hasattr(output, "to_tuple") and hasattr(output, "keys"):
        items = [(k, output[k]) for k in output.keys()]
    else:
        return found
    for name, value in items:
        label = f"{where}.{name}" if where else str(name)
        if str(name).endswith("attentions") and isinstance(value, (tuple, list)):
            # maps grouped by kind, a tuple of tuples (OmDet-Turbo's decoder: its self-attention
            # maps, then its cross-attention's sampling weights), are read group by group
            grouped = [
                (f"[{i}][{j}]", a) for i, g in enumerate(value) if isinstance(g, (tuple, list)) for j, a in enumerate(g)
            ]
            listed = grouped or [(f"[{i}]", a) for i, a in enumerate(value)]
            # a layer's maps by kind, a dict (PEGASUS-X's encoder: {"global": ..., "local": ...})
            expanded: list[tuple[str, Any]] = []
            for index, a in listed:
                parts = a.items() if isinstance(a, dict) else [("", a)]
                expanded += [(f"{index}.{key}" if key else index, part) for key, part in parts]
            for index, a in expanded:
                # 5-D: Reformer's chunks of queries, each over the keys it gathers (B, H, C, c, K);
                # 3-D: batch and heads folded, (B * H, L_q, L_k) (SAM's vision encoder)
                if isinstance(a, torch.Tensor) and a.dim() in (3, 4, 5) and a.numel():
                    if _distribution(a.detach().float()):
                        found.append((f"{label}{index}", a.detach()))
        elif hasattr(value, "to_tuple") or isinstance(value, dict):
            found.extend(reported_maps(value, label, depth + 1))
    return found


def _distribution(a: Any) -> bool:
    """Whether most rows of ``a`` sum to 1, or every weight is in [0, 1] and most rows sum to
    more than 0 and at most 1 (a softmax with a sink's share dropped). A row of zeros is the
    model's own (a padded or masked query it zeroes: Longformer under a random mask zeroes most
    of them) and is not counted; a map of nothing but zeros is nothing to compare."""
    import torch

    sums = a.sum(-1)
    live = (a != 0).any(-1)
    if not bool(live.any()):
        return False
    sums = sums[live]
    if float(torch.isclose(sums, torch.ones_like(sums), atol=1e-3).float().mean()) > 0.5:
        return True
    values = a[torch.isfinite(a)]
    if not values.numel() or float(values.min()) < 0 or float(values.max()) > 1:
        return False
    below = (sums > 0) & (sums <= 1 + 1e-3)
    return float(below.float().mean()) > 0.5


def _is_distribution(weights: Any) -> bool:
    """Whether a call's recorded weights (the model's own softmax output, nothing to recompute
    them from) are weights over its keys: each row in [0, 1] summing to 1, or to less where the
    model zeroes or drops part of a row (padded queries, a sink's share), never more; a row of
    NaN (every key masked, the model's own result) is what it is."""
    import torch

    if not isinstance(weights, torch.Tensor):
        return False
    w = weights.detach().double()
    rows = ~torch.isnan(w).all(-1)
    w = w[rows]
    if not w.numel():
        return True
    if not bool(torch.isfinite(w).all()) or float(w.min()) < 0 or float(w.max()) > 1 + 1e-6:
        return False
    return float(w.sum(-1).max()) <= 1 + 1e-3


def _weights(call: Any) -> Any:
    """The call's weights as attnviz has them, float64; None where it cannot compute them."""
    try:
        return call.weights().detach().double()
    except Exception:  # noqa: BLE001 - a call that cannot be recomputed says so in its fidelity
        return None


def unmatched_maps(calls: list[Any], maps: list[tuple[str, Any]]) -> list[tuple[str, float | None]]:
    """Reported maps that no recorded call reproduces: (where, the smallest difference to a call
    of the same shape, or None when no call has its shape)."""

    by_shape: dict[tuple[int, ...], list[Any]] = {}
    for call in calls:
        try:
            by_shape.setdefault(tuple(call.shape), []).append(call)
        except Exception:  # noqa: BLE001 - a call without a shape matches nothing
            continue
    cache: dict[int, Any] = {}
    missing: list[tuple[str, float | None]] = []
    for where, reported in maps:
        shape = tuple(int(n) for n in reported.shape)
        if len(shape) == 5 and _global_local_calls(calls):
            gap = _blocks_gap(calls, reported.double(), cache)
            if gap is None or gap > TOLERANCE:
                missing.append((where, gap))
            continue
        if len(shape) == 5:
            gap = _chunked_gap(calls, reported.double(), cache)
            if gap is None or gap > TOLERANCE:
                missing.append((where, gap))
            continue
        candidates: list[tuple[Any, Callable[[Any, Any], Any]]] = [
            (call, _as_reported_by_shape) for call in by_shape.get(shape, [])
        ]
        # A map with batch and heads folded, (B * H, L_q, L_k) (SAM's vision encoder): a call of
        # those batch x heads, read back folded.
        candidates += [
            (call, _heads_folded)
            for size, found in by_shape.items()
            if len(shape) == 3 and len(size) == 4 and size[0] * size[1] == shape[0] and size[2:] == shape[1:]
            for call in found
        ]
        # A decoder's merged self+cross call (T5Gemma 2: one softmax over its own keys, then the
        # encoder's) is reported as two maps, each the call's columns of one side.
        candidates += [
            (call, _self_side if side == 0 else _cross_side)
            for call in calls
            if getattr(call, "self_keys", 0) and len(shape) == 4 and tuple(call.shape[:3]) == shape[:3]
            for side, width in ((0, call.self_keys), (1, call.shape[3] - call.self_keys))
            if width == shape[3]
        ]
        # Deformable attention's sampling weights are recorded heads second; the model reports
        # them (B, L_q, H, points), heads third (RT-DETR v2, D-FINE): read the call back so.
        if len(shape) == 4 and shape[1] != shape[2]:
            candidates += [(call, _heads_third) for call in by_shape.get((shape[0], shape[2], shape[1], shape[3]), [])]
        # BigBird's block-sparse call sums a key block its softmax gathers twice; the model's
        # own map keeps it once: the call's weights over its repeat counts.
        candidates += [(call, _assembled(call)) for call in by_shape.get(shape, []) if _is_block_sparse(call)]
        # A banded model (Longformer, LED) reports each query's weights on its global keys and
        # its band, (B, H, L, G + 2w + 1), and its global queries' rows apart, (B, H, L, G): its
        # call is drawn as the (L, L) map they mean, read back both ways.
        candidates += [
            (call, reading(call))
            for call in calls
            if getattr(call, "band_window", None) is not None and tuple(call.shape[:2]) == shape[:2]
            for reading in (_as_band, _as_global_rows)
        ]
        if len(shape) == 4:
            # A model that prefixes tokens of its own and reports its maps without them (CPM-Ant's
            # prompt): the call's trailing block, as many rows and keys dropped.
            candidates += [
                (call, _prefix_dropped)
                for size, found in by_shape.items()
                if len(size) == 4
                and size[:2] == shape[:2]
                and size[2] > shape[2]
                and size[2] - shape[2] == size[3] - shape[3]
                for call in found
            ]
        best: float | None = None
        for call, reading in candidates:
            if id(call) not in cache:
                cache[id(call)] = _weights(call)
            ours = cache[id(call)]
            if ours is None:
                continue
            target = reported.double()
            read = reading(ours, target)
            if read is None:
                continue
            # a reading may leave out what the model's map holds for no query (NaN in both)
            ours, target = read if isinstance(read, tuple) else (read, target)
            gap = _gap(ours, target)
            if ours.dim() == 4 and ours.shape[1] > 1:
                # A model that reports its heads' average in every head (WavLM): compared as such.
                gap = min(gap, _gap(ours.mean(dim=1, keepdim=True).expand_as(ours), target))
            best = gap if best is None else min(best, gap)
            if gap <= TOLERANCE:
                break
        if best is None or best > TOLERANCE:
            missing.append((where, best))
    return missing


def _readable(calls: list[Any], maps: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The maps a capture's calls can be compared with: every (B, H, L, K) map, a 5-D one where a
    call was recorded in Reformer's chunked layout, and deformable sampling weights per level and
    point where a call holds them flattened. Another model's 5-D ``attentions`` are no (L, K) map
    (Gemma 4's audio chunks) and are not counted."""
    from attnviz.capture.paths import reformer

    if any(reformer.layout_of(call) is not None for call in calls) or _global_local_calls(calls):
        return maps
    shapes = {tuple(int(n) for n in getattr(call, "shape", ())) for call in calls}
    out = []
    for where, value in maps:
        if value.dim() == 3:
            # batch and heads folded (SAM's vision encoder): a map where a call of that size was
            # recorded; another model's 3-D ``attentions`` are no (L, K) map and are not counted
            if any(len(s) == 4 and s[0] * s[1] == value.shape[0] and s[2:] == tuple(value.shape[1:]) for s in shapes):
                out.append((where, value))
            continue
        if value.dim() == 5:
            # Deformable sampling weights per level and point, (B, L_q, H, levels, points), heads
            # third (OmDet-Turbo's decoder): the (B, L_q, H, levels * points) map its call is,
            # where a call of that size was recorded (heads second, as unmatched_maps reads it).
            b, q, h, levels, points = value.shape
            if (b, h, q, levels * points) in shapes:
                out.append((where, value.flatten(-2)))
            continue
        out.append((where, value))
    return out


def _chunked_gap(calls: list[Any], target: Any, cache: dict[int, Any]) -> float | None:
    """The smallest difference between a map reported in chunks (Reformer's (B, H, C, c, K)) and
    the calls of one module read back in that layout (its hash rounds in order); None when no
    module's calls have that layout."""
    from attnviz.capture.paths import reformer

    modules: dict[int, list[Any]] = {}
    for call in calls:
        if reformer.layout_of(call) is not None:
            modules.setdefault(call.module_key, []).append(call)
    best: float | None = None
    for group in modules.values():
        # A module recorded twice (two forward passes): its rounds, one pass at a time.
        rounds = reformer.layout_of(group[0]).rounds  # type: ignore[union-attr]
        for start in range(0, len(group) - rounds + 1, rounds):
            passed = group[start : start + rounds]
            weights = []
            for call in passed:
                if id(call) not in cache:
                    cache[id(call)] = _weights(call)
                weights.append(cache[id(call)])
            if any(w is None for w in weights):
                continue
            ours = reformer.reported(passed, weights)
            if ours is None or tuple(ours.shape) != tuple(target.shape):
                continue
            gap = _gap(ours, target)
            best = gap if best is None else min(best, gap)
    return best


def _global_local_calls(calls: list[Any]) -> list[Any]:
    from attnviz.capture.paths import global_local

    return [call for call in calls if global_local.layout_of(call) is not None]


def _blocks_gap(calls: list[Any], target: Any, cache: dict[int, Any]) -> float | None:
    """The smallest difference between a map reported in blocks (PEGASUS-X's (B, H, blocks,
    block, G + block)) and a global-local call read back in them; None when no call has that
    layout."""
    from attnviz.capture.paths import global_local

    best: float | None = None
    for call in _global_local_calls(calls):
        if id(call) not in cache:
            cache[id(call)] = _weights(call)
        if cache[id(call)] is None:
            continue
        ours = global_local.blocks(call, cache[id(call)])
        if ours is None or tuple(ours.shape) != tuple(target.shape):
            continue
        gap = _gap(ours, target)
        best = gap if best is None else min(best, gap)
    return best


def _gap(ours: Any, target: Any) -> float:
    import torch

    both_nan = torch.isnan(ours) & torch.isnan(target)
    return float(torch.where(both_nan, 0.0, (ours - target).abs()).nan_to_num(float("inf")).max())


def _is_block_sparse(call: Any) -> bool:
    from attnviz.capture.paths import block_sparse

    return any(t.name == block_sparse.REPEATS for t in getattr(call, "terms", []))


def _assembled(call: Any) -> Callable[[Any, Any], Any]:
    """A block-sparse call's map as the model assembles it (``block_sparse.assembled``), on the
    rows of the queries it keeps: in a padded query's row its map holds the random copies of a
    key block, which its mask zeroes for that query, in place of the copy the softmax weighs (the
    rows sum to less than 1), and the model zeroes that row's output; those rows are left out."""
    import torch

    from attnviz.capture.paths import block_sparse

    def read(ours: Any, target: Any) -> Any:
        kept = block_sparse.assembled(call, ours)
        padded = getattr(call, "key_padding_mask", None)
        if kept is None or not isinstance(padded, torch.Tensor) or padded.shape != (ours.shape[0], ours.shape[2]):
            return kept
        rows = padded.to(ours.device)[:, None, :, None].expand_as(ours)
        return kept.masked_fill(rows, float("nan")), target.masked_fill(rows, float("nan"))

    return read


def _as_reported_by_shape(ours: Any, _target: Any) -> Any:
    return ours


def _heads_folded(ours: Any, target: Any) -> Any:
    return ours.reshape(target.shape)


def _heads_third(ours: Any, _target: Any) -> Any:
    return ours.transpose(1, 2)


def _self_side(ours: Any, target: Any) -> Any:
    return ours[..., : target.shape[-1]]  # the decoder's own keys come first


def _cross_side(ours: Any, target: Any) -> Any:
    return ours[..., ours.shape[-1] - target.shape[-1] :]


def _prefix_dropped(ours: Any, target: Any) -> Any:
    return ours[..., ours.shape[-2] - target.shape[-2] :, ours.shape[-1] - target.shape[-1] :]


def _as_band(call: Any) -> Callable[[Any, Any], Any]:
    """A banded call's map read back as the model's ``attentions``: each query's global keys,
    then its band (``banded.as_reported``)."""
    from attnviz.capture.paths import banded

    return lambda ours, target: banded.as_reported(
        ours, call.band_window, call.global_tokens, target.shape[-2], target.shape[-1]
    )


def _as_global_rows(call: Any) -> Callable[[Any, Any], Any]:
    """A banded call's map read back as the model's ``global_attentions``, its global queries'
    rows one per column; a slot no query fills is left out of the comparison."""
    import torch

    from attnviz.capture.paths import banded

    def read(ours: Any, target: Any) -> Any:
        rows = banded.global_as_reported(ours, call.global_tokens, tuple(target.shape))
        if rows is None:
            return None
        empty = torch.isnan(rows)
        return rows, target.masked_fill(empty, float("nan"))

    return read


def classify(cap: Any, maps: list[tuple[str, Any]], expected_calls: int | None = None) -> tuple[str, dict[str, Any]]:
    """The verdict on one capture (see the module's text) and its details: calls, maps, worst
    fidelity, the reasons of a partial one. ``expected_calls``: the calls another implementation
    recorded exactly (an SDPA path reports no maps: fewer calls than eager's is a call missed).
    A map may be reported twice (BLIP-2's Q-Former lists its cross-attention in ``attentions``
    and ``cross_attentions``): maps are matched to calls, not counted against them."""
    calls = list(cap.calls)
    warnings = [str(w) for w in cap.warnings]
    detail: dict[str, Any] = {"calls": len(calls), "maps": len(maps), "warnings": warnings[:3]}
    if not calls:
        if warnings and not any("no attention call" in w for w in warnings):
            return "errors", {**detail, "why": warnings[0][:200]}
        return ("none" if maps else "no attention"), detail
    maps = _readable(calls, maps)
    detail["maps"] = len(maps)
    detail["weights_only"] = sum(c.weights_only for c in calls)
    detail["paths"] = sorted({c.path.implementation for c in calls})
    reasons: list[str] = []
    checked = [c for c in calls if not c.weights_only]
    unverified = [c for c in checked if c.fidelity is None]
    off = [c for c in checked if c.fidelity is not None and c.fidelity > TOLERANCE]
    worst = max((c.fidelity for c in checked if c.fidelity is not None), default=None)
    detail["worst"] = worst
    detail["unverified"] = len(unverified)
    if off:
        bad = max(off, key=lambda c: c.fidelity)
        reasons.append(f"{len(off)} of {len(calls)} calls off by up to {bad.fidelity:.1e} ({bad.name})")
    if unverified:
        reasons.append(f"{len(unverified)} calls not verified ({unverified[0].name}: {unverified[0].note[:100]})")
    if expected_calls is not None and len(calls) < expected_calls:
        reasons.append(f"{len(calls)} calls where the other implementation recorded {expected_calls}")
    own = [c for c in calls if c.weights_only]
    not_weights = [c for c in own if not _is_distribution(c.recorded_weights)]
    if not_weights:
        reasons.append(
            f"{len(not_weights)} of {len(own)} calls recorded as the model's own weights are no distribution over "
            f"their keys ({not_weights[0].name})"
        )
    missing = unmatched_maps(calls, maps)
    detail["unmatched"] = len(missing)
    if missing:
        where, gap = missing[0]
        said = "no call of its shape" if gap is None else f"nearest call {gap:.1e} apart"
        reasons.append(f"{len(missing)} of {len(maps)} reported maps not recorded ({where}: {said})")
    recorded = [w for w in warnings if "could not be recorded" in w]
    if recorded:
        reasons.append(recorded[0][:160])
    if reasons:
        detail["reasons"] = reasons
        detail["why"] = reasons[0]
        return "partial", detail
    return "exact", detail
