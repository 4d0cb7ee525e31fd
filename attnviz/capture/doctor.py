"""The mask doctor: what is wrong with the masks a model's attention calls received.

``diagnose_run(run)`` looks at every call of a :class:`ModelRun` and returns :class:`Finding`
objects: what kind of problem, how bad, where (call, heads, batch elements, query rows), how
many, and one sentence saying what is wrong and which convention would fix it.

A finding is either a *cause* (a mask built wrongly: broadcast along the wrong axis, inverted,
0/1 floats added, a fill that overflowed, a missing or misaligned causal mask) or a *symptom*
(rows with no key left, real queries attending to padding, padding attending to padding).
Symptoms are reported only for calls where no cause was found, so one planted bug gives one
finding, and the sentence of the cause says what it did.

What a mask means is what its argument declares (``attnviz.engine.mask_spec``): masks are read
through the engine, whose own per-call checks (``mask_findings``: 0/1 float masks, overflowing
fills, padding masks that hide a whole sequence) are reused here. Padding is known from the
tokens (pad tokens at either end of a sequence) or from lengths given by the caller; without
either, the checks that need it are skipped. Calls that recorded only their weights (Hugging
Face ``output_attentions``) are read through their weights: a key with weight 0 was masked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt
import torch

from attnviz.state.run import AttentionCall, ModelRun
from attnviz.text.tr import QT_TRANSLATE_NOOP, joined, message, plural

from ..compute.call_mask import call_mask
from ..engine import AttentionInputError
from ..engine.devices import DTYPES, dtype_name
from ..engine.mask_bound import CallMask
from ..engine.mask_findings import ARGUMENT_CONVENTIONS, inverted_padding, mask_findings
from .doctor_fidelity import grouping_problem
from .doctor_padding import read_padding
from .doctor_paths import block_table_problems, fidelity_problems, stack_group, weights_paths
from .doctor_positions import PositionsReader
from .doctor_values import RowsProblem, invalid_weights, score_overflow

__all__ = ["DEFAULT_PAD_TOKENS", "FINDING_KINDS", "Diagnosis", "Finding", "diagnose_run", "format_finding"]

Severity = Literal["error", "warning"]

#: Tokens read as padding where they run from either end of a sequence. GPT-2 pads with
#: "<|endoftext|>", which is also its first token: name it when a batch is padded with it.
DEFAULT_PAD_TOKENS: tuple[str, ...] = ("[PAD]", "<pad>", "<|pad|>")

#: What each ``Finding.kind`` means.
FINDING_KINDS: dict[str, str] = {
    "broadcast_axis": "a mask that varies along the queries but is constant along the keys, (B, 1, L, 1) instead of "
    "(B, 1, 1, L): it hides whole query rows and lets every other query attend to padding",
    "inverted_polarity": "a mask that keeps exactly the padding and hides the real tokens (or hides a whole "
    "sequence): read with the opposite convention",
    "float01_additive": "a float mask of 0s and 1s given where masks are added to the scores: it masks nothing",
    "additive_overflow": "additive fills (finfo.min) that overflowed to -inf: added twice, or cast to float16 or "
    "bfloat16",
    "future_attended": "queries attending to later positions in a call of a stack whose other layers are causal",
    "causal_alignment": "a causal mask aligned top-left when there are fewer queries than keys (a KV-cache step)",
    "invalid_mask": "a mask the engine cannot read as its argument declares",
    "empty_rows": "query rows with no key left to attend to, and what the model produced for them",
    "padding_attended": "real queries attending to keys the tokens show to be padding",
    "padding_mismatch": "a mask that does not follow the padding the tokens show: padding keys attended and real "
    "keys hidden from every real query",
    "mask_shift": "a padding mask shifted by a constant offset against the padding: a real key hidden, a pad seen",
    "mask_order": "batch elements' padding masks in other elements' heads: a per-sequence mask expanded to "
    "(B*H, L_q, L_k) in the wrong order (repeat instead of repeat_interleave)",
    "wrong_source": "a cross-attention call masked with the decoder's padding instead of the encoder's",
    "padding_attends_padding": "padding queries attending to padding keys",
    "positions": "queries and keys given wrong positions (read from the capture alone: a cached step's rotary "
    "positions restarted at 0, position_ids counting the pads of a left-padded batch); the mask is not the cause",
    "invalid_weights": "recorded weights that are not probability distributions (negative, above 1, NaN next to "
    "numbers, rows not summing to 1): no mask is read from them",
    "score_overflow": "scores that overflow to Inf or NaN from finite queries and keys: their rows' weights are NaN",
    "padding_side": "left padding masked as right padding (or the reverse): real keys at one end hidden, padding keys "
    "at the other attended",
    "unverified": "a call attnviz could not check against the model's own output: what it shows is not verified",
    "dropout": "a call given attention dropout at capture (a model in training mode): its weights are random",
    "fidelity": "a call whose recomputation differs from the model's output by more than the threshold asked for",
    "block_table": "a FlexAttention call on the CPU whose block table skips blocks its mask_mod allows: the CPU "
    "computed them (and attnviz shows them), a GPU skips them",
    "grouping": "a call's own attention code grouped its KV heads otherwise than SDPA, FlashAttention and "
    "repeat_kv do (tiled by repeat where repeat_interleave is meant), read from the values its weights were "
    "multiplied by",
    "weights_path": "asking for the weights (output_attentions, need_weights) ran a call on another code path than "
    "the other calls of its stack",
}

#: Kinds of ``read_padding`` that name the mistake's shape (causes; the others are symptoms).
_PADDING_CAUSES = ("mask_shift", "mask_order", "wrong_source")

#: Makes a Finding of the call being diagnosed: finding(kind, severity, text, heads=, batch=, rows=, count=).
_Make = Callable[..., "Finding"]

_ERROR: Severity = "error"
_WARNING: Severity = "warning"


@dataclass(frozen=True)
class Finding:
    """One problem in one call. ``heads``, ``batch`` and ``rows`` (query rows) are where it is
    (empty: everywhere in the call); ``count`` how many rows or values; ``message`` one sentence,
    marked for translation."""

    kind: str
    severity: Severity
    call: int
    name: str
    message: str
    heads: tuple[int, ...] = ()
    batch: tuple[int, ...] = ()
    rows: tuple[int, ...] = ()
    count: int = 0

    @property
    def where(self) -> str:
        """Where it is, such as "call 3 (encoder.layer.3.attention.self), heads 0-11, batch 1, rows 5-7"."""
        parts = [message(QT_TRANSLATE_NOOP("Doctor", "call {index} ({name})"), index=self.call, name=self.name)]
        for values, template in (
            (self.heads, QT_TRANSLATE_NOOP("Doctor", "heads {list}")),
            (self.batch, QT_TRANSLATE_NOOP("Doctor", "batch {list}")),
            (self.rows, QT_TRANSLATE_NOOP("Doctor", "rows {list}")),
        ):
            if values:
                parts.append(message(template, list=number_ranges(values)))
        return joined(parts)


class Diagnosis(list[Finding]):
    """``diagnose_run``'s findings (a list), and ``notes``: one line for each thing the capture
    could not be checked for, and why (positions it does not show)."""

    def __init__(self, findings: Iterable[Finding] = (), notes: Sequence[str] = ()) -> None:
        super().__init__(findings)
        self.notes = list(notes)


def format_finding(finding: Finding) -> str:
    """One line: "error: call 3 (name), heads 0-11, batch 1, rows 5-7: what is wrong"."""
    severity = (
        QT_TRANSLATE_NOOP("Doctor", "error") if finding.severity == _ERROR else QT_TRANSLATE_NOOP("Doctor", "warning")
    )
    return message(
        QT_TRANSLATE_NOOP("Doctor", "{severity}: {where}: {message}"),
        severity=severity,
        where=finding.where,
        message=finding.message,
    )


def number_ranges(values: Iterable[int]) -> str:
    """1, 2, 3, 7 -> "1-3, 7"."""
    out: list[str] = []
    ordered = sorted(set(values))
    start = prev = ordered[0]
    for v in [*ordered[1:], None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    return ", ".join(out)


def _indices(flags: npt.ArrayLike) -> tuple[int, ...]:
    return tuple(int(i) for i in np.flatnonzero(flags))


# ----------------------------------------------------------------------------- the run


def diagnose_run(
    run: ModelRun,
    *,
    pad_tokens: Sequence[str] = DEFAULT_PAD_TOKENS,
    lengths: Sequence[int] | np.ndarray | None = None,
    max_fidelity: float | None = None,
) -> Diagnosis:
    """Every finding of every call of ``run``, by call, causes first (a list; ``notes``: what the
    capture could not be checked for).

    ``pad_tokens``: tokens that are padding where they run from either end of a sequence.
    ``lengths``: (B,) the real length of each batch element, right padded (instead of tokens).
    ``max_fidelity``: a call whose fidelity (attnviz's recomputation against the model's own
    output) is above it is an error. A call with tensors whose fidelity was never measured is a
    warning ("unverified") either way.
    """
    try:
        lens = None if lengths is None else np.asarray(lengths, dtype=np.int64)
    except OverflowError as exc:
        raise ValueError(
            message(QT_TRANSLATE_NOOP("Doctor", "lengths must be at most the calls' keys; one is out of any range"))
        ) from exc
    facts = [_Facts.of(call, index) for index, call in enumerate(run.calls)]
    padding = [_padding(run, index, lens, pad_tokens) for index in range(run.layers)]
    causal = _causal_groups(facts, padding)
    paths = weights_paths(run)
    findings = Diagnosis()
    positions = PositionsReader()
    for fact, (pad_q, pad_k) in zip(facts, padding):
        query_tokens, key_tokens = run.call_tokens(fact.index)
        # Keys from another sequence than the queries (an encoder's, in cross-attention).
        cross = (
            query_tokens is not None
            and key_tokens is not None
            and (query_tokens.shape != key_tokens.shape or not bool((query_tokens == key_tokens).all()))
        )
        own = _diagnose_call(fact, pad_q, pad_k, causal.get(fact.index), pad_tokens, key_tokens, cross)
        findings.extend(own)
        if not cross:
            # Positions only where the mask was read right: they are told from it by that.
            clean = not any(f.severity == _ERROR for f in own)
            for reading in positions.read(fact.index, fact.call, fact.allowed, pad_q, pad_k, query_tokens, clean):
                findings.append(
                    Finding(
                        reading.kind,
                        _ERROR,
                        fact.index,
                        fact.call.name,
                        reading.text,
                        reading.heads,
                        reading.batch,
                        reading.rows,
                        reading.count,
                    )
                )
        overflow = score_overflow(fact.call, fact.dtype)
        if overflow is not None:
            findings.append(_rows_finding(fact, "score_overflow", overflow))
        grouping = grouping_problem(fact.call)
        if grouping is not None:
            findings.append(Finding("grouping", _ERROR, fact.index, fact.call.name, grouping[0], grouping[1]))
        problems = fidelity_problems(fact.call, max_fidelity, run.source in ("capture", "transformer_lens"))
        problems += block_table_problems(fact.call)
        for kind, severity, text in (*problems, *paths.get(fact.index, ())):
            findings.append(Finding(kind, severity, fact.index, fact.call.name, text))  # type: ignore[arg-type,unused-ignore]
        fact.release()
    findings.notes.extend(positions.notes())
    return findings


def _padding(
    run: ModelRun, index: int, lens: np.ndarray | None, pad_tokens: Sequence[str]
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(B, L_q) and (B, L_k): which queries and keys are padding, where that is known (from the
    tokens of the call's own axes: a cross-attention call's keys are the encoder's)."""
    call = run.calls[index]
    b, _h, n_q, n_k = call.shape
    kpm = call.masks.key_padding_mask
    if lens is None and call.weights_only and n_q == n_k and kpm is not None and kpm.shape == (b, n_k):
        # A model's own attention recorded by its weights, with the padding it was given (or made:
        # Longformer pads to its window): the same positions are its padding queries.
        padded = np.array(kpm, dtype=bool)  # a copy: the file's arrays are read-only
        return padded, padded
    if lens is not None:
        if lens.shape != (b,):
            raise ValueError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Doctor", "lengths must have one entry per batch element ({batch}); got shape {shape}"
                    ),
                    batch=b,
                    shape=tuple(lens.shape),
                )
            )
        if lens.size and (lens.max() > n_k or lens.min() < 0):
            # A length past the keys would make every key real: the padding it names does not exist.
            raise ValueError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Doctor", "lengths must be from 0 to the keys of call {index} ({keys}); got {value}"
                    ),
                    index=index,
                    keys=n_k,
                    value=int(lens.max() if lens.max() > n_k else lens.min()),
                )
            )
        return (np.arange(n_q)[None] >= lens[:, None] if n_q == n_k else None, np.arange(n_k)[None] >= lens[:, None])

    def from_tokens(tokens: np.ndarray | None, length: int) -> np.ndarray | None:
        if tokens is None or tokens.shape != (b, length):
            return None
        pad = np.isin(tokens, list(pad_tokens))
        # Padding runs from an end: a pad token between real ones is a token of the text.
        left = np.logical_and.accumulate(pad, axis=1)
        right = np.logical_and.accumulate(pad[:, ::-1], axis=1)[:, ::-1]
        return left | right

    query_tokens, key_tokens = run.call_tokens(index)
    return from_tokens(query_tokens, n_q), from_tokens(key_tokens, n_k)


