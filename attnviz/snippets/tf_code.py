"""The TensorFlow snippet: Keras layers, as the chapter's TensorFlow tab builds attention.

The masked softmax with ``tf.where``, the scoring function as a ``tf.keras.layers.Layer`` with
``Dense`` parameters where it learns any (a kernel is the transpose of ``nn.Linear``'s weight),
``tf.matmul`` for the batched products, ``Dropout`` called with ``training``.
"""

from __future__ import annotations

from typing import ClassVar

from .modules import ModuleGenerator, ModuleStyle
from .ops import Ops

__all__ = ["TensorFlowGenerator"]


class TensorFlowGenerator(ModuleGenerator):
    framework: ClassVar[str] = "tensorflow"
    title: ClassVar[str] = "TensorFlow"
    needs: ClassVar[str] = "tensorflow and numpy"
    import_lines: ClassVar[tuple[str, ...]] = ("import numpy as np", "import tensorflow as tf")
    ops = Ops(
        lib="tf",
        softmax="tf.nn.softmax({x}, axis=-1)",
        key_index="tf.range(X.shape[-1], dtype=valid_lens.dtype)",
        bmm_t="tf.matmul({a}, {b}, transpose_b=True)",
        half_to_numpy="tf.cast({x}, tf.float32).numpy()",
        is_1d="len(valid_lens.shape) == 1",
        fill="tf.where({m}, {x}, tf.constant({v}, dtype=X.dtype))",
        fill_where="tf.where({m}, tf.constant({v}, dtype=X.dtype), {x})",
        both="tf.logical_and({a}, {b})",
        negate="tf.logical_not({a})",
        any_row="tf.reduce_any({m}, axis=-1, keepdims=True)",
        zero_rows="tf.where({m}, {x}, tf.zeros_like({x}))",
        as_dtype="tf.cast({m}, {like}.dtype)",
        is_neg_inf='tf.equal({x}, float("-inf"))',
        is_finite="tf.math.is_finite({x})",
        ones_like="tf.ones_like({x}, dtype=tf.bool)",
        nonzero="tf.not_equal({x}, 0)",
        masked_by="{px} * tf.cast({m}, {px}.dtype)",
        causal="tf.range(n_keys)[None, :] <= tf.range(n_queries)[:, None] + shift",
        bmm="tf.matmul({a}, {b})",
        matmul="tf.matmul({a}, {b})",
        sum_last="tf.reduce_sum({x}, axis=-1)",
        sum_last_keep="tf.reduce_sum({x}, axis=-1, keepdims=True)",
        array="tf.constant({src}, dtype={dtype})",
        bool_array="tf.not_equal(tf.constant({src}), 0)",
        compute_dtype='"{name}"',  # Keras layers take their dtype by name
    )
    style: ClassVar[ModuleStyle] = ModuleStyle(
        base="tf.keras.layers.Layer",
        super_init="super().__init__(**kwargs)",
        forward="call",
        linear="tf.keras.layers.Dense({n_out}, use_bias=False, dtype=self.dtype_policy)",
        linear_comment="# Dense layers without bias, in this layer's dtype; a kernel is (in_features, out_features)",
        param='self.add_weight(shape={shape}, initializer="zeros", name="{name}")',
        dropout="tf.keras.layers.Dropout({p}, dtype=self.dtype_policy)",
        dropout_base="tf.keras.layers.Layer",
        dropout_super_init="super().__init__(**kwargs)",
        kwargs=True,
        training="training",
        build_args=", dtype=dtype",
        eval="# training=False: dropout acts in training only; attnviz shows the weights outside it",
    )

    def load_params(self) -> None:
        w = self.w
        if self.inp.scoring == "additive":
            w.line("# The learnable parameters attnviz used: a Dense kernel is the transpose of nn.Linear's weight")
            w.line("for layer, weight in ((attention.W_q, W_q), (attention.W_k, W_k), (attention.w_v, w_v)):")
            with w.block():
                w.line("layer.build((None, weight.shape[1]))")
                w.line("layer.kernel.assign(tf.cast(tf.transpose(weight), dtype))")
        else:
            w.line("attention.W.assign(tf.cast(W, dtype))  # the parameter attnviz used")
