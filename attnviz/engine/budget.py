"""The memory budget of one attention computation, checked before anything is allocated for it.

``estimate_memory`` adds up what a computation will hold at its peak: every distinct stage it
keeps (leading dimensions x L_q x L_k x bytes each, the ``mask`` stage one byte per element), the
output, the converted inputs and parameters, the per-row diagnostics and the temporaries of one
block of rows (bounded by ``core.BLOCK_ELEMENTS`` and ``core.MAX_TEMP_ELEMENTS``). ``attend``
refuses a computation whose estimate is over its budget with a ``MemoryBudgetError`` that names
the size, the budget and what would fit, instead of letting the allocator fail half-way (or the
operating system kill the process).

The budget: ``attend(memory_budget=bytes)`` for one call (trusted as given; ``math.inf`` for none),
else the process-wide default, ``DEFAULT_MEMORY_BUDGET`` (4 GiB, changed with
``set_default_memory_budget``) but never more than half the memory the device has available when
the call starts (Linux: MemAvailable; CUDA: free device memory; elsewhere the default alone; not
read at all for computations under 256 MiB, which fit anywhere attnviz runs). A
fixed default keeps results the same from one machine to the next; the cap keeps a computation
on a busy machine from taking what others are using.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP, joined, message

from .devices import resolve_dtype
from .errors import MemoryBudgetError
from .result import STAGES
from .scoring import get_scoring
from .validation import check_keep, check_memory_budget

#: The default budget of one computation, in bytes.
DEFAULT_MEMORY_BUDGET = 4 * 2**30
_default_budget: float = DEFAULT_MEMORY_BUDGET

#: Elements of one block of scores (rows x K): 1 Mi floats = 4 MiB, a few of which stay in the
#: L3 cache; smaller blocks cost more in per-operation overhead than they gain (measured).
BLOCK_ELEMENTS = 1 << 20
#: Elements of the largest temporary a scoring function may build per block (additive attention's
#: features): 16 Mi floats = 64 MiB in float32.
MAX_TEMP_ELEMENTS = 1 << 24
#: Block-sized temporaries alive at once: raw, scaled and masked scores, weights, the mask and
#: the bias of the block, a dropout mask, and the diagnostics' working copies.
_BLOCK_TEMPORARIES = 8

_MINIMAL_KEEP = ("weights", "output")
#: Below this a computation fits in any machine that runs attnviz: the available memory is not read.
_NOT_WORTH_ASKING = 256 * 2**20


def set_default_memory_budget(nbytes: float | None) -> None:
    """Set the process-wide default budget in bytes (None: back to ``DEFAULT_MEMORY_BUDGET``)."""
    global _default_budget
    checked = check_memory_budget(nbytes)
    _default_budget = DEFAULT_MEMORY_BUDGET if checked is None else checked


_scoped = threading.local()


@contextmanager
def memory_budget_scope(nbytes: float) -> Iterator[None]:
    """Within this block, on this thread only, the default budget is at most ``nbytes``: what a
    window's compute threads use, since the window keeps several copies of what a computation
    returns (its maps as pictures), while a script calling ``attend`` keeps the process default."""
    checked = check_memory_budget(nbytes)
    previous = getattr(_scoped, "budget", None)
    _scoped.budget = checked
    try:
        yield
    finally:
        _scoped.budget = previous


def default_budget() -> float:
    """The default budget on this thread: the process-wide one, or a lower scoped one."""
    scoped = getattr(_scoped, "budget", None)
    return _default_budget if scoped is None else min(scoped, _default_budget)


def available_memory(device: torch.device) -> int | None:
    """Bytes the device can still give, when this system says: None where it cannot be known."""
    if device.type == "cuda":
        try:
            return int(torch.cuda.mem_get_info(device)[0])
        except (RuntimeError, AssertionError):
            return None
    if device.type != "cpu":
        return None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def budget_for(device: torch.device, requested: float | None = None) -> float:
    """The budget of one computation on ``device``: ``requested`` if given, else the default
    capped at half the memory available now."""
    return _budget_and_cap(device, requested)[0]


def _budget_and_cap(device: torch.device, requested: float | None) -> tuple[float, int | None]:
    """The budget, and the memory available now when that is what limits it (else None)."""
    if requested is not None:
        return requested, None
    available = available_memory(device)
    default = default_budget()
    if available is None or available / 2 >= default:
        return default, None
    return available / 2, available


def enforce_budget(estimate: MemoryEstimate, device: torch.device, requested: float | None = None) -> None:
    """``check_memory`` against ``budget_for(device, requested)``; asks the system what is available
    only for a computation big enough for it to matter (reading it costs as much as computing a
    small input, which the app does on every edit)."""
    limit = default_budget() if requested is None else requested
    if estimate.total <= limit and (requested is not None or estimate.total <= _NOT_WORTH_ASKING):
        return
    check_memory(estimate, *_budget_and_cap(device, requested))


def format_bytes(n: float) -> str:
    """1.5 GiB, 640 MiB, 12 KiB: binary units, three significant digits at most."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} bytes"