@dataclass
class _Facts:
    """One call and where each query may attend: ``allowed`` (B, H, L_q, L_k), built on demand.

    numpy, not torch, from there on: its boolean reductions along the keys are an order of
    magnitude faster on the CPU."""

    index: int
    call: AttentionCall
    dtype: torch.dtype
    spec: CallMask | None = None
    problem: str | None = None
    #: Recorded weights that are not probability distributions (no mask is read from them).
    invalid: RowsProblem | None = None
    _allowed: np.ndarray | None = None

    @staticmethod
    def of(call: AttentionCall, index: int) -> _Facts:
        if call.dtype is not None:
            dtype = DTYPES[call.dtype]
        else:
            source = call.queries if call.queries is not None else call.weights
            assert source is not None
            dtype = _torch_dtype(np.asarray(source[:0]).dtype)
        return _Facts(index, call, dtype)

    @property
    def allowed(self) -> np.ndarray | None:
        if self._allowed is None and self.problem is None:
            self._allowed = self._build()
        return self._allowed

    def release(self) -> None:
        self._allowed = None

    def _build(self) -> np.ndarray | None:
        call = self.call
        b, h, n_q, n_k = call.shape
        if call.weights_only:
            assert call.weights is not None
            self.invalid = invalid_weights(call.weights, self.dtype in (torch.float16, torch.bfloat16))
            if self.invalid is not None:
                self.problem = self.invalid.message
                return None
            return np.asarray(call.weights) > 0  # NaN > 0 is False: a NaN row kept nothing
        try:
            # The one reading of a call's masks (its causal flag with its recorded alignment).
            self.spec = call_mask(call).bind_call((b, h), n_q, n_k, dtype=self.dtype)
        except AttentionInputError as exc:
            self.problem = str(exc)
            return None
        return self.spec.full().numpy()


