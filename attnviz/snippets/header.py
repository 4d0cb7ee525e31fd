"""What a snippet's opening comment says: what it computes, from what, and what it leaves out."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from attnviz.text.safe import printable

from .inputs import SnippetInput

__all__ = ["header_lines"]

#: What each mask mode does, said in the snippet's header.
_MODE_WORDS = {
    "d2l": "masked keys get the score -1e6 (the book's masked softmax)",
    "neg_inf": "masked keys get the score -inf (a row with no key left becomes NaN)",
    "strict": "masked keys get the score -inf; a row with no key left gets zero weights, and a NaN or "
    "infinite value behind a zero weight stays out of the output",
    "sdpa": "masked keys get the score -inf and a row with no key left gets zero weights, as PyTorch's "
    "scaled_dot_product_attention does",
    "float01": "the bug of a 1/0 mask added to the scores as if it were additive: allowed keys get +1, "
    "nothing is masked",
    "inverted": "the bug of a mask read with the opposite polarity: the allowed keys are the ones masked",
}
_SCORING_WORDS = {
    "additive": "additive attention, a(q, k) = w_v^T tanh(W_q q + W_k k)",
    "scaled_dot": "scaled dot-product attention, a(q, k) = q^T k / sqrt(d)",
    "dot": "dot-product attention without scaling, a(q, k) = q^T k",
    "bilinear": "bilinear attention, a(q, k) = q^T W k (the chapter's exercise 2)",
    "gaussian": "Gaussian-kernel attention, a(q, k) = -||q - k||^2 / 2 (Nadaraya-Watson)",
    "summation": "summation attention, a(q, k) = sum(q) + sum(k) (the chapter's exercise 3)",
}


def header_lines(inp: SnippetInput, title: str, dtype: str, needs: str, leaves_out: Sequence[str]) -> list[str]:
    """The opening comment of ``inp``'s snippet in framework ``title``, computed in ``dtype``,
    importing ``needs``: its lines, wrapped, each starting with ``#``. The sentences carry names
    read from files (a call's, a score term's, a device's): each is made one printable line first,
    so no line break ends the comment and no control or bidi character reaches the code."""
    return [
        f"# {part}" if i == 0 else f"#   {part}"
        for text in _sentences(inp, title, dtype, needs, leaves_out)
        for i, part in enumerate(
            textwrap.wrap(printable(text), 96, break_long_words=False, break_on_hyphens=False) or [""]
        )
    ]


def _sentences(inp: SnippetInput, title: str, dtype: str, needs: str, leaves_out: Sequence[str]) -> list[str]:
    lines: list[str] = []
    words = _SCORING_WORDS[inp.scoring]
    if inp.scale is not None:
        words = f"dot-product attention scaled by {inp.scale!r}, a(q, k) = {inp.scale!r} q^T k"
    lines.append(
        f"{words[0].upper()}{words[1:]}, in plain {title} (no attnviz needed): the inputs, "
        "learnable parameters and settings attnviz showed, written out."
    )
    if inp.focus:
        lines.append(f"The tensors are {inp.focus} of a model run; the other heads are left out.")
    lines.append(
        f"Inputs: queries {tuple(inp.queries.shape)}, keys {tuple(inp.keys.shape)}, values "
        f"{tuple(inp.values.shape)} (batch, length, size)."
    )
    if inp.valid_lens is None:
        lines.append("Valid lengths: none (every key is valid).")
    else:
        per = "per batch element" if inp.valid_lens.ndim == 1 else "per query"
        lines.append(f"Valid lengths: {tuple(inp.valid_lens.shape)}, one {per}.")
    if inp.causal is not None:
        aligned = (
            "query i sees keys 0..i"
            if inp.causal == "top_left"
            else "aligned bottom-right, the last query sees every key"
        )
        lines.append(f"Causal mask: {aligned}.")
    if inp.mask is not None or inp.bias is not None:
        what = "; ".join(inp.mask_sources) if inp.mask_sources else "the model's masks"
        written = "the boolean `extra_mask` (True = may attend)" if inp.mask is not None else ""
        if inp.bias is not None:
            written += (" and " if written else "") + "the additive `bias`"
        lines.append(f"Other masks, written below as {written}: {what}.")
    lines.append(f"Masking: {_MODE_WORDS[inp.mask_mode]}.")
    if inp.dropping:
        lines.append(
            f"Dropout {inp.dropout!r} in training: attnviz's draw is `dropout_keep` below, so this script drops "
            "the same weights (the framework's own dropout would draw others)."
        )
    elif inp.dropout > 0:
        lines.append(f"Dropout {inp.dropout!r}, inactive: attnviz shows the weights outside training.")
    lines.append(f"Computed in {dtype}.")
    if inp.device != "cpu":
        lines.append(f"attnviz computed on {inp.device}; this script runs on the CPU (the last bits may differ).")
    lines += [f"Left out: {item}." for item in leaves_out]
    lines.append(f"Needs {needs}. Run it to print the attention weights and the output;")
    lines.append("`python snippet.py --save-weights weights.npy` also saves the weights as a .npy file.")
    return lines
