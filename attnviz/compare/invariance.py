"""Invariance checks on a live model: two runs that must agree, compared on real tokens only.

    findings = attnviz.check_invariance(model, batch)            # every check that applies
    findings = attnviz.check_invariance(model, batch, checks=("padding", "kv_cache"))
    for f in findings:
        print(attnviz.capture.format_finding(f))
    findings.notes                                               # checks that did not apply, and why

How masking bugs are found in practice: not in one run, but in a difference between two runs
that must agree. Each check runs the model twice under a capture and compares, call by call,
the attention weights of real tokens (attnviz's recomputation of what each call was given) and
then the model's output:

* ``"padding"``: each sequence alone against its row in a batch padded on the right and on the
  left (the batch's real tokens, from its ``attention_mask``, re-padded with one pad more than the
  longest needs). A left-padding difference that adjusted ``position_ids`` removes is named so.
* ``"kv_cache"``: a full forward against a prefill, a one-token cached step and a several-token
  cached step (the KV cache: ``past_key_values``, ``cache`` on transformers 5.24); the steps' rows
  against the same rows of the full forward.
* ``"implementations"``: transformers' eager attention against SDPA (``set_attn_implementation``;
  ``implementations=`` adds others, such as "flex_attention").
* ``"dtype"``: float32 against bfloat16 and float16 (a copy of the model): which calls' rows go
  NaN or infinite where float32's are finite, and whether a mask's fill overflows to -inf.

Findings are the doctor's (:class:`attnviz.capture.Finding`): the first call where the runs part
(its heads, batch elements and query rows, in the checked batch's positions) and a sentence with
the likely cause and the fix; ``call`` is -1 where only the model's output differs. A check that
does not apply (no KV-cache argument, not a transformers model, ...) is skipped and said in
``notes``, in words that say what to change; ``attnviz check`` counts it as a warning.
"""

from __future__ import annotations

import copy
import functools
import inspect
import os
import sysconfig
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from attnviz.capture import Capture, CapturedCall, capture
from attnviz.capture.calls import difference
from attnviz.capture.doctor import Finding, number_ranges
from attnviz.capture.model_arguments import model_arguments
from attnviz.compare.failure_site import failure_text
from attnviz.compare.intervene import main_output, run_model
from attnviz.compare.invariance_causes import (
    active_dropout,
    computation_difference,
    listed,
    positions_moved,
    read_call_padding,
    recorded_allowed,
    same_keep,
    step_inputs_differ,
)
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "CHECKS",
    "Findings",
    "InvarianceArgumentError",
    "InvarianceFinding",
    "UserCodeError",
    "check_invariance",
    "check_names",
    "implementation_names",
    "user_frame",
]

CHECKS = ("determinism", "padding", "kv_cache", "implementations", "dtype")
#: float32 runs of one model on other batch shapes, kernels or cache layouts agree to ~1e-6.
DEFAULT_TOLERANCE = 1e-4
_SEQUENCE_KEYS = ("input_ids", "attention_mask", "token_type_ids", "position_ids", "inputs_embeds")


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


def user_frame(error: BaseException) -> str | None:
    """``file:line`` of the deepest frame of ``error``'s traceback in the user's code (outside
    attnviz, PyTorch, transformers and the standard library), None when there is none."""
    skipped = [os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.abspath(torch.__file__))]
    for key in ("stdlib", "platstdlib"):
        with_path = sysconfig.get_paths().get(key)
        if with_path:
            skipped.append(os.path.abspath(with_path))
    try:
        import transformers

        skipped.append(os.path.dirname(os.path.abspath(transformers.__file__)))
    except ImportError:
        pass
    found: str | None = None
    tb: types.TracebackType | None = error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not name.startswith("<") and not any(os.path.abspath(name).startswith(p + os.sep) for p in skipped):
            found = f"{name}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def implementation_names() -> tuple[str, ...]:
    """The attention implementations transformers knows here ("eager" and its registry's)."""
    try:
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    except ImportError:
        return ("eager", "sdpa")
    return ("eager", *(name for name in ALL_ATTENTION_FUNCTIONS.valid_keys() if name != "eager"))


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


class Findings(list[Finding]):
    """The findings, in check order; ``notes``: the checks skipped, and why."""

    def __init__(self, findings: Iterable[Finding] = (), notes: Sequence[str] = ()) -> None:
        super().__init__(findings)
        self.notes = list(notes)