#: Elements of the calls' ``allowed`` masks kept from the first pass over the run to the second
#: (64 MiB of booleans): 6 layers x 12 heads x batch 8 x 128 tokens take 9 Mi.
_KEEP_ELEMENTS = 2**26


@dataclass(frozen=True)
class _Causal:
    """How a call's stack masks the future: ``causal`` of its ``total`` calls with several queries."""

    causal: int
    total: int
    future_rows: np.ndarray  # (B, H, L_q): rows of this call that see a later key


def _causal_groups(
    facts: list[_Facts], padding: list[tuple[np.ndarray | None, np.ndarray | None]]
) -> dict[int, _Causal]:
    """For each call that sees the future while most calls of its stack do not: the counts."""
    groups: dict[str, list[tuple[int, np.ndarray]]] = {}
    kept = 0
    for fact, (pad_q, _pad_k) in zip(facts, padding):
        allowed = fact.allowed
        if allowed is not None:
            # Kept for the calls' own diagnosis while small; a long run's masks are built again.
            kept += allowed.size
            if kept > _KEEP_ELEMENTS:
                fact.release()
        _b, _h, n_q, n_k = fact.call.shape
        if allowed is None or n_q < 2:
            continue
        if fact.call.weights_only and n_q != n_k:
            # A model's own attention seen at its softmax, whose key axis is laid out its own way
            # (Pegasus-X's global tokens before each local block): no position to read causality by.
            continue
        offset = n_k - n_q  # a later key is one past the query's own position, bottom-right aligned
        later = np.triu(np.ones((n_q, n_k), dtype=bool), offset + 1)
        if offset > 0 and _from_the_start(fact.call.positions, n_q):
            # Queries at the sequence's first positions have no cached keys before them: the keys
            # past theirs are entries appended after the tokens (DeepSeek V4's compressed keys),
            # at no position: causality is read over the tokens' own keys.
            later[:, n_q:] = False
            later[:, :n_q] = np.triu(np.ones((n_q, n_q), dtype=bool), 1)
        rows = np.asarray((allowed & later).any(-1))
        if pad_q is not None:
            rows &= ~pad_q[:, None, :]  # what padding queries see is not the model's causality
        groups.setdefault(stack_group(fact.call.name), []).append((fact.index, rows))
    found: dict[int, _Causal] = {}
    for members in groups.values():
        causal = sum(1 for _index, rows in members if not bool(rows.any()))
        # A tie counts: a causal mask dropped in 1 of 2 layers is as much a bug as 1 of 3.
        if causal and causal * 2 >= len(members):
            for index, rows in members:
                if bool(rows.any()):
                    found[index] = _Causal(causal, len(members), rows)
    return found


