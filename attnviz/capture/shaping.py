"""What a recorder does to the tensors it sees: copies that share nothing with the model, the
heads nn.MultiheadAttention computes, packed GQA decode steps unfolded, the shapes a run holds,
the tokens of each call's axes. No patching and no state here."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, overload

import numpy as np
import torch
from torch import nn

from .calls import CapturedCall

_F = torch.nn.functional

#: Keyword arguments of an attention module that bring another sequence's states (its keys).
CROSS_ARGUMENTS = ("key_value_states", "encoder_hidden_states", "cross_attention_states", "memory")
#: Names of modules that attend to another sequence.
_CROSS_NAME = re.compile(r"(cross|encoder_attn|encdecattention|multihead_attn|enc_dec)", re.IGNORECASE)
#: Attributes that hold a module's number of heads, as models name it.
HEAD_ATTRIBUTES = ("num_heads", "num_attention_heads", "n_head", "n_heads", "heads")


@contextmanager
def normal_tensors() -> Iterator[None]:
    # Copies made inside torch.inference_mode would be inference tensors, which refuse some
    # later uses outside it; made outside it they are plain tensors.
    with torch.inference_mode(False), torch.no_grad():
        yield


@overload
def copy(t: torch.Tensor) -> torch.Tensor: ...
@overload
def copy(t: torch.Tensor | None) -> torch.Tensor | None: ...


def copy(t: torch.Tensor | None) -> torch.Tensor | None:
    """A detached, contiguous CPU copy that shares nothing with the model."""
    if t is None:
        return None
    with normal_tensors():
        return t.detach().to("cpu", memory_format=torch.contiguous_format, copy=True)


def compact(mask: torch.Tensor) -> torch.Tensor:
    """A broadcast view (a mask ``expand``-ed to every query) at the size it is stored: axes with
    stride 0 are kept at length 1, which broadcasts to the same mask."""
    index = tuple(
        slice(0, 1) if stride == 0 and size > 1 else slice(None) for stride, size in zip(mask.stride(), mask.shape)
    )
    return mask[index]


def version(t: torch.Tensor) -> int | None:
    try:
        return int(t._version)
    except RuntimeError:  # inference tensors have no version counter (and cannot change outside it)
        return None


def project(
    module: nn.MultiheadAttention, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The heads (B, H, L, d) nn.MultiheadAttention computes from its inputs, with the very
    functions and transposes its forward uses (``F.multi_head_attention_forward``)."""
    batched = query.dim() == 3
    if module.batch_first and batched:
        # As nn.MultiheadAttention.forward does it: "is" decides between one projection and three.
        if key is value:
            if query is key:
                query = key = value = query.transpose(1, 0)
            else:
                query, key = (x.transpose(1, 0) for x in (query, key))
                value = key
        else:
            query, key, value = (x.transpose(1, 0) for x in (query, key, value))
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
    if module._qkv_same_embed_dim:
        q, k, v = _F._in_projection_packed(  # type: ignore[attr-defined]
            query, key, value, module.in_proj_weight, module.in_proj_bias
        )
    else:
        b_q, b_k, b_v = module.in_proj_bias.chunk(3) if module.in_proj_bias is not None else (None, None, None)
        q, k, v = _F._in_projection(  # type: ignore[attr-defined]
            query, key, value, module.q_proj_weight, module.k_proj_weight, module.v_proj_weight, b_q, b_k, b_v
        )
    heads = module.num_heads

    def split(x: torch.Tensor) -> torch.Tensor:
        n, b, e = x.shape
        return x.reshape(n, b * heads, e // heads).transpose(0, 1).reshape(b, heads, n, e // heads)

    return split(q), split(k), split(v)


def mha_fast_path(
    module: nn.MultiheadAttention,
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any,
    key_padding_mask: Any,
    enabled: bool,
) -> bool:
    """Whether nn.MultiheadAttention would have taken its fused fast path (``torch._native_multi_
    head_attention``) for this call had the capture not switched it off: the conditions of its
    forward, in its order."""
    tensors = (query, key, value, module.in_proj_weight, module.in_proj_bias, module.out_proj.weight)
    floating = any(isinstance(m, torch.Tensor) and torch.is_floating_point(m) for m in (attn_mask, key_padding_mask))
    return (
        enabled
        and not floating
        and isinstance(query, torch.Tensor)
        and query.dim() == 3
        and query is key
        and key is value
        and module.in_proj_weight is not None
        and query.dtype == module.in_proj_weight.dtype
        and (module.in_proj_bias is None or query.dtype == module.in_proj_bias.dtype)
        and not module.training
        and module.num_heads % 2 == 0
        and module.batch_first
        and module.bias_k is None
        and module.bias_v is None
        and not module.add_zero_attn
        and module._qkv_same_embed_dim
        and not torch.is_autocast_enabled()
        and not (torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad for t in tensors))
    )


