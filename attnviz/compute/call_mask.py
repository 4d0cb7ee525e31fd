"""The one door from a recorded call to the mask language: an ``AttentionCall``'s masks as one
``attnviz.engine`` description, and what each of its queries attends.

The engine arguments, the doctor, the interventions and the invariance checks all read a call's
masks here, so a model whose mask the doctor reads one way is edited and re-run the same way.
One causal convention: the call's own (``MaskArguments.causal``: SDPA's ``is_causal`` aligned
top-left, unless the call recorded another alignment). No Qt here; torch only when called."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attnviz.compute.convert import tensor_view
from attnviz.state.run import MASK_ARGUMENTS, AttentionCall, MaskArguments

if TYPE_CHECKING:
    import torch

    from attnviz.engine import AllOf

__all__ = ["call_allowed", "call_mask"]


def call_mask(call: AttentionCall, masks: MaskArguments | None = None, *, causal: bool = True) -> AllOf:
    """``call``'s masks as one mask description: ``attn_mask`` as SDPA reads it, key padding,
    Hugging Face's ``attention_mask``, the causal flag with the call's alignment, a FlexAttention
    ``mask_mod`` last. ``masks``: other mask tensors in the call's place (a head's slice, an
    edited set); the causal flag is the call's own whatever they say (a ``HeadView``'s masks
    leave it out). ``causal=False`` leaves the causal flag out (the masking lab tries both
    alignments itself)."""
    from attnviz.engine import MaskMod, mask_from_arguments

    masks = call.masks if masks is None else masks
    tensors: dict[str, Any] = {
        name: None if (m := getattr(masks, name)) is None else tensor_view(m) for name in MASK_ARGUMENTS
    }
    return mask_from_arguments(
        None,
        call.masks.causal if causal else None,
        tensors["attn_mask"],
        tensors["key_padding_mask"],
        tensors["attention_mask"],
        mask=None if masks.mask_mod is None else MaskMod(masks.mask_mod),
    )


def call_allowed(call: AttentionCall, dtype: torch.dtype | None = None) -> torch.Tensor:
    """(B, H, L_q, L_k) bool: which keys each query of ``call`` attends, as ``call_mask`` binds
    to the call (``dtype``: the one its additive masks are read in; default float32). Raises
    ``AttentionInputError`` for masks that do not fit the call."""
    import torch

    b, h, n_q, n_k = call.shape
    return call_mask(call).bind_call((b, h), n_q, n_k, dtype=torch.float32 if dtype is None else dtype).full()