def _from_the_start(positions: np.ndarray | None, n_q: int) -> bool:
    """Whether the positions a call's queries were read at are 0 .. L_q - 1 (the sequence's start,
    so no key comes before them)."""
    if positions is None or np.asarray(positions).shape[-1] != n_q:
        return False
    return bool((np.asarray(positions) == np.arange(n_q)).all())


# ----------------------------------------------------------------------------- one call


def _diagnose_call(
    fact: _Facts,
    pad_q: np.ndarray | None,
    pad_k: np.ndarray | None,
    causal: _Causal | None,
    pad_tokens: Sequence[str],
    key_tokens: np.ndarray | None = None,
    cross: bool = False,
) -> list[Finding]:
    call, index = fact.call, fact.index
    allowed = fact.allowed

    def finding(
        kind: str,
        severity: Severity,
        text: str,
        heads: Iterable[int] = (),
        batch: Iterable[int] = (),
        rows: Iterable[int] = (),
        count: int = 0,
    ) -> Finding:
        return Finding(kind, severity, index, call.name, text, tuple(heads), tuple(batch), tuple(rows), count)

    if allowed is None and fact.invalid is not None:
        return [_rows_finding(fact, "invalid_weights", fact.invalid)]
    if allowed is None:
        return [
            finding(
                "invalid_mask",
                _ERROR,
                message(
                    QT_TRANSLATE_NOOP("Doctor", "the engine cannot read this call's masks: {problem}"),
                    problem=fact.problem or "",
                ),
            )
        ]
    empty = np.asarray(~allowed.any(-1))  # (B, H, L_q)
    has_empty = bool(empty.any())
    causes: list[Finding] = []
    causes.extend(_engine_findings(fact, has_empty, finding))
    causes.extend(_broadcast_axis(fact, empty, finding))
    if pad_k is not None:
        inverted = _inverted(fact, allowed, pad_k, pad_tokens, finding) or _complement(
            fact, allowed, pad_q, pad_k, finding
        )
        causes.extend(inverted)
        if not inverted:
            causes.extend(_padding_side(fact, allowed, pad_q, pad_k, finding))
    causes.extend(_alignment(fact, allowed, finding))
    if causal is not None:
        rows = causal.future_rows
        causes.append(
            finding(
                "future_attended",
                _ERROR,
                plural(
                    int(rows.sum()),
                    QT_TRANSLATE_NOOP(
                        "Doctor",
                        "{n} query row attends to later positions while {causal} of the {total} calls of this stack "
                        "are causal: this call misses its causal mask (pass is_causal=True, or build the causal mask "
                        "into attn_mask)",
                    ),
                    QT_TRANSLATE_NOOP(
                        "Doctor",
                        "{n} query rows attend to later positions while {causal} of the {total} calls of this stack "
                        "are causal: this call misses its causal mask (pass is_causal=True, or build the causal mask "
                        "into attn_mask)",
                    ),
                    causal=causal.causal,
                    total=causal.total,
                ),
                heads=_indices(rows.any(-1).any(0)),
                batch=_indices(rows.any(-1).any(-1)),
                rows=_indices(rows.any(0).any(0)),
                count=int(rows.sum()),
            )
        )
    if causes:
        return _merged(causes)

    symptoms: list[Finding] = []
    if pad_k is not None:
        reading = read_padding(allowed, pad_q, pad_k, key_tokens=key_tokens, cross=cross)
        if reading is not None:
            (causes if reading.kind in _PADDING_CAUSES else symptoms).append(
                finding(reading.kind, _ERROR, reading.text, reading.heads, reading.batch, reading.rows, reading.count)
            )
            if causes:
                return _merged(causes)
        if pad_q is not None and not symptoms:
            rows = (allowed & pad_k[:, None, None, :]).any(-1) & pad_q[:, None, :]
            n = int(rows.sum())
            if n:  # padding keys that real queries see are seen by padding ones too
                symptoms.append(
                    finding(
                        "padding_attends_padding",
                        _WARNING,
                        plural(
                            n,
                            QT_TRANSLATE_NOOP(
                                "Doctor",
                                "{n} padding query row attends to padding keys ({pads}), which a key padding mask "
                                "never allows: the mask pairs padding with padding instead of hiding padding keys; "
                                "use a (B, 1, 1, L_k) key mask",
                            ),
                            QT_TRANSLATE_NOOP(
                                "Doctor",
                                "{n} padding query rows attend to padding keys ({pads}), which a key padding mask "
                                "never allows: the mask pairs padding with padding instead of hiding padding keys; "
                                "use a (B, 1, 1, L_k) key mask",
                            ),
                            pads=", ".join(pad_tokens),
                        ),
                        heads=_indices(rows.any(-1).any(0)),
                        batch=_indices(rows.any(-1).any(-1)),
                        rows=_indices(rows.any(0).any(0)),
                        count=n,
                    )
                )
    if has_empty:
        outcome = _outcome(call, empty)
        rows = empty
        benign = outcome in ("zero", "uniform") and pad_q is not None and not bool((empty & ~pad_q[:, None, :]).any())
        if not benign:  # padding queries with a finite, discarded output are what padding does
            n = int(rows.sum())
            symptoms.append(
                finding(
                    "empty_rows",
                    _ERROR if outcome == "NaN" else _WARNING,
                    _empty_sentence(n, outcome),
                    heads=_indices(rows.any(-1).any(0)),
                    batch=_indices(rows.any(-1).any(-1)),
                    rows=_indices(rows.any(0).any(0)),
                    count=n,
                )
            )
    return symptoms


