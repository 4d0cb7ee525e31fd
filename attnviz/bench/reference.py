"""A plain re-implementation of the book's PyTorch code, for tests and benchmarks only.

It behaves exactly like the chapter's code, warts included: ``_sequence_mask`` writes into its
argument (a view of the caller's scores), valid lengths are compared as floats, and the fill is
-1e6. attnviz's own code lives in ``attnviz.engine``; this file is the yardstick.
"""

from __future__ import annotations

import math

import torch
from torch import nn


def _sequence_mask(X: torch.Tensor, valid_len: torch.Tensor, value: float = 0.0) -> torch.Tensor:
    width = X.size(1)
    keep = torch.arange(width, dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~keep] = value
    return X


def book_masked_softmax(X: torch.Tensor, valid_lens: torch.Tensor | None) -> torch.Tensor:
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return nn.functional.softmax(X.reshape(shape), dim=-1)


class BookAdditiveAttention(nn.Module):
    def __init__(self, key_size: int, query_size: int, num_hiddens: int, dropout: float) -> None:
        super().__init__()
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = book_masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class BookDotProductAttention(nn.Module):
    def __init__(self, dropout: float) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = book_masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class BookLazyAdditiveAttention(nn.Module):
    """The current edition's additive attention: lazy layers sized at the first call."""

    def __init__(self, num_hiddens: int, dropout: float) -> None:
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = book_masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