def check_invariance(
    model: torch.nn.Module,
    inputs: dict[str, Any],
    checks: Sequence[str] = CHECKS,
    *,
    tol: float = DEFAULT_TOLERANCE,
    pad_token_id: int | None = None,
    dtypes: Sequence[str] = ("bfloat16", "float16"),
    implementations: Sequence[str] = ("eager", "sdpa"),
) -> Findings:
    """Run the ``checks`` (see the module's note) on ``model`` with ``inputs`` (its keyword
    arguments: a tokenizer's batch with ``input_ids`` and ``attention_mask``). ``tol``: the largest
    weight or output difference of float32 runs that counts as agreement. ``pad_token_id``: what
    pads (default: the model config's, else 0). ``dtypes``: the dtypes compared with float32.
    ``implementations``: transformers' attention implementations compared with SDPA (add
    "flex_attention" where the model has it: on the CPU it compiles, tens of seconds).

    Example::

        findings = attnviz.check_invariance(model, tokenizer(["a b", "c"], padding=True, return_tensors="pt"))
        print(findings)                      # one line per finding, as ``attnviz check`` prints them
    """
    unknown = [c for c in checks if c not in CHECKS]
    if isinstance(checks, str) or unknown:
        raise InvarianceArgumentError(
            message(
                QT_TRANSLATE_NOOP("Invariance", "checks: {given} is not among {known}"),
                given=repr(checks if isinstance(checks, str) else unknown[0]),
                known=", ".join(CHECKS),
            )
        )
    if not callable(model):
        raise TypeError(
            message(
                QT_TRANSLATE_NOOP("Invariance", "model must be a torch.nn.Module (a callable), not {type}"),
                type=type(model).__name__,
            )
        )
    if not isinstance(inputs, dict) and not (hasattr(inputs, "keys") and hasattr(inputs, "__getitem__")):
        raise TypeError(
            QT_TRANSLATE_NOOP(
                "Invariance", "inputs must be the model's keyword arguments (a dict, a tokenizer's batch)"
            )
        )
    check_names(dtypes, implementations, checks)
    inputs = dict(inputs)
    out = Findings()
    runner = _Runner(model, inputs, tol, pad_token_id)
    # Two identical runs first, whatever was asked: a model whose runs differ by themselves would
    # have every other check blame padding, caches or paths for its noise.
    noise = runner.check_determinism()
    if noise is not None:
        out.append(noise)
        rest = [c for c in checks if c != "determinism"]
        if rest:
            out.notes.append(
                message(
                    QT_TRANSLATE_NOOP(
                        "Invariance",
                        "{checks}: not checked (two identical runs of the model differ: every difference would be "
                        "that noise)",
                    ),
                    checks=", ".join(rest),
                )
            )
        return out
    for check in checks:
        if check == "determinism":
            continue
        if check == "dtype":
            found, note = runner.check_dtype(dtypes)
        elif check == "implementations":
            found, note = runner.check_implementations(implementations)
        else:
            method: Callable[[], tuple[list[Finding], str | None]] = getattr(runner, f"check_{check}")
            found, note = method()
        out.extend(found)
        if note:
            out.notes.append(note)
    return out


def check_names(dtypes: Sequence[str], implementations: Sequence[str], checks: Sequence[str]) -> None:
    """Refuse a dtype or implementation name before the model runs (not after minutes of checks)."""
    if "dtype" in checks:
        for name in dtypes:
            dtype = getattr(torch, name, None) if isinstance(name, str) else None
            if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
                raise InvarianceArgumentError(
                    message(QT_TRANSLATE_NOOP("Invariance", "dtypes: {name} is not a floating dtype"), name=repr(name))
                )
    if "implementations" in checks:
        known = implementation_names()
        if isinstance(implementations, str) or not implementations:
            bad: object = implementations
        else:
            bad = next((name for name in implementations if name not in known), None)
        if bad is not None:
            raise InvarianceArgumentError(
                message(
                    QT_TRANSLATE_NOOP("Invariance", "implementations: {name} is not one of {known}"),
                    name=repr(bad),
                    known=", ".join(known),
                )
            )


# ----------------------------------------------------------------------------- one run


@dataclass
class _Run:
    calls: list[CapturedCall]
    output: torch.Tensor
    raw: Any


def _run(model: Any, inputs: dict[str, Any]) -> _Run:
    with torch.no_grad(), capture(model) as cap:
        raw = run_user("forward", lambda: run_model(model, inputs))
    return _Run(_calls(cap), main_output(raw), raw)


def _calls(cap: Capture) -> list[CapturedCall]:
    return [c for c in cap.calls if c.queries is not None or c.recorded_weights is not None]


@dataclass
class _Aligned:
    """One batch element of one call of two runs, on the same rows and keys: ``reference`` and
    ``test`` (H, rows, keys) weights, ``rows`` their query positions in the checked batch."""

    batch: int
    reference: torch.Tensor
    test: torch.Tensor
    rows: Sequence[int]


@dataclass
class _Gap:
    """Where two runs part in one call (or the output, ``index`` -1)."""

    index: int
    name: str
    largest: float
    heads: tuple[int, ...]
    batch: tuple[int, ...]
    rows: tuple[int, ...]
    count: int


def _gap(index: int, name: str, pieces: Iterable[_Aligned], tol: float) -> _Gap | None:
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
    return _Gap(index, name, largest, tuple(sorted(heads)), tuple(sorted(batches)), tuple(sorted(rows)), count)


def _weights(call: CapturedCall) -> torch.Tensor | None:
    try:
        return call.weights().detach()
    except Exception:  # noqa: BLE001 - a call attnviz cannot recompute is compared by its output only
        return None


def _first_gap(
    reference: _Run,
    test: _Run,
    align: Callable[[torch.Tensor, torch.Tensor, str], list[_Aligned]],
    tol: float,
) -> _Gap | None:
    """The first call (in the test run's order) whose weights or output differ on real tokens,
    matched by name; else the model's output."""
    ref_calls = {c.name: c for c in reference.calls}
    for index, call in enumerate(test.calls):
        partner = ref_calls.get(call.name)
        if partner is None:
            continue
        pieces: list[_Aligned] = []
        w_test, w_ref = _weights(call), _weights(partner)
        if w_test is not None and w_ref is not None:
            pieces += align(w_ref, w_test, "weights")
        if call.output is not None and partner.output is not None:
            pieces += align(partner.output, call.output, "output")
        found = _gap(index, call.name, pieces, tol)
        if found is not None:
            return found
    return None


