"""How a document's state becomes ``attend`` arguments for one call (a ``HeadView`` of it): the
settings, the call's masks and causal flag with the long-context masks on top, its scale. One
place, so the main view and every head of a call (the heads grid, layers x heads) compute the
same attention. No Qt here."""

from __future__ import annotations

from typing import Any

from attnviz.compute.convert import tensor_view
from attnviz.document import State
from attnviz.model_run import MASK_ARGUMENTS, HeadView, MaskArguments
from attnviz.tr import QT_TRANSLATE_NOOP, message

__all__ = ["long_context_mask", "mask_kwargs", "scale_kwargs", "settings_kwargs"]


def settings_kwargs(state: State, view: HeadView) -> dict[str, Any]:
    """The settings every computation of ``view``'s call passes (valid lengths, scoring, mask
    mode, the call's causal flag, parameters, dtype, device...); dropout is the main view's own."""
    s = state.settings
    lens = state.valid_lens(view)
    return {
        "valid_lens": None if lens is None else tensor_view(lens),
        "scoring": s.scoring,
        "mask_mode": s.mask_mode,
        "causal": view.causal,
        "params": {k: tensor_view(v) for k, v in state.params.items()} or None,
        "num_hiddens": s.num_hiddens,
        "seed": s.param_seed,
        "dtype": s.dtype,
        "device": s.device,
        "allow_nonfinite": s.allow_nonfinite,
    }


def mask_kwargs(
    state: State, view: HeadView, masks: MaskArguments | None = None, *, head_axis: bool = False
) -> dict[str, Any]:
    """Model masks as ``attend`` arguments (torch tensors; none: no arguments), with the settings'
    long-context masks on top. ``masks``: the whole call's (default ``view``'s, of one head);
    ``head_axis``: for (B, H, L, d) inputs, the long-context mask gets a head axis."""
    import torch

    masks = view.masks if masks is None else masks
    kwargs: dict[str, Any] = {}
    if masks is not None:
        kwargs = {name: None if (m := getattr(masks, name)) is None else tensor_view(m) for name in MASK_ARGUMENTS}
    extra = long_context_mask(state, view)
    if extra is not None:
        if head_axis:
            extra = extra[:, None]
        given = kwargs.get("attn_mask")
        if given is None:
            kwargs["attn_mask"] = extra
        elif isinstance(given, torch.Tensor) and given.dtype == torch.bool:
            kwargs["attn_mask"] = given & extra
        else:  # an additive mask: the extra masked keys get -inf on top of it
            assert isinstance(given, torch.Tensor)
            kwargs["attn_mask"] = given + torch.zeros((), dtype=given.dtype).masked_fill(~extra, float("-inf"))
    return kwargs


def long_context_mask(state: State, view: HeadView) -> Any:
    """The settings' window, sinks, prefix and chunk and the state's document ids as one bool
    tensor (B, Q, K) for ``view``'s call, True = may attend (None: none of them is on). With a
    causal call the window and chunks are causal too, as ``engine.make_mask`` defines them."""
    import torch

    from attnviz.engine import MemoryBudgetError, estimate_memory, make_mask, resolve_device, resolve_dtype
    from attnviz.engine.budget import enforce_budget
    from attnviz.engine.mask_mods import MAX_DENSE_CELLS

    s = state.settings
    documents = state.documents_for(view)
    if not (s.window or s.sinks or s.prefix or s.chunk) and documents is None:
        return None
    # The dense mask is as big as the matrix: check the whole computation against the memory
    # budget first, so a long input is refused as too large (and the long-context view, which
    # never builds it, takes over) rather than by the mask's own size limit.
    n_q, n_k = view.n_queries, view.n_keys
    if n_q * n_k > MAX_DENSE_CELLS:  # more than a dense mask may have, whatever the budget
        raise MemoryBudgetError(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "{n_q} queries x {n_k} keys with long-context masks is more than the full matrix view "
                    "shows (at most {limit} cells): the long-context overview shows it",
                ),
                n_q=n_q,
                n_k=n_k,
                limit=MAX_DENSE_CELLS,
            ),
            n_q * n_k,
            MAX_DENSE_CELLS,
        )
    enforce_budget(
        estimate_memory(
            view.queries.shape,
            view.keys.shape,
            view.values.shape,
            dtype=resolve_dtype(s.dtype, torch.float32),
            scoring=s.scoring,
            masked=True,
            num_hiddens=s.num_hiddens,
            mask_bytes=view.batch * n_q * n_k,
        ),
        resolve_device(s.device),
    )
    mask = make_mask(
        window=s.window or None,
        sinks=s.sinks or None,
        prefix=s.prefix or None,
        chunk=s.chunk or None,
        documents=None if documents is None else tensor_view(documents),
        causal=view.causal,
    )
    return torch.stack([mask.dense(n_q, n_k, batch=b) for b in range(view.batch)])


def scale_kwargs(state: State, scale: float | None) -> dict[str, Any]:
    """SDPA's ``scale`` for the dot-product scorings that take it (the others have none): a
    call's own (``HeadView.scale``; None: the default 1/sqrt(d))."""
    from attnviz.engine import get_scoring

    return {} if scale is None or not get_scoring(state.settings.scoring).takes_scale else {"scale": scale}
