"""attnviz.engine: attention in pure PyTorch, every stage exposed. No Qt is imported here.

Drop-in equivalents of the book's code: ``masked_softmax``, ``AdditiveAttention``,
``DotProductAttention``. The functional core: ``attend`` returns an ``AttentionResult`` with
every stage and ``Diagnostics``.
"""

from .core import attend
from .book import AdditiveAttention, DotProductAttention, masked_softmax
from .devices import DTYPES, available_devices, resolve_device, resolve_dtype
from .errors import AttentionInputError, DeviceError, DeviceOutOfMemoryError
from .masking import CAUSAL_ALIGNMENTS, D2L_FILL, MASK_MODES, MaskMode
from .result import STAGES, AttentionResult, Diagnostics
from .scoring import SCORINGS, ScoringFunction, get_scoring, register

__all__ = [
    "attend",
    "AttentionResult",
    "Diagnostics",
    "STAGES",
    "masked_softmax",
    "AdditiveAttention",
    "DotProductAttention",
    "AttentionInputError",
    "DeviceError",
    "DeviceOutOfMemoryError",
    "MASK_MODES",
    "MaskMode",
    "CAUSAL_ALIGNMENTS",
    "D2L_FILL",
    "SCORINGS",
    "ScoringFunction",
    "get_scoring",
    "register",
    "DTYPES",
    "available_devices",
    "resolve_device",
    "resolve_dtype",
]
