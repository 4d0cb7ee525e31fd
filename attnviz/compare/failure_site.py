"""Where a model failed on a sequence alone, and the cause that place names (no Qt; torch only).

A model that runs on its batch but fails on one of its sequences alone applied something of one
length to another's. The traceback says where: the innermost module of the model whose
``forward`` was running. When that module is a cross-attention of an encoder-decoder and the
error names the decoder's length and the encoder's, the cause is a decoder-length mask on the
encoder's keys (the decoder's padding given where the encoder's belongs: in the batch both were
as long, so it ran).
"""

from __future__ import annotations

import re
from typing import Any

import torch
from torch import nn

from attnviz.capture.shaping import is_cross
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["failing_module", "failure_text"]


def failing_module(model: nn.Module, error: BaseException) -> tuple[str, nn.Module] | None:
    """(name, module): the innermost submodule of ``model`` whose forward was running when
    ``error`` was raised; None when the traceback passes through none."""
    names = {module: name for name, module in model.named_modules()}
    found = None
    trace = error.__traceback__
    while trace is not None:
        owner = trace.tb_frame.f_locals.get("self")
        # The model itself says nothing of where: only its submodules do.
        if isinstance(owner, nn.Module) and names.get(owner):
            found = (names[owner], owner)
        trace = trace.tb_next
    return found


def _length(inputs: dict[str, Any], key: str) -> int | None:
    value = inputs.get(key)
    return int(value.shape[1]) if isinstance(value, torch.Tensor) and value.dim() >= 2 else None


def failure_text(model: nn.Module, error: BaseException, what: str, inputs: dict[str, Any]) -> str:
    """The sentence of a model that fails on ``what`` (such as "batch element 1 alone") with
    ``inputs`` though it runs on its batch: where, the error, and the cause where it is named."""
    # What the model raised, not the check's wrapper of it (``UserCodeError``).
    inner = getattr(error, "error", None)
    if isinstance(inner, BaseException):
        error = inner
    error_text = f"{type(error).__name__}: {error}"
    site = failing_module(model, error)
    if site is None:
        return message(
            QT_TRANSLATE_NOOP(
                "Invariance",
                "the model fails on {what} though it runs on the batch: {error} (a mask or position of one "
                "sequence's length applied to another's)",
            ),
            what=what,
            error=error_text,
        )
    name, module = site
    encoder, decoder = _length(inputs, "input_ids"), _length(inputs, "decoder_input_ids")
    numbers = {int(n) for n in re.findall(r"\d+", str(error))}
    if (
        is_cross(module, name, [])
        and encoder is not None
        and decoder is not None
        and encoder != decoder
        and {encoder, decoder} <= numbers
    ):
        return message(
            QT_TRANSLATE_NOOP(
                "Invariance",
                "the model fails on {what} in its cross-attention {name} though it runs on the batch: a "
                "decoder-length mask on the encoder's keys (the decoder's {decoder} positions against the "
                "encoder's {encoder} keys: {error}); in the batch both were as long, so the decoder's padding "
                "passed for the encoder's; pass the encoder's attention_mask to cross-attention",
            ),
            what=what,
            name=name,
            decoder=decoder,
            encoder=encoder,
            error=error_text,
        )
    return message(
        QT_TRANSLATE_NOOP(
            "Invariance",
            "the model fails on {what} in {name} though it runs on the batch: {error} (a mask or position of one "
            "sequence's length applied to another's)",
        ),
        what=what,
        name=name,
        error=error_text,
    )
