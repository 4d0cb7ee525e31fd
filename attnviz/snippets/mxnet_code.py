"""The MXNet snippet: Gluon blocks over MXNet's numpy interface, the chapter's default tab.

``npx.set_np()``, the masked softmax with ``np.where``, the scoring function as an ``nn.Block``
with ``Dense(flatten=False)`` parameters where it learns any (stored (out, in), as nn.Linear's),
``npx.batch_dot`` for the batched products, ``Dropout`` active only under
``autograd.record(train_mode=True)``.

MXNet 1.9's numpy interface has no bfloat16 (such a snippet computes in float32 and says so), and
its CPU ``batch_dot`` has no float16 kernel: a float16 snippet multiplies in float32 and rounds
once to float16, as PyTorch's float16 matmul on the CPU does. Booleans have no ``&`` here:
``*`` of two boolean arrays is their logical and.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .base import ArrayKind, FrameworkGenerator, Ops
from .writer import RETURN_VALUE

__all__ = ["MXNetGenerator"]


class MXNetGenerator(FrameworkGenerator):
    framework: ClassVar[str] = "mxnet"
    title: ClassVar[str] = "MXNet"
    needs: ClassVar[str] = "mxnet 1.9 (with numpy < 1.24)"
    numpy_name: ClassVar[str] = "onp"
    dtypes: ClassVar[tuple[str, ...]] = ("float32", "float64", "float16")
    ops: ClassVar[Ops] = Ops(
        softmax="npx.softmax({x})",
        is_1d="valid_lens.ndim == 1",
        key_index="np.arange(X.shape[-1], dtype=valid_lens.dtype)",
        fill="np.where({m}, {x}, {v})",
        fill_where="np.where({m}, {v}, {x})",
        both="{a} * {b}",
        negate="np.logical_not({a})",
        any_row="{m}.any(axis=-1, keepdims=True)",
        zero_rows="np.where({m}, {x}, 0.0)",
        as_dtype="{m}.astype(X.dtype)",
        is_neg_inf="np.isneginf({x})",
        ones_like="np.ones({x}.shape, dtype=bool)",
        causal="np.arange(n_keys)[None, :] <= np.arange(n_queries)[:, None] + shift",
    )

    @property
    def bmm(self) -> str:
        """The batched product: MXNet's own, or the float16 stand-in."""
        return "batch_dot" if self.dtype == "float16" else "npx.batch_dot"

    def imports(self) -> None:
        w = self.w
        self.stdlib_imports(("import os",) if self.dtype == "float16" else ())
        if self.dtype == "float16":
            w.line("# float16 softmax sums in float32 (as PyTorch's does); set before MXNet loads")
            w.line('os.environ["MXNET_SAFE_ACCUMULATION"] = "1"')
        w.line("import numpy as onp")
        w.line("from mxnet import np, npx")
        w.line("from mxnet.gluon import nn")
        w.blank()
        w.line("npx.set_np()")

    def helpers(self) -> None:
        if self.dtype == "float16":
            self.batch_dot()
        self.masked_softmax()
        if self.inp.causal is not None:
            self.causal_mask()
        if self.inp.dropping:
            self.recorded_dropout()
        if self.clean_pool:
            self.pool()

    def batch_dot(self) -> None:
        w = self.w
        with w.function("batch_dot"):
            w.line("def batch_dot(a, b, transpose_b=False):")
            with w.block():
                w.line('"""npx.batch_dot for float16, which MXNet computes only on GPUs: the products are summed in')
                w.line('float32 and rounded once to float16 (as PyTorch\'s float16 matmul on the CPU does)."""')
                w.line('c = npx.batch_dot(a.astype("float32"), b.astype("float32"), transpose_b=transpose_b)')
                w.line("return c.astype(a.dtype)")
        w.blank(2)

    def recorded_dropout(self) -> None:
        w = self.w
        w.blank(2)
        with w.function("RecordedDropout"):
            # A Dropout itself: Gluon lets a child block be replaced only by one of its own type.
            w.line("class RecordedDropout(nn.Dropout):")
            with w.block():
                w.line(
                    '"""Dropout with a given draw: zeroes where `keep` is False and scales the rest by 1 / (1 - rate),'
                )
                w.line('as Dropout does in training, so the run drops the same weights as attnviz did."""')
                w.blank()
                w.line("def __init__(self, keep, rate):")
                with w.block():
                    w.line("super().__init__(rate)")
                    w.line("self.keep, self.p = keep, rate")
                w.blank()
                w.line("def forward(self, X):")
                with w.block():
                    if self.inp.dropout >= 1.0:
                        w.line("return np.zeros_like(X)  # rate 1 drops everything", "applied_weights", RETURN_VALUE)
                    else:
                        w.line("return X * self.keep.astype(X.dtype) / (1 - self.p)", "applied_weights", RETURN_VALUE)

    def pool(self) -> None:
        w = self.w
        bmm = self.bmm
        w.blank(2)
        with w.function("pool"):
            w.line("def pool(weights, values):")
            with w.block():
                w.line(
                    '"""weights @ values, batched, where a NaN or infinite value counts only where its weight is not 0:'
                )
                w.line('strict masking keeps what padding holds out of the output."""')
                w.line("finite = np.isfinite(values)", "output")
                w.line(f"safe = {bmm}(weights, np.where(finite, values, 0.0))", "output")
                w.line("used = (weights != 0).astype(values.dtype)", "output")
                w.line(f"leaks = {bmm}(used, np.logical_not(finite).astype(values.dtype)) > 0", "output")
                w.line(f"return np.where(leaks, {bmm}(weights, values), safe)", "output", RETURN_VALUE)

    # ------------------------------------------------------------------ the scoring block

    def scoring_class(self) -> None:
        w = self.w
        w.blank(2)
        name = self.class_name()
        with w.function(name):
            w.line(f"class {name}(nn.Block):")
            with w.block():
                w.line(f'"""{self.class_doc()}"""')
                w.blank()
                self._init()
                w.blank()
                with w.function(f"{name}.forward"):
                    w.line(f"def forward(self, queries, keys, values, {self.forward_params()}):")
                    with w.block():
                        self._scores()
                        w.line(f"self.attention_weights = {self.softmax_call()}", "weights")
                        w.line("weights = self.dropout(self.attention_weights)", "applied_weights", "weights")
                        if self.clean_pool:
                            w.line("return pool(weights, values)", "output", RETURN_VALUE)
                        else:
                            w.line(f"return {self.bmm}(weights, values)", "output", RETURN_VALUE)

    def _init(self) -> None:
        w = self.w
        inp = self.inp
        scoring = inp.scoring
        if scoring == "additive":
            w.line("def __init__(self, query_size, key_size, num_hiddens, dropout, **kwargs):")
        elif scoring == "bilinear":
            w.line("def __init__(self, query_size, key_size, dropout, **kwargs):")
        elif scoring in ("dot", "scaled_dot") and inp.scale is not None:
            w.line("def __init__(self, scale, dropout, **kwargs):")
        else:
            w.line("def __init__(self, dropout, **kwargs):")
        with w.block():
            w.line("super().__init__(**kwargs)")
            if scoring == "additive":
                w.line("# Dense on the last axis only (flatten=False), no bias; a weight is stored (out, in)")
                w.line("self.W_q = nn.Dense(num_hiddens, use_bias=False, flatten=False, in_units=query_size)")
                w.line("self.W_k = nn.Dense(num_hiddens, use_bias=False, flatten=False, in_units=key_size)")
                w.line("self.w_v = nn.Dense(1, use_bias=False, flatten=False, in_units=num_hiddens)")
            elif scoring == "bilinear":
                w.line('self.W = self.params.get("W", shape=(query_size, key_size))')
            elif scoring in ("dot", "scaled_dot") and inp.scale is not None:
                w.line("self.scale = scale")
            w.line("self.dropout = nn.Dropout(dropout)")

    def _scores(self) -> None:
        w = self.w
        inp = self.inp
        scoring = inp.scoring
        bmm = self.bmm
        if scoring == "additive":
            w.line(
                "q, k = self.W_q(queries), self.W_k(keys)  # (batch, queries, h), (batch, keys, h)", "hidden_features"
            )
            w.line("# every query with every key: (batch, queries, 1, h) + (batch, 1, keys, h)", "hidden_features")
            w.line(
                "features = np.tanh(np.expand_dims(q, axis=2) + np.expand_dims(k, axis=1))",
                "hidden_features",
                "features",
            )
            w.line("scores = np.squeeze(self.w_v(features), axis=-1)  # (batch, queries, keys)", "raw_scores", "scores")
        elif scoring in ("dot", "scaled_dot"):
            w.line(f"scores = {bmm}(queries, keys, transpose_b=True)  # (batch, queries, keys)", "raw_scores", "scores")
            if inp.scale is not None:
                w.line("scores = scores * self.scale", "scores", "scores")
            elif scoring == "scaled_dot":
                w.line("d = queries.shape[-1]", "scores")
                w.line(
                    "scores = scores / math.sqrt(d)  # keeps the scores' variance near 1 whatever d", "scores", "scores"
                )
        elif scoring == "bilinear":
            w.line(f"scores = {bmm}(np.matmul(queries, self.W.data()), keys, transpose_b=True)", "raw_scores", "scores")
        elif scoring == "gaussian":
            w.line(
                "# ||q - k||^2 = ||q||^2 + ||k||^2 - 2 q.k: one batched product, no (queries, keys, d) tensor",
                "raw_scores",
            )
            w.line("sq_q = (queries * queries).sum(axis=-1, keepdims=True)  # (batch, queries, 1)", "raw_scores")
            w.line("sq_k = np.expand_dims((keys * keys).sum(axis=-1), axis=1)  # (batch, 1, keys)", "raw_scores")
            w.line(f"distances = (sq_q + sq_k) - 2 * {bmm}(queries, keys, transpose_b=True)", "raw_scores")
            w.line(
                "scores = -0.5 * np.maximum(distances, 0)  # rounding can dip a distance below 0",
                "raw_scores",
                "scores",
            )
        else:
            w.line(
                "scores = queries.sum(axis=-1, keepdims=True) + np.expand_dims(keys.sum(axis=-1), axis=1)",
                "raw_scores",
                "scores",
            )

    # ------------------------------------------------------------------ data and the run

    def dtype_lines(self) -> None:
        self.w.line(f'dtype = "{self.dtype}"')

    def tensor(self, source: str, kind: ArrayKind, arr: np.ndarray) -> str:
        if kind == "float":
            return f"np.array({source}, dtype=dtype)"
        if kind == "param":
            own = "float64" if arr.dtype == np.float64 else "float32"
            return f'np.array({source}, dtype="{own}")'
        if kind == "int":
            return f'np.array({source}, dtype="int32")'
        return f'np.array({source}, dtype="int32") != 0'

    def run(self) -> None:
        w = self.w
        inp = self.inp
        w.line("# ---- the attention, as attnviz computed it ----")
        self.mask_lines()
        name = self.class_name()
        d_q, d_k = inp.queries.shape[-1], inp.keys.shape[-1]
        if inp.scoring == "additive":
            ctor = f"{name}(query_size={d_q}, key_size={d_k}, num_hiddens={inp.num_hiddens}, dropout={inp.dropout!r})"
        elif inp.scoring == "bilinear":
            ctor = f"{name}(query_size={d_q}, key_size={d_k}, dropout={inp.dropout!r})"
        elif inp.scoring in ("dot", "scaled_dot") and inp.scale is not None:
            ctor = f"{name}(scale={inp.scale!r}, dropout={inp.dropout!r})"
        else:
            ctor = f"{name}(dropout={inp.dropout!r})"
        w.line(f"attention = {ctor}")
        w.line("attention.initialize()")
        w.line("attention.cast(dtype)")
        if inp.scoring == "additive":
            w.line("# The learnable parameters attnviz used (a Dense weight is stored (out, in), as nn.Linear's)")
            for param in ("W_q", "W_k", "w_v"):
                w.line(f"attention.{param}.weight.set_data({param}.astype(dtype))")
        elif inp.scoring == "bilinear":
            w.line("attention.W.set_data(W.astype(dtype))  # the parameter attnviz used")
        if inp.dropping:
            p = inp.dropout
            keep = "dropout_keep" if p < 1.0 else "None"
            w.line(f"attention.dropout = RecordedDropout({keep}, rate={p!r})  # attnviz's draw, not a new one")
        else:
            w.line("# Outside autograd.record(train_mode=True) Gluon predicts: dropout does nothing, as in attnviz")
        w.line(f"output = attention(queries, keys, values, {self.call_args()})", "output", "output")
        w.line("weights = attention.attention_weights", "weights", "weights")

    def to_numpy(self, name: str) -> str:
        if self.dtype == "float16":
            return f'{name}.astype("float32").asnumpy()'
        return f"{name}.asnumpy()"
