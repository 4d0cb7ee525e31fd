"""``merge(files)``: the ranks of a distributed run as one run.

Under ``torch.distributed`` each rank records its own calls (``attnviz.capture`` under
``torchrun``), and its capture says which rank of how many it is and what it holds
(``ModelRun.shard``): "data" for data-parallel ranks (each its own batch elements: DDP,
FSDP's batches), "heads" for tensor-parallel ranks (each its own heads of every call). Merging
joins data shards along the batch and head shards along the heads, in rank order, and refuses
shards that do not line up (another world size, a rank missing or twice, other calls, other
lengths, masks that differ where they should be shared): a wrong merge would show attention no
model computed. No torch here: numpy only.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from attnviz.state.run import MAX_WORLD_SIZE, AttentionCall, CallTerm, MaskArguments, ModelRun, ModelRunError
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["merge", "merge_runs"]

Source = str | os.PathLike[str] | ModelRun


def merge(sources: Sequence[Source], *, sharding: str | None = None) -> ModelRun:
    """The run the ranks' captures ``sources`` (capture files or runs) make together. Each names
    its rank and world size (recorded under torch.distributed); ``sharding`` ("data" or "heads")
    says what the ranks hold when their captures do not. Raises :class:`ModelRunError` (one line)
    when they do not line up, and the file layer's error for a file that cannot be read."""
    from ..io import load_capture

    runs = [s if isinstance(s, ModelRun) else load_capture(s) for s in sources]
    return merge_runs(runs, sharding=sharding)


def _fail(text: str, **values: Any) -> ModelRunError:
    return ModelRunError(
        message(QT_TRANSLATE_NOOP("Merge", "cannot merge the ranks: {problem}"), problem=message(text, **values))
    )


def merge_runs(runs: Sequence[ModelRun], *, sharding: str | None = None) -> ModelRun:
    if len(runs) < 2:
        raise _fail(QT_TRANSLATE_NOOP("Merge", "give the capture of every rank (at least two)"))
    shards = [run.shard for run in runs]
    if any(s is None for s in shards):
        missing = next(i for i, s in enumerate(shards) if s is None)
        raise _fail(
            QT_TRANSLATE_NOOP("Merge", "capture {index} names no rank (it was not recorded under torch.distributed)"),
            index=missing,
        )
    known = [s for s in shards if s is not None]
    world = {s.world_size for s in known}
    if len(world) != 1:
        raise _fail(QT_TRANSLATE_NOOP("Merge", "the captures come from worlds of {sizes} ranks"), sizes=sorted(world))
    size = world.pop()
    ranks = sorted(s.rank for s in known)
    # Compared without counting to the world size: a file may claim any (a list of 10^8 ranks
    # took 3 GB). As many ranks as files, each once, from 0: nothing to allocate.
    if size != len(ranks) or ranks != list(range(len(ranks))):
        if size > MAX_WORLD_SIZE:
            raise _fail(
                QT_TRANSLATE_NOOP("Merge", "the captures claim a world of more than {most} ranks"),
                most=f"{MAX_WORLD_SIZE:,}",
            )
        raise _fail(
            QT_TRANSLATE_NOOP("Merge", "the ranks given are {ranks}; a world of {size} needs each of 0 to {last} once"),
            ranks=ranks,
            size=size,
            last=size - 1,
        )
    kinds = {s.sharding for s in known} - {None}
    if sharding is not None:
        kinds = {sharding}
    if len(kinds) != 1 or next(iter(kinds)) not in ("data", "heads"):
        raise _fail(
            QT_TRANSLATE_NOOP(
                "Merge",
                "the captures do not say what the ranks hold (data or heads), or say different things: pass "
                "sharding='data' or 'heads'",
            )
        )
    kind = kinds.pop()
    ordered = [run for _rank, run in sorted(zip((s.rank for s in known), runs), key=lambda pair: pair[0])]
    names = [tuple(call.name for call in run.calls) for run in ordered]
    if len(set(names)) != 1:
        rank = next(i for i, n in enumerate(names) if n != names[0])
        text, values = _other_calls(rank, names[rank], names[0])
        raise _fail(text, **values)
    axis = 0 if kind == "data" else 1
    calls = tuple(_merge_call([run.calls[i] for run in ordered], axis) for i in range(len(names[0])))
    tokens = (
        _join_tokens([run.query_tokens for run in ordered], axis, "run"),
        _join_tokens([run.key_tokens for run in ordered], axis, "run"),
    )
    return ModelRun(calls, tokens[0], tokens[1], source=ordered[0].source, shard=None)


