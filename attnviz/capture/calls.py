"""One recorded attention call, its fidelity, and what it becomes in a :class:`ModelRun`.

A :class:`CapturedCall` keeps torch CPU copies of what the model passed, exactly as passed (the
shapes and dtypes of SDPA's or nn.MultiheadAttention's arguments), and the model's own output.
Its ``fidelity`` is the largest difference between that output and attnviz's recomputation
from the recorded tensors (``attnviz.engine.attend`` in its "sdpa" mask mode, which reproduces
PyTorch's SDPA), computed the first time it is asked for: the forward pass pays only for copies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch

from ..engine import AttentionInputError, MemoryBudgetError, attend
from ..engine.devices import dtype_name
from ..model_run import AttentionCall, MaskArguments
from ..tr import QT_TRANSLATE_NOOP, exception_message, message

Kind = Literal["scaled_dot_product_attention", "multihead_attention"]

#: Tensors already converted to numpy, by (id of the tensor they come from, shape, dtype).
Converted = dict[tuple[int, tuple[int, ...], torch.dtype], tuple[torch.Tensor, np.ndarray]]

#: Recomputations larger than this (their weights, in bytes) are done one batch element at a time.
_CHUNK_BYTES = 256 * 2**20


@dataclass(eq=False)
class CapturedCall:
    """One call of ``scaled_dot_product_attention`` or one ``nn.MultiheadAttention`` forward.

    ``queries`` (B, H, L_q, d), ``keys`` and ``values`` (B, H_kv, L_k, d) as the attention used
    them (for nn.MultiheadAttention: after its input projections, split into heads, as its
    ``F.multi_head_attention_forward`` computes them). ``attn_mask``, ``key_padding_mask`` (nn.
    MultiheadAttention only), ``is_causal``, ``scale``, ``dropout_p`` and ``enable_gqa`` as the
    model passed them: an nn.MultiheadAttention boolean ``attn_mask`` keeps its own convention
    (True = masked), the opposite of SDPA's. ``output`` is the model's own (B, H, L_q, d_v)
    result; None for an nn.MultiheadAttention forward with ``need_weights=True``, whose heads are
    only returned merged and projected (``module_output``, (B, L_q, E)): its fidelity is then
    measured after that projection, on attnviz's recomputed heads. ``dtype`` is the dtype the
    model computed in. ``note`` says what could not be done (why a call is not reproduced).
    """

    name: str
    kind: Kind
    queries: torch.Tensor
    keys: torch.Tensor
    values: torch.Tensor
    dtype: torch.dtype
    attn_mask: torch.Tensor | None = None
    key_padding_mask: torch.Tensor | None = None
    is_causal: bool = False
    scale: float | None = None
    dropout_p: float = 0.0
    enable_gqa: bool = False
    output: torch.Tensor | None = None
    module_output: torch.Tensor | None = None
    out_proj: tuple[torch.Tensor, torch.Tensor | None] | None = None
    note: str = ""
    _fidelity: float | None = field(default=None, repr=False)
    _checked: bool = field(default=False, repr=False)
    _recomputed: torch.Tensor | None = field(default=None, repr=False)

    @property
    def sdpa_attn_mask(self) -> torch.Tensor | None:
        """``attn_mask`` as SDPA (and the engine, and :class:`ModelRun`) read it: an nn.
        MultiheadAttention one in SDPA's convention (a boolean one inverted to True = attend, a
        (B * H, L_q, L_k) one split into (B, H, L_q, L_k)); an SDPA one as passed."""
        attn_mask = self.attn_mask
        if self.kind == "multihead_attention" and attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                attn_mask = ~attn_mask
            if attn_mask.dim() == 3:
                b, h = self.queries.shape[0], self.queries.shape[1]
                attn_mask = attn_mask.reshape(b, h, *attn_mask.shape[1:])
        return attn_mask

    def mask_kwargs(self) -> dict[str, object]:
        """The masks as ``attnviz.engine.attend`` keyword arguments."""
        return {
            "attn_mask": self.sdpa_attn_mask,
            "key_padding_mask": self.key_padding_mask,
            "causal": True if self.is_causal else None,
        }

    @property
    def fidelity(self) -> float | None:
        """The largest absolute difference between the model's output and attnviz's recomputation
        (0.0 where both are NaN alike; ``inf`` where only one is); None when the call cannot be
        reproduced, with the reason in ``note``. Computed once, when first asked for."""
        if not self._checked:
            self._checked = True
            self._check()
        return self._fidelity

    @property
    def head_output(self) -> torch.Tensor | None:
        """(B, H, L_q, d_v): the model's own output, else attnviz's recomputation of it (an
        nn.MultiheadAttention forward with ``need_weights=True``), else None."""
        if self.output is not None:
            return self.output
        self.fidelity  # noqa: B018 - recomputes the heads on first use
        return self._recomputed

    def _check(self) -> None:
        if self.dropout_p > 0:
            self._add_note(
                message(
                    QT_TRANSLATE_NOOP(
                        "Capture", "dropout (p = {p}) was applied: the model's output is random and was not compared"
                    ),
                    p=f"{self.dropout_p:g}",
                )
            )
            return
        mode = "neg_inf" if self.output is None else "sdpa"
        try:
            ours = recompute(
                self.queries, self.keys, self.values, self.mask_kwargs(), self.scale, self.enable_gqa, mode
            )
        except (AttentionInputError, MemoryBudgetError) as exc:
            self._add_note(
                message(QT_TRANSLATE_NOOP("Capture", "not recomputed: {reason}"), reason=exception_message(exc))
            )
            return
        if self.output is not None:
            self._fidelity = largest_difference(ours, self.output)
            return
        # nn.MultiheadAttention with need_weights=True returns its heads merged and projected only:
        # the recomputed heads go through the same projection and are compared there.
        assert self.module_output is not None and self.out_proj is not None
        weight, bias = self.out_proj
        b, h, n_q, d_v = ours.shape
        merged = ours.transpose(1, 2).reshape(b, n_q, h * d_v).to(weight.dtype)
        with torch.no_grad():
            projected = torch.nn.functional.linear(merged, weight, bias)
        self._fidelity = largest_difference(projected, self.module_output)
        self._recomputed = ours.to(self.values.dtype) if self.values.dtype.is_floating_point else ours
        self._add_note(
            QT_TRANSLATE_NOOP(
                "Capture",
                "the heads' output is attnviz's recomputation (nn.MultiheadAttention with need_weights=True "
                "returns it only after its output projection, where it was compared)",
            )
        )

    def _add_note(self, note: str) -> None:
        self.note = (
            note
            if not self.note
            else message(QT_TRANSLATE_NOOP("Capture", "{first}; {second}"), first=self.note, second=note)
        )

    def to_attention_call(self, arrays: Converted, check: bool = True) -> AttentionCall:
        """This call as the app's :class:`AttentionCall` (numpy views of the recorded tensors).

        ``arrays`` remembers the tensors already converted (and holds them, so that no id in it
        is reused), so a mask that calls share stays one array, in the run and in a saved file.
        ``check``: compute the fidelity if it was not yet (else it stays None until it is)."""

        def numpy(t: torch.Tensor | None, source: torch.Tensor | None = None) -> np.ndarray | None:
            if t is None:
                return None
            base = t if source is None else source  # a mask converted from ``source``
            key = (id(base), tuple(t.shape), t.dtype)
            if key not in arrays:
                # numpy has no bfloat16: widen it to float32, which is exact.
                arrays[key] = (base, (t.float() if t.dtype == torch.bfloat16 else t).numpy())
            return arrays[key][1]

        fidelity = self.fidelity if check else self._fidelity
        return AttentionCall(
            self.name,
            numpy(self.queries),
            numpy(self.keys),
            numpy(self.values),
            MaskArguments(
                numpy(self.sdpa_attn_mask, self.attn_mask), numpy(self.key_padding_mask), None, self.is_causal
            ),
            scale=self.scale,
            output=numpy(self.head_output if check else self.output),
            fidelity=fidelity,
            note=self.note,
            dtype=dtype_name(self.dtype) if self.dtype == torch.bfloat16 else None,
        )


def recompute(
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    kwargs: dict[str, Any],
    scale: float | None,
    enable_gqa: bool,
    mask_mode: str,
) -> torch.Tensor:
    """attnviz's output for these inputs and mask arguments (``attend``'s: attn_mask,
    key_padding_mask, attention_mask, causal), (..., L_q, d_v); half precision is computed in
    float32.

    A computation whose weights would be large is done one batch element at a time, so the
    check never needs more than about ``_CHUNK_BYTES`` at once.
    """
    dtype = torch.float32 if queries.dtype in (torch.float16, torch.bfloat16) else None
    n_q, n_k = queries.shape[-2], keys.shape[-2]
    size = math.prod(queries.shape[:-2]) * n_q * n_k * 4
    batch = queries.shape[0]
    if size <= _CHUNK_BYTES or queries.dim() < 3 or batch == 1:
        return _attend(queries, keys, values, kwargs, scale, enable_gqa, mask_mode, dtype)
    parts = []
    for b in range(batch):
        one = {name: _batch_slice(name, mask, b, batch, queries.dim()) for name, mask in kwargs.items()}
        parts.append(
            _attend(queries[b : b + 1], keys[b : b + 1], values[b : b + 1], one, scale, enable_gqa, mask_mode, dtype)
        )
    return torch.cat(parts)


def _attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    kwargs: dict[str, Any],
    scale: float | None,
    gqa: bool,
    mode: str,
    dtype: torch.dtype | None,
) -> torch.Tensor:
    result = attend(
        q,
        k,
        v,
        mask_mode=mode,
        scale=scale,
        enable_gqa=gqa,
        dtype=dtype,
        keep=("output",),
        allow_nonfinite=True,
        **kwargs,
    )
    return result.output


def _batch_slice(name: str, mask: object, b: int, batch: int, dims: int) -> object:
    """Batch element ``b`` of the mask argument ``name``: padding masks (B, L_k), and masks of the
    queries' rank whose first axis is the batch; masks that broadcast over the batch are shared."""
    if not isinstance(mask, torch.Tensor):
        return mask
    padding = name == "key_padding_mask" or (name == "attention_mask" and mask.dim() == 2)
    if padding or (mask.dim() == dims and mask.shape[0] == batch):
        return mask[b : b + 1]
    return mask


def largest_difference(ours: torch.Tensor, theirs: torch.Tensor) -> float:
    """max |ours - theirs| in float64; NaN (or the same infinity) in both places counts as equal,
    a NaN or infinity in one of them only as an infinite difference."""
    a, b = ours.double(), theirs.double()
    if a.shape != b.shape:
        return math.inf
    if a.numel() == 0:
        return 0.0
    alike = (torch.isnan(a) & torch.isnan(b)) | (torch.isinf(a) & (a == b))
    diff = torch.where(alike, torch.zeros((), dtype=torch.float64), (a - b).abs())
    if bool(torch.isnan(diff).any()):
        return math.inf
    return float(diff.max())
