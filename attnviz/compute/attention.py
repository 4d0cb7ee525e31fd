"""Snapshot in, outcome out: the main view's computation, run on the compute thread. No Qt here.

Every failure becomes data (an ``Outcome`` with an error message and the field it concerns), so
the GUI shows it where the user is looking and keeps the last good picture.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from attnviz.compute.convert import tensor_view, to_numpy
from attnviz.compute.engine_args import mask_kwargs, scale_kwargs, settings_kwargs
from attnviz.state.document import Snapshot, State
from attnviz.state.run import Focus, HeadView
from attnviz.text.tr import QT_TRANSLATE_NOOP, exception_message, message


@dataclass(frozen=True)
class ViewData:
    """Numpy arrays ready to draw (the computation's dtype; float16 and bfloat16 become float32,
    bfloat16 having no numpy type), all for every batch
    element: stages (B, Q, K), output (B, Q, D), per-row flags (B, Q)."""

    raw_scores: np.ndarray
    scores: np.ndarray
    #: The scores after the call's score terms (a position bias, soft-capping, a score_mod): the
    #: same array as ``scores`` when the call has none.
    modified_scores: np.ndarray
    mask: np.ndarray
    masked_scores: np.ndarray
    weights: np.ndarray
    applied_weights: np.ndarray
    output: np.ndarray
    empty_rows: np.ndarray
    nan_rows: np.ndarray
    entropy: np.ndarray
    max_weight: np.ndarray
    row_sums: np.ndarray
    logit_variance: float
    warnings: tuple[str, ...]
    params: dict[str, np.ndarray]
    #: Token labels (B, Q) and (B, K), None without tokens (see ``compute.axes``).
    query_tokens: np.ndarray | None = None
    key_tokens: np.ndarray | None = None
    #: (B, Q) True for a query at a padding position (see ``padded_query_rows``); None: none.
    padded_rows: np.ndarray | None = None


@dataclass(frozen=True)
class Outcome:
    """The result of one document version for one head (``focus``): current only for both.

    What else a view needs of the same snapshot (every head of the call, pictures of big maps)
    is a computation of that view, run with this one only while the view is on show
    (``compute.jobs``), not a field here.
    """

    version: int
    view: ViewData | None = None
    error: str | None = None
    #: What the error concerns ("shape", "valid_lens", "device", ...), for placing the message.
    error_field: str | None = None
    #: The device ran out of memory: the CPU might do (the user decides).
    out_of_memory: bool = False
    #: Every stage at once is over the memory budget (a long input: the long-context view can).
    too_large: bool = False
    device: str = "cpu"
    dtype: str = "float32"
    seconds: float = 0.0
    #: The devices this machine offers (``engine.available_devices``), found by a computation
    #: that imported torch; empty when it did not get that far.
    devices: tuple[str, ...] = ()
    #: The head this is the result of.
    focus: Focus = Focus()


def recorded_view(state: State, version: int, focus: Focus = Focus()) -> Outcome:
    """A call that recorded its weights only (Hugging Face ``output_attentions``): those weights,
    shown as recorded; every stage that would need the tensors is NaN, and a warning says so."""
    head = state.head_view(focus)
    call = head.call
    assert call.weights is not None
    weights = np.asarray(call.weights[:, focus.head], dtype=np.float32)
    nan = np.full(weights.shape, np.nan, np.float32)
    allowed = np.isfinite(weights) & (weights > 0)
    finite = np.where(np.isfinite(weights), weights, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -(finite * np.log(np.where(finite > 0, finite, 1.0))).sum(axis=-1)
    view = ViewData(
        raw_scores=nan,
        scores=nan,
        modified_scores=nan,
        mask=allowed,
        masked_scores=nan,
        weights=weights,
        applied_weights=weights,
        output=np.full((*weights.shape[:2], 1), np.nan, np.float32),
        empty_rows=np.asarray(~allowed.any(axis=-1)),
        nan_rows=np.asarray(np.isnan(weights).any(axis=-1)),
        entropy=entropy.astype(np.float32),
        max_weight=finite.max(axis=-1).astype(np.float32),
        row_sums=finite.sum(axis=-1).astype(np.float32),
        logit_variance=float("nan"),
        warnings=(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "{call} recorded its attention weights only (Hugging Face output_attentions): they are shown as "
                    "recorded; scores, masks and outputs cannot be recomputed, and a key with weight 0 is shown as "
                    "masked",
                ),
                call=call.name,
            ),
        ),
        params={},
        query_tokens=head.query_tokens,
        key_tokens=head.key_tokens,
    )
    return Outcome(version, view, focus=focus)


def run_state(state: State, version: int = 0, focus: tuple[int, int] = Focus()) -> Outcome:
    """Compute attention for head ``focus`` of ``state``; never raises for bad input, only reports."""
    start = time.perf_counter()
    s = state.settings
    focus = Focus(*focus)

    def failed(error: str, field: str | None, *, out_of_memory: bool = False, too_large: bool = False) -> Outcome:
        """The outcome of a computation that failed: the message and the field it concerns."""
        return Outcome(
            version,
            error=error,
            error_field=field,
            device=s.device,
            dtype=s.dtype,
            seconds=time.perf_counter() - start,
            out_of_memory=out_of_memory,
            too_large=too_large,
            focus=focus,
        )

    try:
        head = state.head_view(focus)
    except IndexError as exc:
        return failed(str(exc), None)
    if head.weights_only:
        return recorded_view(state, version, focus)
    try:
        # Imported here, on the compute thread: importing torch takes seconds and the window
        # should be up meanwhile. A broken install becomes an error message, not a crash.
        import torch

        from attnviz.engine import (
            AttentionInputError,
            DeviceError,
            DeviceOutOfMemoryError,
            MemoryBudgetError,
            attend,
            available_devices,
        )
    except Exception as exc:  # noqa: BLE001
        return failed(
            message(
                QT_TRANSLATE_NOOP("Errors", "could not load PyTorch: {error}"), error=f"{type(exc).__name__}: {exc}"
            ),
            None,
        )
    try:
        with torch.no_grad():
            result = attend(
                tensor_view(head.queries),
                tensor_view(head.keys),
                tensor_view(head.values),
                dropout=s.dropout,
                train=s.train,
                dropout_seed=s.dropout_seed,
                **settings_kwargs(state),
                **mask_kwargs(state, head),
                **scale_kwargs(state, head.scale),
            )
        d = result.diagnostics
        view = ViewData(
            raw_scores=to_numpy(result.raw_scores),
            scores=(scores := to_numpy(result.scores)),
            modified_scores=scores if result.modified_scores is result.scores else to_numpy(result.modified_scores),
            mask=to_numpy(result.mask),
            masked_scores=to_numpy(result.masked_scores),
            weights=to_numpy(result.weights),
            applied_weights=to_numpy(result.applied_weights),
            output=to_numpy(result.output),
            empty_rows=to_numpy(d.empty_rows),
            nan_rows=to_numpy(d.nan_rows),
            entropy=to_numpy(d.entropy),
            max_weight=to_numpy(d.max_weight),
            row_sums=to_numpy(d.row_sums),
            logit_variance=d.logit_variance,
            warnings=d.warnings,
            params={k: to_numpy(v) for k, v in result.params.items()},
            query_tokens=head.query_tokens,
            key_tokens=head.key_tokens,
        )
        view = replace(view, padded_rows=padded_query_rows(head, view.mask))
        return Outcome(
            version,
            view,
            device=result.device,
            dtype=result.dtype,
            seconds=result.seconds,
            devices=tuple(available_devices()),
            focus=focus,
        )
    except DeviceOutOfMemoryError as exc:
        return failed(exception_message(exc), "device", out_of_memory=True)
    except DeviceError as exc:
        return failed(exception_message(exc), "device")
    except MemoryBudgetError as exc:
        return failed(exception_message(exc), "shape", too_large=True)
    except AttentionInputError as exc:
        return failed(exception_message(exc), exc.field)
    except MemoryError:
        return failed(
            QT_TRANSLATE_NOOP("Errors", "out of memory on this computer: use a smaller input"),
            "shape",
            out_of_memory=True,
        )
    except Exception as exc:  # noqa: BLE001 - the app must keep running whatever the engine does
        return failed(
            message(QT_TRANSLATE_NOOP("Errors", "unexpected error: {error}"), error=f"{type(exc).__name__}: {exc}"),
            None,
        )


def padded_query_rows(head: HeadView, allowed: np.ndarray) -> np.ndarray | None:
    """(B, Q) True for the queries at padding positions, in self-attention under a model's masks.

    Padding is what the masks say, not a guess from tokens: a key no query may attend is a
    padding position, and in self-attention (as many queries as keys) the query at that position
    is a padding query, whose row a model computes but nobody reads. The book's valid lengths
    mask keys of another sequence (its queries are not padded), so they mark no row.
    """
    if head.masks is None or head.n_queries != head.n_keys or allowed.ndim != 3:
        return None
    padded = ~allowed.any(axis=1)  # (B, K): keys masked for every query
    return np.asarray(padded) if padded.any() else None


def run_snapshot(snapshot: Snapshot) -> Outcome:
    return run_state(snapshot.state, snapshot.version, snapshot.focus)
