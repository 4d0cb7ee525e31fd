"""What every invariance check shares: the subject (a model and its inputs, as the checks read
them), the interface of a check, one run under capture, and where two runs part (``Gap``) on
aligned rows, said as a finding.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from attnviz.capture import Capture, CapturedCall, capture
from attnviz.capture.calls import difference
from attnviz.capture.doctor import Finding, number_ranges
from attnviz.capture.model_arguments import model_arguments
from attnviz.compare.intervene import main_output, run_model
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "Aligned",
    "Gap",
    "InvarianceArgumentError",
    "InvarianceCheck",
    "InvarianceFinding",
    "Run",
    "Subject",
    "UserCodeError",
    "call_weights",
    "find_gap",
    "first_gap",
    "gap_finding",
    "output_gap",
    "real_rows",
    "recorded_calls",
    "run_captured",
    "run_user",
]


class InvarianceArgumentError(ValueError):
    """An argument of :func:`check_invariance` that it cannot take (a check, dtype or
    implementation it does not know), as opposed to what the model raised while running."""


class UserCodeError(Exception):
    """The model raised while a check ran it: ``error`` is what it raised (any exception,
    ``SystemExit`` and ``GeneratorExit`` included, but not ``KeyboardInterrupt``: Ctrl+C still
    stops), ``site`` where ("forward")."""

    def __init__(self, site: str, error: BaseException) -> None:
        super().__init__(f"{site}: {type(error).__name__}: {error}")
        self.site = site
        self.error = error


def run_user(site: str, call: Callable[[], Any]) -> Any:
    """``call()``, its failures as :class:`UserCodeError` (an interrupt passes through)."""
    try:
        return call()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - sys.exit(0) in a model must not end the check as a pass
        raise UserCodeError(site, exc) from exc


class InvarianceFinding(Finding):
    """A :class:`Finding` whose ``call`` is -1 where only the model's output differs."""

    @property
    def where(self) -> str:
        if self.call >= 0:
            return super().where
        parts: list[str] = [QT_TRANSLATE_NOOP("Invariance", "the model's output")]
        if self.batch:
            parts.append(message(QT_TRANSLATE_NOOP("Doctor", "batch {list}"), list=number_ranges(self.batch)))
        if self.rows:
            parts.append(message(QT_TRANSLATE_NOOP("Invariance", "positions {list}"), list=number_ranges(self.rows)))
        return ", ".join(parts)


class Subject:
    """The model and its inputs as every check reads them: the tolerance, the pad token, the
    forward's parameters and KV-cache argument, the real tokens (``mask``: the inputs'
    ``attention_mask``, else every token) and whether the model is an encoder-decoder."""

    def __init__(self, model: torch.nn.Module, inputs: dict[str, Any], tol: float, pad_token_id: int | None) -> None:
        self.model = model
        self.inputs = inputs
        self.tol = tol
        config = getattr(model, "config", None)
        self.config = config
        configured = getattr(config, "pad_token_id", None) if config is not None else None
        self.pad_id = pad_token_id if pad_token_id is not None else (configured if isinstance(configured, int) else 0)
        try:
            self.parameters = set(inspect.signature(model.forward).parameters)
        except (TypeError, ValueError):
            self.parameters = set()
        # The KV cache's name differs between versions (transformers 5.24: ``cache``).
        self.arguments = model_arguments(model)
        mask = inputs.get("attention_mask")
        ids = inputs.get("input_ids", inputs.get("inputs_embeds"))
        if isinstance(mask, torch.Tensor) and mask.dim() == 2:
            self.mask: torch.Tensor | None = mask.bool()
        elif isinstance(ids, torch.Tensor):
            self.mask = torch.ones(ids.shape[:2], dtype=torch.bool)
        else:
            self.mask = None
        self.encoder_decoder = bool(getattr(config, "is_encoder_decoder", False)) or "decoder_input_ids" in inputs

    def accepts(self, name: str) -> bool:
        """``forward`` takes ``name`` (by name or through ``**kwargs``)."""
        return name in self.parameters or "kwargs" in self.parameters


class InvarianceCheck(Subject):
    """One check: runs of the subject that must agree, compared on its real tokens. ``run()``
    gives the findings and, for a check that does not apply, a note that says why (and what to
    change). A check module adds one subclass; ``attnviz.compare.invariance`` composes them."""

    #: The check's name in ``CHECKS`` and on ``attnviz check``'s command line.
    name: ClassVar[str]

    def __init__(self, subject: Subject, names: Sequence[str] = ()) -> None:
        """``names``: what the check compares, where it takes a list (the dtypes, the
        implementations)."""
        # Not Subject.__init__: the subject is read once (its forward's signature, its cache
        # argument) and shared; each check sees its attributes as its own (``self.model``).
        vars(self).update(vars(subject))
        self.subject = subject
        self.names = names

    def _accepts(self, name: str) -> bool:
        return self.accepts(name)

    def run(self) -> tuple[list[Finding], str | None]:
        raise NotImplementedError


