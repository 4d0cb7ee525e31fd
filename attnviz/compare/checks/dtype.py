"""The dtype check: float32 against lower precisions (a copy of the model): which calls' rows go
NaN or infinite where float32's are finite, and whether a mask's fill overflows to -inf."""

from __future__ import annotations

import copy

import torch

from attnviz.capture import CapturedCall
from attnviz.capture.doctor import Finding
from attnviz.compare.checks.base import (
    InvarianceArgumentError,
    InvarianceCheck,
    InvarianceFinding,
    Run,
    UserCodeError,
    call_weights,
    run_captured,
)
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["DtypeCheck"]


class DtypeCheck(InvarianceCheck):
    name = "dtype"

    def run(self) -> tuple[list[Finding], str | None]:
        dtypes = self.names
        reference = run_captured(self.model, self.inputs)
        findings: list[Finding] = []
        for name in dtypes:
            dtype = getattr(torch, name, None)
            if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
                raise InvarianceArgumentError(
                    message(QT_TRANSLATE_NOOP("Invariance", "dtypes: {name} is not a floating dtype"), name=repr(name))
                )
            model = copy.deepcopy(self.model).to(dtype)
            given = {
                k: v.to(dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                for k, v in self.inputs.items()
            }
            try:
                run = run_captured(model, given)
            except UserCodeError as raised:
                if not isinstance(raised.error, Exception):
                    raise  # sys.exit() and the like end the check, whatever the dtype
                exc = raised.error  # a model that does not run in this dtype is said
                findings.append(
                    InvarianceFinding(
                        "dtype",
                        "warning",
                        -1,
                        "",
                        message(
                            QT_TRANSLATE_NOOP("Invariance", "the model does not run in {dtype}: {error}"),
                            dtype=name,
                            error=f"{type(exc).__name__}: {exc}",
                        ),
                    )
                )
                continue
            finding = self._dtype_finding(reference, run, name, dtype)
            if finding is not None:
                findings.append(finding)
            del model
        return findings, None

    def _dtype_finding(self, reference: Run, run: Run, name: str, dtype: torch.dtype) -> Finding | None:
        real = self.mask
        ref_calls = {c.name: c for c in reference.calls}
        for index, call in enumerate(run.calls):
            partner = ref_calls.get(call.name)
            if partner is None or call.output is None or partner.output is None:
                continue
            if call.output.shape != partner.output.shape:
                continue
            bad = ~torch.isfinite(call.output) & torch.isfinite(partner.output)
            bad_rows = bad.any(dim=-1)  # (B, H, L_q)
            if not bool(bad_rows.any()):
                continue
            batches = tuple(int(b) for b in torch.nonzero(bad_rows.any(dim=(1, 2))).flatten())
            heads = tuple(int(h) for h in torch.nonzero(bad_rows.any(dim=(0, 2))).flatten())
            rows = tuple(int(r) for r in torch.nonzero(bad_rows.any(dim=(0, 1))).flatten())
            fill = _overflowing_fill(partner, call, dtype)
            if fill is not None:
                text = message(
                    QT_TRANSLATE_NOOP(
                        "Invariance",
                        "these rows go NaN in {dtype} and not in float32: the mask's fill {value:.3g} overflows to "
                        "-inf in {dtype}, so a row with every key masked (padding) is NaN, and reaches real tokens "
                        "through the values; fill with torch.finfo(scores.dtype).min",
                    ),
                    dtype=name,
                    value=fill,
                )
            elif _inner_overflow(call, bad_rows):
                text = message(
                    QT_TRANSLATE_NOOP(
                        "Invariance",
                        "these rows go NaN in {dtype} and not in float32, inside the attention code: its output "
                        "is NaN where attnviz's recomputation of the same queries, keys, values and mask is "
                        "finite, so a fill or bias of its own overflows {dtype} (-1e9 and finfo(float32).min are "
                        "-inf there, and 0 * -inf is NaN); fill with torch.finfo(scores.dtype).min",
                    ),
                    dtype=name,
                )
            else:
                text = message(
                    QT_TRANSLATE_NOOP(
                        "Invariance",
                        "these rows are NaN or infinite in {dtype} and finite in float32: a score, a fill or a sum "
                        "overflows {dtype} (largest {largest:.3g}); compute the scores and softmax in float32",
                    ),
                    dtype=name,
                    largest=float(torch.finfo(dtype).max),
                )
            return InvarianceFinding(
                "dtype", "error", index, call.name, text, heads, batches, rows, int(bad_rows.sum())
            )
        out_ref, out = reference.output, run.output
        if out.shape == out_ref.shape:
            bad = ~torch.isfinite(out) & torch.isfinite(out_ref)
            if out.dim() >= 2 and real is not None and tuple(out.shape[:2]) == tuple(real.shape):
                bad = bad & real.reshape(*real.shape, *([1] * (out.dim() - 2)))
            if bool(bad.any()):
                flags = bad.reshape(*bad.shape[:2], -1).any(dim=-1) if bad.dim() >= 2 else bad.reshape(1, -1)
                return InvarianceFinding(
                    "dtype",
                    "error",
                    -1,
                    "",
                    message(
                        QT_TRANSLATE_NOOP(
                            "Invariance",
                            "the output is NaN or infinite in {dtype} and finite in float32, though every attention "
                            "call is finite: an overflow outside attention",
                        ),
                        dtype=name,
                    ),
                    (),
                    tuple(int(b) for b in torch.nonzero(flags.any(dim=1)).flatten()),
                    tuple(int(r) for r in torch.nonzero(flags.any(dim=0)).flatten()),
                    int(flags.sum()),
                )
        return None


def _overflowing_fill(reference: CapturedCall, call: CapturedCall, dtype: torch.dtype) -> float | None:
    """The float32 run's mask fill that is -inf in ``dtype`` (a value beyond its range), if any."""
    ref_mask, mask = reference.attn_mask, call.attn_mask
    if ref_mask is None or mask is None or ref_mask.dtype == torch.bool or mask.dtype == torch.bool:
        # The eager path's mask was added to the scores by the model; a softmax-only record keeps none.
        return None
    if ref_mask.shape != mask.shape:
        return None
    overflow = torch.isinf(mask) & torch.isfinite(ref_mask)
    if not bool(overflow.any()):
        return None
    value = float(ref_mask[overflow].min())
    return value if abs(value) > torch.finfo(dtype).max else None


def _inner_overflow(call: CapturedCall, bad_rows: torch.Tensor) -> bool:
    """The model's own output of ``call`` is not finite on ``bad_rows`` (B, H, L_q) where
    attnviz's recomputation from what the call was given (its weights times its values) is."""
    weights, values = call_weights(call), call.values
    if weights is None or values is None or weights.shape[:3] != bad_rows.shape:
        return False
    if values.shape[1] != weights.shape[1]:
        values = values.repeat_interleave(weights.shape[1] // values.shape[1], dim=1)
    ours = torch.matmul(weights.double(), values.double())
    return bool((bad_rows & torch.isfinite(ours).all(dim=-1)).any())
