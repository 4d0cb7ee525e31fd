"""A call's mask read against the padding the tokens (or an attention mask) reveal, both ways.

``read_padding(allowed, pad_q, pad_k)`` looks at the keys each batch element's real query rows
may see and compares them with its real keys: padding keys attended, and real keys hidden from
every real query (a causal mask or a window hides a key from some queries, never from all, so a
key hidden from every real query is a padding mask that is wrong about it). Then it names the
shape of the mistake when it is a common one:

* ``mask_shift``: the keys seen are the real keys moved by a constant offset (a mask built one
  place off: a shifted slice, a BOS counted twice);
* ``mask_order``: a batch element's heads carry another element's padding (a per-sequence mask
  expanded to nn.MultiheadAttention's (B*H, L, L) with ``repeat`` where ``repeat_interleave`` was
  needed, or the reverse);
* ``wrong_source``: a cross-attention call whose keys follow the queries' (decoder's) padding, not
  the keys' own (encoder's);

and otherwise says both halves (``padding_attended`` when only pads are seen, else
``padding_mismatch``). numpy only; every place named in tokens where there are tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from .doctor_source import keys_text as _keys_text
from .doctor_source import wrong_source

__all__ = ["PaddingReading", "read_padding"]

#: The offsets a shifted mask is tried at (a mask more than a few places off is not "shifted").
_SHIFTS = (1, -1, 2, -2, 3, -3)


@dataclass(frozen=True)
class PaddingReading:
    """What one call's mask does against the padding: ``kind``, one sentence, and where."""

    kind: str
    text: str
    heads: tuple[int, ...]
    batch: tuple[int, ...]
    rows: tuple[int, ...]
    count: int


def read_padding(
    allowed: np.ndarray,
    pad_q: np.ndarray | None,
    pad_k: np.ndarray,
    *,
    key_tokens: np.ndarray | None = None,
    cross: bool = False,
) -> PaddingReading | None:
    """``allowed`` (B, H, L_q, L_k) which keys each query may see; ``pad_q`` (B, L_q) padding
    queries (None: every row is read, as for a call whose query tokens are unknown); ``pad_k``
    (B, L_k) padding keys; ``key_tokens`` (B, L_k) to name keys with; ``cross``: the keys come
    from another sequence than the queries (an encoder's). None when the mask agrees with the
    padding on every real query row."""
    b, h, n_q, n_k = allowed.shape
    if pad_k.shape != (b, n_k) or not bool(pad_k.any()):
        return None  # no padding shown anywhere in the batch: a hidden key may be a pad not named
    real_q = np.ones((b, n_q), dtype=bool) if pad_q is None or pad_q.shape != (b, n_q) else ~pad_q
    real_k = ~pad_k
    if key_tokens is not None and key_tokens.shape != (b, n_k):
        key_tokens = None
    # (B, H, L_k): the keys some real query row of the element may see.
    seen = np.zeros((b, h, n_k), dtype=bool)
    read = np.asarray(real_q.any(-1) & real_k.any(-1), dtype=bool)  # an element with no real query or key says nothing
    for e in range(b):
        if read[e]:
            seen[e] = allowed[e][:, real_q[e]].any(1)
    attended = seen & pad_k[:, None, :] & read[:, None, None]  # pads seen
    hidden = ~seen & real_k[:, None, :] & read[:, None, None]  # real keys no real query sees
    if not cross and n_q == n_k:
        # A padding mask hides a key from every row or from none; a real query that cannot see
        # itself while other queries see it is a causal or window mask one place off (its empty
        # rows say so), not padding.
        diagonal = allowed[:, :, np.arange(n_q), np.arange(n_k)]  # (B, H, L)
        if bool((~diagonal & real_q[:, None, :] & real_k[:, None, :] & ~hidden).any()):
            hidden = np.zeros_like(hidden)
    wrong = attended | hidden
    if not bool(wrong.any()):
        return None
    bad = wrong.any(-1)  # (B, H)
    heads = tuple(int(i) for i in np.flatnonzero(bad.any(0)))
    batch = tuple(int(i) for i in np.flatnonzero(bad.any(1)))
    # Real rows that see a pad, and every real row of an element with a real key hidden.
    to_pad = (allowed & pad_k[:, None, None, :]).any(-1).any(1) & real_q  # (B, L_q)
    rows_flags = to_pad | (real_q & hidden.any((1, 2))[:, None])
    rows = tuple(int(i) for i in np.flatnonzero(rows_flags.any(0)))
    count = int(rows_flags.sum())
    where = {"heads": heads, "batch": batch, "rows": rows, "count": count}

    halves = _halves(attended, hidden, key_tokens)
    # (B, L_k) the keys a real query can reach at all: under a causal mask (no real query sees a
    # later key) those up to the last real query; a shape is read on them only.
    reach = np.ones((b, n_k), dtype=bool)
    if not cross and n_q == n_k:
        later = np.triu(np.ones((n_q, n_k), dtype=bool), 1)
        if not bool((allowed & later & real_q[:, None, :, None]).any()):
            for e in range(b):
                if real_q[e].any():
                    reach[e] = np.arange(n_k) <= int(np.flatnonzero(real_q[e]).max())
    if cross and pad_q is not None and pad_q.shape == (b, n_q):
        # Before the order: a decoder's lengths over the encoder's keys can look like another
        # element's padding.
        source = wrong_source(seen, real_k, real_q, read, bad, attended, hidden, key_tokens)
        if source is not None:
            return PaddingReading("wrong_source", source, **where)  # type: ignore[arg-type]
    order = _order(seen, real_k, read, bad, reach)
    if order is not None:
        return PaddingReading("mask_order", message(order, both=halves), **where)  # type: ignore[arg-type]
    # A shift always hides a real key (the one moved out, or the first one moved over).
    # A mask is there when some key is hidden from every real query (a pad or a real one): only
    # then can it be one place off (no mask at all fits any shift of a batch with one pad each).
    masked = bool((~seen & reach[:, None, :] & read[:, None, None]).any())
    shift = _shift(seen, real_k, read, bad, reach) if masked else None
    if shift is not None:
        text = message(
            QT_TRANSLATE_NOOP(
                "Doctor",
                "the padding mask is shifted by {shift} position(s) against the padding the tokens show (the keys "
                "it lets through are the real keys moved {shift} place(s) {direction}): {both}; build it from the "
                "attention mask itself, position for position",
            ),
            shift=abs(shift),
            direction=QT_TRANSLATE_NOOP("Doctor", "later") if shift > 0 else QT_TRANSLATE_NOOP("Doctor", "earlier"),
            both=halves,
        )
        return PaddingReading("mask_shift", text, **where)  # type: ignore[arg-type]
    if not bool(hidden.any()):
        template = (
            QT_TRANSLATE_NOOP(
                "Doctor",
                "real query rows attend to padding keys the mask lets through while it hides others, and no real key "
                "is hidden ({both}); build the padding mask from the attention mask of these very tokens",
            )
            if masked
            else QT_TRANSLATE_NOOP(
                "Doctor",
                "real query rows attend to padding keys, and no real key is hidden: nothing masks the padding "
                "({both}); hide padding keys from every query with a (B, 1, 1, L_k) mask",
            )
        )
        return PaddingReading("padding_attended", message(template, both=halves), **where)  # type: ignore[arg-type]
    text = message(
        QT_TRANSLATE_NOOP(
            "Doctor",
            "the mask does not follow the padding the tokens show: {both}; build the padding mask from the "
            "attention mask of these very tokens",
        ),
        both=halves,
    )
    return PaddingReading("padding_mismatch", text, **where)  # type: ignore[arg-type]