# ----------------------------------------------------------------------------- one run


@dataclass
class Run:
    calls: list[CapturedCall]
    output: torch.Tensor
    raw: Any


def run_captured(model: Any, inputs: dict[str, Any]) -> Run:
    with torch.no_grad(), capture(model) as cap:
        raw = run_user("forward", lambda: run_model(model, inputs))
    return Run(recorded_calls(cap), main_output(raw), raw)


def recorded_calls(cap: Capture) -> list[CapturedCall]:
    return [c for c in cap.calls if c.queries is not None or c.recorded_weights is not None]


@dataclass
class Aligned:
    """One batch element of one call of two runs, on the same rows and keys: ``reference`` and
    ``test`` (H, rows, keys) weights, ``rows`` their query positions in the checked batch."""

    batch: int
    reference: torch.Tensor
    test: torch.Tensor
    rows: Sequence[int]


@dataclass
class Gap:
    """Where two runs part in one call (or the output, ``index`` -1)."""

    index: int
    name: str
    largest: float
    heads: tuple[int, ...]
    batch: tuple[int, ...]
    rows: tuple[int, ...]
    count: int


def find_gap(index: int, name: str, pieces: Iterable[Aligned], tol: float) -> Gap | None:
    heads: set[int] = set()
    batches: set[int] = set()
    rows: set[int] = set()
    largest = 0.0
    count = 0
    for piece in pieces:
        diff = difference(piece.reference, piece.test)
        if diff.numel() == 0:
            continue
        # (H, rows) or (rows,): the largest difference of each.
        if diff.dim() >= 3:
            per_row = diff.reshape(*diff.shape[:2], -1).amax(dim=-1)
        else:  # (rows, values): an output without heads
            per_row = diff.reshape(diff.shape[0], -1).amax(dim=-1).unsqueeze(0)
        bad = per_row > tol
        if not bool(bad.any()):
            continue
        largest = max(largest, float(per_row.max()))
        batches.add(piece.batch)
        if diff.dim() >= 3:
            heads.update(int(h) for h in torch.nonzero(bad.any(dim=1)).flatten())
        flagged = torch.nonzero(bad.any(dim=0)).flatten().tolist()
        rows.update(int(piece.rows[i]) for i in flagged)
        count += len(flagged)
    if not batches:
        return None
    return Gap(index, name, largest, tuple(sorted(heads)), tuple(sorted(batches)), tuple(sorted(rows)), count)


def call_weights(call: CapturedCall) -> torch.Tensor | None:
    try:
        return call.weights().detach()
    except Exception:  # noqa: BLE001 - a call attnviz cannot recompute is compared by its output only
        return None


def first_gap(
    reference: Run,
    test: Run,
    align: Callable[[torch.Tensor, torch.Tensor, str], list[Aligned]],
    tol: float,
) -> Gap | None:
    """The first call (in the test run's order) whose weights or output differ on real tokens,
    matched by name; else the model's output."""
    ref_calls = {c.name: c for c in reference.calls}
    for index, call in enumerate(test.calls):
        partner = ref_calls.get(call.name)
        if partner is None:
            continue
        pieces: list[Aligned] = []
        w_test, w_ref = call_weights(call), call_weights(partner)
        if w_test is not None and w_ref is not None:
            pieces += align(w_ref, w_test, "weights")
        if call.output is not None and partner.output is not None:
            pieces += align(partner.output, call.output, "output")
        found = find_gap(index, call.name, pieces, tol)
        if found is not None:
            return found
    return None


def real_rows(real: torch.Tensor | None, b: int, n_rows: int) -> list[int]:
    if real is None or real.shape[1] != n_rows:
        return list(range(n_rows))
    return [int(i) for i in torch.nonzero(real[b]).flatten()]


def output_gap(ref: torch.Tensor, test: torch.Tensor, real: torch.Tensor | None, tol: float) -> Gap | None:
    if ref.shape != test.shape or ref.dim() < 2:
        return None
    pieces = []
    for b in range(test.shape[0]):
        rows = real_rows(real, b, test.shape[1])
        if rows:
            pieces.append(
                Aligned(b, ref[b, rows].reshape(1, len(rows), -1), test[b, rows].reshape(1, len(rows), -1), rows)
            )
    return find_gap(-1, "", pieces, tol)


def gap_finding(kind: str, gap: Gap, cause: str) -> Finding:
    heads = gap.heads if gap.index >= 0 else ()
    return InvarianceFinding(kind, "error", gap.index, gap.name, cause, heads, gap.batch, gap.rows, gap.count)
