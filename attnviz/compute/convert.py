"""The one way a result crosses from torch to the views: read-only numpy arrays.

float16 and bfloat16 become float32 (numpy has no bfloat16, and drawing wants float32 anyway).
Arrays are read-only: one result is shared by every view that shows it, none may change it, and
a heatmap can then keep it without a copy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["to_numpy"]


def to_numpy(tensor: Any) -> np.ndarray:
    """``tensor`` (a torch tensor, on any device) as a read-only numpy array on the CPU."""
    import torch

    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"expected a torch tensor, got {type(tensor).__name__}")
    t = tensor.detach()
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.float()
    arr = t.cpu().numpy()
    arr.setflags(write=False)
    return arr


def tensor_view(array: np.ndarray) -> Any:
    """A torch tensor sharing ``array``'s memory, read-only arrays included.

    The document's arrays are read-only (states share them) and nothing here writes into an
    input: torch's warning that a non-writable array might be written is moot, so it is
    silenced rather than each array copied.
    """
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return torch.from_numpy(np.asarray(array))