def _halves(attended: np.ndarray, hidden: np.ndarray, tokens: np.ndarray | None) -> str:
    """ "batch 1 attends to padding keys 4 '[PAD]' and hides real keys 0 'w0' from every real query; ..."."""
    parts: list[str] = []
    for e in range(attended.shape[0]):
        pads = [int(k) for k in np.flatnonzero(attended[e].any(0))]
        reals = [int(k) for k in np.flatnonzero(hidden[e].any(0))]
        if pads and reals:
            parts.append(
                message(
                    QT_TRANSLATE_NOOP(
                        "Doctor",
                        "batch {e} attends to padding key(s) {pads} and hides real key(s) {reals} from every "
                        "real query",
                    ),
                    e=e,
                    pads=_keys_text(pads, tokens, e),
                    reals=_keys_text(reals, tokens, e),
                )
            )
        elif pads:
            parts.append(
                message(
                    QT_TRANSLATE_NOOP("Doctor", "batch {e} attends to padding key(s) {pads}"),
                    e=e,
                    pads=_keys_text(pads, tokens, e),
                )
            )
        elif reals:
            parts.append(
                message(
                    QT_TRANSLATE_NOOP("Doctor", "batch {e} hides real key(s) {reals} from every real query"),
                    e=e,
                    reals=_keys_text(reals, tokens, e),
                )
            )
    return "; ".join(parts)


def _order(seen: np.ndarray, real_k: np.ndarray, read: np.ndarray, bad: np.ndarray, reach: np.ndarray) -> str | None:
    """Every head of every element sees exactly some element's real keys, and some see another's:
    the per-sequence masks were spread over the (B*H) heads in the wrong order."""
    b, h, _n = seen.shape
    elements = [e for e in range(b) if read[e]]
    if len(elements) < 2 or len({real_k[e].tobytes() for e in elements}) < 2:
        return None
    if len({seen[e, head].tobytes() for e in elements for head in range(h)}) < 2:
        return None  # one pattern everywhere (no mask at all, say): no element's mask went elsewhere
    foreign = 0
    for e in elements:
        for head in range(h):
            owners = [o for o in range(b) if bool(((seen[e, head] == real_k[o]) | ~reach[e]).all())]
            if not owners:
                return None
            if e not in owners:
                foreign += 1
    if not foreign:
        return None
    return QT_TRANSLATE_NOOP(
        "Doctor",
        "batch elements' padding masks landed in other elements' heads (each head of these elements sees exactly "
        "another batch element's real keys): a per-sequence mask expanded to (B*H, L_q, L_k) in the wrong order; "
        "nn.MultiheadAttention reads index b*num_heads + h, so expand with mask.repeat_interleave(num_heads, 0), "
        "not mask.repeat(num_heads, 1, 1); {both}",
    )


def _shift(seen: np.ndarray, real_k: np.ndarray, read: np.ndarray, bad: np.ndarray, reach: np.ndarray) -> int | None:
    """The offset s such that every wrong head sees the real keys moved by s (keys moved past an
    end are not compared: a shift may drop them or wrap them around)."""
    b, h, n_k = seen.shape
    wrong = [(e, head) for e in range(b) for head in range(h) if read[e] and bad[e, head]]
    if not wrong:
        return None
    for s in _SHIFTS:
        if abs(s) >= n_k:
            continue
        fits = True
        for e, head in wrong:
            moved_from = real_k[e][: n_k - s] if s > 0 else real_k[e][-s:]
            got = seen[e, head][s:] if s > 0 else seen[e, head][: n_k + s]
            within = reach[e][s:] if s > 0 else reach[e][: n_k + s]
            if not bool(((got == moved_from) | ~within).all()):
                fits = False
                break
        if fits:
            return s
    return None