def _rows_finding(fact: _Facts, kind: str, problem: RowsProblem) -> Finding:
    rows = problem.rows  # (B, H, L_q)
    return Finding(
        kind,
        _ERROR,
        fact.index,
        fact.call.name,
        problem.message,
        heads=_indices(rows.any(-1).any(0)),
        batch=_indices(rows.any(-1).any(-1)),
        rows=_indices(rows.any(0).any(0)),
        count=problem.count,
    )


def _merged(findings: list[Finding]) -> list[Finding]:
    """One finding per kind: the engine's and the tokens' inverted polarity (say) become one, with
    the more specific sentence (the later one) and every place either named."""
    by_kind: dict[str, Finding] = {}
    for f in findings:
        seen = by_kind.get(f.kind)
        if seen is not None:
            batch = tuple(sorted({*seen.batch, *f.batch}))
            f = replace(
                f,
                batch=batch,
                heads=tuple(sorted({*seen.heads, *f.heads})),
                rows=tuple(sorted({*seen.rows, *f.rows})),
                count=max(seen.count, f.count, len(batch)),
            )
        by_kind[f.kind] = f
    return list(by_kind.values())


def _engine_findings(fact: _Facts, has_empty: bool, finding: _Make) -> list[Finding]:
    """The engine's own checks of this call's masks, and -inf next to finfo.min in one mask."""
    out: list[Finding] = []
    overflow_severity = _ERROR if has_empty else _WARNING
    if fact.spec is not None:
        inverted: list[int] = []
        inverted_text = None
        for f in mask_findings(fact.spec, fact.dtype):
            if f.kind == "float01_additive":
                out.append(finding("float01_additive", _ERROR, f.message))
            elif f.kind in ("additive_overflow", "additive_sum_overflow"):
                out.append(finding("additive_overflow", overflow_severity, f.message, count=f.count))
            elif f.kind in ("hides_whole_sequence", "padding_inverted"):
                inverted.extend(f.batch_elements)
                inverted_text = inverted_text or f.message
        if inverted_text is not None:
            out.append(
                finding(
                    "inverted_polarity", _ERROR, inverted_text, batch=sorted(set(inverted)), count=len(set(inverted))
                )
            )
    for name in ("attn_mask", "key_padding_mask"):
        mask = getattr(fact.call.masks, name)
        if mask is None or np.asarray(mask[:0]).dtype.kind != "f":
            continue
        values = np.asarray(mask)
        lowest = np.finfo(values.dtype).min
        fills = np.isfinite(values) & (values <= lowest / 2)
        near = int(fills.sum())
        # Two fills added overflow where both masked: -inf beside finfo.min in one key's column
        # (Kosmos-2's causal and padding masks). A mask joined from parts of the two conventions
        # holds them in different keys (DeepSeek V4's compressed keys, -inf, after its finfo.min
        # mask): no overflow, and nothing wrong while every row keeps a key.
        shared = values.ndim < 2 or bool((np.isneginf(values).any(-2) & fills.any(-2)).any())
        if near and shared and bool(np.isneginf(values).any()):
            out.append(
                finding(
                    "additive_overflow",
                    overflow_severity,
                    message(
                        QT_TRANSLATE_NOOP(
                            "Doctor",
                            "{name} holds -inf next to {count} values near {dtype}'s lowest ({lowest:.4g}): two "
                            "finfo.min fills were added and overflowed; combine masks as booleans, or clamp their sum "
                            "at "
                            "torch.finfo(torch.{dtype}).min",
                        ),
                        name=name,
                        count=near,
                        dtype=dtype_name(_torch_dtype(values.dtype)),
                        lowest=float(lowest),
                    ),
                    count=near,
                )
            )
    return out


