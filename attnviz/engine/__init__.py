"""attnviz.engine: attention in pure PyTorch, every stage exposed. No Qt is imported here.

Drop-in equivalents of the book's code: ``masked_softmax``, ``AdditiveAttention``,
``DotProductAttention``. The functional core: ``attend`` returns an ``AttentionResult`` with
every stage and ``Diagnostics``, for inputs with any leading dimensions (batch, heads) and masks
in every form PyTorch and Hugging Face code builds them. ``estimate_memory`` tells what a
computation will need before it is run (``attend`` refuses what is over its budget).

Long inputs: ``overview`` reduces an (L_q, L_k) attention matrix to display bins without ever
holding it, ``tile`` and ``weight_row`` give exact regions from its row statistics, and the
descriptions of ``mask_mods`` (``SlidingWindow``, ``Documents``, ``MaskMod``...) say which
pairs may attend.
"""

from .book import AdditiveAttention, DotProductAttention, masked_softmax
from .budget import (
    DEFAULT_MEMORY_BUDGET,
    MemoryEstimate,
    budget_for,
    check_memory,
    estimate_memory,
    format_bytes,
    set_default_memory_budget,
)
from .core import attend
from .devices import DTYPES, available_devices, resolve_device, resolve_dtype
from .errors import AttentionInputError, DeviceError, DeviceOutOfMemoryError, MemoryBudgetError
from .long import Overview, OverviewCancelled, RowStats, Tile, overview, tile, weight_row
from .mask_bound import ADDITIVE_MASKED_AT
from .mask_findings import inverted_padding
from .mask_keywords import make_mask
from .mask_mods import (
    AllOf,
    BlockStructure,
    CallMask,
    Causal,
    Chunked,
    Documents,
    KeyPadding,
    Mask,
    MaskMod,
    PrefixLM,
    SinkWindow,
    SlidingWindow,
    ValidLength,
)
from .mask_spec import AttentionMask, AttnMask, KeyPaddingMask, mask_from_arguments
from .masking import D2L_FILL, MASK_MODES, MaskMode
from .result import MASK_FINDING_KINDS, STAGES, AttentionResult, Diagnostics, MaskFinding
from .score_terms import Alibi, ScoreBias, ScoreMod, ScoreTerm, Sinks, SoftCap, alibi_slopes
from .scoring import SCORINGS, ScoringFunction, get_scoring, register
from .validation import CAUSAL_ALIGNMENTS

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
    "overview",
    "tile",
    "weight_row",
    "Overview",
    "OverviewCancelled",
    "RowStats",
    "Tile",
    "Mask",
    "AllOf",
    "BlockStructure",
    "Causal",
    "Chunked",
    "Documents",
    "KeyPadding",
    "MaskMod",
    "PrefixLM",
    "SinkWindow",
    "SlidingWindow",
    "ValidLength",
    "make_mask",
    "CallMask",
    "AttnMask",
    "KeyPaddingMask",
    "AttentionMask",
    "mask_from_arguments",
    "ScoreTerm",
    "ScoreBias",
    "ScoreMod",
    "Sinks",
    "SoftCap",
    "Alibi",
    "alibi_slopes",
]
