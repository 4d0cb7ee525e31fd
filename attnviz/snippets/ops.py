"""How each framework spells the operations a snippet is made of: one ``Ops`` table per framework.

The structure the chapter teaches (the masked softmax, the scoring functions, the batched
products, dropout, the pooled output) is written once, in ``base`` and ``modules``, from these
templates; a framework's module gives only its table (and what it builds differently).

Templates are ``str.format``-ed with the operands named in each field's comment; every operand
``n`` also comes as ``pn``, the same expression in parentheses unless it is a name, a call, an
attribute, a subscript or a literal (``(keys * keys).sum(-1)`` but ``tf.reduce_sum(keys * keys)``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

__all__ = ["Ops", "atom", "grouped", "spell"]


@dataclass(frozen=True)
class Ops:
    """One framework's expressions. ``X`` is the scores tensor inside ``masked_softmax``.

    The defaults are numpy's style (``np.where``, ``x.sum(axis=-1)``, ``a @ b``), with ``{lib}``
    the framework's array module: a table gives ``lib`` and what its framework writes otherwise.
    """

    lib: str  # the array module: torch, tf, np (MXNet's), jnp
    softmax: str  # softmax of {x} over the last axis
    key_index: str  # 0, 1, ..., n_keys - 1 for X's keys, comparable with the lengths
    bmm_t: str  # {a} @ {b}^T, batched: (batch, n, d) @ (batch, m, d)^T
    half_to_numpy: str  # {x}, float16 or bfloat16, as a float32 numpy array

    # -- the masked softmax and the causal mask
    is_1d: str = "valid_lens.ndim == 1"  # whether the valid lengths are one per batch element
    fill: str = "{lib}.where({m}, {x}, {v})"  # where({m}, {x}, the scalar {v} in X's dtype)
    fill_where: str = "{lib}.where({m}, {v}, {x})"  # where({m}, the scalar {v} in X's dtype, {x})
    both: str = "{a} & {b}"  # {a} and {b}, elementwise booleans
    negate: str = "~{pa}"  # not {a}
    any_row: str = "{pm}.any(axis=-1, keepdims=True)"  # {m} reduced with "any" over the keys, kept
    where: str = "{lib}.where({m}, {a}, {b})"  # where({m}, {a}, {b})
    zero_rows: str = "{lib}.where({m}, {x}, 0.0)"  # where({m}, {x}, 0)
    as_dtype: str = "{pm}.astype({like}.dtype)"  # booleans {m} as 0/1 in the dtype of {like}
    is_neg_inf: str = "{lib}.isneginf({x})"  # {x} == -inf, elementwise
    is_finite: str = "{lib}.isfinite({x})"  # {x} finite, elementwise
    ones_like: str = "{lib}.ones({px}.shape, dtype=bool)"  # booleans, True, shaped as {x}
    zeros_like: str = "{lib}.zeros_like({x})"  # zeros shaped as {x}, in its dtype
    nonzero: str = "{px} != 0"  # {x} != 0, elementwise
    #: {x} times the booleans {m}: zero where {m} is False.
    masked_by: str = "{px} * {pm}"
    #: j <= i + shift for query i (n_queries) and key j (n_keys).
    causal: str = "{lib}.arange(n_keys)[None, :] <= {lib}.arange(n_queries)[:, None] + shift"

    # -- the scoring functions and the products
    bmm: str = "{pa} @ {pb}"  # {a} @ {b}, batched: (batch, n, m) @ (batch, m, p)
    matmul: str = "{pa} @ {pb}"  # {a} @ {b} with a matrix {b} over {a}'s last axis
    tanh: str = "{lib}.tanh({x})"  # tanh of {x}
    #: {x} with a new axis {axis}; {index}: the same as an indexing (":, None, :").
    expand: str = "{lib}.expand_dims({x}, axis={axis})"
    squeeze_last: str = "{lib}.squeeze({x}, axis=-1)"  # {x} without its last axis, of size 1
    sum_last: str = "{px}.sum(axis=-1)"  # {x} summed over its last axis
    sum_last_keep: str = "{px}.sum(axis=-1, keepdims=True)"  # the same, the axis kept of size 1
    clamp0: str = "{lib}.maximum({x}, 0)"  # max({x}, 0), elementwise
    #: {c} - 2 {a} {b}^T as one fused product (None: written as the subtraction of ``bmm_t``).
    minus_2_bmm_t: str | None = None

    # -- what the scoring function reads: its layers, parameters and settings
    linear: str = "self.{name}({x})"  # the linear layer (no bias) {name} on {x}'s last axis
    param: str = "self.{name}"  # the learnable matrix {name}
    setting: str = "self.{name}"  # the constructor argument {name} (a scale)

    # -- arrays in and out
    #: A tensor of {dtype} from {src}: a literal, ``unpack(...)`` or ``data[...]``.
    array: str = "{lib}.array({src}, dtype={dtype})"
    bool_array: str = "{lib}.array({src}) != 0"  # booleans from the 0/1 {src}
    dtype_name: str = "{lib}.{name}"  # the dtype named {name} ("float32"), as an argument
    #: ``dtype = ...``, the compute dtype {name} (None: as ``dtype_name``).
    compute_dtype: str | None = None
    int_dtype: str = "int32"  # the valid lengths' dtype
    to_numpy: str = "{px}.numpy()"  # {x} as a numpy array

    def __post_init__(self) -> None:
        # {lib} is the table's own: filled in once, so the templates take only their operands.
        for name, value in vars(self).items():
            if isinstance(value, str) and name != "lib":
                object.__setattr__(self, name, value.replace("{lib}", self.lib))


def atom(expression: str) -> bool:
    """Whether ``expression`` takes a method, an attribute or an index without parentheses."""
    try:
        node = ast.parse(expression, mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, ast.Constant):
        return not isinstance(node.value, (int, float))  # 1.sum() does not parse; "ab".upper() does
    return isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))


def grouped(expression: str) -> str:
    """``expression`` in parentheses unless it is an ``atom``."""
    return expression if atom(expression) else f"({expression})"


def spell(template: str, **operands: object) -> str:
    """``template`` with its operands, each also as ``p<name>``, ``grouped``."""
    texts = {name: str(value) for name, value in operands.items()}
    return template.format(**texts, **{f"p{name}": grouped(text) for name, text in texts.items()})
