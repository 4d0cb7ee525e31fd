"""The JAX snippet: pure functions over ``jax.numpy``, parameters in a dict.

JAX has no layers of its own (the book's later JAX edition uses Flax for them): the snippet is
written as JAX code is, with functions that take their parameters and return the output with
the attention weights, and dropout given its draw explicitly (``jax.random.bernoulli`` makes one).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .base import ArrayKind, FrameworkGenerator, Ops
from .writer import RETURN_VALUE

__all__ = ["JaxGenerator"]


class JaxGenerator(FrameworkGenerator):
    framework: ClassVar[str] = "jax"
    title: ClassVar[str] = "JAX"
    needs: ClassVar[str] = "jax and numpy"
    ops: ClassVar[Ops] = Ops(
        softmax="jax.nn.softmax({x}, axis=-1)",
        is_1d="valid_lens.ndim == 1",
        key_index="jnp.arange(X.shape[-1])",
        fill="jnp.where({m}, {x}, {v})",
        fill_where="jnp.where({m}, {v}, {x})",
        both="{a} & {b}",
        negate="~{a}",
        any_row="{m}.any(axis=-1, keepdims=True)",
        zero_rows="jnp.where({m}, {x}, 0.0)",
        as_dtype="{m}.astype(X.dtype)",
        is_neg_inf="jnp.isneginf({x})",
        ones_like="jnp.ones({x}.shape, dtype=bool)",
        causal="jnp.arange(n_keys)[None, :] <= jnp.arange(n_queries)[:, None] + shift",
    )

    def imports(self) -> None:
        w = self.w
        self.stdlib_imports()
        w.line("import jax")
        w.line("import jax.numpy as jnp")
        w.line("import numpy as np")
        if self.dtype == "float64":
            w.blank()
            w.line('jax.config.update("jax_enable_x64", True)  # float64 arrays (JAX makes float32 ones otherwise)')

    def helpers(self) -> None:
        self.masked_softmax()
        if self.inp.causal is not None:
            self.causal_mask()
        self.dropout()
        if self.clean_pool:
            self.pool()

    def dropout(self) -> None:
        w = self.w
        w.blank(2)
        with w.function("dropout"):
            w.line("def dropout(X, keep, rate):")
            with w.block():
                w.line(
                    '"""Dropout with the draw `keep` (jax.random.bernoulli(key, 1 - rate, X.shape) makes one): zeroes'
                )
                w.line('where keep is False and scales the rest by 1 / (1 - rate)."""')
                stage = "applied_weights" if self.inp.dropping else None
                w.line("if rate >= 1:", stage)
                with w.block():
                    w.line("return jnp.zeros_like(X)", stage, RETURN_VALUE)
                w.line("return X * keep / (1 - rate)", stage, RETURN_VALUE)

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
                w.line("finite = jnp.isfinite(values)", "output")
                w.line("safe = weights @ jnp.where(finite, values, 0.0)", "output")
                w.line("leaks = ((weights != 0).astype(values.dtype) @ (~finite).astype(values.dtype)) > 0", "output")
                w.line("return jnp.where(leaks, weights @ values, safe)", "output", RETURN_VALUE)

    # ------------------------------------------------------------------ the scoring function

    def function_name(self) -> str:
        inp = self.inp
        return {
            "additive": "additive_attention",
            "scaled_dot": "dot_product_attention",
            "dot": "dot_product_attention" if inp.scale is not None else "unscaled_dot_product_attention",
            "bilinear": "bilinear_attention",
            "gaussian": "gaussian_attention",
            "summation": "summation_attention",
        }[inp.scoring]

    def learns(self) -> bool:
        return self.inp.scoring in ("additive", "bilinear")

    def scoring_class(self) -> None:
        w = self.w
        inp = self.inp
        w.blank(2)
        name = self.function_name()
        first = "params, queries" if self.learns() else "queries"
        scale = ", scale=1.0" if inp.scoring in ("dot", "scaled_dot") and inp.scale is not None else ""
        with w.function(name):
            w.line(f"def {name}({first}, keys, values, {self.forward_params()}, dropout_keep=None, rate=0.0{scale}):")
            with w.block():
                w.line(f'"""{self.class_doc()}')
                w.blank()
                w.line(
                    "Returns the output (batch, queries, value size) and the attention weights (batch, queries, keys)."
                )
                if inp.scoring == "additive":
                    w.line("params: W_q (h, query size), W_k (h, key size), w_v (1, h), as nn.Linear stores them.")
                elif inp.scoring == "bilinear":
                    w.line("params: W (query size, key size).")
                w.line("dropout_keep: None outside training; in training, the weights dropout keeps (booleans).")
                w.line('"""')
                self._scores()
                w.line(f"weights = {self.softmax_call()}", "weights", "weights")
                w.line(
                    "dropped = weights if dropout_keep is None else dropout(weights, dropout_keep, rate)",
                    "applied_weights",
                    "dropped",
                )
                if self.clean_pool:
                    w.line("output = pool(dropped, values)", "output", "output")
                else:
                    w.line(
                        "output = dropped @ values  # (batch, queries, keys) @ (batch, keys, value size)",
                        "output",
                        "output",
                    )
                w.line("return output, weights")

    def _scores(self) -> None:
        w = self.w
        inp = self.inp
        scoring = inp.scoring
        kt = "keys.transpose(0, 2, 1)"
        if scoring == "additive":
            w.line('q = queries @ params["W_q"].T  # (batch, queries, h)', "hidden_features")
            w.line('k = keys @ params["W_k"].T  # (batch, keys, h)', "hidden_features")
            w.line("# every query with every key: (batch, queries, 1, h) + (batch, 1, keys, h)", "hidden_features")
            w.line("features = jnp.tanh(q[:, :, None, :] + k[:, None, :, :])", "hidden_features", "features")
            w.line('scores = (features @ params["w_v"].T)[..., 0]  # (batch, queries, keys)', "raw_scores", "scores")
        elif scoring in ("dot", "scaled_dot"):
            w.line(f"scores = queries @ {kt}  # (batch, queries, keys)", "raw_scores", "scores")
            if inp.scale is not None:
                w.line("scores = scores * scale", "scores", "scores")
            elif scoring == "scaled_dot":
                w.line("d = queries.shape[-1]", "scores")
                w.line(
                    "scores = scores / math.sqrt(d)  # keeps the scores' variance near 1 whatever d", "scores", "scores"
                )
        elif scoring == "bilinear":
            w.line(f'scores = (queries @ params["W"]) @ {kt}  # (batch, queries, keys)', "raw_scores", "scores")
        elif scoring == "gaussian":
            w.line(
                "# ||q - k||^2 = ||q||^2 + ||k||^2 - 2 q.k: one batched product, no (queries, keys, d) tensor",
                "raw_scores",
            )
            w.line("sq_q = (queries * queries).sum(axis=-1, keepdims=True)  # (batch, queries, 1)", "raw_scores")
            w.line("sq_k = (keys * keys).sum(axis=-1)[:, None, :]  # (batch, 1, keys)", "raw_scores")
            w.line(f"distances = (sq_q + sq_k) - 2 * (queries @ {kt})", "raw_scores")
            w.line(
                "scores = -0.5 * jnp.maximum(distances, 0)  # rounding can dip a distance below 0",
                "raw_scores",
                "scores",
            )
        else:
            w.line(
                "scores = queries.sum(axis=-1, keepdims=True) + keys.sum(axis=-1)[:, None, :]",
                "raw_scores",
                "scores",
            )

    # ------------------------------------------------------------------ data and the run

    def dtype_lines(self) -> None:
        self.w.line(f"dtype = jnp.{self.dtype}")

    def tensor(self, source: str, kind: ArrayKind, arr: np.ndarray) -> str:
        if kind == "float":
            return f"jnp.array({source}, dtype=dtype)"
        if kind == "param":
            own = "jnp.float64" if arr.dtype == np.float64 else "jnp.float32"
            return f"jnp.array({source}, dtype={own})"
        if kind == "int":
            return f"jnp.array({source}, dtype=jnp.int32)"
        return f"jnp.array({source}) != 0"

    def run(self) -> None:
        w = self.w
        inp = self.inp
        w.line("# ---- the attention, as attnviz computed it ----")
        self.mask_lines()
        args = ["queries", "keys", "values", self.call_args()]
        if self.learns():
            names = ", ".join(f'"{n}": {n}.astype(dtype)' for n in inp.params)
            w.line(f"params = {{{names}}}  # the learnable parameters attnviz used")
            args.insert(0, "params")
        if inp.scoring in ("dot", "scaled_dot") and inp.scale is not None:
            args.append(f"scale={inp.scale!r}")
        if inp.dropping:
            keep = "dropout_keep" if inp.dropout < 1.0 else "jnp.zeros(queries.shape[:2] + keys.shape[1:2], dtype=bool)"
            args.append(f"dropout_keep={keep}, rate={inp.dropout!r}")
            w.line("# Training with dropout: the draw attnviz made, not a new one")
        else:
            w.line("# No dropout_keep: dropout acts in training only; attnviz shows the weights outside it")
        call = f"output, weights = {self.function_name()}({', '.join(args)})"
        w.line(call, ("weights", "output"), {"weights": "weights", "output": "output"})

    def to_numpy(self, name: str) -> str:
        if self.dtype in ("float16", "bfloat16"):
            return f"np.asarray({name}, dtype=np.float32)"
        return f"np.asarray({name})"
