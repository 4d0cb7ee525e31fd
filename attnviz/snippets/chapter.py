"""The attention the chapter teaches, written once for every framework from its ``Ops``.

``ChapterCode`` writes the masked softmax (the -1e6 fill by broadcasting a key index against 1-D
or 2-D valid lengths, and every other mask mode), the causal mask, the scoring functions' lines,
the pooled output of strict masking, and tags each line with the stage it computes. What a
framework declares differently (a module or a function, its layers, its dropout) is written by
``modules.ModuleGenerator`` and the JAX generator around these lines.
"""

from __future__ import annotations

import re

import numpy as np

from .inputs import SnippetInput
from .ops import Ops, grouped, spell
from .writer import RETURN_VALUE, CodeWriter

__all__ = ["WIDTH", "ChapterCode"]

#: The widest line a trailing comment is written on; a longer line goes without it.
WIDTH = 100

_CLASS_NAMES = {
    "additive": "AdditiveAttention",
    "scaled_dot": "DotProductAttention",
    "dot": "UnscaledDotProductAttention",
    "bilinear": "BilinearAttention",
    "gaussian": "GaussianAttention",
    "summation": "SummationAttention",
}
_CLASS_DOCS = {
    "additive": "Additive attention: a(q, k) = w_v^T tanh(W_q q + W_k k), for queries and keys of any sizes.",
    "scaled_dot": "Scaled dot-product attention: a(q, k) = q^T k / sqrt(d), queries and keys of one size d.",
    "dot": "Dot-product attention without scaling: a(q, k) = q^T k, queries and keys of one size.",
    "bilinear": "Bilinear attention: a(q, k) = q^T W k, matrix products only, for any query and key sizes.",
    "gaussian": "Gaussian-kernel attention: a(q, k) = -||q - k||^2 / 2, as in Nadaraya-Watson regression.",
    "summation": "Summation attention: a(q, k) = sum(q) + sum(k); the query's sum cancels in the softmax.",
}