def sdpa_backend(given: dict[str, Any]) -> str | None:
    """On CUDA, the kernel SDPA picks for these arguments ("flash_attention", "efficient_attention",
    "cudnn_attention", "math"): fully masked rows differ between them. None elsewhere."""
    q = given["query"]
    if not isinstance(q, torch.Tensor) or not q.is_cuda:
        return None
    try:
        from torch.nn.attention import SDPBackend

        choice = torch._fused_sdp_choice(
            q,
            given["key"],
            given["value"],
            given["attn_mask"],
            float(given["dropout_p"]),
            bool(given["is_causal"]),
            scale=given["scale"],
            enable_gqa=bool(given["enable_gqa"]),
        )
        return str(SDPBackend(choice).name).lower()
    except Exception:  # noqa: BLE001 - a private function: its absence is no failure
        return None


def unpack_gqa(
    packed_query: torch.Tensor, query: torch.Tensor, key: torch.Tensor, mask: Any, out: torch.Tensor
) -> tuple[torch.Tensor, Any, torch.Tensor] | None:
    """A decode step transformers ran with the query heads folded into the query axis
    (``pack_gqa``: (B, H, 1, d) as (B, H_kv, n_rep, d), so that no key is repeated) as the model
    means it: (B, H, 1, d) queries over (B, H_kv, L, d) keys, the mask and output unfolded
    likewise. None when the SDPA call is no such fold of ``packed_query`` (the function's own)."""
    if packed_query.dim() != 4 or query.dim() != 4 or key.dim() != 4 or packed_query.shape[2] != 1:
        return None
    b, heads, _one, d = packed_query.shape
    _b, kv_heads, n_rep, _d = query.shape
    if n_rep < 2 or kv_heads * n_rep != heads or key.shape[1] != kv_heads or query.shape[0] != b:
        return None
    if isinstance(mask, torch.Tensor) and mask.dim() == 4 and mask.shape[2] == n_rep and mask.shape[1] == kv_heads:
        mask = mask.reshape(mask.shape[0], heads, 1, mask.shape[-1])
    elif isinstance(mask, torch.Tensor) and mask.dim() >= 2 and mask.shape[-2] not in (1,):
        return None  # a mask per packed row that is not per head: left as the call ran
    unfolded = query.reshape(b, heads, 1, d)
    return unfolded, mask, out.reshape(out.shape[0], heads, 1, out.shape[-1])


def as_4d(call: CapturedCall) -> CapturedCall | None:
    """The call with (B, H, L, d) tensors: (N, L, d) inputs get a head axis of 1 (and a 3-D mask
    too, which SDPA aligns with them), keys of a batch of 1 broadcast to the queries' batch as
    SDPA broadcasts them; None for other ranks or batches that do not broadcast."""
    if call.queries is None:
        w = call.recorded_weights
        return call if w is not None and w.dim() == 4 else None
    q, k, v = call.queries, call.keys, call.values
    assert k is not None and v is not None
    if q.dim() == k.dim() == v.dim() == 3:
        mask = call.attn_mask
        output = call.output
        shaped = replace(
            call,
            queries=q.unsqueeze(1),
            keys=k.unsqueeze(1),
            values=v.unsqueeze(1),
            attn_mask=mask.unsqueeze(1) if mask is not None and mask.dim() == 3 else mask,
            output=None if output is None else output.unsqueeze(1),
        )
        shaped._fidelity, shaped._checked = call.fidelity, True
        return as_4d(shaped) if shaped.keys is not None and shaped.keys.shape[0] != q.shape[0] else shaped
    if not (q.dim() == k.dim() == v.dim() == 4):
        return None
    b = q.shape[0]
    if k.shape[0] == v.shape[0] == b:
        return call
    if k.shape[0] == v.shape[0] == 1 or b == 1:
        batch = max(b, k.shape[0], v.shape[0])
        if any(t.shape[0] not in (1, batch) for t in (q, k, v)):
            return None
        shaped = replace(
            call,
            queries=q.expand(batch, *q.shape[1:]),
            keys=k.expand(batch, *k.shape[1:]),
            values=v.expand(batch, *v.shape[1:]),
        )
        if call.output is not None and call.output.shape[0] != batch:
            shaped.output = call.output.expand(batch, *call.output.shape[1:])
        return shaped
    return None