@dataclass(frozen=True)
class MemoryEstimate:
    """What one computation will hold at its peak, in bytes.

    ``stages`` has the bytes of each distinct stage tensor kept (shared stages count once: without
    a scale ``raw_scores`` is ``scores``, without a mask ``masked_scores`` is ``scores``, without
    dropout ``applied_weights`` is ``weights``); ``other`` the output, inputs, parameters,
    diagnostics and block temporaries. ``per_batch`` is the share of one batch element (the first
    leading dimension): everything scales with the batch but the block temporaries.
    """

    lead: tuple[int, ...]
    n_queries: int
    n_keys: int
    stages: dict[str, int]
    other: int
    temporaries: int

    @property
    def total(self) -> int:
        return sum(self.stages.values()) + self.other

    @property
    def stage_bytes(self) -> int:
        """Bytes of one float stage, (..., L_q, L_k)."""
        return self.stages["weights"]

    def total_keeping(self, names: Iterable[str]) -> int:
        """The total if only ``names`` (and weights, output) were kept."""
        wanted = set(names) | set(_MINIMAL_KEEP)
        return sum(size for name, size in self.stages.items() if name in wanted) + self.other

    def max_batch(self, budget: float, names: Iterable[str] | None = None) -> int:
        """The largest batch (first leading dimension) that fits in ``budget``."""
        total = self.total if names is None else self.total_keeping(names)
        per_batch = (total - self.temporaries) / self.lead[0]
        return max(0, int((budget - self.temporaries) // per_batch)) if per_batch > 0 else self.lead[0]


def estimate_memory(
    query_shape: Sequence[int],
    key_shape: Sequence[int],
    value_shape: Sequence[int],
    *,
    dtype: str | torch.dtype = torch.float32,
    keep: str | Iterable[str] = "all",
    scoring: str = "scaled_dot",
    masked: bool = False,
    modified: bool = False,
    dropout: float = 0.0,
    train: bool = False,
    num_hiddens: int = 8,
    scale: float | None = None,
    mask_bytes: int = 0,
) -> MemoryEstimate:
    """Estimate the peak memory of ``attend`` on inputs of these shapes, without any tensor.

    ``masked``: some mask is given (then ``mask`` and ``masked_scores`` are stages of their own).
    ``modified``: score terms are given (then ``modified_scores`` is a stage of its own).
    ``mask_bytes``: bytes of the mask tensors after conversion to the compute dtype (optional).
    Keys and values may have fewer heads than the queries (grouped-query attention): they are
    counted as repeated to the queries' heads, as ``attend`` repeats them.
    """
    fn = get_scoring(scoring)
    kept = check_keep(keep)
    element = torch.finfo(resolve_dtype(dtype)).bits // 8
    lead = tuple(int(s) for s in query_shape[:-2])
    n_q, d_q = int(query_shape[-2]), int(query_shape[-1])
    n_k, d_k, d_v = int(key_shape[-2]), int(key_shape[-1]), int(value_shape[-1])
    n = math.prod(lead)
    cells = n * n_q * n_k
    scaled = scale is not None or fn.scale(d_q) is not None
    distinct = {
        "raw_scores": scaled,
        "scores": True,
        "modified_scores": modified,
        "mask": masked,
        "masked_scores": masked,
        "weights": True,
        "applied_weights": train and dropout > 0,
    }
    stages = {
        name: cells * (1 if name == "mask" else element)
        for name in STAGES
        if name != "output" and distinct[name] and (name in kept or name == "weights")
    }
    hidden = num_hiddens if "w_v" in fn.param_shapes(d_q, d_k, num_hiddens) else 1
    block = min(cells, BLOCK_ELEMENTS)
    temporaries = _BLOCK_TEMPORARIES * block * max(element, 4)
    if fn.work_per_row(1, n_k, d_q, d_k, hidden) > n_k:
        temporaries += min(n * n_q * fn.work_per_row(1, n_k, d_q, d_k, hidden), MAX_TEMP_ELEMENTS) * element
    params = sum(math.prod(s) for s in fn.param_shapes(d_q, d_k, num_hiddens).values()) * (4 + element)
    inputs = (n * n_q * d_q + n * n_k * (d_k + d_v)) * element
    per_row = n * n_q * (3 * max(element, 4) + 3)  # row sums, entropy, largest weight; three bool flags
    output = n * n_q * d_v * element
    return MemoryEstimate(
        lead, n_q, n_k, stages, output + inputs + params + per_row + mask_bytes + temporaries, temporaries
    )


def check_memory(estimate: MemoryEstimate, budget: float, available: int | None = None) -> None:
    """Raise ``MemoryBudgetError`` when ``estimate`` is over ``budget``, saying what would fit.

    ``available``: the memory available now, when half of it is what set the budget (the message
    then says so: the same computation may fit once other programs let memory go).
    """
    if estimate.total <= budget:
        return
    kept = [name for name in STAGES if name in estimate.stages] + ["output"]
    advice: list[str] = []
    minimal = estimate.total_keeping(())
    if set(estimate.stages) - set(_MINIMAL_KEEP) and minimal <= budget:
        advice.append(
            message(
                QT_TRANSLATE_NOOP("Errors", "keep fewer stages: keep=('weights', 'output') needs about {size}"),
                size=format_bytes(minimal),
            )
        )
    batch = estimate.lead[0]
    if batch > 1:
        fits = estimate.max_batch(budget)
        fits_minimal = estimate.max_batch(budget, ())
        if fits >= 1:
            advice.append(
                message(
                    QT_TRANSLATE_NOOP("Errors", "a smaller batch: {fits} of the {batch} at a time"),
                    fits=fits,
                    batch=batch,
                )
            )
        elif fits_minimal >= 1:
            advice.append(
                message(
                    QT_TRANSLATE_NOOP(
                        "Errors",
                        "a smaller batch with fewer stages: {fits} of the "
                        "{batch} at a time with keep=('weights', 'output')",
                    ),
                    fits=fits_minimal,
                    batch=batch,
                )
            )
    advice.append(
        QT_TRANSLATE_NOOP(
            "Errors", "the long-context overview, which summarises long inputs without holding their full matrices"
        )
    )
    advice.append(QT_TRANSLATE_NOOP("Errors", "a larger memory_budget= (bytes)"))
    limit = _limit_text(budget, available)
    raise MemoryBudgetError(
        message(
            QT_TRANSLATE_NOOP(
                "Errors",
                "attention of shape {shape} keeping {kept} needs about {needed} (one float stage is {stage}), more "
                "than the memory budget of {budget}. What would fit: {advice}",
            ),
            shape=(*estimate.lead, estimate.n_queries, estimate.n_keys),
            kept=", ".join(kept),
            needed=format_bytes(estimate.total),
            stage=format_bytes(estimate.stage_bytes),
            budget=limit,
            advice=joined(advice, "; "),
        ),
        estimate.total,
        int(budget),
    )


def _limit_text(budget: float, available: int | None) -> str:
    return (
        format_bytes(budget)
        if available is None
        else message(
            QT_TRANSLATE_NOOP("Errors", "{budget} (half of the {available} of memory available now)"),
            budget=format_bytes(budget),
            available=format_bytes(available),
        )
    )


def enforce_work_budget(
    what: str,
    shape: tuple[int, ...],
    per_batch: float,
    fixed: float,
    device: torch.device,
    requested: float | None = None,
) -> None:
    """The budget check of a computation other than ``attend`` (a lab's), before it allocates.

    It needs ``fixed`` bytes plus ``per_batch`` bytes per batch element (``shape[0]``);
    ``what`` (a marked text) names it in the ``MemoryBudgetError``, which says, as ``attend``'s
    does, the size, the budget and what would fit. The budget is ``budget_for(device, requested)``.
    """
    batch = int(shape[0])
    needed = fixed + per_batch * batch
    limit = default_budget() if requested is None else requested
    if needed <= limit and (requested is not None or needed <= _NOT_WORTH_ASKING):
        return
    budget, available = _budget_and_cap(device, requested)
    if needed <= budget:
        return
    advice: list[str] = []
    fits = int((budget - fixed) // per_batch) if per_batch > 0 else batch
    if batch > 1 and fits >= 1:
        advice.append(
            message(
                QT_TRANSLATE_NOOP("Errors", "a smaller batch: {fits} of the {batch} at a time"), fits=fits, batch=batch
            )
        )
    advice.append(QT_TRANSLATE_NOOP("Errors", "fewer queries or keys"))
    advice.append(QT_TRANSLATE_NOOP("Errors", "a larger memory_budget= (bytes)"))
    raise MemoryBudgetError(
        message(
            QT_TRANSLATE_NOOP(
                "Errors",
                "{what} on inputs of shape {shape} needs about {needed}, more than the memory budget of {budget}. "
                "What would fit: {advice}",
            ),
            what=what,
            shape=shape,
            needed=format_bytes(needed),
            budget=_limit_text(budget, available),
            advice=joined(advice, "; "),
        ),
        int(needed),
        int(budget),
    )
