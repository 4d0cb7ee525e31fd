"""How a document's state becomes ``attend`` arguments for one call (a ``HeadView`` of it): the
settings, its one mask description, its scale. One place, so the main view, every head of a call
(the heads grid, layers x heads), the long-context view and the labs compute with the same mask.
No Qt here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attnviz.compute.call_mask import call_mask
from attnviz.compute.convert import tensor_view
from attnviz.state.document import State
from attnviz.state.run import AttentionCall, HeadView, MaskArguments, head_slice

if TYPE_CHECKING:
    from attnviz.engine import Mask

__all__ = ["call_score_terms", "mask_kwargs", "scale_kwargs", "settings_kwargs", "state_mask"]


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


def mask_kwargs(state: State, view: HeadView, masks: MaskArguments | None = None) -> dict[str, Any]:
    """``attend``'s ``mask`` and ``score_terms`` arguments for ``view``'s call (``state_mask``; the
    call's recorded score terms: a position bias, soft-capping, a score_mod, sinks). ``masks``:
    the whole call's model masks (default ``view``'s, of one head): then the terms are the whole
    call's too."""
    terms = call_score_terms(view.call, None if masks is not None else view.head)
    return {"mask": state_mask(state, view, masks), "score_terms": terms or None}


def state_mask(
    state: State, view: HeadView, masks: MaskArguments | None = None, *, causal: bool = True, lengths: bool = True
) -> Mask:
    """The one mask description of ``view``'s call: the state's valid lengths, the call's causal
    flag, its model masks (``masks``: the whole call's; default ``view``'s own, of one head), and
    the settings' window, sinks, prefix and chunk and the state's document ids, as
    ``engine.make_mask`` defines them (with a causal call the window is causal too, aligned the
    same way). Bound to a call's leading dimensions by whoever computes: one batch element's
    heads or all of them, one matrix of the long-context view. ``causal=False`` leaves the causal
    flag out (the masking lab tries both alignments itself), ``lengths=False`` the valid lengths
    (copy as code writes both in the chapter's own code)."""
    from attnviz.engine import AllOf, mask_from_arguments
    from attnviz.engine.mask_mods import context_masks

    s = state.settings
    masks = view.masks if masks is None else masks
    lens = state.valid_lens(view) if lengths else None
    documents = state.documents_for(view)
    given: list[Mask] = [call_mask(view.call, MaskArguments() if masks is None else masks, causal=causal)]
    if lens is not None:
        given.append(mask_from_arguments(tensor_view(lens)))
    context = context_masks(
        view.causal or "top_left",
        window=s.window or None,
        sinks=s.sinks or None,
        documents=None if documents is None else tensor_view(documents),
        prefix=s.prefix or None,
        chunk=s.chunk or None,
    )
    return AllOf((*given, *context))


def scale_kwargs(state: State, scale: float | None) -> dict[str, Any]:
    """SDPA's ``scale`` for the dot-product scorings that take it (the others have none): a
    call's own (``HeadView.scale``; None: the default 1/sqrt(d))."""
    from attnviz.engine import get_scoring

    return {} if scale is None or not get_scoring(state.settings.scoring).takes_scale else {"scale": scale}


def call_score_terms(call: AttentionCall, head: int | None = None) -> list[Any]:
    """The call's recorded score terms as ``attnviz.engine`` descriptions for ``attend``: the
    whole call's (``head`` None, for its (B, H, L_q, L_k) computation) or one head's (B, L_q,
    L_k) slice. Imports torch (the engine) only when the call has terms."""
    if not call.terms and call.sinks is None:
        return []
    import numpy as np

    from attnviz.engine import Alibi, ScoreBias, ScoreMod, Sinks, SoftCap

    out: list[Any] = []
    for term in call.terms:
        if term.kind == "softcap":
            assert term.cap is not None
            out.append(SoftCap(term.cap))
        elif term.kind == "alibi" and term.values is not None:
            slopes = np.asarray(term.values, dtype=np.float64).reshape(-1)
            out.append(Alibi(slopes if head is None else slopes[head : head + 1], term.name))
        elif term.kind == "bias" and term.values is not None:
            values = head_slice(term.values, head) if head is not None else term.values
            assert values is not None
            out.append(ScoreBias(tensor_view(values), term.name))
        elif term.kind == "score_mod" and term.fn is not None:
            out.append(ScoreMod(term.fn if head is None else _one_head(term.fn, head), term.name))
    if call.sinks is not None:
        sinks = np.asarray(call.sinks, dtype=np.float64)
        if sinks.ndim == 3:  # one per query of each head, (B, H, L_q): one head's is (B, L_q)
            out.append(Sinks(sinks if head is None else sinks[:, head]))
        else:
            sinks = sinks.reshape(-1)
            out.append(Sinks(sinks if head is None else sinks[head : head + 1]))
    return out


def _one_head(fn: Any, head: int) -> Any:
    """A score_mod of a whole call, called for one head's slice (whose head index is 0)."""

    def one(score: Any, b: Any, _h: Any, q_idx: Any, kv_idx: Any) -> Any:
        return fn(score, b, _h + head, q_idx, kv_idx)

    return one


#: A whole call's score_mod called for one head's slice (``compare.one_head_call``).
shifted_score_mod = _one_head