def heads_of(module: nn.Module | None, n: int) -> int:
    """The number of heads a module declares, when it divides ``n`` (else 1)."""
    for attr in HEAD_ATTRIBUTES:
        value = getattr(module, attr, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0 and n % value == 0:
            return value
    return 1


def declared_heads(module: nn.Module | None) -> int | None:
    """The number of heads a module declares (its first head attribute), None where it names none."""
    for attr in HEAD_ATTRIBUTES:
        value = getattr(module, attr, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def weights_4d(weights: torch.Tensor, module: nn.Module | None) -> torch.Tensor | None:
    """A softmax's output as (B, H, L_q, L_k): 4-D as it is; (B * H, L_q, L_k) split by the
    module's heads; 5-D with its first two axes merged (batch x windows). None otherwise. A 4-D
    softmax with the module's heads third, not second ((B, L_q, H, points): Deformable DETR's
    sampling weights, taken per query over its sampled points) is read with its heads second: as
    it was, each of its queries was drawn as a head (1045 of them)."""
    if weights.dim() == 4:
        heads = declared_heads(module)
        if heads is not None and weights.shape[1] != heads and weights.shape[2] == heads:
            return weights.transpose(1, 2)
        return weights
    if weights.dim() == 3:
        n = weights.shape[0]
        heads = heads_of(module, n)
        return weights.reshape(n // heads, heads, *weights.shape[1:])
    if weights.dim() == 5:
        return weights.reshape(weights.shape[0] * weights.shape[1], *weights.shape[2:])
    return None


def is_cross(module: nn.Module | None, name: str, kwargs_stack: list[dict[str, Any]]) -> bool:
    """Whether a call attends to another sequence (an encoder's states): the attention module
    (or its parent) was given another sequence's states, declares itself cross-attention, or is
    named so (``encoder_attn``, ``EncDecAttention``, ``crossattention``, ``multihead_attn``)."""
    for kwargs in kwargs_stack[-2:]:
        if any(kwargs.get(arg) is not None for arg in CROSS_ARGUMENTS):
            return True
    if getattr(module, "is_cross_attention", None) is True:
        return True
    return bool(_CROSS_NAME.search(name)) or (module is not None and bool(_CROSS_NAME.search(type(module).__name__)))


#: Arguments that are not a sequence of states, though 3-D: a cache, a memory of past steps,
#: position or bias tables.
_NOT_STATES = re.compile(r"past|cache|mem|pos|rel|bias", re.IGNORECASE)


def given_two_sequences(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a module was given the states of two sequences of different lengths at once
    (Grounding DINO's fusion layer, ``forward(vision_features, text_features)``): its calls
    attend from one to the other, so positions read for one sequence are not its keys' cache."""
    states = [a for a in args if _is_states(a)]
    states += [v for k, v in kwargs.items() if not _NOT_STATES.search(k) and _is_states(v)]
    batches = {int(s.shape[0]) for s in states}
    return len(batches) == 1 and len({int(s.shape[1]) for s in states}) >= 2


def _is_states(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.dim() == 3 and value.is_floating_point()


def is_encoder(name: str) -> bool:
    """A call of an encoder stack: a part of its module path is "encoder"."""
    return "encoder" in name.split(".")


def fitting_tokens(
    tokens: object, batch: int, length: int, cache: dict[tuple[int, int], np.ndarray]
) -> np.ndarray | None:
    """``tokens`` (one sequence, or one per batch element) as a (batch, length) str array when
    they fit those axes, else None. Arrays are made once per (tokens, batch) and shared."""
    if tokens is None:
        return None
    key = (id(tokens), batch)
    arr = cache.get(key)
    if arr is None:
        raw = np.asarray(tokens, dtype=str)
        if raw.ndim == 1:
            arr = np.broadcast_to(raw, (batch, raw.shape[0]))
        elif raw.ndim == 2 and raw.shape[0] == batch:
            arr = raw
        else:
            return None
        cache[key] = arr
    return arr if arr.shape == (batch, length) else None


def nbytes(t: Any) -> int:
    return t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0


def mask_bytes(mask: Any) -> int:
    return math.prod(compact(mask).shape) * mask.element_size() if isinstance(mask, torch.Tensor) else 0
