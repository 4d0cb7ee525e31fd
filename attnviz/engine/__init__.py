"""attnviz.engine: attention in pure PyTorch, every stage exposed. No Qt is imported here.

Drop-in equivalents of the book's code: ``masked_softmax``, ``AdditiveAttention``,
``DotProductAttention``. The functional core: ``attend`` returns an ``AttentionResult`` with
every stage and ``Diagnostics``, for inputs with any leading dimensions (batch, heads) and masks
in every form PyTorch and Hugging Face code builds them. ``estimate_memory`` tells what a
computation will need before it is run (``attend`` refuses what is over its budget).
"""

from .core import attend
from .book import AdditiveAttention, DotProductAttention, masked_softmax
from .budget import (DEFAULT_MEMORY_BUDGET, MemoryEstimate, budget_for, check_memory, estimate_memory, format_bytes,
                     set_default_memory_budget)
from .devices import DTYPES, available_devices, resolve_device, resolve_dtype
from .errors import AttentionInputError, DeviceError, DeviceOutOfMemoryError, MemoryBudgetError
from .mask_findings import inverted_padding
from .mask_spec import ADDITIVE_MASKED_AT
from .masking import CAUSAL_ALIGNMENTS, D2L_FILL, MASK_MODES, MaskMode
from .result import MASK_FINDING_KINDS, STAGES, AttentionResult, Diagnostics, MaskFinding
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
    "MemoryBudgetError",
    "DEFAULT_MEMORY_BUDGET",
    "MemoryEstimate",
    "budget_for",
    "check_memory",
    "estimate_memory",
    "format_bytes",
    "set_default_memory_budget",
    "MaskFinding",
    "MASK_FINDING_KINDS",
    "inverted_padding",
    "ADDITIVE_MASKED_AT",
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