def _torch_dtype(dtype: np.dtype) -> torch.dtype:
    """The torch dtype of a numpy float array (float32 for anything that is not float16 or 64)."""
    return {np.dtype(np.float16): torch.float16, np.dtype(np.float64): torch.float64}.get(dtype, torch.float32)


def _broadcast_axis(fact: _Facts, empty: np.ndarray, finding: _Make) -> list[Finding]:
    """A mask constant along the keys and varying along the queries: (B, 1, L_q, 1) where padding
    needs (B, 1, 1, L_k). Not reported when another argument masks keys (then hiding query rows
    can be deliberate)."""
    call = fact.call
    _b, _h, n_q, n_k = call.shape
    if n_q < 2 or n_k < 2:
        return []
    masks = call.masks
    given = [
        (name, getattr(masks, name))
        for name in ("attn_mask", "key_padding_mask", "attention_mask")
        if getattr(masks, name) is not None
    ]
    if len(given) != 1:
        return []
    name, mask = given[0]
    values = np.asarray(mask)
    if name == "key_padding_mask" or values.ndim < 2 or values.shape[-2] != n_q:
        return []
    along_keys = values.shape[-1] == 1 or bool((values == values[..., :1]).all())
    along_queries = bool((values == values[..., :1, :]).all())
    if not along_keys or along_queries:
        return []
    hidden = empty.any(1)  # (B, L_q)
    outcome = _outcome(call, empty)
    return [
        finding(
            "broadcast_axis",
            _ERROR,
            message(
                QT_TRANSLATE_NOOP(
                    "Doctor",
                    "{name} of shape {shape} varies along the queries but is constant along the keys: it hides whole "
                    "query rows ({rows} of them; the model produced {outcome} there) while every other query attends "
                    "to "
                    "every key, padding included; a padding mask broadcasts over the queries: shape (B, 1, 1, L_k), "
                    "not "
                    "(B, 1, L_q, 1)",
                ),
                name=name,
                shape=tuple(values.shape),
                rows=int(empty.sum()),
                outcome=_OUTCOMES[outcome],
            ),
            batch=_indices(hidden.any(-1)),
            rows=_indices(hidden.any(0)),
            count=int(empty.sum()),
        )
    ]


def _inverted(
    fact: _Facts, allowed: np.ndarray, pad_k: np.ndarray, pad_tokens: Sequence[str], finding: _Make
) -> list[Finding]:
    """Keys a batch element may attend that are exactly its padding (or none at all, though it has
    real tokens): the mask was read with the opposite convention."""
    keys = np.asarray(allowed.any(axis=(1, 2)))  # (B, L_k)
    exact = inverted_padding(torch.from_numpy(keys), torch.from_numpy(pad_k)).numpy()
    if not bool(exact.any()):
        return []
    # An element with no padding has nothing an inverted mask can keep: it hides the whole sequence.
    flipped = exact | (~keys.any(-1) & (~pad_k).any(-1))
    return _inverted_polarity(
        fact,
        finding,
        _indices(flipped),
        QT_TRANSLATE_NOOP(
            "Doctor",
            "the mask lets batch element(s) {elements} attend to exactly their padding keys ({pads}) and hides "
            "their real ones: its polarity is inverted ({convention})",
        ),
        pads=", ".join(pad_tokens),
    )


