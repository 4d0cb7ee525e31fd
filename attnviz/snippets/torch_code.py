"""The PyTorch snippet: ``nn.Module`` classes, as the chapter's PyTorch tab builds attention.

A masked softmax over valid lengths (the -1e6 fill by broadcasting a key index against the
lengths), the scoring function as a module with ``nn.Linear`` parameters where it learns any,
``torch.bmm`` for the batched products, ``nn.Dropout`` on the weights. Every operation is the one
attnviz's engine performs, in the same order, so the weights agree to the last bits.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .base import ArrayKind, FrameworkGenerator, Ops
from .writer import RETURN_VALUE

__all__ = ["TorchGenerator"]

_DTYPES = {
    "float32": "torch.float32",
    "float64": "torch.float64",
    "float16": "torch.float16",
    "bfloat16": "torch.bfloat16",
}


class TorchGenerator(FrameworkGenerator):
    framework: ClassVar[str] = "pytorch"
    title: ClassVar[str] = "PyTorch"
    needs: ClassVar[str] = "torch and numpy"
    ops: ClassVar[Ops] = Ops(
        softmax="torch.softmax({x}, dim=-1)",
        is_1d="valid_lens.dim() == 1",
        key_index="torch.arange(X.shape[-1], device=X.device)",
        fill="torch.where({m}, {x}, {v})",
        fill_where="torch.where({m}, {v}, {x})",
        both="{a} & {b}",
        negate="~{a}",
        any_row="{m}.any(dim=-1, keepdim=True)",
        zero_rows="torch.where({m}, {x}, 0.0)",
        as_dtype="{m}.to(X.dtype)",
        is_neg_inf="torch.isneginf({x})",
        ones_like="torch.ones_like({x}, dtype=torch.bool)",
        causal="torch.arange(n_keys)[None, :] <= torch.arange(n_queries)[:, None] + shift",
    )

    def imports(self) -> None:
        w = self.w
        self.stdlib_imports()
        w.line("import numpy as np")
        w.line("import torch")
        w.line("from torch import nn")

    # ------------------------------------------------------------------ helpers

    def recorded_dropout(self) -> None:
        w = self.w
        w.blank(2)
        with w.function("RecordedDropout"):
            w.line("class RecordedDropout(nn.Module):")
            with w.block():
                w.line('"""Dropout with a given draw: zeroes where `keep` is False and scales the rest by 1 / (1 - p),')
                w.line('as nn.Dropout does in training, so the run drops the same weights as attnviz did."""')
                w.blank()
                w.line("def __init__(self, keep, p):")
                with w.block():
                    w.line("super().__init__()")
                    w.line("self.keep, self.p = keep, p")
                w.blank()
                w.line("def forward(self, X):")
                with w.block():
                    if self.inp.dropout >= 1.0:
                        w.line("return torch.zeros_like(X)  # p = 1 drops everything", "applied_weights", RETURN_VALUE)
                    else:
                        w.line("return X * self.keep / (1 - self.p)", "applied_weights", RETURN_VALUE)

    def pool(self) -> None:
        w = self.w
        w.blank(2)
        with w.function("pool"):
            w.line("def pool(weights, values):")
            with w.block():
                w.line(
                    '"""weights @ values, batched, where a NaN or infinite value counts only where its weight is not 0:'
                )
                w.line('strict masking keeps what padding holds out of the output."""')
                w.line("finite = torch.isfinite(values)", "output")
                w.line("safe = torch.bmm(weights, torch.where(finite, values, 0.0))", "output")
                w.line("leaks = torch.bmm((weights != 0).to(values.dtype), (~finite).to(values.dtype)) > 0", "output")
                w.line("return torch.where(leaks, torch.bmm(weights, values), safe)", "output", RETURN_VALUE)

    # ------------------------------------------------------------------ the scoring module

    def scoring_class(self) -> None:
        w = self.w
        w.blank(2)
        name = self.class_name()
        with w.function(name):
            w.line(f"class {name}(nn.Module):")
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
                            w.line("return torch.bmm(weights, values)", "output", RETURN_VALUE)

    def _init(self) -> None:
        w = self.w
        inp = self.inp
        scoring = inp.scoring
        if scoring == "additive":
            w.line("def __init__(self, query_size, key_size, num_hiddens, dropout):")
        elif scoring == "bilinear":
            w.line("def __init__(self, query_size, key_size, dropout):")
        elif scoring in ("dot", "scaled_dot") and inp.scale is not None:
            w.line("def __init__(self, scale, dropout):")
        else:
            w.line("def __init__(self, dropout):")
        with w.block():
            w.line("super().__init__()")
            if scoring == "additive":
                w.line("# Linear maps without bias; a weight is stored (out_features, in_features)")
                w.line("self.W_q = nn.Linear(query_size, num_hiddens, bias=False)")
                w.line("self.W_k = nn.Linear(key_size, num_hiddens, bias=False)")
                w.line("self.w_v = nn.Linear(num_hiddens, 1, bias=False)")
            elif scoring == "bilinear":
                w.line("self.W = nn.Parameter(torch.empty(query_size, key_size))")
            elif scoring in ("dot", "scaled_dot") and inp.scale is not None:
                w.line("self.scale = scale")
            w.line("self.dropout = nn.Dropout(dropout)")

    def _scores(self) -> None:
        w = self.w
        inp = self.inp
        scoring = inp.scoring
        if scoring == "additive":
            w.line(
                "q, k = self.W_q(queries), self.W_k(keys)  # (batch, queries, h), (batch, keys, h)", "hidden_features"
            )
            w.line("# every query with every key: (batch, queries, 1, h) + (batch, 1, keys, h)", "hidden_features")
            w.line("features = torch.tanh(q.unsqueeze(2) + k.unsqueeze(1))", "hidden_features", "features")
            w.line("scores = self.w_v(features).squeeze(-1)  # (batch, queries, keys)", "raw_scores", "scores")
        elif scoring in ("dot", "scaled_dot"):
            w.line(
                "scores = torch.bmm(queries, keys.transpose(1, 2))  # (batch, queries, keys)", "raw_scores", "scores"
            )
            if inp.scale is not None:
                w.line("scores = scores * self.scale", "scores", "scores")
            elif scoring == "scaled_dot":
                w.line("d = queries.shape[-1]", "scores")
                w.line(
                    "scores = scores / math.sqrt(d)  # keeps the scores' variance near 1 whatever d", "scores", "scores"
                )
        elif scoring == "bilinear":
            w.line(
                "scores = torch.bmm(queries @ self.W, keys.transpose(1, 2))  # (batch, queries, keys)",
                "raw_scores",
                "scores",
            )
        elif scoring == "gaussian":
            w.line(
                "# ||q - k||^2 = ||q||^2 + ||k||^2 - 2 q.k: one batched product, no (queries, keys, d) tensor",
                "raw_scores",
            )
            w.line("sq_q = (queries * queries).sum(-1, keepdim=True)  # (batch, queries, 1)", "raw_scores")
            w.line("sq_k = (keys * keys).sum(-1).unsqueeze(1)  # (batch, 1, keys)", "raw_scores")
            w.line("distances = torch.baddbmm(sq_q + sq_k, queries, keys.transpose(1, 2), alpha=-2.0)", "raw_scores")
            w.line(
                "scores = -0.5 * distances.clamp(min=0)  # rounding can dip a distance below 0", "raw_scores", "scores"
            )
        else:  # summation
            w.line(
                "scores = queries.sum(-1, keepdim=True) + keys.sum(-1).unsqueeze(1)  # (batch, queries, keys)",
                "raw_scores",
                "scores",
            )

    # ------------------------------------------------------------------ data and the run

    def dtype_lines(self) -> None:
        self.w.line(f"dtype = {_DTYPES[self.dtype]}")

    def tensor(self, source: str, kind: ArrayKind, arr: np.ndarray) -> str:
        if kind == "float":
            return f"torch.tensor({source}, dtype=dtype)"
        if kind == "param":
            own = "torch.float64" if arr.dtype == np.float64 else "torch.float32"
            return f"torch.tensor({source}, dtype={own})"
        if kind == "int":
            return f"torch.tensor({source}, dtype=torch.int64)"
        return f"torch.tensor({source}) != 0"

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
        w.line(f"attention = {ctor}.to(dtype)")
        if inp.params:
            w.line("# The learnable parameters attnviz used, in nn.Linear's (out_features, in_features) layout")
            entries = {
                "W_q": "W_q.weight",
                "W_k": "W_k.weight",
                "w_v": "w_v.weight",
                "W": "W",
            }
            items = ", ".join(f'"{entries[n]}": {n}' for n in inp.params)
            w.line(f"attention.load_state_dict({{{items}}})")
        if inp.dropping:
            p = inp.dropout
            keep = "dropout_keep" if p < 1.0 else "None"
            w.line(f"attention.dropout = RecordedDropout({keep}, p={p!r})  # attnviz's draw, not a new one")
            w.line("attention.train()")
        else:
            w.line("attention.eval()  # dropout acts in training only; attnviz shows the weights in eval mode")
        w.line("with torch.no_grad():")
        with w.block():
            w.line(f"output = attention(queries, keys, values, {self.call_args()})", "output", "output")
        w.line("weights = attention.attention_weights", "weights", "weights")

    def to_numpy(self, name: str) -> str:
        if self.dtype in ("float16", "bfloat16"):
            return f"{name}.float().numpy()"
        return f"{name}.numpy()"
