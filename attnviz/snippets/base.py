"""What every framework's snippet shares: the ``Snippet`` it makes, the header, the data section.

A framework generator (``torch_code``, ``tf_code``, ``mxnet_code``, ``jax_code``) subclasses
``FrameworkGenerator`` and writes the parts that are its own (imports, the masked softmax, the
scoring class, building and calling it, saving the weights) through a ``CodeWriter``, tagging
each line that computes a stage. The order of the parts, the header comment saying what the
snippet computes and leaves out, and the arrays (as literals, embedded bytes or a data file)
are written here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np

from ..tr import QT_TRANSLATE_NOOP, message
from .arrays import DATA_FILE, MAX_EMBEDDED, MAX_INLINE, form, has_nonfinite, literal, packed_lines, write_data_file
from .inputs import MASK_MODES, SCORINGS, SnippetError, SnippetInput
from .writer import RETURN_VALUE, STAGES, CodeWriter, StageSpan

__all__ = ["ArrayKind", "FrameworkGenerator", "Ops", "Snippet"]

#: How an array becomes a tensor: the compute dtype, a parameter's own dtype, whole numbers, booleans.
ArrayKind = Literal["float", "param", "int", "bool"]

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


@dataclass(frozen=True)
class Snippet:
    """A script in one framework, and where in it each stage is computed.

    ``stage_spans[stage]``: the runs of lines computing ``stage`` (a name of ``writer.STAGES``),
    each with its enclosing function and that function's range; ``functions``: every function's
    (first, last) line. ``data``: the arrays the script loads from its data file (empty: it needs
    none). ``leaves_out``: what the app does that the script does not, also said at its top.
    """

    framework: str
    code: str
    stage_spans: Mapping[str, tuple[StageSpan, ...]]
    functions: Mapping[str, tuple[int, int]]
    data: Mapping[str, np.ndarray] = field(default_factory=dict)
    leaves_out: tuple[str, ...] = ()
    data_file: str = DATA_FILE

    @property
    def stage_lines(self) -> dict[str, list[tuple[int, int]]]:
        """Per stage, the (first, last) line ranges (1-based, inclusive) that compute it."""
        return {stage: [(s.first, s.last) for s in spans] for stage, spans in self.stage_spans.items()}

    @property
    def stages(self) -> tuple[str, ...]:
        """The stages this snippet computes, in pipeline order."""
        return tuple(stage for stage in STAGES if stage in self.stage_spans)

    def lines(self, first: int, last: int) -> list[str]:
        """Lines ``first``..``last`` (1-based, inclusive) of the code."""
        return self.code.splitlines()[first - 1 : last]

    def save_data(self, path: str | Path) -> list[str]:
        """Write the data file the script loads to ``path``; the names written (none: no file)."""
        return write_data_file(self.data, path)


@dataclass(frozen=True)
class Ops:
    """How a framework writes the few operations the masked softmax and the causal mask need.

    Templates are ``str.format``-ed: ``{x}`` the tensor, ``{m}`` a mask, ``{a}``/``{b}`` operands,
    ``{v}`` a fill value (Python source such as ``-1e6``).
    """

    softmax: str  # softmax of {x} over the last axis
    is_1d: str  # whether the valid lengths are one per batch element
    key_index: str  # 0, 1, ..., n_keys - 1 for X's keys, comparable with the lengths
    fill: str  # where({m}, {x}, the scalar {v} in X's dtype)
    fill_where: str  # where({m}, the scalar {v} in X's dtype, {x})
    both: str  # {a} and {b}, elementwise booleans
    negate: str  # not {a}
    any_row: str  # {m} reduced with "any" over the keys, keeping the axis
    zero_rows: str  # where({m}, {x}, 0)
    as_dtype: str  # booleans {m} as 0/1 in X's dtype
    is_neg_inf: str  # {x} == -inf, elementwise
    ones_like: str  # booleans, True, shaped as {x}
    causal: str  # j <= i + shift for query i (n_queries) and key j (n_keys)


class FrameworkGenerator:
    """Writes one snippet; a subclass per framework fills in the parts that are its own."""

    ops: ClassVar[Ops]

    framework: ClassVar[str]
    title: ClassVar[str]
    #: The packages the snippet imports ("torch and numpy").
    needs: ClassVar[str]
    #: The name numpy goes by in the snippet (MXNet's own numpy takes "np").
    numpy_name: ClassVar[str] = "np"
    #: The dtypes this framework computes in; another is computed in float32 and said so.
    dtypes: ClassVar[tuple[str, ...]] = ("float32", "float64", "float16", "bfloat16")

    def __init__(
        self,
        inp: SnippetInput,
        *,
        data_file: str = DATA_FILE,
        max_inline: int = MAX_INLINE,
        max_embedded: int = MAX_EMBEDDED,
    ) -> None:
        if inp.scoring not in SCORINGS:
            raise SnippetError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Snippet", "the scoring function {name} has no {framework} code: it is not one of attnviz's own"
                    ),
                    name=repr(inp.scoring),
                    framework=self.title,
                )
            )
        if inp.mask_mode not in MASK_MODES:
            raise SnippetError(
                message(
                    QT_TRANSLATE_NOOP("Snippet", "the mask mode {name} has no {framework} code"),
                    name=repr(inp.mask_mode),
                    framework=self.title,
                )
            )
        self.inp = inp
        self.w = CodeWriter()
        self.data_file = data_file
        self.max_inline, self.max_embedded = max_inline, max_embedded
        #: The arrays the script uses, by name, in the order they are written, and their kinds.
        self.arrays: dict[str, tuple[np.ndarray, ArrayKind]] = {}
        self.notes: list[str] = []
        self.leaves_out: list[str] = []
        self.dtype = inp.dtype if inp.dtype in self.dtypes else "float32"
        if self.dtype != inp.dtype:
            self.leaves_out.append(
                f"{self.title} has no {inp.dtype} here: this script computes in float32, so its weights differ "
                f"from attnviz's {inp.dtype} ones in the last digits {inp.dtype} keeps"
            )
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
        self._collect_arrays()

    # ------------------------------------------------------------------ the parts, in order

    def build(self) -> Snippet:
        self.header()
        self.w.blank()
        self.imports()
        self.w.blank(2)
        self.helpers()
        self.scoring_class()
        self.data_section()
        self.run()
        self.show_and_save()
        code, spans, functions = self.w.finish()
        if "scores" not in spans:
            # No scaling: the scaled scores are the raw ones, made by the same lines.
            spans["scores"] = spans["raw_scores"]
        data = {name: self._stored(arr, kind) for name, (arr, kind) in self.arrays.items() if self._form(arr) == "file"}
        return Snippet(self.framework, code, spans, functions, data, tuple(self.leaves_out), self.data_file)

    # To be written by each framework.
    def imports(self) -> None:
        raise NotImplementedError

    def helpers(self) -> None:
        """masked_softmax and what it needs (causal mask, dropout with a given draw, pooling)."""
        self.masked_softmax()
        if self.inp.causal is not None:
            self.causal_mask()
        if self.inp.dropping:
            self.recorded_dropout()
        if self.clean_pool:
            self.pool()

    def recorded_dropout(self) -> None:
        """A dropout that applies the draw the app made (``dropout_keep``)."""
        raise NotImplementedError

    def pool(self) -> None:
        """``pool(weights, values)``: strict mode's product, which keeps NaN padding out."""
        raise NotImplementedError

    def scoring_class(self) -> None:
        raise NotImplementedError

    def tensor(self, source: str, kind: ArrayKind, arr: np.ndarray) -> str:
        """The expression making a tensor of ``kind`` from ``source`` (a literal, ``unpack(...)``
        or ``data[...]``)."""
        raise NotImplementedError

    def dtype_lines(self) -> None:
        """The line(s) choosing the compute dtype (``dtype = ...``)."""
        raise NotImplementedError

    def run(self) -> None:
        """Build the attention, give it the parameters, call it: ``output`` and ``weights``."""
        raise NotImplementedError

    def to_numpy(self, name: str) -> str:
        """The expression turning tensor ``name`` into a numpy array (halves as float32)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ shared parts

    def header(self) -> None:
        inp = self.inp
        lines: list[str] = []
        words = _SCORING_WORDS[inp.scoring]
        if inp.scale is not None:
            words = f"dot-product attention scaled by {inp.scale!r}, a(q, k) = {inp.scale!r} q^T k"
        lines.append(
            f"{words[0].upper()}{words[1:]}, in plain {self.title} (no attnviz needed): the inputs, "
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
        lines.append(f"Computed in {self.dtype}.")
        if inp.device != "cpu":
            lines.append(f"attnviz computed on {inp.device}; this script runs on the CPU (the last bits may differ).")
        lines += self.notes
        lines += [f"Left out: {item}." for item in self.leaves_out]
        lines.append(f"Needs {self.needs}. Run it to print the attention weights and the output;")
        lines.append("`python snippet.py --save-weights weights.npy` also saves the weights as a .npy file.")
        for text in lines:
            for i, part in enumerate(_wrap(text, 96)):
                self.w.line(f"# {part}" if i == 0 else f"#   {part}")

    def data_section(self) -> None:
        """The arrays, each as literals, embedded bytes or from the data file."""
        w = self.w
        arrays = self.arrays
        forms = {name: self._form(arr) for name, (arr, _kind) in arrays.items()}
        npn = self.numpy_name
        w.blank(2)
        w.line("# ---- the inputs and parameters attnviz used ----")
        self.dtype_lines()
        inline = [self._stored(arr, kind) for name, (arr, kind) in arrays.items() if forms[name] == "inline"]
        if has_nonfinite(inline):
            w.line('nan, inf = float("nan"), float("inf")')
        if "embedded" in forms.values():
            w.blank()
            w.line("def unpack(text):")
            with w.block():
                w.line('"""An array stored exactly, as base64 of zlib-compressed .npy bytes."""')
                w.line(f"return {npn}.load(io.BytesIO(zlib.decompress(base64.b64decode(text))))")
            w.blank()
        if "file" in forms.values():
            w.line(f"# The largest arrays are in {self.data_file}, which attnviz wrote with this script.")
            w.line(f'data = {npn}.load("{self.data_file}")')
        for name, (arr, kind) in arrays.items():
            stored = self._stored(arr, kind)
            how = forms[name]
            shape = tuple(arr.shape)
            if how == "inline":
                w.line(f"{name} = {self.tensor(literal(stored), kind, stored)}  # {shape}")
            elif how == "embedded":
                w.line(f"# {name}: {arr.size} numbers, shape {shape}, stored exactly as .npy bytes")
                prefix, suffix = self.tensor("\0", kind, stored).split("\0")
                w.line(f"{name} = {prefix}unpack(")
                with w.block():
                    w.lines(packed_lines(stored))
                w.line(f"){suffix}")
            else:
                w.line(f"{name} = {self.tensor(f'data[{name!r}]', kind, stored)}  # {shape}, from the data file")
            if name == "values" and self.inp.valid_lens is None:
                w.line("valid_lens = None  # no valid lengths: every key counts")
        w.blank()

    def show_and_save(self) -> None:
        w = self.w
        w.blank()
        w.line('print("attention weights", tuple(weights.shape))')
        w.line("print(weights)")
        w.line('print("output", tuple(output.shape))')
        w.line("print(output)")
        w.blank()
        w.line('if __name__ == "__main__":')
        with w.block():
            w.line("import argparse")
            w.blank()
            w.line('parser = argparse.ArgumentParser(description="attention weights and output, as attnviz showed")')
            w.line('parser.add_argument("--save-weights", metavar="PATH", help="also save the weights as a .npy file")')
            w.line("args, _ = parser.parse_known_args()  # a notebook's own arguments are ignored")
            w.line("if args.save_weights:")
            with w.block():
                w.line(f"{self.numpy_name}.save(args.save_weights, {self.to_numpy('weights')})")

    # ------------------------------------------------------------------ the scoring function

    def class_name(self) -> str:
        """The scoring module's name: the book's for its two, names in the same style for ours."""
        inp = self.inp
        return {
            "additive": "AdditiveAttention",
            "scaled_dot": "DotProductAttention",
            "dot": "DotProductAttention" if inp.scale is not None else "UnscaledDotProductAttention",
            "bilinear": "BilinearAttention",
            "gaussian": "GaussianAttention",
            "summation": "SummationAttention",
        }[inp.scoring]

    def class_doc(self) -> str:
        inp = self.inp
        if inp.scoring in ("dot", "scaled_dot") and inp.scale is not None:
            return "Dot-product attention with a given scale: a(q, k) = scale * q^T k (queries and keys of one size)."
        return {
            "additive": "Additive attention: a(q, k) = w_v^T tanh(W_q q + W_k k), for queries and keys of any sizes.",
            "scaled_dot": "Scaled dot-product attention: a(q, k) = q^T k / sqrt(d), queries and keys of one size d.",
            "dot": "Dot-product attention without scaling: a(q, k) = q^T k, queries and keys of one size.",
            "bilinear": "Bilinear attention: a(q, k) = q^T W k, matrix products only, for any query and key sizes.",
            "gaussian": "Gaussian-kernel attention: a(q, k) = -||q - k||^2 / 2, as in Nadaraya-Watson regression.",
            "summation": "Summation attention: a(q, k) = sum(q) + sum(k); the query's sum cancels in the softmax.",
        }[inp.scoring]

    # ------------------------------------------------------------------ the masked softmax

    def masked_softmax(self) -> None:
        """``masked_softmax(X, valid_lens, ...)``: the book's masked softmax, written with broadcasting
        (a key index against the lengths), plus the mask and bias when the snippet has them."""
        w = self.w
        ops = self.ops
        lens = self.inp.valid_lens is not None
        with w.function("masked_softmax"):
            w.line(f"def masked_softmax({self.softmax_params()}):")
            with w.block():
                w.line('"""Softmax over the last axis (the keys) of the scores X, shaped (batch, queries, keys).')
                w.blank()
                w.line("Keys at or past a row's valid length are masked first. valid_lens: None (no key is")
                w.line("masked), (batch,) (the same length for every query of an element) or (batch, queries).")
                if self.general:
                    w.line("mask: None, or booleans broadcastable to X's shape, True where a query may attend a key.")
                if self.has_bias:
                    w.line("bias: None, or what a model's additive mask adds to the scores first.")
                w.line('"""')
                if not self.general:
                    # The book's case: valid lengths or nothing.
                    quiet = None if lens else ("mask", "masked_scores")
                    w.line("if valid_lens is None:", quiet)
                    with w.block():
                        w.line(f"return {ops.softmax.format(x='X')}", None if lens else "weights", RETURN_VALUE)
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
                    both = ops.both.format(a="mask", b="within")
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
            w.line(f"X = X + {ops.as_dtype.format(m='mask')}", stage, "X")
        elif mode == "inverted":
            w.line("# The bug: the mask read as True = ignore, so the allowed keys are the ones filled.", stage)
            w.line(f"X = {ops.fill_where.format(m='mask', x='X', v=self.fill)}", stage, "X")
        elif mode == "d2l":
            w.line(
                f"X = {ops.fill.format(m='mask', x='X', v='-1e6')}  # exp(-1e6) underflows to 0: no weight", stage, "X"
            )
        else:
            w.line(f"X = {ops.fill.format(m='mask', x='X', v=self.fill)}  # exp(-inf) is 0: no weight", stage, "X")

    def _softmax(self, tagged: bool) -> None:
        w = self.w
        ops = self.ops
        stage = "weights" if tagged else None
        if not self.zero_empty_rows:
            w.line(f"return {ops.softmax.format(x='X')}", stage, RETURN_VALUE)
            return
        w.line(f"weights = {ops.softmax.format(x='X')}", stage, "weights")
        w.line("# A row with no key left would be NaN (0 / 0): it gets zero weights instead.", stage)
        if self.has_bias:
            w.line(
                f"attendable = {ops.ones_like.format(x='X')} if bias is None else "
                f"{ops.negate.format(a=ops.is_neg_inf.format(x='bias'))}",
                stage,
            )
            w.line("if mask is not None:", stage)
            with w.block():
                w.line(f"attendable = {ops.both.format(a='attendable', b='mask')}", stage)
            rows = ops.any_row.format(m="attendable")
            w.line(f"weights = {ops.zero_rows.format(m=rows, x='weights')}", stage, "weights")
        elif self.general:
            w.line("if mask is not None:", stage)
            with w.block():
                w.line(
                    f"weights = {ops.zero_rows.format(m=ops.any_row.format(m='mask'), x='weights')}", stage, "weights"
                )
        else:
            w.line(f"weights = {ops.zero_rows.format(m=ops.any_row.format(m='mask'), x='weights')}", stage, "weights")
        w.line("return weights", stage, RETURN_VALUE)

    def causal_mask(self) -> None:
        w = self.w
        w.blank(2)
        with w.function("causal_mask"):
            w.line("def causal_mask(n_queries, n_keys, bottom_right=False):")
            with w.block():
                w.line('"""True where query i may attend key j: j <= i, or, aligned bottom-right so that the last')
                w.line('query sees every key, j <= i + n_keys - n_queries. Shape (n_queries, n_keys)."""')
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
                w.line(f"mask = {self.ops.both.format(a='mask', b='extra_mask')}", "mask", "mask")
        elif inp.mask is not None:
            w.line("mask = extra_mask", "mask", "mask")

    # ------------------------------------------------------------------ helpers for subclasses

    def stdlib_imports(self, extra: tuple[str, ...] = ()) -> None:
        """The standard library's imports the snippet needs, sorted, then a blank line (if any)."""
        lines = list(extra)
        if self.needs_unpack():
            lines += ["import base64", "import io", "import zlib"]
        if self.inp.scoring == "scaled_dot" and self.inp.scale is None:
            lines.append("import math")
        if lines:
            self.w.lines(sorted(lines))
            self.w.blank()

    def needs_unpack(self) -> bool:
        return any(self._form(arr) == "embedded" for arr, _kind in self.arrays.values())

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
        params = ["valid_lens=None"]
        if self.general:
            params.append("mask=None")
        if self.has_bias:
            params.append("bias=None")
        return ", ".join(params)

    def softmax_call(self) -> str:
        """How the attention calls masked_softmax on its ``scores``."""
        return "masked_softmax(scores, " + self.call_args() + ")"

    def softmax_params(self) -> str:
        params = ["X", "valid_lens"]
        if self.general:
            params.append("mask=None")
        if self.has_bias:
            params.append("bias=None")
        return ", ".join(params)

    def lens_array(self) -> np.ndarray | None:
        """The valid lengths, lengths above the number of keys written as that number (the same
        meaning, "every key", in a type every framework compares)."""
        lens = self.inp.valid_lens
        if lens is None:
            return None
        return np.minimum(np.asarray(lens, dtype=np.int64), self.inp.shape[2]).astype(np.int32)

    # ------------------------------------------------------------------ internals

    def _collect_arrays(self) -> None:
        inp = self.inp
        arrays = self.arrays
        arrays["queries"] = (inp.queries, "float")
        arrays["keys"] = (inp.keys, "float")
        arrays["values"] = (inp.values, "float")
        lens = self.lens_array()
        if lens is not None:
            arrays["valid_lens"] = (lens, "int")
        if inp.mask is not None:
            arrays["extra_mask"] = (inp.mask, "bool")
        if inp.bias is not None:
            arrays["bias"] = (inp.bias, "float")
        if inp.dropping and inp.dropout < 1.0 and inp.dropout_keep is not None:
            arrays["dropout_keep"] = (inp.dropout_keep, "bool")
        for name, value in inp.params.items():
            arrays[name] = (value, "param")

    def _form(self, arr: np.ndarray) -> str:
        return form(arr, self.max_inline, self.max_embedded)

    @staticmethod
    def _stored(arr: np.ndarray, kind: ArrayKind) -> np.ndarray:
        """The array as written: booleans as 0/1 (short literals every framework reads)."""
        return np.asarray(arr, dtype=np.uint8) if kind == "bool" else np.asarray(arr)


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]
