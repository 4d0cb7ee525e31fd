"""A decoder's self- and cross-attention run as one call (T5Gemma 2's merged attention): one
softmax over the decoder's own keys and then the encoder's. The call stays one (it is one
computation); its ``self_keys`` and note say which key columns are which, and its key tokens
are the decoder's then the encoder's. The model reports the two column blocks as two maps."""

from __future__ import annotations

import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from .base import Recorder
from .softmax import named_arguments


def self_keys(capture: Recorder, n_k: int) -> int:
    """The decoder's own keys of a call whose module was given the encoder's states and attends
    to more keys than the encoder has (the decoder's keys first); 0 for any other call."""
    stack, given = capture._local.stack, capture._local.given
    if not stack or not given:
        return 0
    args, kwargs = given[-1]
    encoder = named_arguments(stack[-1], args, kwargs).get("encoder_hidden_states")
    if isinstance(encoder, torch.Tensor) and encoder.dim() == 3 and 0 < encoder.shape[1] < n_k:
        return n_k - int(encoder.shape[1])
    return 0


def note(own: int, n_k: int) -> str:
    return message(
        QT_TRANSLATE_NOOP(
            "Capture",
            "self- and cross-attention merged in one softmax: keys 0-{last} are the decoder's own, the "
            "next {cross} the encoder's; the model reports the two column blocks as two maps (each a part "
            "of this one softmax)",
        ),
        last=own - 1,
        cross=n_k - own,
    )
