"""The JAX snippet: pure functions over ``jax.numpy``, parameters in a dict.

JAX has no layers of its own (the book's later JAX edition uses Flax for them): the snippet is
written as JAX code is, with functions that take their parameters and return the output with
the attention weights, and dropout given its draw explicitly (``jax.random.bernoulli`` makes one).
The lines inside the function are ``ChapterCode``'s, spelled with ``jnp`` and ``@``.
"""

from __future__ import annotations

from typing import ClassVar

from .base import FrameworkGenerator
from .ops import Ops, spell
from .writer import RETURN_VALUE

__all__ = ["JaxGenerator"]


class JaxGenerator(FrameworkGenerator):
    framework: ClassVar[str] = "jax"
    title: ClassVar[str] = "JAX"
    needs: ClassVar[str] = "jax and numpy"
    import_lines: ClassVar[tuple[str, ...]] = ("import jax", "import jax.numpy as jnp", "import numpy as np")
    ops = Ops(
        lib="jnp",
        softmax="jax.nn.softmax({x}, axis=-1)",
        key_index="jnp.arange(X.shape[-1])",
        bmm_t="{pa} @ {pb}.transpose(0, 2, 1)",
        half_to_numpy="np.asarray({x}, dtype=np.float32)",
        expand="{px}[{index}]",
        squeeze_last="{px}[..., 0]",
        linear='{px} @ params["{name}"].T',
        param='params["{name}"]',
        setting="{name}",
        to_numpy="np.asarray({x})",
    )

    def imports(self) -> None:
        super().imports()
        if self.dtype == "float64":
            self.w.blank()
            self.w.line(
                'jax.config.update("jax_enable_x64", True)  # float64 arrays (JAX makes float32 ones otherwise)'
            )

    def dropout_helper(self) -> None:
        """``dropout(X, keep, rate)``, always: the attention function takes a draw or none."""
        w = self.w
        w.blank(2)
        doc = (
            "Dropout with the draw `keep` (jax.random.bernoulli(key, 1 - rate, X.shape) makes one): zeroes",
            "where keep is False and scales the rest by 1 / (1 - rate).",
        )
        with w.define("def dropout(X, keep, rate):", doc, name="dropout"):
            stage = "applied_weights" if self.inp.dropping else None
            w.line("if rate >= 1:", stage)
            with w.block():
                w.line(f"return {spell(self.ops.zeros_like, x='X')}", stage, RETURN_VALUE)
            w.line("return X * keep / (1 - rate)", stage, RETURN_VALUE)

    # ------------------------------------------------------------------ the scoring function

    def learns(self) -> bool:
        return self.inp.scoring in ("additive", "bilinear")

    def define_attention(self) -> None:
        w = self.w
        inp = self.inp
        w.blank(2)
        name = self.function_name()
        first = "params, queries" if self.learns() else "queries"
        scale = ", scale=1.0" if self.scaled_by_setting else ""
        doc = [
            self.class_doc(),
            "",
            "Returns the output (batch, queries, value size) and the attention weights (batch, queries, keys).",
        ]
        if inp.scoring == "additive":
            doc.append("params: W_q (h, query size), W_k (h, key size), w_v (1, h), as nn.Linear stores them.")
        elif inp.scoring == "bilinear":
            doc.append("params: W (query size, key size).")
        doc += ["dropout_keep: None outside training; in training, the weights dropout keeps (booleans).", ""]
        params = f"{first}, keys, values, {self.forward_params()}, dropout_keep=None, rate=0.0{scale}"
        with w.define(f"def {name}({params}):", doc, name=name):
            self.scores()
            w.line(f"weights = {self.softmax_call()}", "weights", "weights")
            dropped = "weights if dropout_keep is None else dropout(weights, dropout_keep, rate)"
            w.line(f"dropped = {dropped}", "applied_weights", "dropped")
            if self.clean_pool:
                w.line("output = pool(dropped, values)", "output", "output")
            else:
                product = "dropped @ values  # (batch, queries, keys) @ (batch, keys, value size)"
                w.line(f"output = {product}", "output", "output")
            w.line("return output, weights")

    # ------------------------------------------------------------------ the run

    def run(self) -> None:
        w = self.w
        inp = self.inp
        args = ["queries", "keys", "values", self.call_args()]
        if self.learns():
            names = ", ".join(f'"{n}": {n}.astype(dtype)' for n in inp.params)
            w.line(f"params = {{{names}}}  # the learnable parameters attnviz used")
            args.insert(0, "params")
        if self.scaled_by_setting:
            args.append(f"scale={inp.scale!r}")
        if inp.dropping:
            keep = "dropout_keep" if inp.dropout < 1.0 else "jnp.zeros(queries.shape[:2] + keys.shape[1:2], dtype=bool)"
            args.append(f"dropout_keep={keep}, rate={inp.dropout!r}")
            w.line("# Training with dropout: the draw attnviz made, not a new one")
        else:
            w.line("# No dropout_keep: dropout acts in training only; attnviz shows the weights outside it")
        call = f"output, weights = {self.function_name()}({', '.join(args)})"
        w.line(call, ("weights", "output"), {"weights": "weights", "output": "output"})
