"""The TensorFlow snippet: Keras layers, as the chapter's TensorFlow tab builds attention.

The masked softmax with ``tf.where``, the scoring function as a ``tf.keras.layers.Layer`` with
``Dense`` parameters where it learns any (a kernel is the transpose of ``nn.Linear``'s weight),
``tf.matmul`` for the batched products, ``Dropout`` called with ``training``.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .base import ArrayKind, FrameworkGenerator, Ops
from .writer import RETURN_VALUE

__all__ = ["TensorFlowGenerator"]


class TensorFlowGenerator(FrameworkGenerator):
    framework: ClassVar[str] = "tensorflow"
    title: ClassVar[str] = "TensorFlow"
    needs: ClassVar[str] = "tensorflow and numpy"
    ops: ClassVar[Ops] = Ops(
        softmax="tf.nn.softmax({x}, axis=-1)",
        is_1d="len(valid_lens.shape) == 1",
        key_index="tf.range(X.shape[-1], dtype=valid_lens.dtype)",
        fill="tf.where({m}, {x}, tf.constant({v}, dtype=X.dtype))",
        fill_where="tf.where({m}, tf.constant({v}, dtype=X.dtype), {x})",
        both="tf.logical_and({a}, {b})",
        negate="tf.logical_not({a})",
        any_row="tf.reduce_any({m}, axis=-1, keepdims=True)",
        zero_rows="tf.where({m}, {x}, tf.zeros_like({x}))",
        as_dtype="tf.cast({m}, X.dtype)",
        is_neg_inf='tf.equal({x}, float("-inf"))',
        ones_like="tf.ones_like({x}, dtype=tf.bool)",
        causal="tf.range(n_keys)[None, :] <= tf.range(n_queries)[:, None] + shift",
    )

    def imports(self) -> None:
        w = self.w
        self.stdlib_imports()
        w.line("import numpy as np")
        w.line("import tensorflow as tf")

    def recorded_dropout(self) -> None:
        w = self.w
        w.blank(2)
        with w.function("RecordedDropout"):
            w.line("class RecordedDropout(tf.keras.layers.Layer):")
            with w.block():
                w.line(
                    '"""Dropout with a given draw: zeroes where `keep` is False and scales the rest by 1 / (1 - rate),'
                )
                w.line('as Dropout does in training, so the run drops the same weights as attnviz did."""')
                w.blank()
                w.line("def __init__(self, keep, rate, **kwargs):")
                with w.block():
                    w.line("super().__init__(**kwargs)")
                    w.line("self.keep, self.rate = keep, rate")
                w.blank()
                w.line("def call(self, X, training=None):")
                with w.block():
                    if self.inp.dropout >= 1.0:
                        w.line("return tf.zeros_like(X)  # rate 1 drops everything", "applied_weights", RETURN_VALUE)
                    else:
                        w.line(
                            "return X * tf.cast(self.keep, X.dtype) / (1 - self.rate)", "applied_weights", RETURN_VALUE
                        )

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
                w.line("finite = tf.math.is_finite(values)", "output")
                w.line("safe = tf.matmul(weights, tf.where(finite, values, tf.zeros_like(values)))", "output")
                w.line("used = tf.cast(tf.not_equal(weights, 0), values.dtype)", "output")
                w.line("leaks = tf.matmul(used, tf.cast(tf.logical_not(finite), values.dtype)) > 0", "output")
                w.line("return tf.where(leaks, tf.matmul(weights, values), safe)", "output", RETURN_VALUE)

    # ------------------------------------------------------------------ the scoring layer

    def scoring_class(self) -> None:
        w = self.w
        w.blank(2)
        name = self.class_name()
        with w.function(name):
            w.line(f"class {name}(tf.keras.layers.Layer):")
            with w.block():
                w.line(f'"""{self.class_doc()}"""')
                w.blank()
                self._init()
                w.blank()
                with w.function(f"{name}.call"):
                    w.line(f"def call(self, queries, keys, values, {self.forward_params()}, training=None):")
                    with w.block():
                        self._scores()
                        w.line(f"self.attention_weights = {self.softmax_call()}", "weights")
                        w.line(
                            "weights = self.dropout(self.attention_weights, training=training)",
                            "applied_weights",
                            "weights",
                        )
                        if self.clean_pool:
                            w.line("return pool(weights, values)", "output", RETURN_VALUE)
                        else:
                            w.line("return tf.matmul(weights, values)", "output", RETURN_VALUE)

    def _init(self) -> None:
        w = self.w
        inp = self.inp
        scoring = inp.scoring
        if scoring == "additive":
            w.line("def __init__(self, num_hiddens, dropout, **kwargs):")
        elif scoring == "bilinear":
            w.line("def __init__(self, query_size, key_size, dropout, **kwargs):")
        elif scoring in ("dot", "scaled_dot") and inp.scale is not None:
            w.line("def __init__(self, scale, dropout, **kwargs):")
        else:
            w.line("def __init__(self, dropout, **kwargs):")
        with w.block():
            w.line("super().__init__(**kwargs)")
            if scoring == "additive":
                w.line("# Dense layers without bias, in this layer's dtype; a kernel is (in_features, out_features)")
                w.line("self.W_q = tf.keras.layers.Dense(num_hiddens, use_bias=False, dtype=self.dtype_policy)")
                w.line("self.W_k = tf.keras.layers.Dense(num_hiddens, use_bias=False, dtype=self.dtype_policy)")
                w.line("self.w_v = tf.keras.layers.Dense(1, use_bias=False, dtype=self.dtype_policy)")
            elif scoring == "bilinear":
                w.line('self.W = self.add_weight(shape=(query_size, key_size), initializer="zeros", name="W")')
            elif scoring in ("dot", "scaled_dot") and inp.scale is not None:
                w.line("self.scale = scale")
            w.line("self.dropout = tf.keras.layers.Dropout(dropout, dtype=self.dtype_policy)")

    def _scores(self) -> None:
        w = self.w
        inp = self.inp
        scoring = inp.scoring
        if scoring == "additive":
            w.line(
                "q, k = self.W_q(queries), self.W_k(keys)  # (batch, queries, h), (batch, keys, h)", "hidden_features"
            )
            w.line("# every query with every key: (batch, queries, 1, h) + (batch, 1, keys, h)", "hidden_features")
            w.line(
                "features = tf.tanh(tf.expand_dims(q, axis=2) + tf.expand_dims(k, axis=1))",
                "hidden_features",
                "features",
            )
            w.line("scores = tf.squeeze(self.w_v(features), axis=-1)  # (batch, queries, keys)", "raw_scores", "scores")
        elif scoring in ("dot", "scaled_dot"):
            w.line(
                "scores = tf.matmul(queries, keys, transpose_b=True)  # (batch, queries, keys)", "raw_scores", "scores"
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
                "scores = tf.matmul(tf.matmul(queries, self.W), keys, transpose_b=True)  # (batch, queries, keys)",
                "raw_scores",
                "scores",
            )
        elif scoring == "gaussian":
            w.line(
                "# ||q - k||^2 = ||q||^2 + ||k||^2 - 2 q.k: one batched product, no (queries, keys, d) tensor",
                "raw_scores",
            )
            w.line(
                "sq_q = tf.reduce_sum(queries * queries, axis=-1, keepdims=True)  # (batch, queries, 1)", "raw_scores"
            )
            w.line("sq_k = tf.reduce_sum(keys * keys, axis=-1)[:, None, :]  # (batch, 1, keys)", "raw_scores")
            w.line("distances = (sq_q + sq_k) - 2 * tf.matmul(queries, keys, transpose_b=True)", "raw_scores")
            w.line(
                "scores = -0.5 * tf.maximum(distances, 0)  # rounding can dip a distance below 0",
                "raw_scores",
                "scores",
            )
        else:  # summation
            w.line(
                "scores = tf.reduce_sum(queries, axis=-1, keepdims=True) + tf.reduce_sum(keys, axis=-1)[:, None, :]",
                "raw_scores",
                "scores",
            )

    # ------------------------------------------------------------------ data and the run

    def dtype_lines(self) -> None:
        self.w.line(f'dtype = "{self.dtype}"')

    def tensor(self, source: str, kind: ArrayKind, arr: np.ndarray) -> str:
        if kind == "float":
            return f"tf.constant({source}, dtype=dtype)"
        if kind == "param":
            own = "tf.float64" if arr.dtype == np.float64 else "tf.float32"
            return f"tf.constant({source}, dtype={own})"
        if kind == "int":
            return f"tf.constant({source}, dtype=tf.int32)"
        return f"tf.not_equal(tf.constant({source}), 0)"

    def run(self) -> None:
        w = self.w
        inp = self.inp
        w.line("# ---- the attention, as attnviz computed it ----")
        self.mask_lines()
        name = self.class_name()
        d_q, d_k = inp.queries.shape[-1], inp.keys.shape[-1]
        if inp.scoring == "additive":
            ctor = f"{name}(num_hiddens={inp.num_hiddens}, dropout={inp.dropout!r}, dtype=dtype)"
        elif inp.scoring == "bilinear":
            ctor = f"{name}(query_size={d_q}, key_size={d_k}, dropout={inp.dropout!r}, dtype=dtype)"
        elif inp.scoring in ("dot", "scaled_dot") and inp.scale is not None:
            ctor = f"{name}(scale={inp.scale!r}, dropout={inp.dropout!r}, dtype=dtype)"
        else:
            ctor = f"{name}(dropout={inp.dropout!r}, dtype=dtype)"
        w.line(f"attention = {ctor}")
        if inp.scoring == "additive":
            w.line("# The learnable parameters attnviz used: a Dense kernel is the transpose of nn.Linear's weight")
            w.line("for layer, weight in ((attention.W_q, W_q), (attention.W_k, W_k), (attention.w_v, w_v)):")
            with w.block():
                w.line("layer.build((None, weight.shape[1]))")
                w.line("layer.kernel.assign(tf.cast(tf.transpose(weight), dtype))")
        elif inp.scoring == "bilinear":
            w.line("attention.W.assign(tf.cast(W, dtype))  # the parameter attnviz used")
        training = "False"
        if inp.dropping:
            p = inp.dropout
            keep = "dropout_keep" if p < 1.0 else "None"
            w.line(f"attention.dropout = RecordedDropout({keep}, rate={p!r}, dtype=dtype)  # attnviz's draw")
            training = "True"
        else:
            w.line("# training=False: dropout acts in training only; attnviz shows the weights outside it")
        w.line(
            f"output = attention(queries, keys, values, {self.call_args()}, training={training})", "output", "output"
        )
        w.line("weights = attention.attention_weights", "weights", "weights")

    def to_numpy(self, name: str) -> str:
        if self.dtype in ("float16", "bfloat16"):
            return f"tf.cast({name}, tf.float32).numpy()"
        return f"{name}.numpy()"
