"""Small computations of the pipeline view that need no compute thread. No Qt here.

``softmax_allowed`` says which scores a mask mode really lets through (from the catalogue's
flags, so the hatching of the masked-score and weight maps follows what the engine does);
``additive_features`` opens up one additive score into its h hidden features.
"""

from __future__ import annotations

import numpy as np

from attnviz.state import catalog

__all__ = ["additive_features", "softmax_allowed"]


def softmax_allowed(mask: np.ndarray, mask_mode: str) -> np.ndarray:
    """Which scores the softmax really lets through under ``mask_mode`` (True = attended).

    The mask stage is what the valid lengths ask for; the two "bug" modes do something else
    with it, and the masked-score and weight maps should hatch what was really masked.
    """
    info = catalog.MASK_MODES.get(mask_mode)
    if info is not None and info.effect == "none":
        return np.ones_like(mask, dtype=bool)  # e.g. 1 is added to the kept scores, nothing masked
    if info is not None and info.effect == "inverted":
        return ~mask.astype(bool)
    return mask.astype(bool)


def additive_features(
    params: dict[str, np.ndarray], query: np.ndarray, key: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """tanh(W_q q + W_k k) for one query (d_q,) and one key (d_k,), and w_v ⊙ that.

    The second sums to the additive score a(q, k). h numbers: cheap enough for the GUI thread.
    Raises KeyError/ValueError when the parameters do not fit (the caller shows a message).
    """
    w_q = np.asarray(params["W_q"], dtype=np.float64)
    w_k = np.asarray(params["W_k"], dtype=np.float64)
    w_v = np.asarray(params["w_v"], dtype=np.float64).reshape(-1)
    hidden = np.tanh(w_q @ np.asarray(query, dtype=np.float64) + w_k @ np.asarray(key, dtype=np.float64))
    return hidden, w_v * hidden