def _other_calls(rank: int, theirs: tuple[str, ...], ours: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """The refusal of rank ``rank``'s calls, naming the first that differs from rank 0's."""
    at = next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours)))
    if at < len(theirs) and at < len(ours):
        return QT_TRANSLATE_NOOP(
            "Merge", "rank {rank} recorded other calls than rank 0: its call {index} is {theirs}, rank 0's {ours}"
        ), {"rank": rank, "index": at, "theirs": repr(theirs[at]), "ours": repr(ours[at])}
    longer, who = (theirs, rank) if len(theirs) > len(ours) else (ours, 0)
    return QT_TRANSLATE_NOOP(
        "Merge",
        "rank {rank} recorded other calls than rank 0 ({count} against {count_0}): rank {who} has {name} more, "
        "from call {index}",
    ), {
        "rank": rank,
        "count": len(theirs),
        "count_0": len(ours),
        "who": who,
        "name": repr(longer[at]),
        "index": at,
    }


def _merge_call(parts: list[AttentionCall], axis: int) -> AttentionCall:
    first = parts[0]
    name = first.name
    shapes = [p.shape for p in parts]
    fixed = [i for i in range(4) if i != axis]
    if any(tuple(s[i] for i in fixed) != tuple(shapes[0][i] for i in fixed) for s in shapes):
        raise _fail(
            QT_TRANSLATE_NOOP("Merge", "call '{name}' has shapes {shapes} on the ranks: they differ beyond the {what}"),
            name=name,
            shapes=shapes,
            what=QT_TRANSLATE_NOOP("Merge", "batch") if axis == 0 else QT_TRANSLATE_NOOP("Merge", "heads"),
        )
    if {p.weights_only for p in parts} != {first.weights_only} or len({p.scale for p in parts}) != 1:
        raise _fail(QT_TRANSLATE_NOOP("Merge", "call '{name}' was recorded differently on the ranks"), name=name)
    if len({(p.masks.is_causal, p.masks.causal_alignment) for p in parts}) != 1:
        raise _fail(QT_TRANSLATE_NOOP("Merge", "call '{name}' is causal on some ranks only"), name=name)

    def join(get: Callable[[AttentionCall], np.ndarray | None], what: str, along: int = axis) -> np.ndarray | None:
        return _join([get(p) for p in parts], along, name, what)

    masks = MaskArguments(
        _join_mask([p.masks.attn_mask for p in parts], axis, name, "attn_mask", shapes),
        join(lambda p: p.masks.key_padding_mask, "key_padding_mask", 0)
        if axis == 0
        else _same([p.masks.key_padding_mask for p in parts], name, "key_padding_mask"),
        _join_mask([p.masks.attention_mask for p in parts], axis, name, "attention_mask", shapes),
        first.masks.is_causal,
        first.masks.causal_alignment,
    )
    terms = []
    for index, term in enumerate(first.terms):
        others = [p.terms[index] if index < len(p.terms) else None for p in parts]
        if any(o is None or (o.kind, o.name, o.cap) != (term.kind, term.name, term.cap) for o in others):
            raise _fail(QT_TRANSLATE_NOOP("Merge", "call '{name}' has other score terms on the ranks"), name=name)
        values = None
        if term.values is not None and term.kind == "alibi":  # one slope per head, as sinks
            slopes: list[np.ndarray | None] = [
                np.asarray(o.values) for o in others if o is not None and o.values is not None
            ]
            values = (
                np.concatenate([s for s in slopes if s is not None]) if axis == 1 else _same(slopes, name, term.name)
            )
        elif term.values is not None:
            values = _join_mask([o.values for o in others if o is not None], axis, name, term.name, shapes)
        terms.append(CallTerm(term.kind, term.name, values, term.cap))
    fidelities = [p.fidelity for p in parts]
    notes = list(dict.fromkeys(p.note for p in parts if p.note))
    return replace(
        first,
        queries=join(lambda p: p.queries, "queries"),
        keys=join(lambda p: p.keys, "keys"),
        values=join(lambda p: p.values, "values"),
        output=join(lambda p: p.output, "output"),
        weights=join(lambda p: p.weights, "weights"),
        masks=masks,
        terms=tuple(terms),
        sinks=_join_sinks(parts, axis, join),
        fidelity=None if any(f is None for f in fidelities) else max(f for f in fidelities if f is not None),
        note="; ".join(notes),
        **_join_positions(parts, axis),
        query_tokens=_join_tokens([p.query_tokens for p in parts], axis, name),
        key_tokens=_join_tokens([p.key_tokens for p in parts], axis, name),
    )