def _inverted_polarity(
    fact: _Facts, finding: _Make, elements: Sequence[int], text: str, **names: object
) -> list[Finding]:
    """The inverted-polarity error on batch ``elements``: ``text`` with ``{elements}`` them and
    ``{convention}`` that of the argument the call's mask came in."""
    masks = fact.call.masks
    name = next(
        (n for n in ("attn_mask", "key_padding_mask", "attention_mask") if getattr(masks, n) is not None), "attn_mask"
    )
    return [
        finding(
            "inverted_polarity",
            _ERROR,
            message(text, elements=number_ranges(elements), convention=ARGUMENT_CONVENTIONS[name], **names),
            batch=elements,
            count=len(elements),
        )
    ]


def _real_rows(allowed: np.ndarray, pad_q: np.ndarray | None) -> np.ndarray:
    """(B, L_q) the query rows to read: the real ones (self-attention), every row otherwise."""
    b, _h, n_q, _k = allowed.shape
    if pad_q is None or pad_q.shape != (b, n_q):
        return np.ones((b, n_q), dtype=bool)
    return ~pad_q


def _complement(
    fact: _Facts, allowed: np.ndarray, pad_q: np.ndarray | None, pad_k: np.ndarray, finding: _Make
) -> list[Finding]:
    """A mask that is exactly the opposite of the padding mask (causal or not) on every real
    query row: built in the other convention (True = masked, nn.MultiheadAttention's, given where
    True = attend is read). With a causal mask in it, its allowed keys are the padding and the
    future, so it is not "exactly the padding" and would read as padding let through."""
    b, _h, n_q, n_k = allowed.shape
    real = _real_rows(allowed, pad_q)
    past = np.tril(np.ones((n_q, n_k), dtype=bool), n_k - n_q)
    elements = []
    for e in range(b):
        rows = real[e]
        if not rows.any() or not pad_k[e].any() or pad_k[e].all():
            continue
        seen = allowed[e][:, rows]  # (H, R, L_k)
        open_keys = ~pad_k[e][None, None, :]
        for expected in (open_keys, open_keys & past[None, rows]):
            if bool((seen == ~expected).all()):
                elements.append(e)
                break
    if not elements:
        return []
    return _inverted_polarity(
        fact,
        finding,
        elements,
        QT_TRANSLATE_NOOP(
            "Doctor",
            "on every real query row of batch element(s) {elements} the mask allows exactly what a padding "
            "(and causal) mask would hide and hides what it would allow: its polarity is inverted, built as "
            "True = masked where {convention}; invert it (~mask), or build it with True = attend",
        ),
    )


def _padding_side(
    fact: _Facts, allowed: np.ndarray, pad_q: np.ndarray | None, pad_k: np.ndarray, finding: _Make
) -> list[Finding]:
    """Padding on one side masked as if it were on the other: the keys the real queries may see
    are exactly the first (or last) real-length keys, while the tokens put the padding there."""
    b, _h, _q, n_k = allowed.shape
    real = _real_rows(allowed, pad_q)
    left_as_right: list[int] = []
    right_as_left: list[int] = []
    hidden = 0
    for e in range(b):
        pads = int(pad_k[e].sum())
        if pads == 0 or pads == n_k or not real[e].any():
            continue
        keys = allowed[e][:, real[e]].any(axis=(0, 1))  # (L_k,) what real queries may see
        head, tail = bool(pad_k[e][:pads].all()), bool(pad_k[e][n_k - pads :].all())
        first, last = np.arange(n_k) < n_k - pads, np.arange(n_k) >= pads
        if head and not tail and bool((keys == first).all()):
            left_as_right.append(e)
            hidden += pads
        elif tail and not head and bool((keys == last).all()):
            right_as_left.append(e)
            hidden += pads
    out: list[Finding] = []
    for elements, text in (
        (
            left_as_right,
            QT_TRANSLATE_NOOP(
                "Doctor",
                "batch element(s) {elements} are left padded, but the mask hides their last keys, which are real "
                "tokens ({hidden} real keys hidden), and lets their padding keys at the start through: left "
                "padding was masked as right padding; build the mask from the attention mask (1 = real token), "
                "not from the lengths",
            ),
        ),
        (
            right_as_left,
            QT_TRANSLATE_NOOP(
                "Doctor",
                "batch element(s) {elements} are right padded, but the mask hides their first keys, which are "
                "real tokens ({hidden} real keys hidden), and lets their padding keys at the end through: right "
                "padding was masked as left padding; build the mask from the attention mask (1 = real token)",
            ),
        ),
    ):
        if elements:
            out.append(
                finding(
                    "padding_side",
                    _ERROR,
                    message(text, elements=number_ranges(elements), hidden=hidden),
                    batch=elements,
                    count=len(elements),
                )
            )
    return out


