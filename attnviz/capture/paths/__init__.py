"""The attention paths a capture records, one adapter module each behind one small interface
(``base.AttentionPath``: what it patches, and its ``record``: how a call becomes a
``CapturedCall``). A new path is a new module here and one entry in ``PATHS``.

``PATHS`` is the order the patch installs them in (and puts them back in reverse).
"""

from __future__ import annotations

from . import custom_softmax, flex, interface, mha, mha_function, sdpa, softmax
from .base import AttentionPath

#: Every path the patch installs, in order.
PATHS: tuple[AttentionPath, ...] = (
    sdpa.PATH,
    mha.PATH,
    mha_function.PATH,
    softmax.PATH,
    flex.PATH,
    interface.PATH,
    custom_softmax.PATH,
)

__all__ = ["PATHS", "AttentionPath"]
