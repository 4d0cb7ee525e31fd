"""Drop-in equivalents of the book's PyTorch code: same names, signatures and parameters.

Both editions of the chapter are accepted: the current one's ``AdditiveAttention(num_hiddens,
dropout)`` (lazy layers that take the key and query sizes from the first call) and the older
``AdditiveAttention(key_size, query_size, num_hiddens, dropout)``. ``DotProductAttention(dropout)``
and ``masked_softmax(X, valid_lens)`` are the same in both.

In eval mode they return what the book's code returns (to float32 rounding), with two
deliberate differences: ``masked_softmax`` never writes into the caller's ``X`` (the book's
``sequence_mask`` fills a reshaped view in place), and bad valid lengths raise a clear
``AttentionInputError`` instead of producing a silently wrong mask.
"""

from __future__ import annotations

import inspect
import math
from typing import overload

import torch
from torch import nn

from attnviz.text.tr import QT_TRANSLATE_NOOP

from .errors import input_error
from .mask_mods import ValidLength
from .masking import D2L_FILL, _fill
from .scoring import Additive, additive_scores

__all__ = ["masked_softmax", "AdditiveAttention", "DotProductAttention"]


def masked_softmax(X: torch.Tensor, valid_lens: torch.Tensor | None) -> torch.Tensor:
    """Softmax over the last axis of X (batch, queries, keys), keys at or beyond the valid
    length (1-D: per batch element; 2-D: per batch element and query) filled with -1e6."""
    if not isinstance(X, torch.Tensor) or not X.is_floating_point():
        got = f"dtype {X.dtype}" if isinstance(X, torch.Tensor) else type(X).__name__
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "X must be a floating-point tensor of scores; got {got}"), "scores", got=got
        )
    if X.device.type == "meta":
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} is on the 'meta' device, which holds no values"), "scores", name="X"
        )
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    if X.dim() != 3:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "X must be 3-D (batch, queries, keys); got shape {shape}"),
            None,
            shape=tuple(X.shape),
        )
    batch, n_q, n_k = X.shape
    allowed = ValidLength(valid_lens).bind_call(batch, n_q, n_k, device=X.device).block(0, batch, 0, n_q)[0]
    assert allowed is not None
    return nn.functional.softmax(_fill(X, allowed.expand_as(X), D2L_FILL), dim=-1)


class _BookAttention(nn.Module):
    """The book's pooling: masked softmax of the scores (kept as ``attention_weights``), dropout,
    a weighted sum of the values. Subclasses say how the scores are made."""

    def __init__(self, dropout: float, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def scores(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(
        self,
        queries: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        valid_lens: torch.Tensor | None = None,
    ) -> torch.Tensor:
        self.attention_weights = masked_softmax(self.scores(queries, keys), valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class AdditiveAttention(_BookAttention):
    """Additive attention, w_v^T tanh(W_q q + W_k k), with the book's parameter names.

    The (batch, queries, keys, hidden) feature tensor is built a block of queries at a time,
    so its memory stays bounded whatever the number of queries.
    """

    #: Largest feature block built at once, in elements (64 MiB in float32).
    block_elements = 1 << 24

    W_k: nn.Linear
    W_q: nn.Linear
    w_v: nn.Linear

    @overload
    def __init__(self, num_hiddens: int, dropout: float, **kwargs: object) -> None: ...

    @overload
    def __init__(self, key_size: int, query_size: int, num_hiddens: int, dropout: float, **kwargs: object) -> None: ...

    def __init__(self, *args: object, **kwargs: object) -> None:
        """``AdditiveAttention(num_hiddens, dropout)`` (current edition: lazy sizes) or
        ``AdditiveAttention(key_size, query_size, num_hiddens, dropout)`` (older edition).

        >>> attention = AdditiveAttention(num_hiddens=8, dropout=0.1)
        >>> attention.eval()(torch.ones(1, 1, 20), torch.ones(1, 3, 2), torch.ones(1, 3, 4), None).shape
        torch.Size([1, 1, 4])
        """
        sizes, extra = _bind_additive(args, kwargs)
        super().__init__(sizes["dropout"], **extra)
        num_hiddens = sizes["num_hiddens"]
        if "key_size" in sizes:
            self.W_k = nn.Linear(sizes["key_size"], num_hiddens, bias=False)
            self.W_q = nn.Linear(sizes["query_size"], num_hiddens, bias=False)
            self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        else:
            # The current edition's layers: sized at the first call, in the book's order
            # (W_q, then W_k, then w_v), so a seeded run draws the book's parameters.
            self.W_k = nn.LazyLinear(num_hiddens, bias=False)
            self.W_q = nn.LazyLinear(num_hiddens, bias=False)
            self.w_v = nn.LazyLinear(1, bias=False)

    def scores(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        q_hidden, k_hidden = self.W_q(queries), self.W_k(keys)
        if isinstance(self.w_v.weight, nn.parameter.UninitializedParameter):
            self.w_v(q_hidden[:1, :1] + k_hidden[:1, :1])  # sizes w_v from the hidden width
        batch, n_q, hidden = q_hidden.shape
        rows = max(1, self.block_elements // max(batch * k_hidden.shape[1] * hidden, 1))
        if n_q <= rows:
            return additive_scores(q_hidden, k_hidden, self.w_v.weight)
        blocks = [additive_scores(q_hidden[:, r : r + rows], k_hidden, self.w_v.weight) for r in range(0, n_q, rows)]
        return torch.cat(blocks, dim=1)


class DotProductAttention(_BookAttention):
    """Scaled dot-product attention, softmax(Q K^T / sqrt(d)) V."""

    def scores(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        d = queries.shape[-1]
        if keys.shape[-1] != d:
            raise input_error(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "dot-product attention needs queries and keys of the same length: d_q = {d_q}, d_k = {d_k}",
                ),
                None,
                d_q=d,
                d_k=keys.shape[-1],
            )
        return torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)


_CURRENT = inspect.Signature(
    [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("num_hiddens", "dropout")]
    + [inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)]
)
_OLDER = inspect.Signature(
    [
        inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for n in ("key_size", "query_size", "num_hiddens", "dropout")
    ]
    + [inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)]
)


def _bind_additive(args: tuple[object, ...], kwargs: dict[str, object]) -> tuple[dict, dict]:
    """The sizes named by either edition's signature, and the keyword arguments left for nn.Module."""
    for signature in (_OLDER, _CURRENT):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            continue
        extra = bound.arguments.pop("kwargs", {})
        if signature is _CURRENT and ({"key_size", "query_size"} & extra.keys()):
            continue  # half of the older signature: say so below rather than pass it to nn.Module
        return dict(bound.arguments), extra
    raise TypeError(
        "AdditiveAttention takes (num_hiddens, dropout) or (key_size, query_size, num_hiddens, dropout); "
        f"got {len(args)} positional and {sorted(kwargs)} keyword arguments"
    )


# Keep the registry's parameter layout and the module's in step: a change to one breaks here.
assert Additive().param_shapes(2, 3, 4) == {"W_q": (4, 2), "W_k": (4, 3), "w_v": (1, 4)}
