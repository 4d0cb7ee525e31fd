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

from dataclasses import replace
from typing import Any, ClassVar

from .inputs import SnippetInput
from .modules import ModuleGenerator, ModuleStyle
from .ops import Ops

__all__ = ["MXNetGenerator"]

_OPS = Ops(
    lib="np",
    softmax="npx.softmax({x})",
    key_index="np.arange(X.shape[-1], dtype=valid_lens.dtype)",
    bmm_t="npx.batch_dot({a}, {b}, transpose_b=True)",
    half_to_numpy='{px}.astype("float32").asnumpy()',
    both="{a} * {b}",  # no & for booleans: * is their logical and
    negate="np.logical_not({a})",
    masked_by="{px} * {pm}.astype({px}.dtype)",
    bmm="npx.batch_dot({a}, {b})",
    matmul="np.matmul({a}, {b})",
    param="self.{name}.data()",
    bool_array='np.array({src}, dtype="int32") != 0',
    dtype_name='"{name}"',
    to_numpy="{px}.asnumpy()",
)


class MXNetGenerator(ModuleGenerator):
    framework: ClassVar[str] = "mxnet"
    title: ClassVar[str] = "MXNet"
    needs: ClassVar[str] = "mxnet 1.9 (with numpy < 1.24)"
    import_lines: ClassVar[tuple[str, ...]] = (
        "import numpy as onp",
        "from mxnet import np, npx",
        "from mxnet.gluon import nn",
    )
    numpy_name: ClassVar[str] = "onp"
    dtypes: ClassVar[tuple[str, ...]] = ("float32", "float64", "float16")
    ops = _OPS
    style: ClassVar[ModuleStyle] = ModuleStyle(
        base="nn.Block",
        super_init="super().__init__(**kwargs)",
        forward="forward",
        linear="nn.Dense({n_out}, use_bias=False, flatten=False, in_units={n_in})",
        linear_comment="# Dense on the last axis only (flatten=False), no bias; a weight is stored (out, in)",
        param='self.params.get("{name}", shape={shape})',
        dropout="nn.Dropout({p})",
        # A Dropout itself: Gluon lets a child block be replaced only by one of its own type.
        dropout_base="nn.Dropout",
        dropout_super_init="super().__init__(rate, **kwargs)",
        kwargs=True,
        build=("attention = {ctor}", "attention.initialize()", "attention.cast(dtype)"),
        eval="# Outside autograd.record(train_mode=True) Gluon predicts: dropout does nothing, as in attnviz",
    )

    def __init__(self, inp: SnippetInput, **options: Any) -> None:
        super().__init__(inp, **options)
        if self.dtype == "float16":
            # The products go through the float32 stand-in written by batch_dot().
            self.ops = replace(_OPS, bmm="batch_dot({a}, {b})", bmm_t="batch_dot({a}, {b}, transpose_b=True)")

    def imports(self) -> None:
        w = self.w
        self.stdlib_imports(("import os",) if self.dtype == "float16" else ())
        if self.dtype == "float16":
            w.line("# float16 softmax sums in float32 (as PyTorch's does); set before MXNet loads")
            w.line('os.environ["MXNET_SAFE_ACCUMULATION"] = "1"')
        w.lines(self.import_lines)
        w.blank()
        w.line("npx.set_np()")

    def helpers(self) -> None:
        if self.dtype == "float16":
            self.batch_dot()
        super().helpers()

    def batch_dot(self) -> None:
        w = self.w
        doc = (
            "npx.batch_dot for float16, which MXNet computes only on GPUs: the products are summed in",
            "float32 and rounded once to float16 (as PyTorch's float16 matmul on the CPU does).",
        )
        with w.define("def batch_dot(a, b, transpose_b=False):", doc, name="batch_dot"):
            w.line('c = npx.batch_dot(a.astype("float32"), b.astype("float32"), transpose_b=transpose_b)')
            w.line("return c.astype(a.dtype)")
        w.blank(2)

    def load_params(self) -> None:
        w = self.w
        if self.inp.scoring == "additive":
            w.line("# The learnable parameters attnviz used (a Dense weight is stored (out, in), as nn.Linear's)")
            for param in ("W_q", "W_k", "w_v"):
                w.line(f"attention.{param}.weight.set_data({param}.astype(dtype))")
        else:
            w.line("attention.W.set_data(W.astype(dtype))  # the parameter attnviz used")