def _alignment(fact: _Facts, allowed: np.ndarray, finding: _Make) -> list[Finding]:
    """A causal mask aligned top-left with fewer queries than keys: query i then sees keys 0..i,
    not the cached keys before it."""
    call = fact.call
    _b, _h, n_q, n_k = call.shape
    if n_q >= n_k:
        return []
    if call.masks.causal == "top_left":
        text = QT_TRANSLATE_NOOP(
            "Doctor",
            "is_causal=True aligns the causal mask top-left: with {n_q} queries and {n_k} keys (a KV-cache "
            "step) query i sees keys 0 to i only, not the {past} cached keys before it; align it "
            "bottom-right with the boolean attn_mask "
            "torch.ones(L_q, L_k, dtype=torch.bool).tril(L_k - L_q), "
            "or pass no causal mask for a single new token",
        )
    else:
        later = np.triu(np.ones((n_q, n_k), dtype=bool), 1)
        if not bool(allowed.any()) or bool((allowed & later).any()):
            return []
        text = QT_TRANSLATE_NOOP(
            "Doctor",
            "the causal mask is aligned top-left: with {n_q} queries and {n_k} keys (a KV-cache step) query i "
            "sees keys 0 to i only, not the {past} cached keys before it; build it bottom-right, "
            "torch.ones(L_q, L_k, dtype=torch.bool).tril(L_k - L_q)",
        )
    return [finding("causal_alignment", _ERROR, message(text, n_q=n_q, n_k=n_k, past=n_k - n_q))]


# ----------------------------------------------------------------------------- what rows with no key became

_OUTCOMES = {
    "NaN": QT_TRANSLATE_NOOP("Doctor", "NaN"),
    "zero": QT_TRANSLATE_NOOP("Doctor", "zeros"),
    "uniform": QT_TRANSLATE_NOOP("Doctor", "the plain average of every value"),
    "other": QT_TRANSLATE_NOOP("Doctor", "neither NaN, zeros nor an average"),
    "unknown": QT_TRANSLATE_NOOP("Doctor", "an output that was not recorded"),
}


def _outcome(call: AttentionCall, empty: np.ndarray) -> str:
    """What the model produced for rows with no key: "NaN", "zero", "uniform", "other", "unknown"."""
    where = empty
    if call.weights_only:
        assert call.weights is not None
        rows = np.asarray(call.weights)[where]
        if np.isnan(rows).any():
            return "NaN"
        return "zero" if bool((rows == 0).all()) else "other"
    if call.output is None or call.values is None:
        return "unknown"
    rows = np.asarray(call.output)[where].astype(np.float64)  # (n, d_v): only these rows are read
    if np.isnan(rows).any():
        return "NaN"
    if bool((rows == 0).all()):
        return "zero"
    b_idx, h_idx, _q = where.nonzero()
    kv = h_idx // (call.shape[1] // call.kv_heads)
    means = np.asarray(call.values).astype(np.float64).mean(axis=2)  # (B, H_kv, d_v)
    expected = means[b_idx, kv]
    scale = np.abs(expected).max() + 1e-12
    return "uniform" if bool(np.allclose(rows, expected, rtol=1e-3, atol=1e-3 * scale)) else "other"


def _empty_sentence(n: int, outcome: str) -> str:
    one, many = {
        "NaN": (
            QT_TRANSLATE_NOOP(
                "Doctor",
                "{n} query row has no key left to attend to, and the model produced NaN "
                "there, which later layers spread (0 x NaN is NaN): leave every query at "
                "least one key (hide padding keys, (B, 1, 1, L_k), not whole rows), or use "
                "SDPA's boolean mask, which gives such rows zeros",
            ),
            QT_TRANSLATE_NOOP(
                "Doctor",
                "{n} query rows have no key left to attend to, and the model produced NaN "
                "there, which later layers spread (0 x NaN is NaN): leave every query at "
                "least one key (hide padding keys, (B, 1, 1, L_k), not whole rows), or use "
                "SDPA's boolean mask, which gives such rows zeros",
            ),
        ),
        "zero": (
            QT_TRANSLATE_NOOP(
                "Doctor",
                "{n} query row has no key left to attend to and came out as zeros "
                "(SDPA's rule for a fully masked row): unless it is padding whose output "
                "is discarded, the mask hides too much",
            ),
            QT_TRANSLATE_NOOP(
                "Doctor",
                "{n} query rows have no key left to attend to and came out as zeros "
                "(SDPA's rule for a fully masked row): unless they are padding whose "
                "output is discarded, the mask hides too much",
            ),
        ),
        "uniform": (
            QT_TRANSLATE_NOOP(
                "Doctor",
                "{n} query row has no key left to attend to, so a finite fill "
                "(finfo.min) spread it evenly over every key, padding included: unless "
                "it is padding whose output is discarded, the mask hides too much",
            ),
            QT_TRANSLATE_NOOP(
                "Doctor",
                "{n} query rows have no key left to attend to, so a finite fill "
                "(finfo.min) spread them evenly over every key, padding included: "
                "unless they are padding whose output is discarded, the mask hides too "
                "much",
            ),
        ),
    }.get(
        outcome,
        (
            QT_TRANSLATE_NOOP(
                "Doctor",
                "{n} query row has no key left to attend to (the model produced "
                "{outcome} there): the mask hides every key of a query",
            ),
            QT_TRANSLATE_NOOP(
                "Doctor",
                "{n} query rows have no key left to attend to (the model produced "
                "{outcome} there): the mask hides every key of these queries",
            ),
        ),
    )
    return plural(n, one, many, outcome=_OUTCOMES.get(outcome, outcome))
