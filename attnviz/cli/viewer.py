"""``attnviz.show(...)``: open the window from a script, a notebook or a debugger breakpoint.

    attnviz.show(q, k, v, attention_mask=mask, tokens=tokens)   # tensors, any of (L, d),
                                                                 # (B, L, d), (B, H, L, d),
                                                                 # (layers, B, H, L, d)
    attnviz.show(q, k, v, mask=block_mask)                       # mask=: a Mask description,
                                                                 # a FlexAttention BlockMask
                                                                 # or a bare mask_mod
    attnviz.show(cap)                                            # a capture (attnviz.capture)
    attnviz.show(run)                                            # a ModelRun
    attnviz.show("qkv.npz")                                      # a file or a session
    attnviz.show(model=model, inputs=batch, tokens=tokens)       # a live model: edit and re-run

In a plain script it blocks until the window is closed (like ``plt.show()``). In IPython or
Jupyter it returns the window at once and lets IPython run Qt's event loop (``%gui qt``), the
way napari's viewer does, so the notebook stays usable while the window is open.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from attnviz.state.run import ModelRun
    from attnviz.ui.window.main_window import MainWindow

__all__ = ["show", "tensors_to_run"]


def _array(value: Any, name: str) -> np.ndarray:
    """A torch tensor (any device, any float dtype) or array-like as a numpy array."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        tensor = value.detach().cpu()
        if tensor.is_floating_point() and tensor.dtype not in (_torch_dtype("float32"), _torch_dtype("float64")):
            tensor = tensor.float()  # float16 / bfloat16: numpy has no bfloat16
        return tensor.numpy()
    try:
        return np.asarray(value)
    except Exception as exc:  # noqa: BLE001
        raise TypeError(f"{name} must be a tensor or an array, got {type(value).__name__}") from exc


def _torch_dtype(name: str) -> Any:
    import torch

    return getattr(torch, name)


def _with_heads(array: np.ndarray, name: str) -> np.ndarray:
    """(L, d) -> (1, 1, L, d); (B, L, d) -> (B, 1, L, d); (B, H, L, d) as it is."""
    if array.ndim == 2:
        return array[None, None]
    if array.ndim == 3:
        return array[:, None]
    if array.ndim == 4:
        return array
    raise ValueError(f"{name} must be (L, d), (B, L, d), (B, H, L, d) or (layers, B, H, L, d); got shape {array.shape}")


def tensors_to_run(
    queries: Any,
    keys: Any,
    values: Any,
    *,
    attn_mask: Any = None,
    key_padding_mask: Any = None,
    attention_mask: Any = None,
    mask: Any = None,
    is_causal: bool = False,
    scale: float | None = None,
    tokens: Sequence[str] | Any = None,
    query_tokens: Any = None,
    key_tokens: Any = None,
    names: Sequence[str] | None = None,
) -> ModelRun:
    """Q, K, V (and masks as the code passed them) as a ``ModelRun``: a leading layer axis
    (5-D) becomes one call per layer; masks with a leading layer axis of the same length are
    split per layer too. ``mask``: what ``attend(mask=)`` takes (a ``Mask`` description, a
    FlexAttention ``BlockMask`` read with its block table, a bare ``mask_mod``), for every call,
    combined with the other masks; kept as the call's mask_mod."""
    from attnviz.state.run import AttentionCall, MaskArguments, ModelRun

    q, k, v = (_array(x, n) for x, n in ((queries, "queries"), (keys, "keys"), (values, "values")))
    masks = {
        n: None if m is None else _array(m, n)
        for n, m in (
            ("attn_mask", attn_mask),
            ("key_padding_mask", key_padding_mask),
            ("attention_mask", attention_mask),
        )
    }
    if q.ndim == 5:
        layers = q.shape[0]
        if k.ndim != 5 or v.ndim != 5 or k.shape[0] != layers or v.shape[0] != layers:
            raise ValueError(
                f"with a layer axis, queries, keys and values must all be 5-D with {layers} layers; got "
                f"{q.shape}, {k.shape}, {v.shape}"
            )
        per_layer = [(q[i], k[i], v[i]) for i in range(layers)]

        def layer_mask(m: np.ndarray | None, i: int) -> np.ndarray | None:
            return m[i] if m is not None and m.ndim == 5 and m.shape[0] == layers else m
    else:
        per_layer = [(_with_heads(q, "queries"), _with_heads(k, "keys"), _with_heads(v, "values"))]

        def layer_mask(m: np.ndarray | None, i: int) -> np.ndarray | None:
            return m

    mask_mod = None
    if mask is not None:
        from attnviz.engine.block_masks import as_mask_mod

        mask_mod = as_mask_mod(mask, per_layer[0][0].shape[-2], per_layer[0][1].shape[-2])
    calls = []
    for i, (qi, ki, vi) in enumerate(per_layer):
        name = (
            names[i] if names is not None and i < len(names) else (f"layer {i}" if len(per_layer) > 1 else "attention")
        )
        calls.append(
            AttentionCall(
                name,
                qi,
                ki,
                vi,
                MaskArguments(
                    layer_mask(masks["attn_mask"], i),
                    layer_mask(masks["key_padding_mask"], i),
                    layer_mask(masks["attention_mask"], i),
                    bool(is_causal),
                    mask_mod=mask_mod,
                ),
                scale=scale,
            )
        )
    batch = calls[0].shape[0]
    shared = tokens if tokens is not None else None
    return ModelRun(
        tuple(calls),
        ModelRun.broadcast_tokens(_tokens(query_tokens if query_tokens is not None else shared), batch),
        ModelRun.broadcast_tokens(_tokens(key_tokens if key_tokens is not None else shared), batch),
        source="tensors",
    )