# ----------------------------------------------------------------------------- the checks


class _Runner:
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

    def _accepts(self, name: str) -> bool:
        return name in self.parameters or "kwargs" in self.parameters

    # ------------------------------------------------------------------------- determinism

    def check_determinism(self) -> Finding | None:
        """Two identical runs under capture: None when they agree, else the error naming why."""
        first, second = _run(self.model, self.inputs), _run(self.model, self.inputs)

        def align(ref: torch.Tensor, test: torch.Tensor, what: str) -> list[_Aligned]:
            if ref.shape != test.shape or ref.dim() < 3:
                return []
            return [_Aligned(b, ref[b], test[b], list(range(test.shape[-2]))) for b in range(test.shape[0])]

        gap = _first_gap(first, second, align, self.tol) or _output_gap(first.output, second.output, None, self.tol)
        if gap is None:
            return None
        dropout = active_dropout(self.model, second.calls)
        if dropout:
            text = message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "two identical runs of the model differ (largest difference {largest:.3g}): the model is in "
                    "training mode and dropout is active in {modules}, so its attention is random; call model.eval() "
                    "before inference (the other checks were not run: they would blame this noise on padding, caches "
                    "or paths)",
                ),
                largest=gap.largest,
                modules=listed(dropout),
            )
        else:
            text = message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "two identical runs give different results (largest difference {largest:.3g}) though no dropout "
                    "is active{training}: something random or stateful runs (sampling, a non-deterministic kernel, "
                    "state kept between calls); the other checks were not run",
                ),
                largest=gap.largest,
                training=QT_TRANSLATE_NOOP("Invariance", " (the model is in training mode)")
                if self.model.training
                else "",
            )
        return _finding("determinism", gap, text)

    # ------------------------------------------------------------------------- padding

    def check_padding(self) -> tuple[list[Finding], str | None]:
        mask = self.mask
        if mask is None or "attention_mask" not in self.parameters:
            return [], QT_TRANSLATE_NOOP(
                "Invariance", "padding: not checked (the model takes no attention_mask, or the inputs no input_ids)"
            )
        real = [torch.nonzero(row).flatten() for row in mask]
        # The batch as given first: each call's mask read against the padding its attention mask
        # shows (both ways), then each sequence alone against its row of it.
        given = _run(self.model, self.inputs)  # a model that fails on its own batch is not a finding
        read = self._read_given(given)
        if read is not None:
            return [read], None
        alone: list[_Run] = []
        for b, idx in enumerate(real):
            single, failed = self._attempt(
                self._alone(b, idx), message(QT_TRANSLATE_NOOP("Invariance", "batch element {b} alone"), b=b)
            )
            if failed is not None:
                return [failed], None
            assert single is not None
            alone.append(single)
        gap = self._padding_gap(alone, given, real, mask.shape[1])
        if gap is not None:
            return [_finding("padding", gap, self._given_cause(real, alone, gap))], None
        length = max(len(idx) for idx in real) + 1
        findings: list[Finding] = []
        for side in ("right", "left"):
            batch, positions = self._padded(real, length, side, adjust_positions="position_ids" in self.inputs)
            padded, failed = self._attempt(
                batch, message(QT_TRANSLATE_NOOP("Invariance", "the batch padded on the {side}"), side=side)
            )
            if failed is not None:
                findings.append(failed)
                continue
            assert padded is not None
            gap = self._padding_gap(alone, padded, positions, length)
            if gap is None:
                continue
            cause = self._padding_cause(side, real, length, alone, gap, padded, positions)
            findings.append(_finding("padding", gap, cause))
        return findings, None

    def _attempt(self, inputs: dict[str, Any], what: str) -> tuple[_Run | None, Finding | None]:
        """A run under capture, or the error of a model that fails on these inputs."""
        try:
            return _run(self.model, inputs), None
        except Exception as exc:  # noqa: BLE001 - a model that fails on a sequence alone is a finding
            return None, InvarianceFinding("padding", "error", -1, "", failure_text(self.model, exc, what, inputs))

    def _sides(self, call: CapturedCall) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
        """(real queries, real keys, key token ids) of ``call`` as the inputs' attention masks
        give them: a cross-attention call's keys are the encoder's, its queries the decoder's."""
        encoder_real, ids = self.mask, self.inputs.get("input_ids")
        if not self.encoder_decoder:
            return encoder_real, encoder_real, ids
        decoder_mask = self.inputs.get("decoder_attention_mask")
        decoder_ids = self.inputs.get("decoder_input_ids")
        decoder_real = decoder_mask.bool() if isinstance(decoder_mask, torch.Tensor) else None
        if call.cross:
            return decoder_real, encoder_real, ids
        if call.encoder:
            return encoder_real, encoder_real, ids
        return decoder_real, decoder_real, decoder_ids

    def _read_given(self, given: _Run) -> Finding | None:
        """The first call of the batch as given whose mask does not follow its attention mask."""
        for index, call in enumerate(given.calls):
            real_q, real_k, ids = self._sides(call)
            if real_k is None or bool(real_k.all()):
                continue  # no padding: nothing to read the mask against
            reading = read_call_padding(call, real_q, real_k, ids if isinstance(ids, torch.Tensor) else None)
            if reading is not None:
                return InvarianceFinding(
                    "padding",
                    "error",
                    index,
                    call.name,
                    message(
                        QT_TRANSLATE_NOOP("Invariance", "in the batch as given, against its attention mask: {text}"),
                        text=reading.text,
                    ),
                    reading.heads,
                    reading.batch,
                    reading.rows,
                    reading.count,
                )
        return None

    def _given_cause(self, real: list[torch.Tensor], alone: list[_Run], gap: _Gap) -> str:
        """Why the batch as given differs from its sequences alone, its masks having been read
        right: its positions (tried: the batch again with each sequence's own positions), else
        said as found."""
        length = self.mask.shape[1] if self.mask is not None else 0
        given_positions = self.inputs.get("position_ids")
        if self._accepts("position_ids") and self.mask is not None:
            own = (self.mask.long().cumsum(-1) - 1).clamp(min=0)
            retry, failed = self._attempt({**self.inputs, "position_ids": own}, "")
            if failed is None and retry is not None and self._padding_gap(alone, retry, real, length) is None:
                b = gap.batch[0] if gap.batch else 0
                first = int(real[b][0]) if len(real[b]) else 0
                if isinstance(given_positions, torch.Tensor):
                    at = int(given_positions[b, first]) if given_positions.dim() == 2 else first
                    return message(
                        QT_TRANSLATE_NOOP(
                            "Invariance",
                            "the batch's position_ids are not each sequence's own: batch element {b}'s first real "
                            "token is at position {at} in the batch and at 0 alone (position_ids counted over the "
                            "pads, such as arange over a left-padded batch); with each sequence's own positions "
                            "the batch agrees with every sequence alone, so its masks were ruled out; pass "
                            "position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)",
                        ),
                        b=b,
                        at=at,
                    )
                return message(
                    QT_TRANSLATE_NOOP(
                        "Invariance",
                        "the batch's positions were not adjusted to its padding: batch element {b}'s first real "
                        "token is at position {at} in the batch and at 0 alone; with each sequence's own positions "
                        "the batch agrees with every sequence alone, so its masks were ruled out; pass "
                        "position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0), as generate() does",
                    ),
                    b=b,
                    at=first,
                )
        return QT_TRANSLATE_NOOP(
            "Invariance",
            "these sequences attend differently in the batch as given than alone, though each call's mask follows "
            "the attention mask: something other than the mask depends on the padding (positions, a pad token's "
            "embedding reaching real tokens); compare this call in both runs (attnviz.compare)",
        )

    def _decoder_side(self, key: str) -> bool:
        """An input of an encoder-decoder's decoder: never re-padded as the encoder's text, even
        when its shape is the encoder's."""
        return self.encoder_decoder and key.startswith("decoder_")

    def _alone(self, b: int, idx: torch.Tensor) -> dict[str, Any]:
        out: dict[str, Any] = {}
        shape = self.mask.shape if self.mask is not None else None
        for key, value in self.inputs.items():
            if (
                isinstance(value, torch.Tensor)
                and value.dim() >= 2
                and shape is not None
                and tuple(value.shape[:2]) == tuple(shape)
                and not self._decoder_side(key)
            ):
                row = value[b : b + 1, idx]
                if key == "position_ids":
                    row = torch.arange(len(idx)).unsqueeze(0)
                out[key] = row
            elif (
                isinstance(value, torch.Tensor)
                and value.dim() >= 1
                and shape is not None
                and value.shape[0] == shape[0]
            ):
                out[key] = value[b : b + 1]
            else:
                out[key] = value
        return out

    def _padded(
        self, real: list[torch.Tensor], length: int, side: str, *, adjust_positions: bool
    ) -> tuple[dict[str, Any], list[torch.Tensor]]:
        """The batch re-padded on ``side`` to ``length``, and each row's real positions in it."""
        shape = self.mask.shape if self.mask is not None else None
        rows = len(real)
        positions = [
            torch.arange(len(idx)) if side == "right" else torch.arange(length - len(idx), length) for idx in real
        ]
        out: dict[str, Any] = {}
        for key, value in self.inputs.items():
            if not (
                isinstance(value, torch.Tensor)
                and value.dim() >= 2
                and shape is not None
                and tuple(value.shape[:2]) == tuple(shape)
                and not self._decoder_side(key)
            ):
                out[key] = value
                continue
            fill = self.pad_id if key == "input_ids" else 0
            new = torch.full((rows, length, *value.shape[2:]), fill, dtype=value.dtype)
            for b, idx in enumerate(real):
                new[b, positions[b]] = value[b, idx]
            out[key] = new
        keep = torch.zeros(rows, length, dtype=torch.long)
        for b in range(rows):
            keep[b, positions[b]] = 1
        out["attention_mask"] = (
            keep.to(self.inputs["attention_mask"].dtype) if "attention_mask" in self.inputs else keep
        )
        if adjust_positions:
            out["position_ids"] = (keep.cumsum(-1) - 1).clamp(min=0)
        return out, positions

    def _padding_gap(self, alone: list[_Run], padded: _Run, positions: list[torch.Tensor], length: int) -> _Gap | None:
        gap: _Gap | None = None
        pieces_by_call: dict[str, list[_Aligned]] = {}
        order: list[str] = []
        # The padded batch's weights, recomputed once per call (each sequence alone is compared
        # with its row of them).
        padded_weights: dict[int, torch.Tensor | None] = {}
        for b, single in enumerate(alone):
            pos = positions[b]
            n = len(pos)

            def align(
                ref: torch.Tensor, test: torch.Tensor, what: str, b: int = b, pos: torch.Tensor = pos, n: int = n
            ) -> list[_Aligned]:
                r = ref[0]
                t = _select(test[b], -2, pos, length, n)
                if what == "weights":
                    t = _select(t, -1, pos, length, n)
                if t.shape != r.shape:
                    return []
                rows = pos.tolist() if test.shape[-2] == length and n != length else list(range(t.shape[-2]))
                return [_Aligned(b, r, t, rows)]

            ref_calls = {c.name: c for c in single.calls}
            for call in padded.calls:
                partner = ref_calls.get(call.name)
                if partner is None:
                    continue
                if call.name not in pieces_by_call:
                    order.append(call.name)
                    pieces_by_call[call.name] = []
                if id(call) not in padded_weights:
                    padded_weights[id(call)] = _weights(call)
                w_test, w_ref = padded_weights[id(call)], _weights(partner)
                if w_test is not None and w_ref is not None:
                    pieces_by_call[call.name] += align(w_ref, w_test, "weights")
                if call.output is not None and partner.output is not None:
                    pieces_by_call[call.name] += align(partner.output, call.output, "output")
        names = [c.name for c in padded.calls]
        for name in order:
            found = _gap(names.index(name), name, pieces_by_call[name], self.tol)
            if found is not None:
                return found
        pieces: list[_Aligned] = []
        for b, single in enumerate(alone):
            pos = positions[b]
            out = padded.output[b]
            if (
                out.dim() >= 1
                and out.shape[0] == length
                and single.output.shape[1] == len(pos)
                and not self.encoder_decoder
            ):
                out = out[pos]
                rows = pos.tolist()
            else:
                rows = list(range(out.shape[0])) if out.dim() >= 1 else [0]
            ref = single.output[0]
            if out.shape == ref.shape:
                pieces.append(
                    _Aligned(
                        b,
                        ref.reshape(ref.shape[0], -1) if ref.dim() > 1 else ref.unsqueeze(-1),
                        out.reshape(out.shape[0], -1) if out.dim() > 1 else out.unsqueeze(-1),
                        rows,
                    )
                )
        gap = _gap(-1, "", pieces, self.tol)
        return gap

    def _padding_cause(
        self,
        side: str,
        real: list[torch.Tensor],
        length: int,
        alone: list[_Run],
        gap: _Gap,
        padded: _Run,
        positions: list[torch.Tensor],
    ) -> str:
        if side == "left" and "position_ids" not in self.inputs and self._accepts("position_ids"):
            batch, _ = self._padded(real, length, side, adjust_positions=True)
            if self._padding_gap(alone, _run(self.model, batch), positions, length) is None:
                return message(
                    QT_TRANSLATE_NOOP(
                        "Invariance",
                        "left padding changes these sequences: their positions were not adjusted (a left-padded "
                        "row's first real token is at position {first}, alone at 0); pass position_ids = "
                        "(attention_mask.cumsum(-1) - 1).clamp(min=0), as generate() does",
                    ),
                    first=int(positions[gap.batch[0]][0]) if gap.batch else 1,
                )
        if gap.index >= 0:
            call = padded.calls[gap.index]
            keep = recorded_allowed(call)
            b = gap.batch[0]
            pos = positions[b]
            pads = torch.ones(keep.shape[-1], dtype=torch.bool)
            if keep.shape[-1] == length:
                pads[pos] = False
                rows = pos if keep.shape[-2] == length else torch.arange(keep.shape[-2])
                if bool(keep[b][:, rows][..., pads].any()):
                    return message(
                        QT_TRANSLATE_NOOP(
                            "Invariance",
                            "the padding is not masked here: real tokens attend to the {side} padding; pass the "
                            "attention_mask to this call (a mask lost, inverted or built for the other side)",
                        ),
                        side=side,
                    )
            # Adjusted positions were tried above on the left: a model that still moves ignores them.
            tried = side == "left" and "position_ids" not in self.inputs
            takes = self._accepts("position_ids") and not tried
            moved = positions_moved(call, alone[b].calls, b, pos, self.tol, takes, side)
            if moved is not None:
                return moved
        return message(
            QT_TRANSLATE_NOOP(
                "Invariance",
                "these sequences attend differently when padded on the {side} than alone: the mask or the "
                "positions depend on the padding; compare this call's mask in both runs (attnviz.compare)",
            ),
            side=side,
        )

    # ------------------------------------------------------------------------- KV cache

    def check_kv_cache(self) -> tuple[list[Finding], str | None]:
        step_key = "decoder_input_ids" if self.encoder_decoder else "input_ids"
        ids = self.inputs.get(step_key)
        cache_name = self.arguments.cache
        if cache_name is None:
            return [], message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "kv_cache: not checked: {model}.forward takes no KV-cache argument (past_key_values, cache, "
                    "past, ...); check a model that generates with a cache, or leave kv_cache out of the checks",
                ),
                model=type(self.model).__name__,
            )
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2:
            return [], message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "kv_cache: not checked: the inputs hold no {key} (batch, tokens) to step through; pass the "
                    "token ids as {key}",
                ),
                key=step_key,
            )
        length = ids.shape[1]
        if length < 4:
            return [], QT_TRANSLATE_NOOP(
                "Invariance",
                "kv_cache: not checked: fewer than 4 tokens to step through (a prefill and two steps); pass a "
                "longer batch",
            )
        prefill = length - 3
        full = _run(self.model, {**self.inputs, "use_cache": False})
        mask_key = "decoder_attention_mask" if self.encoder_decoder else "attention_mask"
        real = self.inputs.get(mask_key)
        real_rows = real.bool() if isinstance(real, torch.Tensor) else torch.ones(ids.shape, dtype=torch.bool)
        findings: list[Finding] = []
        past: Any = None
        with torch.no_grad():
            for start, stop in ((0, prefill), (prefill, prefill + 1), (prefill + 1, length)):
                given = self._step(step_key, mask_key, start, stop, cache_name, past)
                with capture(self.model) as cap:
                    raw = run_user("forward", functools.partial(run_model, self.model, given))
                past = self.arguments.returned_cache(raw)
                if start == 0:
                    if past is None:
                        return [], message(
                            QT_TRANSLATE_NOOP(
                                "Invariance",
                                "kv_cache: not checked: the model returned no cache with use_cache=True (its {name} "
                                "argument had nothing to take); switch its cache on (config.use_cache)",
                            ),
                            name=cache_name,
                        )
                    continue
                step = _Run(_calls(cap), main_output(raw), raw)
                gap = _first_gap(full, step, self._step_align(start, stop, length, real_rows), self.tol)
                if gap is None:
                    gap = self._step_output_gap(full, step, start, stop, real_rows)
                if gap is not None:
                    cause = self._kv_cause(step, gap, stop - start, full, start, real_rows)
                    findings.append(_finding("kv_cache", gap, cause))
                    break
        return findings, None

    def _step(self, step_key: str, mask_key: str, start: int, stop: int, cache_name: str, past: Any) -> dict[str, Any]:
        given = dict(self.inputs)
        given[step_key] = self.inputs[step_key][:, start:stop]
        for key in (mask_key,):
            value = self.inputs.get(key)
            if isinstance(value, torch.Tensor):
                given[key] = value[:, :stop]
        if not self.encoder_decoder:
            for key in ("position_ids", "token_type_ids"):
                value = self.inputs.get(key)
                if isinstance(value, torch.Tensor):
                    given[key] = value[:, start:stop]
        given["use_cache"] = True
        if past is not None:
            given[cache_name] = past
        return given

    @staticmethod
    def _step_align(
        start: int, stop: int, length: int, real: torch.Tensor
    ) -> Callable[[torch.Tensor, torch.Tensor, str], list[_Aligned]]:
        def align(ref: torch.Tensor, test: torch.Tensor, what: str) -> list[_Aligned]:
            if test.shape[-2] != stop - start or ref.shape[-2] != length:
                return []
            r = ref[..., start:stop, :]
            if what == "weights" and test.shape[-1] == stop and ref.shape[-1] == length:
                r = r[..., :stop]
            if r.shape != test.shape:
                return []
            pieces = []
            for b in range(test.shape[0]):
                rows = [i for i in range(start, stop) if bool(real[b, i])]
                if rows:
                    keep = torch.tensor([i - start for i in rows])
                    pieces.append(_Aligned(b, r[b][:, keep], test[b][:, keep], rows))
            return pieces

        return align

    def _step_output_gap(self, full: _Run, step: _Run, start: int, stop: int, real: torch.Tensor) -> _Gap | None:
        ref, test = full.output, step.output
        if ref.dim() < 2 or test.dim() < 2 or test.shape[1] != stop - start:
            return None
        pieces = []
        for b in range(test.shape[0]):
            rows = [i for i in range(start, stop) if bool(real[b, i])]
            if rows:
                r = ref[b, rows].reshape(len(rows), -1)
                t = test[b, [i - start for i in rows]].reshape(len(rows), -1)
                pieces.append(_Aligned(b, r.unsqueeze(0), t.unsqueeze(0), rows))
        return _gap(-1, "", pieces, self.tol)

    def _kv_cause(self, step: _Run, gap: _Gap, tokens: int, full: _Run, start: int, real: torch.Tensor) -> str:
        if gap.index < 0:
            return message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "a cached step of {tokens} token(s) gives another output than the full forward, though every "
                    "attention call agrees: look at the positions (cache_position, position_ids) of the step",
                ),
                tokens=tokens,
            )
        call = step.calls[gap.index]
        partner = next((c for c in full.calls if c.name == call.name), None)
        moved = None if partner is None else step_inputs_differ(call, partner, start, start + tokens, real)
        if moved is not None and max(moved) > self.tol:
            return self._positions_cause(call, partner, moved, tokens, start, real)
        ruled_out = (
            QT_TRANSLATE_NOOP(
                "Invariance",
                " (positions ruled out: the step's queries and keys equal the full forward's at the same positions)",
            )
            if moved is not None
            else ""
        )
        n_q, n_k = call.shape[2], call.shape[3]
        if call.is_causal and n_q != n_k:
            return message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "a cached step of {tokens} token(s) differs from the full forward: is_causal=True aligns the "
                    "causal mask top-left when the {queries} queries are fewer than the {keys} keys (SDPA), so "
                    "the new tokens cannot see the cached past; pass a mask aligned bottom-right instead{ruled_out}",
                ),
                tokens=tokens,
                queries=n_q,
                keys=n_k,
                ruled_out=ruled_out,
            )
        return message(
            QT_TRANSLATE_NOOP(
                "Invariance",
                "a cached step of {tokens} token(s) attends differently from the full forward: its mask hides "
                "cached keys or shows later ones; build the step's mask over the cache's length, aligned "
                "bottom-right{ruled_out}",
            ),
            tokens=tokens,
            ruled_out=ruled_out,
        )

    def _positions_cause(
        self,
        call: CapturedCall,
        partner: CapturedCall | None,
        moved: tuple[float, float],
        tokens: int,
        start: int,
        real: torch.Tensor,
    ) -> str:
        """The step's queries or keys differ from the full forward's at the same positions: the
        positions are at fault; whether its mask was also right is said (ruled out, or not)."""
        rows = real[:, start : start + tokens]
        mask_same = None
        if partner is not None:
            try:
                keep_step, keep_full = recorded_allowed(call), recorded_allowed(partner)[..., start : start + tokens, :]
                if keep_step.shape[-1] <= keep_full.shape[-1]:
                    keep_full = keep_full[..., : keep_step.shape[-1]]
                    # A step's mask is read bottom-right even when it came as is_causal (top-left).
                    if call.is_causal and keep_step.shape[-2] < keep_step.shape[-1]:
                        mask_same = None
                    elif keep_step.shape == keep_full.shape:
                        pick = rows[:, None, :, None]
                        mask_same = bool(((keep_step == keep_full) | ~pick).all())
            except Exception:  # noqa: BLE001 - a mask attnviz cannot read says nothing here
                mask_same = None
        which = (
            QT_TRANSLATE_NOOP("Invariance", "queries and keys")
            if min(moved) > self.tol
            else (
                QT_TRANSLATE_NOOP("Invariance", "queries")
                if moved[0] > self.tol
                else QT_TRANSLATE_NOOP("Invariance", "keys")
            )
        )
        mask_text = {
            True: QT_TRANSLATE_NOOP(
                "Invariance",
                "the mask was ruled out: the step's mask lets through the same keys as the full forward's on these "
                "rows",
            ),
            False: QT_TRANSLATE_NOOP("Invariance", "the step's mask differs from the full forward's too"),
            None: QT_TRANSLATE_NOOP("Invariance", "with other queries and keys, its weights differ whatever the mask"),
        }[mask_same]
        return message(
            QT_TRANSLATE_NOOP(
                "Invariance",
                "a cached step of {tokens} token(s) has other {which} than the full forward at the same positions "
                "(largest relative difference {largest:.3g}) from the same tokens: the positions of the step are "
                "wrong, not its mask; rotary or position embeddings were not offset by the {cached} cached "
                "token(s) (positions restarted at 0, or counted from another origin); pass position_ids / "
                "cache_position starting at the cache's length; {mask}",
            ),
            tokens=tokens,
            which=which,
            largest=max(moved),
            cached=start,
            mask=mask_text,
        )

    # ------------------------------------------------------------------------- implementations

    def check_implementations(self, implementations: Sequence[str]) -> tuple[list[Finding], str | None]:
        model, config = self.model, self.config
        current = getattr(config, "_attn_implementation", None) if config is not None else None
        if not callable(getattr(model, "set_attn_implementation", None)) or current is None:
            return [], QT_TRANSLATE_NOOP(
                "Invariance", "implementations: not checked (not a transformers model with attention implementations)"
            )
        runs: dict[str, _Run] = {}
        try:
            for name in implementations:
                try:
                    model.set_attn_implementation(name)  # type: ignore[operator]
                except Exception:  # noqa: BLE001 - an implementation the model does not offer
                    continue
                runs[name] = _run(model, self.inputs)
        finally:
            model.set_attn_implementation(current)  # type: ignore[operator]
        if len(runs) < 2:
            return [], message(
                QT_TRANSLATE_NOOP("Invariance", "implementations: not checked (of {asked}, the model runs {ran} only)")
                if runs
                else QT_TRANSLATE_NOOP("Invariance", "implementations: not checked (the model runs none of {asked})"),
                asked=", ".join(implementations),
                ran=", ".join(runs),
            )
        # SDPA is the reference where it ran (the default path of most models), else the first.
        reference_name = "sdpa" if "sdpa" in runs else next(iter(runs))
        reference = runs[reference_name]
        findings: list[Finding] = []
        for name, run in runs.items():
            if name != reference_name:
                finding = self._implementation_gap(name, run, reference_name, reference)
                if finding is not None:
                    findings.append(finding)
        return findings, None

    def _implementation_gap(self, name: str, run: _Run, reference_name: str, reference: _Run) -> Finding | None:
        real = self.mask

        def align(ref: torch.Tensor, test: torch.Tensor, what: str) -> list[_Aligned]:
            if ref.shape != test.shape:
                return []
            pieces = []
            for b in range(test.shape[0]):
                rows = _real_rows(real, b, test.shape[-2])
                if rows:
                    pieces.append(_Aligned(b, ref[b][:, rows], test[b][:, rows], rows))
            return pieces

        gap = _first_gap(reference, run, align, self.tol)
        if gap is None:
            gap = _output_gap(reference.output, run.output, real, self.tol)
        if gap is None:
            return None
        template = QT_TRANSLATE_NOOP(
            "Invariance",
            "the {path} and {reference} implementations disagree here: each path builds its own mask; compare "
            "this call's mask in both (attnviz.compare)",
        )
        if gap.index >= 0:
            seen = recorded_allowed(run.calls[gap.index])
            other = next((c for c in reference.calls if c.name == run.calls[gap.index].name), None)
            rows = real if real is not None and real.shape == (seen.shape[0], seen.shape[2]) else None
            if other is not None and same_keep(run.calls[gap.index], other, rows):
                # The path that computes otherwise than its own inputs say is the odd one, either side.
                what, odd = computation_difference(run.calls[gap.index], other, gap.heads), name
                if what is None:
                    what, odd = computation_difference(other, run.calls[gap.index], gap.heads), reference_name
                return _finding(
                    "implementations",
                    gap,
                    message(
                        QT_TRANSLATE_NOOP(
                            "Invariance",
                            "the {path} and {reference} paths compute different attention for the same mask (the "
                            "mask was ruled out: both let the same keys through on every real row), in heads "
                            "{heads}; what differs, in the {odd} path: {what}",
                        ),
                        odd=odd if what is not None else name,
                        path=name,
                        reference=reference_name,
                        heads=number_ranges(gap.heads) if gap.heads else "?",
                        what=what
                        or QT_TRANSLATE_NOOP(
                            "Invariance", "not told apart (the paths' queries, keys or values already differ)"
                        ),
                    ),
                )
            if other is not None and recorded_allowed(other).shape == seen.shape:
                extra = seen & ~recorded_allowed(other)
                n_q, n_k = seen.shape[-2:]
                later = torch.ones(n_q, n_k, dtype=torch.bool).triu(1 + n_k - n_q)
                if bool((extra & later).any()):
                    template = QT_TRANSLATE_NOOP(
                        "Invariance",
                        "the {path} path lets queries see later keys that {reference} hides: its causal mask is "
                        "missing (build the causal mask for every implementation, also when weights are asked for)",
                    )
                elif bool(extra.any()):
                    template = QT_TRANSLATE_NOOP(
                        "Invariance",
                        "the {path} path lets queries see keys that {reference} hides (padding or a window): its "
                        "mask lost a part",
                    )
        return _finding("implementations", gap, message(template, path=name, reference=reference_name))

    # ------------------------------------------------------------------------- dtype

    def check_dtype(self, dtypes: Sequence[str]) -> tuple[list[Finding], str | None]:
        reference = _run(self.model, self.inputs)
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
                run = _run(model, given)
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

    def _dtype_finding(self, reference: _Run, run: _Run, name: str, dtype: torch.dtype) -> Finding | None:
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
    weights, values = _weights(call), call.values
    if weights is None or values is None or weights.shape[:3] != bad_rows.shape:
        return False
    if values.shape[1] != weights.shape[1]:
        values = values.repeat_interleave(weights.shape[1] // values.shape[1], dim=1)
    ours = torch.matmul(weights.double(), values.double())
    return bool((bad_rows & torch.isfinite(ours).all(dim=-1)).any())


def _select(t: torch.Tensor, axis: int, pos: torch.Tensor, length: int, n: int) -> torch.Tensor:
    """``t`` along ``axis`` at the real positions ``pos`` when that axis is the padded sequence."""
    size = t.shape[axis]
    if size == length and n != length:
        return t.index_select(axis % t.dim(), pos)
    return t


def _real_rows(real: torch.Tensor | None, b: int, n_rows: int) -> list[int]:
    if real is None or real.shape[1] != n_rows:
        return list(range(n_rows))
    return [int(i) for i in torch.nonzero(real[b]).flatten()]


def _output_gap(ref: torch.Tensor, test: torch.Tensor, real: torch.Tensor | None, tol: float) -> _Gap | None:
    if ref.shape != test.shape or ref.dim() < 2:
        return None
    pieces = []
    for b in range(test.shape[0]):
        rows = _real_rows(real, b, test.shape[1])
        if rows:
            pieces.append(
                _Aligned(b, ref[b, rows].reshape(1, len(rows), -1), test[b, rows].reshape(1, len(rows), -1), rows)
            )
    return _gap(-1, "", pieces, tol)


def _finding(kind: str, gap: _Gap, cause: str) -> Finding:
    heads = gap.heads if gap.index >= 0 else ()
    return InvarianceFinding(kind, "error", gap.index, gap.name, cause, heads, gap.batch, gap.rows, gap.count)