def _join_positions(parts: list[AttentionCall], axis: int) -> dict[str, Any]:
    """The ranks' recorded positions: one row for all (or a heads shard's): the first rank's;
    one per batch element of a data shard: joined along the batch; else none."""
    first = parts[0].positions
    if first is None or any(p.positions is None for p in parts):
        return {"positions": None, "positions_from": None}
    if axis == 1 or first.shape[0] == 1:
        return {}
    try:
        return {"positions": np.concatenate([np.asarray(p.positions) for p in parts], axis=0)}
    except ValueError:
        return {"positions": None, "positions_from": None}


def _join_sinks(parts: list[AttentionCall], axis: int, join: Any) -> np.ndarray | None:
    """The ranks' sink logits as one call's: per head (H,) joined where the heads are split;
    per query of each head (B, H, L_q) joined along the call's own split axis (batch or heads)."""
    first = parts[0].sinks
    if first is None:
        return None
    if first.ndim == 3:
        return join(lambda p: p.sinks, "sinks", axis)
    return join(lambda p: p.sinks, "sinks", 0) if axis == 1 else first


def _join(arrays: list[np.ndarray | None], axis: int, name: str, what: str) -> np.ndarray | None:
    if all(a is None for a in arrays):
        return None
    if any(a is None for a in arrays):
        raise _fail(QT_TRANSLATE_NOOP("Merge", "call '{name}' has {what} on some ranks only"), name=name, what=what)
    try:
        return np.concatenate([np.asarray(a) for a in arrays if a is not None], axis=axis)
    except ValueError as exc:
        raise _fail(
            QT_TRANSLATE_NOOP("Merge", "the {what} of call '{name}' do not line up: {error}"),
            name=name,
            what=what,
            error=str(exc),
        ) from exc


def _same(arrays: list[np.ndarray | None], name: str, what: str) -> np.ndarray | None:
    first = arrays[0]
    for other in arrays[1:]:
        if (first is None) != (other is None) or (
            first is not None
            and other is not None
            and not np.array_equal(np.asarray(first), np.asarray(other), equal_nan=np.asarray(first).dtype.kind == "f")
        ):
            raise _fail(
                QT_TRANSLATE_NOOP("Merge", "the {what} of call '{name}' differs between ranks where it must be shared"),
                name=name,
                what=what,
            )
    return first


def _join_mask(
    arrays: list[np.ndarray | None], axis: int, name: str, what: str, shapes: list[tuple[int, int, int, int]]
) -> np.ndarray | None:
    """A mask (or bias) of each rank: joined along the batch or heads where it has that axis
    whole (right-aligned to (B, H, L_q, L_k)), shared (and checked equal) where it broadcasts."""
    first = arrays[0]
    if first is None or all(a is None for a in arrays):
        return _same(arrays, name, what)
    if any(a is None for a in arrays):
        raise _fail(QT_TRANSLATE_NOOP("Merge", "call '{name}' has {what} on some ranks only"), name=name, what=what)
    dims = first.ndim
    own = dims - 4 + axis  # the mask's axis that is the batch (or heads), right-aligned
    if own >= 0 and all(np.asarray(a).shape[own] == s[axis] and s[axis] > 1 for a, s in zip(arrays, shapes)):
        return _join(arrays, own, name, what)
    if own == 0 and dims == 2 and axis == 0:
        return _join(arrays, 0, name, what)  # a (B, L_k) padding mask
    return _same(arrays, name, what)


def _join_tokens(tokens: list[np.ndarray | None], axis: int, name: str) -> np.ndarray | None:
    if axis == 0:
        if all(t is None for t in tokens):
            return None
        if any(t is None for t in tokens):
            return None  # tokens of some ranks only: shown without
        return np.concatenate([np.asarray(t) for t in tokens if t is not None], axis=0)
    first = tokens[0]
    same = all(
        (t is None and first is None) or (t is not None and first is not None and np.array_equal(t, first))
        for t in tokens
    )
    return first if same else None