def _tokens(tokens: Any) -> Any:
    if tokens is None:
        return None
    if isinstance(tokens, (list, tuple)) and tokens and isinstance(tokens[0], (list, tuple)):
        return [[str(t) for t in row] for row in tokens]
    return [str(t) for t in tokens]


def _in_ipython() -> Any:
    try:
        from IPython import get_ipython  # optional: pyproject.toml's mypy section says how it is checked
    except ImportError:
        return None
    return get_ipython()


def show(
    *args: Any, layer: int = 0, head: int = 0, block: bool | None = None, language: str | None = None, **kwargs: Any
) -> MainWindow:
    """Open an attnviz window on ``args`` (see the module's docstring) and return it.

    ``model=``, ``inputs=`` (its keyword arguments, or positional ones as a tuple): the model is
    captured on the inputs and kept live: a mask cell flipped or a head ablated in the window
    runs it again (Compare runs shows the output change).
    ``layer``/``head``: what to show first. ``block``: wait until the window is closed (default:
    in a plain script yes, in IPython no). Keyword arguments go to ``tensors_to_run`` (masks,
    ``is_causal``, ``scale``, ``tokens``...).
    """
    from attnviz.state.document import ReplaceState, State
    from attnviz.state.run import Focus, ModelRun
    from attnviz.text.tr import QT_TRANSLATE_NOOP
    from attnviz.ui.app.startup import application
    from attnviz.ui.window.main_window import MainWindow

    ipython = _in_ipython()
    if ipython is not None and block is not True:
        try:
            ipython.enable_gui("qt")  # IPython runs Qt's event loop between cells
        except Exception:  # noqa: BLE001 - no Qt support in this kernel: the caller may block
            pass
    app = application(language)
    window = MainWindow()
    source = args[0] if len(args) == 1 else None
    model, inputs = kwargs.pop("model", None), kwargs.pop("inputs", None)
    if model is not None:
        if args or inputs is None:
            raise TypeError("attnviz.show(model=model, inputs=inputs) takes the model and its inputs, nothing else")
        from attnviz.compare.intervene import LiveModel
        from attnviz.ui.app.live_model import attach_live_model

        live = LiveModel(model, inputs, tokens=kwargs.pop("tokens", None))
        window.session.push(
            ReplaceState(
                State.from_run(live.run), QT_TRANSLATE_NOOP("MainWindow", "Show the given tensors"), Focus(layer, head)
            )
        )
        # The captured run is the original: undo stops there.
        window.session.undo_stack.clear()
        attach_live_model(window.session, live)
        window.run_compare_dock.show()
    elif isinstance(source, (str, os.PathLike)):
        window.file_actions.open_file(source)
    else:
        if len(args) == 3:
            run = tensors_to_run(*args, **kwargs)
        elif source is not None and hasattr(source, "to_run"):
            run = source.to_run()
        elif isinstance(source, ModelRun):
            run = source
        else:
            raise TypeError("attnviz.show takes q, k, v tensors, a capture, a ModelRun or a file path")
        if not run.has_head(layer, head):
            raise ValueError(f"no head {head} in layer {layer}: the run has {run.layers} layer(s)")
        window.session.push(
            ReplaceState(
                State.from_run(run), QT_TRANSLATE_NOOP("MainWindow", "Show the given tensors"), Focus(layer, head)
            )
        )
    window.show()
    window.raise_()
    if block if block is not None else ipython is None:
        app.exec()
    return window
