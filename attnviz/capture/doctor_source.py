"""Cross-attention given the decoder's padding instead of the encoder's, whatever the lengths.

``wrong_source`` reads the keys a cross-attention call's real (decoder) queries may see against
what the decoder's padding would let through on the encoder's keys, in the forms code gives it:

* the decoder's attention mask itself (same lengths), or cut or padded (with zeros or ones) to the
  encoder's length: a decoder-length mask on encoder keys;
* ``arange(L_enc) < decoder_lengths``: masks built from the decoder's lengths (speech and
  translation code), the decoder's padding on the encoder's keys.

Every batch element read must fit the same form, and some element must hide a key by it (a form
that lets every key through cannot be told from no mask at all). numpy only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["keys_text", "wrong_source"]

#: How many keys a sentence names before "...".
_NAMED = 4


def keys_text(keys: Sequence[int], tokens: np.ndarray | None, e: int) -> str:
    """ "3 'cat', 4 '[PAD]'" (without tokens: "3, 4")."""
    named = list(keys)[:_NAMED]
    if tokens is None:
        text = ", ".join(str(k) for k in named)
    else:
        text = ", ".join(f"{k} {str(tokens[e, k])!r}" for k in named)
    if len(keys) > _NAMED:
        text += ", ..."
    return text


def _forms(real_q: np.ndarray, n_k: int) -> dict[str, np.ndarray]:
    """(B, L_k) what each form of the decoder's padding lets through on ``n_k`` encoder keys."""
    b, n_q = real_q.shape
    n = min(n_q, n_k)
    forms: dict[str, np.ndarray] = {}
    for name, fill in (("zeros", False), ("ones", True)):
        fitted = np.full((b, n_k), fill, dtype=bool)
        fitted[:, :n] = real_q[:, :n]
        forms[name] = fitted
    forms["lengths"] = np.arange(n_k)[None, :] < real_q.sum(-1)[:, None]
    return forms


def wrong_source(
    seen: np.ndarray,
    real_k: np.ndarray,
    real_q: np.ndarray,
    read: np.ndarray,
    bad: np.ndarray,
    attended: np.ndarray,
    hidden: np.ndarray,
    tokens: np.ndarray | None,
) -> str | None:
    """The sentence naming a decoder's padding on a cross-attention call's encoder keys, or None.

    ``seen`` (B, H, L_k) the keys some real query of each element may see; ``real_k`` (B, L_k)
    the encoder's real keys; ``real_q`` (B, L_q) the decoder's real queries; ``read`` (B,) the
    elements read; ``bad`` (B, H) the heads wrong about the padding; ``attended`` / ``hidden``
    (B, H, L_k) the pads seen and the real keys no real query sees; ``tokens`` (B, L_k) the keys'
    tokens to name them with."""
    b, _h, n_k = seen.shape
    n_q = real_q.shape[1]
    elements = [e for e in range(b) if read[e]]
    if not any(bool(bad[e].any()) for e in elements):
        return None
    fitting = []
    for name, form in _forms(real_q, n_k).items():
        # Every element read follows the form on every head, and it hides a key somewhere.
        if all(bool((seen[e] == form[e][None, :]).all()) for e in elements) and not all(
            bool(form[e].all()) for e in elements
        ):
            fitting.append(name)
    if not fitting:
        return None
    wrong = [e for e in elements if bad[e].any()]
    hidden_text = "; ".join(
        message(
            QT_TRANSLATE_NOOP("Doctor", "batch {e}: encoder key(s) {keys}"),
            e=e,
            keys=keys_text([int(k) for k in np.flatnonzero(hidden[e].any(0))], tokens, e),
        )
        for e in wrong
        if hidden[e].any()
    ) or QT_TRANSLATE_NOOP("Doctor", "none")
    pads_text = "; ".join(
        message(
            QT_TRANSLATE_NOOP("Doctor", "batch {e}: encoder padding key(s) {keys}"),
            e=e,
            keys=keys_text([int(k) for k in np.flatnonzero(attended[e].any(0))], tokens, e),
        )
        for e in wrong
        if attended[e].any()
    ) or QT_TRANSLATE_NOOP("Doctor", "none")
    lengths = lambda mask: ", ".join(str(int(n)) for n in mask.sum(-1))  # noqa: E731
    cause: str
    if n_q == n_k and "zeros" in fitting:
        cause = QT_TRANSLATE_NOOP(
            "Doctor",
            "a decoder's mask on encoder keys: this cross-attention call's keys are the encoder's, but the keys it "
            "lets through follow the decoder's padding, not the encoder's",
        )
    elif "zeros" in fitting or "ones" in fitting:
        how = (
            QT_TRANSLATE_NOOP("Doctor", "cut to")
            if n_q > n_k
            else (
                QT_TRANSLATE_NOOP("Doctor", "padded with zeros to")
                if "zeros" in fitting
                else QT_TRANSLATE_NOOP("Doctor", "padded with ones to")
            )
        )
        cause = message(
            QT_TRANSLATE_NOOP(
                "Doctor",
                "a decoder-length mask on encoder keys: this cross-attention call's {n_k} keys are the encoder's "
                "(real lengths {encoder}), but its mask is the decoder's padding ({n_q} positions, real lengths "
                "{decoder}) {how} {n_k} keys{also}",
            ),
            n_k=n_k,
            n_q=n_q,
            encoder=lengths(real_k),
            decoder=lengths(real_q),
            how=how,
            also=QT_TRANSLATE_NOOP("Doctor", " (or arange(L_enc) < the decoder's lengths: the same keys here)")
            if "lengths" in fitting
            else "",
        )
    else:
        cause = message(
            QT_TRANSLATE_NOOP(
                "Doctor",
                "the decoder's padding on the encoder's keys: this cross-attention call's {n_k} keys are the "
                "encoder's (real lengths {encoder}), but the keys it lets through are the first decoder-length "
                "ones, arange(L_enc) < the decoder's lengths ({decoder})",
            ),
            n_k=n_k,
            encoder=lengths(real_k),
            decoder=lengths(real_q),
        )
    return message(
        QT_TRANSLATE_NOOP(
            "Doctor",
            "{cause}; real encoder keys wrongly hidden: {hidden}; encoder padding keys attended: {pads}; pass the "
            "encoder's attention_mask to cross-attention",
        ),
        cause=cause,
        hidden=hidden_text,
        pads=pads_text,
    )