class ChapterCode:
    """The lines every framework shares, spelled with ``ops``; ``w`` collects them."""

    ops: Ops

    def __init__(self, inp: SnippetInput) -> None:
        self.inp = inp
        self.w = CodeWriter()
        mode = inp.mask_mode
        #: The score masked keys get (None: the mode adds or inverts instead).
        self.fill: str | None = {"d2l": "-1e6", "float01": None}.get(mode, 'float("-inf")')
        self.zero_empty_rows = mode in ("strict", "sdpa")
        self.clean_pool = mode == "strict" and not bool(np.isfinite(inp.values).all())
        #: masked_softmax takes a boolean mask (causal, a model's, long-context) besides the lengths.
        self.has_mask = inp.causal is not None or inp.mask is not None
        self.has_bias = inp.bias is not None
        #: masked_softmax takes more than the book's valid lengths (a mask, a bias).
        self.general = self.has_mask or self.has_bias

    # ------------------------------------------------------------------ names and signatures

    @property
    def scaled_by_setting(self) -> bool:
        """Dot-product attention scaled by a given number (a model's scale), not 1 / sqrt(d)."""
        return self.inp.scoring in ("dot", "scaled_dot") and self.inp.scale is not None

    def class_name(self) -> str:
        """The scoring module's name: the book's for its two, names in the same style for ours."""
        return "DotProductAttention" if self.scaled_by_setting else _CLASS_NAMES[self.inp.scoring]

    def function_name(self) -> str:
        """The scoring function's name where it is a function: the class name in snake case."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.class_name()).lower()

    def class_doc(self) -> str:
        if self.scaled_by_setting:
            return "Dot-product attention with a given scale: a(q, k) = scale * q^T k (queries and keys of one size)."
        return _CLASS_DOCS[self.inp.scoring]

    def call_args(self) -> str:
        """The arguments the attention (and masked_softmax after the scores) is called with,
        after queries, keys and values."""
        args = ["valid_lens"]
        if self.has_mask:
            args.append("mask")
        if self.has_bias:
            args.append("bias" if self.has_mask else "bias=bias")
        return ", ".join(args)

    def forward_params(self) -> str:
        """The parameters of the attention's forward/call, after queries, keys and values."""
        return ", ".join(self._optional_params(["valid_lens=None"]))

    def softmax_call(self) -> str:
        """How the attention calls masked_softmax on its ``scores``."""
        return "masked_softmax(scores, " + self.call_args() + ")"

    def _optional_params(self, params: list[str]) -> list[str]:
        if self.general:
            params.append("mask=None")
        if self.has_bias:
            params.append("bias=None")
        return params

    def fits(self, line: str) -> bool:
        """Whether ``line`` fits in ``WIDTH`` columns where it would be written now."""
        return self.w.indent_width + len(line) <= WIDTH

    def commented(self, code: str, comment: str, stage: str | tuple[str, ...], variable: str | None = None) -> None:
        """``code  # comment`` when that ``fits``, else ``code``."""
        line = f"{code}  # {comment}"
        self.w.line(line if self.fits(line) else code, stage, variable)

    # ------------------------------------------------------------------ the scoring function

    def scores(self) -> None:
        """``scores`` (batch, queries, keys) from ``queries`` and ``keys``, as the scoring function
        computes them: the raw scores, then the scaling."""
        w, o, inp = self.w, self.ops, self.inp
        scoring = inp.scoring
        if scoring == "additive":
            q, k = spell(o.linear, name="W_q", x="queries"), spell(o.linear, name="W_k", x="keys")
            both = f"q, k = {q}, {k}  # (batch, queries, h), (batch, keys, h)"
            if self.fits(both):
                w.line(both, "hidden_features")
            else:
                w.line(f"q = {q}  # (batch, queries, h)", "hidden_features")
                w.line(f"k = {k}  # (batch, keys, h)", "hidden_features")
            w.line("# every query with every key: (batch, queries, 1, h) + (batch, 1, keys, h)", "hidden_features")
            pairs = f"{self.expand('q', 2, 3)} + {self.expand('k', 1, 3)}"
            w.line(f"features = {spell(o.tanh, x=pairs)}", "hidden_features", "features")
            raw = spell(o.squeeze_last, x=spell(o.linear, name="w_v", x="features"))
            self.commented(f"scores = {raw}", "(batch, queries, keys)", "raw_scores", "scores")
        elif scoring in ("dot", "scaled_dot"):
            self.commented(f"scores = {self.products('queries')}", "(batch, queries, keys)", "raw_scores", "scores")
            if inp.scale is not None:
                w.line(f"scores = scores * {spell(o.setting, name='scale')}", "scores", "scores")
            elif scoring == "scaled_dot":
                w.line("d = queries.shape[-1]", "scores")
                w.line(
                    "scores = scores / math.sqrt(d)  # keeps the scores' variance near 1 whatever d", "scores", "scores"
                )
        elif scoring == "bilinear":
            mapped = spell(o.matmul, a="queries", b=spell(o.param, name="W"))
            self.commented(f"scores = {self.products(mapped)}", "(batch, queries, keys)", "raw_scores", "scores")
        elif scoring == "gaussian":
            w.line(
                "# ||q - k||^2 = ||q||^2 + ||k||^2 - 2 q.k: one batched product, no (queries, keys, d) tensor",
                "raw_scores",
            )
            self.commented(
                f"sq_q = {spell(o.sum_last_keep, x='queries * queries')}", "(batch, queries, 1)", "raw_scores"
            )
            sq_k = self.expand(spell(o.sum_last, x="keys * keys"), 1, 2)
            self.commented(f"sq_k = {sq_k}", "(batch, 1, keys)", "raw_scores")
            if o.minus_2_bmm_t is None:
                distances = f"(sq_q + sq_k) - 2 * {grouped(self.products('queries'))}"
            else:
                distances = spell(o.minus_2_bmm_t, c="sq_q + sq_k", a="queries", b="keys")
            w.line(f"distances = {distances}", "raw_scores")
            w.line(
                f"scores = -0.5 * {spell(o.clamp0, x='distances')}  # rounding can dip a distance below 0",
                "raw_scores",
                "scores",
            )
        else:  # summation
            sum_q, sum_k = spell(o.sum_last_keep, x="queries"), self.expand(spell(o.sum_last, x="keys"), 1, 2)
            if self.fits(f"scores = {sum_q} + {sum_k}"):
                self.commented(f"scores = {sum_q} + {sum_k}", "(batch, queries, keys)", "raw_scores", "scores")
            else:
                self.commented(f"sum_q = {sum_q}", "(batch, queries, 1)", "raw_scores")
                self.commented(f"sum_k = {sum_k}", "(batch, 1, keys)", "raw_scores")
                w.line("scores = sum_q + sum_k  # (batch, queries, keys)", "raw_scores", "scores")

    def products(self, queries: str) -> str:
        """Every query (rows of ``queries``) with every key: the batched ``queries @ keys^T``."""
        return spell(self.ops.bmm_t, a=queries, b="keys")

    def expand(self, x: str, axis: int, ndim: int) -> str:
        """``x`` (of ``ndim`` axes) with a new axis of size 1 at ``axis``."""
        index = ", ".join("None" if i == axis else ":" for i in range(ndim + 1))
        return spell(self.ops.expand, x=x, axis=axis, index=index)

    def pool(self) -> None:
        """``pool(weights, values)``: strict mode's product, which keeps NaN padding out."""
        w, o = self.w, self.ops
        w.blank(2)
        doc = (
            "weights @ values, batched, where a NaN or infinite value counts only where its weight is not 0:",
            "strict masking keeps what padding holds out of the output.",
        )
        with w.define("def pool(weights, values):", doc, name="pool"):
            w.line(f"finite = {spell(o.is_finite, x='values')}", "output")
            w.line(f"safe = {spell(o.bmm, a='weights', b=spell(o.zero_rows, m='finite', x='values'))}", "output")
            w.line(f"used = {spell(o.as_dtype, m=spell(o.nonzero, x='weights'), like='values')}", "output")
            unsafe = spell(o.as_dtype, m=spell(o.negate, a="finite"), like="values")
            w.line(f"leaks = {grouped(spell(o.bmm, a='used', b=unsafe))} > 0", "output")
            whole = spell(o.bmm, a="weights", b="values")
            w.line(f"return {spell(o.where, m='leaks', a=whole, b='safe')}", "output", RETURN_VALUE)

    # ------------------------------------------------------------------ the masked softmax

    def masked_softmax(self) -> None:
        """``masked_softmax(X, valid_lens, ...)``: the book's masked softmax, written with broadcasting
        (a key index against the lengths), plus the mask and bias when the snippet has them."""
        w = self.w
        ops = self.ops
        lens = self.inp.valid_lens is not None
        doc = [
            "Softmax over the last axis (the keys) of the scores X, shaped (batch, queries, keys).",
            "",
            "Keys at or past a row's valid length are masked first. valid_lens: None (no key is",
            "masked), (batch,) (the same length for every query of an element) or (batch, queries).",
        ]
        if self.general:
            doc.append("mask: None, or booleans broadcastable to X's shape, True where a query may attend a key.")
        if self.has_bias:
            doc.append("bias: None, or what a model's additive mask adds to the scores first.")
        opening = f"def masked_softmax({', '.join(self._optional_params(['X', 'valid_lens']))}):"
        with w.define(opening, [*doc, ""], name="masked_softmax"):
            if not self.general:
                # The book's case: valid lengths or nothing.
                quiet = None if lens else ("mask", "masked_scores")
                w.line("if valid_lens is None:", quiet)
                with w.block():
                    w.line(f"return {spell(ops.softmax, x='X')}", None if lens else "weights", RETURN_VALUE)
                self._lengths_mask("mask = ", lens)
                self._apply_mask(lens)
                self._softmax(lens)
                return
            if self.has_bias:
                # Nothing else masks: the bias is the mask (keys at -inf, or finfo.min, are hidden).
                only = not (lens or self.has_mask)
                stages = ("mask", "masked_scores") if only else "masked_scores"
                w.line("if bias is not None:", stages)
                with w.block():
                    w.line("X = X + bias", stages, {"masked_scores": "X"})
            w.line("if valid_lens is not None:", "mask" if lens else None)
            with w.block():
                self._lengths_mask("within = ", lens)
                both = spell(ops.both, a="mask", b="within")
                w.line(f"mask = within if mask is None else {both}", "mask" if lens else None, "mask")
            masked = lens or self.has_mask
            w.line("if mask is not None:", "masked_scores" if masked else None)
            with w.block():
                self._apply_mask(masked)
            self._softmax(True)

    def _lengths_mask(self, target: str, tagged: bool) -> None:
        w = self.w
        stage = "mask" if tagged else None
        w.line(f"if {self.ops.is_1d}:", stage)
        with w.block():
            w.line("valid_lens = valid_lens[:, None]  # (batch, 1): one length for all of an element's queries", stage)
        w.line("# key j counts for a row when j < its valid length: (batch, queries or 1, keys)", stage)
        variable = "mask" if target.startswith("mask") else None
        w.line(f"{target}{self.ops.key_index} < valid_lens[:, :, None]", stage, variable)

    def _apply_mask(self, tagged: bool) -> None:
        w = self.w
        ops = self.ops
        stage = "masked_scores" if tagged else None
        mode = self.inp.mask_mode
        if mode == "float01":
            w.line(
                "# The bug: a 1/0 'may attend' mask added as if additive. Allowed keys get +1, none is masked.", stage
            )
            w.line(f"X = X + {spell(ops.as_dtype, m='mask', like='X')}", stage, "X")
        elif mode == "inverted":
            w.line("# The bug: the mask read as True = ignore, so the allowed keys are the ones filled.", stage)
            w.line(f"X = {spell(ops.fill_where, m='mask', x='X', v=self.fill)}", stage, "X")
        elif mode == "d2l":
            w.line(
                f"X = {spell(ops.fill, m='mask', x='X', v='-1e6')}  # exp(-1e6) underflows to 0: no weight", stage, "X"
            )
        else:
            w.line(f"X = {spell(ops.fill, m='mask', x='X', v=self.fill)}  # exp(-inf) is 0: no weight", stage, "X")

    def _softmax(self, tagged: bool) -> None:
        w = self.w
        ops = self.ops
        stage = "weights" if tagged else None
        if not self.zero_empty_rows:
            w.line(f"return {spell(ops.softmax, x='X')}", stage, RETURN_VALUE)
            return
        w.line(f"weights = {spell(ops.softmax, x='X')}", stage, "weights")
        w.line("# A row with no key left would be NaN (0 / 0): it gets zero weights instead.", stage)
        if self.has_bias:
            attendable = spell(ops.negate, a=spell(ops.is_neg_inf, x="bias"))
            w.line(f"attendable = {spell(ops.ones_like, x='X')} if bias is None else {attendable}", stage)
            w.line("if mask is not None:", stage)
            with w.block():
                w.line(f"attendable = {spell(ops.both, a='attendable', b='mask')}", stage)
            rows = spell(ops.any_row, m="attendable")
            w.line(f"weights = {spell(ops.zero_rows, m=rows, x='weights')}", stage, "weights")
        elif self.general:
            w.line("if mask is not None:", stage)
            with w.block():
                rows = spell(ops.any_row, m="mask")
                w.line(f"weights = {spell(ops.zero_rows, m=rows, x='weights')}", stage, "weights")
        else:
            rows = spell(ops.any_row, m="mask")
            w.line(f"weights = {spell(ops.zero_rows, m=rows, x='weights')}", stage, "weights")
        w.line("return weights", stage, RETURN_VALUE)

    # ------------------------------------------------------------------ the causal and other masks

    def causal_mask(self) -> None:
        w = self.w
        w.blank(2)
        doc = (
            "True where query i may attend key j: j <= i, or, aligned bottom-right so that the last",
            "query sees every key, j <= i + n_keys - n_queries. Shape (n_queries, n_keys).",
        )
        with w.define("def causal_mask(n_queries, n_keys, bottom_right=False):", doc, name="causal_mask"):
            w.line("shift = n_keys - n_queries if bottom_right else 0", "mask")
            w.line(f"return {self.ops.causal}", "mask", RETURN_VALUE)

    def mask_lines(self) -> None:
        """``mask = ...``: the causal mask and the other masks, combined (module level)."""
        w = self.w
        inp = self.inp
        _b, q, k = inp.shape
        if inp.causal is not None:
            bottom = "True" if inp.causal == "bottom_right" else "False"
            w.line(
                f"mask = causal_mask({q}, {k}, bottom_right={bottom})  # the same for every batch element",
                "mask",
                "mask",
            )
            if inp.mask is not None:
                w.line(f"mask = {spell(self.ops.both, a='mask', b='extra_mask')}", "mask", "mask")
        elif inp.mask is not None:
            w.line("mask = extra_mask", "mask", "mask")
