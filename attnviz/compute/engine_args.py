"""How a document's state becomes ``attend`` arguments: its settings, its one mask description,
the scale. One place, so the main view, every head of a call (the heads grid, layers x heads),
the long-context view and the labs compute with the same mask. No Qt here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attnviz.compute.convert import tensor_view
from attnviz.document import State
from attnviz.model_run import MaskArguments

if TYPE_CHECKING:
    from attnviz.engine import Mask

__all__ = ["mask_kwargs", "scale_kwargs", "settings_kwargs", "state_mask"]


def settings_kwargs(state: State) -> dict[str, Any]:
    """The settings every computation of the state passes (scoring, mask mode, parameters, dtype,
    device...); the masks are ``mask_kwargs``'s, dropout is the main view's own."""
    s = state.settings
    return {
        "scoring": s.scoring,
        "mask_mode": s.mask_mode,
        "params": {k: tensor_view(v) for k, v in state.params.items()} or None,
        "num_hiddens": s.num_hiddens,
        "seed": s.param_seed,
        "dtype": s.dtype,
        "device": s.device,
        "allow_nonfinite": s.allow_nonfinite,
    }


def mask_kwargs(state: State, masks: MaskArguments | None = None) -> dict[str, Any]:
    """``attend``'s ``mask`` argument for the state (``state_mask``). ``masks``: another call's
    model masks (default the state's own, of the head on show)."""
    return {"mask": state_mask(state, masks)}


def state_mask(state: State, masks: MaskArguments | None = None, *, causal: bool = True) -> Mask:
    """The state's one mask description: its valid lengths, its causal setting, its model's masks
    (``masks``: another call's; default the state's own), and the settings' window, sinks,
    prefix and chunk and the state's document ids, as ``engine.make_mask`` defines them (with a
    causal setting the window is causal too, aligned the same way). Bound to a call's leading
    dimensions by whoever computes: one batch element's heads or all of them, one matrix of the
    long-context view. ``causal=False`` leaves the causal setting out (the masking lab tries
    both alignments itself)."""
    from attnviz.engine import AllOf, mask_from_arguments
    from attnviz.engine.mask_mods import context_masks

    s = state.settings
    masks = state.masks if masks is None else masks
    tensors = {name: None for name in ("attn_mask", "key_padding_mask", "attention_mask")}
    if masks is not None:
        tensors = {name: None if (m := getattr(masks, name)) is None else tensor_view(m) for name in tensors}
    lens = state.valid_lens()
    given = mask_from_arguments(
        None if lens is None else tensor_view(lens),
        s.causal if causal else None,
        tensors["attn_mask"],
        tensors["key_padding_mask"],
        tensors["attention_mask"],
    )
    context = context_masks(
        s.causal or "top_left",
        window=s.window or None,
        sinks=s.sinks or None,
        documents=None if state.documents is None else tensor_view(state.documents),
        prefix=s.prefix or None,
        chunk=s.chunk or None,
    )
    return AllOf((given, *context))


#: ``scale_kwargs``'s default: the scale in the settings.
_SETTINGS = object()


def scale_kwargs(state: State, scale: float | None | object = _SETTINGS) -> dict[str, Any]:
    """SDPA's ``scale`` for the dot-product scorings that take it (the others have none): the
    settings' (the head on show), or ``scale`` (another call's own; None: the default 1/sqrt(d))."""
    from attnviz.engine import get_scoring

    s = state.settings
    value = s.scale if scale is _SETTINGS else scale
    return {} if value is None or not get_scoring(s.scoring).takes_scale else {"scale": value}
