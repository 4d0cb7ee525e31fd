"""What the axes of a weights map are called: a model's tokens when the inputs bring them, else
q0, q1, ... and k0, k1, ... (the book's). No Qt here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnviz.text.safe import printable, python_literal

__all__ = ["MAX_LABEL_CHARS", "axis_labels", "index_labels", "short_token", "span_labels", "token_of"]

#: Longer tokens are cut with an ellipsis on the axes (the hover text shows them whole).
MAX_LABEL_CHARS = 14


def short_token(token: str, limit: int = MAX_LABEL_CHARS) -> str:
    """``token`` as one printable line of at most ``limit`` characters (the common line breaks
    and tabs shown as escapes, other controls, ESC sequences and bidi controls removed)."""
    text = printable(token.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r"))
    text = text if text.strip() else python_literal(token)  # a space or an empty token stays visible
    return text if len(text) <= limit else text[: limit - 1] + "…"


def index_labels(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(count)]


def _row(tokens: np.ndarray | Sequence[Sequence[str]] | None, batch: int, count: int) -> list[str] | None:
    if tokens is None or batch >= len(tokens) or len(tokens[batch]) != count:
        return None
    return [short_token(str(t)) for t in tokens[batch]]


def axis_labels(
    query_tokens: np.ndarray | None, key_tokens: np.ndarray | None, batch: int, n_queries: int, n_keys: int
) -> tuple[list[str], list[str]]:
    """Row (query) and column (key) labels of batch element ``batch``."""
    rows = _row(query_tokens, batch, n_queries) or index_labels("q", n_queries)
    cols = _row(key_tokens, batch, n_keys) or index_labels("k", n_keys)
    return rows, cols


def span_labels(tokens: np.ndarray | None, prefix: str, batch: int, count: int, start: int, stop: int) -> list[str]:
    """The labels ``axis_labels`` gives positions ``start`` to ``stop`` of an axis of ``count``
    (tokens, else ``prefix`` and the index), made for those positions only: a tile of a long
    input needs a few hundred of them, not all 32768."""
    if tokens is not None and batch < len(tokens) and len(tokens[batch]) == count:
        return [short_token(str(tokens[batch][i])) for i in range(start, stop)]
    return [f"{prefix}{i}" for i in range(start, stop)]


def token_of(tokens: np.ndarray | None, batch: int, index: int) -> str | None:
    """The whole token at ``index`` of batch element ``batch``, as one printable line (None
    without tokens)."""
    if tokens is None or batch >= len(tokens) or index >= len(tokens[batch]):
        return None
    return printable(str(tokens[batch][index]))
