"""Positions read from one capture, without a second run: what the queries and keys reveal.

Positions never reach a mask: they change the queries and keys. Two things a capture holds tell
wrong positions from the model's own, each where it can:

* **Two copies of a token in one sequence** (a cached step; rotary models): at the first layer a
  token's values depend on the token alone (equal values: the same token), and its key is the
  same vector rotated by its position. The rotation between two copies, read on the
  highest-frequency rotary pair (frequency 1 in every RoPE variant: scaled ones change the low
  frequencies), is the distance between their positions. A cached step whose new token sits
  ``r`` positions from its copy in the cache where the cache puts it ``n`` apart was given other
  positions; when they are the step's own count from 0, its positions restarted
  (``restarted``).
* **The same tokens after the same tokens in two batch elements** (a causal call of a
  left-padded batch, tokens known): their queries, keys and values must be equal wherever the
  padding put them, unless their positions differ, which a mask cannot do. Differing only by a
  rotation (rotary models) is a constant shift of each sequence that rotary attention ignores:
  said as a note, not an error; differing otherwise (learned absolute positions) changes the
  attention: ``position_ids`` counted over the pads (``counted_pads``).

Where a capture holds neither, ``notes`` says the positions were not checked and why, and points
at ``attnviz check``, which runs the model again. numpy only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from attnviz.state.run import AttentionCall
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["PositionReading", "PositionsReader", "module_word"]

#: The most counts of hidden keys a restart is tried at (integers fill the circle: past a few
#: dozen, some count fits any rotation).
_COUNTS = 8
#: What is compared at most (the first batch elements, the first rows or shared tokens of each):
#: one piece of evidence is enough, and a long shared prompt or chunked prefill stays cheap.
_ELEMENTS = 8
_ROWS = 16
#: A call of cross-attention by its name (its keys are another sequence's: no positions to read).
_CROSS = re.compile(r"cross|encoder_attn|encdec|multihead_attn", re.IGNORECASE)


@dataclass(frozen=True)
class PositionReading:
    """Wrong positions in one call: ``kind``, one sentence, and where."""

    kind: str
    text: str
    heads: tuple[int, ...]
    batch: tuple[int, ...]
    rows: tuple[int, ...]
    count: int


@dataclass(frozen=True)
class _Tolerance:
    equal: float  # two rows are the same vector (relative to the call's largest value)
    norm: float  # two rotary pairs have the same length (relative)
    angle: float  # radians a rotation may be off


def _tolerance(dtype: np.dtype) -> _Tolerance:
    # float16 keeps ~3 decimal digits, bfloat16 ~2: a copy recomputed elsewhere in the batch may
    # differ in its last ones; float32 kernels agree to ~1e-6.
    if dtype == np.float16 or str(dtype) == "bfloat16":
        return _Tolerance(2e-2, 3e-2, 0.1)
    return _Tolerance(1e-4, 1e-3, 0.02)


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi


def _pairings(d: int) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """Rotary layouts of a head of ``d``: (first of each pair, second of each pair, dims rotated),
    rotate-half and interleaved, over the whole head or its first half or quarter (partial
    rotary); the highest frequency is the first pair of each."""
    out = []
    for r in (d, d // 2, d // 4):
        if r < 2 or r % 2:
            continue
        out.append((np.arange(r // 2), np.arange(r // 2) + r // 2, r))
        out.append((np.arange(0, r, 2), np.arange(1, r, 2), r))
    return out


def _rotation(a: np.ndarray, b: np.ndarray, tol: _Tolerance) -> float | None:
    """The angle rotating ``a`` into ``b`` ((H, d) rows of one token at two positions) on the
    highest-frequency rotary pair, when ``b`` is ``a`` rotated pair by pair in some rotary layout;
    None when no layout makes it a rotation (not rotary, or not the same vector)."""
    scale = max(float(np.abs(a).max()), float(np.abs(b).max()), 1e-30)
    for first, second, rotated in _pairings(a.shape[-1]):
        if a.shape[-1] > rotated and float(np.abs(a[:, rotated:] - b[:, rotated:]).max()) > tol.equal * scale:
            continue
        norm_a = np.hypot(a[:, first], a[:, second])
        norm_b = np.hypot(b[:, first], b[:, second])
        if float(np.abs(norm_a - norm_b).max()) > tol.norm * max(float(norm_a.max()), 1e-30):
            continue
        za = a[:, first[0]] + 1j * a[:, second[0]]
        zb = b[:, first[0]] + 1j * b[:, second[0]]
        turn = complex((zb * np.conj(za)).sum())
        if abs(turn) < 1e-3 * float((np.abs(za) ** 2).sum()) or float((np.abs(za) ** 2).sum()) == 0.0:
            return None  # the first pair is (nearly) zero: its angle says nothing
        return math.atan2(turn.imag, turn.real)
    return None


def _fits(angle: float, distance: int, tol: _Tolerance) -> bool:
    """A rotation of ``angle`` on frequency 1 is ``distance`` positions (either sense of turning)."""
    return min(abs(_wrap(angle - distance)), abs(_wrap(angle + distance))) <= tol.angle


def _apart(a: int, b: int, tol: _Tolerance) -> bool:
    """Distances ``a`` and ``b`` are told apart on frequency 1 (44 positions turn 0.018 rad)."""
    return min(abs(_wrap(a - b)), abs(_wrap(a + b))) > 3 * tol.angle


def _equal(a: np.ndarray, b: np.ndarray, scale: float, tol: _Tolerance) -> bool:
    return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) <= tol.equal * scale


@dataclass
class PositionsReader:
    """Reads the positions of a run's calls one at a time (``read``), then says what it could not
    check (``notes``)."""

    _steps_unchecked: list[tuple[int, tuple[int, int]]] = field(default_factory=list)
    #: (L_q, L_k) of the cached steps read (right or wrong): their other layers share their positions.
    _steps_read: set[tuple[int, int]] = field(default_factory=set)
    _padded_unchecked: list[int] = field(default_factory=list)
    _unexplained: list[str] = field(default_factory=list)
    _padded_checked: bool = False
    #: The first causal call of a batch was read (deeper ones of an encoder-decoder's decoder
    #: depend on the encoder too: two equal prefixes no longer get equal queries there).
    _padded_done: bool = False
    _reported_pads: bool = False
    _shift_note: str | None = None
    #: Cached steps whose recorded positions were read: (L_q, L_k, the positions' bytes).
    _recorded_steps: set[tuple[int, int, bytes]] = field(default_factory=set)
    #: (L_q, L_k) of cached steps whose restart was reported (their other layers: said once).
    _restarts: set[tuple[int, int]] = field(default_factory=set)

    def read(
        self,
        index: int,
        call: AttentionCall,
        allowed: np.ndarray | None,
        pad_q: np.ndarray | None,
        pad_k: np.ndarray | None,
        tokens: np.ndarray | None,
        clean: bool = True,
    ) -> list[PositionReading]:
        """Wrong positions in call ``index``: ``allowed`` (B, H, L_q, L_k) its mask as read
        (None: unreadable), ``pad_q`` / ``pad_k`` the padding the tokens show, ``tokens`` (B, L_q)
        its query tokens; ``clean``: the doctor found its mask right (else only its place is
        noted: a batch's positions are read on its first causal call, where nothing but tokens
        and positions came before)."""
        if allowed is None or _CROSS.search(call.name):
            return []
        n_q, n_k = call.shape[2], call.shape[3]
        if n_q < n_k:
            # A cached step: a token and its copy show what the rotation did; else the positions
            # the capture recorded say what the model was given.
            copies = [] if call.weights_only or not clean else self._copies(index, call, allowed, pad_k)
            if copies:
                self._restarts.add((n_q, n_k))
                return copies
            if (n_q, n_k) in self._restarts:
                return []
            return self._recorded(index, call, allowed, pad_q) or []
        if not clean:
            self._padded_done = self._padded_done or n_q == n_k
            return []
        if n_q == n_k and not self._padded_done and call.queries is not None:
            # Two elements starting with the same tokens show it in their queries; else the
            # positions recorded say what the model was given.
            shared = self._padded(index, call, allowed, pad_q, tokens)
            if shared or self._padded_checked or self._reported_pads:
                return shared
            if call.positions is None:
                return []
            # Unread from the queries (an encoder, or no two elements padded otherwise): the
            # positions recorded are read against the padding.
            self._padded_done = False
        return self._recorded(index, call, allowed, pad_q) or []

    def _copies(
        self, index: int, call: AttentionCall, allowed: np.ndarray, pad_k: np.ndarray | None
    ) -> list[PositionReading]:
        """A cached step's positions read from a new token and its copy in the cache."""
        q, k, v = call.queries, call.keys, call.values
        if q is None or k is None or v is None:
            return []
        n_q, n_k = call.shape[2], call.shape[3]
        found = _cached_step(index, call, allowed, pad_k)
        if found is False:
            return []
        if found is None:
            self._steps_unchecked.append((index, (n_q, n_k)))
            return []
        self._steps_read.add((n_q, n_k))
        if isinstance(found, tuple):
            old, key, expected = found
            self._unexplained.append(
                message(
                    QT_TRANSLATE_NOOP(
                        "Doctor",
                        "positions not verified in the cached step of call {index}: the rotation between its "
                        "token at key {key} and that token's copy at key {old} is neither the {expected} "
                        "position(s) the cache puts between them nor a restart at 0 (rotary frequencies scaled "
                        "at the highest one, or a cache that dropped keys, such as a sliding window's, can do "
                        "that); attnviz check --checks kv_cache compares the step with the full forward",
                    ),
                    index=index,
                    key=key,
                    old=old,
                    expected=expected,
                )
            )
            return []
        return [found] if isinstance(found, PositionReading) else []

    def notes(self) -> list[str]:
        """One line for each kind of position the run's calls could not be checked for."""
        # Positions recorded at capture checked the steps a rotation could not be read for.
        out: list[str] = [] if self._recorded_steps else list(self._unexplained[:1])
        if self._shift_note is not None:
            out.append(self._shift_note)
        if self._padded_unchecked and not self._padded_checked and not self._reported_pads:
            out.append(
                message(
                    QT_TRANSLATE_NOOP(
                        "Doctor",
                        "positions not checked in the left-padded batch of call {index}: a capture shows them only "
                        "where two differently padded batch elements start with the same tokens (their queries "
                        "must then agree), and it holds no such pair (or no tokens); attnviz check --checks "
                        "padding runs each sequence alone against the batch",
                    ),
                    index=self._padded_unchecked[0],
                )
            )
        # A step is read at its first layer: its other layers (the same shape) share its positions.
        calls = [index for index, shape in self._steps_unchecked if shape not in self._steps_read]
        if calls:
            out.append(
                message(
                    QT_TRANSLATE_NOOP(
                        "Doctor",
                        "positions not checked in the cached step(s) of call(s) {calls}: a capture shows a step's "
                        "positions where it records the model's rotary or position embedding (a module holding "
                        "inv_freq or named like one, called with the positions), or in a rotary model where a new "
                        "token repeats one in its cache (at the first layer the two have the same values, and the "
                        "rotation between their keys is their distance); neither is here; attnviz check --checks "
                        "kv_cache compares the step with the full forward",
                    ),
                    calls=", ".join(str(c) for c in calls[:6]) + (", ..." if len(calls) > 6 else ""),
                )
            )
        return out

    # ------------------------------------------------------------------------- positions recorded

    def _recorded(
        self, index: int, call: AttentionCall, allowed: np.ndarray, pad_q: np.ndarray | None
    ) -> list[PositionReading] | None:
        """Wrong positions read from the positions the capture recorded for this call's queries
        (``AttentionCall.positions``); None when there are none to read here."""
        positions = call.positions
        if positions is None or call.positions_from is None:
            return None
        b, _h, n_q, n_k = allowed.shape
        if positions.shape[-1] != n_q:
            return None
        given = np.broadcast_to(np.asarray(positions, dtype=np.float64), (b, n_q))
        real_q = np.ones((b, n_q), dtype=bool) if pad_q is None or pad_q.shape != (b, n_q) else ~pad_q
        sees = np.asarray(allowed.any(1))  # (B, L_q, L_k): keys each query row sees in some head
        if n_q < n_k:
            return self._recorded_step(index, call, given, real_q, sees)
        if n_q == n_k and not self._padded_done and pad_q is not None and pad_q.shape == (b, n_q):
            return self._recorded_padded(index, call, given, real_q, sees)
        return None

    def _recorded_step(
        self, index: int, call: AttentionCall, given: np.ndarray, real_q: np.ndarray, sees: np.ndarray
    ) -> list[PositionReading]:
        b, n_q, _n_k = sees.shape
        self._steps_read.add((n_q, sees.shape[2]))
        key = (n_q, sees.shape[2], given.tobytes())
        if key in self._recorded_steps:
            return []  # the step's other layers: the same positions, said once
        self._recorded_steps.add(key)
        wrong: list[tuple[int, int, float, int]] = []  # (element, row, position given, keys cached)
        for e in range(b):
            rows = np.flatnonzero(real_q[e] & sees[e].any(-1))
            if rows.size == 0:
                continue
            r = int(rows[0])
            # the keys before it: the row sees itself too; at most those before the step's own
            # (a diffusion canvas's rows see every key of their block, DiffusionGemma's decoder;
            # a static cache writes the step's keys among unfilled slots, not last)
            cached = min(int(sees[e, r].sum()) - 1, int(sees[e, r, : sees.shape[2] - n_q].sum()))
            if cached >= 1 and given[e, r] < cached:
                wrong.append((e, r, float(given[e, r]), cached))
        if not wrong:
            return []
        e, r, first, cached = wrong[0]
        shown = " ".join(_number(p) for p in given[e, r : r + 4]) + (" ..." if n_q - r > 4 else "")
        text = message(
            QT_TRANSLATE_NOOP(
                "Doctor",
                "positions, not the mask: this cached step's positions restart at {first} while {cached} key(s) are "
                "cached: the model's {module} embedding was called with positions {shown} for the step's query rows "
                "(batch element {e}), where the cache puts its first new token at position {cached} or later; "
                "every batch element's step restarts this way: {elements}; the mask was ruled out (the step sees "
                "its cached keys); offset the positions by the cache's length (past_key_values.get_seq_length(), "
                "cache_position)",
            )
            if len(wrong) == b
            else QT_TRANSLATE_NOOP(
                "Doctor",
                "positions, not the mask: this cached step's positions restart at {first} while {cached} key(s) are "
                "cached: the model's {module} embedding was called with positions {shown} for the step's query rows "
                "(batch element {e}), where the cache puts its first new token at position {cached} or later; "
                "batch elements whose step restarts: {elements}; the mask was ruled out (the step sees its cached "
                "keys); offset the positions by the cache's length (past_key_values.get_seq_length(), cache_position)",
            ),
            first=_number(first),
            cached=cached,
            module=module_word(call.positions_from),
            shown=shown,
            e=e,
            elements=", ".join(str(w[0]) for w in wrong),
        )
        where = tuple(sorted({w[1] for w in wrong}))
        return [
            PositionReading(
                "positions", text, tuple(range(call.shape[1])), tuple(w[0] for w in wrong), where, len(wrong)
            )
        ]

    def _recorded_padded(
        self, index: int, call: AttentionCall, given: np.ndarray, real_q: np.ndarray, sees: np.ndarray
    ) -> list[PositionReading] | None:
        """A left-padded batch's first causal call: its real tokens' positions against each
        sequence's own (its first real token at 0)."""
        b, n, _ = sees.shape
        later = np.triu(np.ones((n, n), dtype=bool), 1)
        lead = [int(np.argmax(real_q[e])) if real_q[e].any() else 0 for e in range(b)]
        if not any(lead):
            return None  # nothing padded on the left: arange is each sequence's own
        # Where a sequence alone starts counting: 0, or the first position of an element that
        # starts with a real token (RoBERTa counts from padding_idx + 1).
        starts = [float(given[e, 0]) for e in range(b) if lead[e] == 0 and real_q[e].any()]
        origin = min(starts) if starts else 0.0
        if bool((sees & later & real_q[:, :, None]).any()) and origin == 0:
            # Not causal and counting from 0: an encoder, whose padding the positions are read
            # elsewhere for; one that counts from another origin tells it by the origin.
            return None
        self._padded_done = True
        counted = [
            e
            for e in range(b)
            if lead[e] > 0 and given[e, lead[e]] - origin >= lead[e] and given[e, lead[e]] - origin > 0
        ]
        if not counted:
            self._padded_checked = True
            return []
        e = counted[0]
        if call.positions_from in _RELATIVE:
            self._shift_note = _recorded_shift_text(index, counted, lead, given, call.positions_from)
            self._padded_checked = True
            return []
        self._reported_pads = True
        text = message(
            QT_TRANSLATE_NOOP(
                "Doctor",
                "positions, not the mask: the position_ids count the pads of this left-padded batch: batch element "
                "{e}'s first real token (row {row}, after {pads} pad(s)) was given position {given} where its "
                "sequence alone starts at {origin}, and the model adds {module} embeddings, so its real tokens "
                "get other queries and keys than alone; batch elements given such positions: {elements}; the mask "
                "follows the padding, so it was ruled out; pass position_ids = (attention_mask.cumsum(-1) - "
                "1).clamp(min=0)",
            ),
            e=e,
            module=module_word(call.positions_from),
            row=lead[e],
            pads=lead[e],
            given=_number(float(given[e, lead[e]])),
            origin=_number(origin),
            elements=", ".join(str(x) for x in counted),
        )
        rows = tuple(r for x in counted for r in np.flatnonzero(real_q[x]).tolist())
        return [
            PositionReading(
                "positions", text, tuple(range(call.shape[1])), tuple(counted), tuple(sorted(set(rows))), len(rows)
            )
        ]

    # ------------------------------------------------------------------------- a left-padded batch

    def _padded(
        self,
        index: int,
        call: AttentionCall,
        allowed: np.ndarray,
        pad_q: np.ndarray | None,
        tokens: np.ndarray | None,
    ) -> list[PositionReading]:
        b, _h, n, _k = allowed.shape
        real: np.ndarray
        if pad_q is None or pad_q.shape != (b, n):
            real = np.asarray(allowed.any((1, 2)))  # keys some query sees: the padding the mask shows is the rest
        else:
            real = ~pad_q
        lead = [int(np.argmax(real[e])) if real[e].any() else -1 for e in range(b)]
        padded = {lead[e] for e in range(b) if lead[e] >= 0}
        if len(padded) < 2:
            return []  # no element padded on the left more than another: arange is each one's own
        later = np.triu(np.ones((n, n), dtype=bool), 1)
        if bool((allowed & later & real[:, None, :, None]).any()):
            return []  # not causal: a token's states depend on what follows it
        self._padded_done = True
        if tokens is None or tokens.shape != (b, n):
            self._padded_unchecked.append(index)
            return []
        assert call.queries is not None and call.keys is not None and call.values is not None
        q, k, v = (np.asarray(t) for t in (call.queries, call.keys, call.values))
        tol = _tolerance(q.dtype)
        scales = [max(float(np.abs(t).max()), 1e-30) for t in (q, k, v)]
        words = [list(tokens[e][real[e]]) for e in range(b)]
        where = [np.flatnonzero(real[e]) for e in range(b)]
        compared = False
        for e in range(min(b, _ELEMENTS)):
            for f in range(e + 1, min(b, _ELEMENTS)):
                if lead[e] < 0 or lead[f] < 0 or lead[e] == lead[f]:
                    continue
                shared = 0
                while shared < min(len(words[e]), len(words[f])) and words[e][shared] == words[f][shared]:
                    shared += 1
                for i in range(min(shared, _ROWS)):
                    x, y = int(where[e][i]), int(where[f][i])
                    compared = True
                    same = [_equal(t[e, :, x], t[f, :, y], s, tol) for t, s in zip((q, k, v), scales)]
                    if all(same):
                        continue
                    rotated = same[2] and all(
                        _rotation(t[e, :, x].astype(np.float64), t[f, :, y].astype(np.float64), tol) is not None
                        for t in (q, k)
                    )
                    if rotated:
                        # Rotary only: each sequence moved as a whole, which its attention ignores.
                        self._shift_note = _shift_text(index, e, f, abs(lead[f] - lead[e]))
                        self._padded_checked = True
                        return []
                    self._reported_pads = True
                    return [_counted_pads(call, q, e, f, x, y, i, lead, words, tol, scales[0])]
        if compared:
            self._padded_checked = True
        else:
            self._padded_unchecked.append(index)
        return []


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3g}"


#: The words for the kind of code a call's positions were read from (``recorded_positions``).
_MODULE_WORDS = {
    "learned": QT_TRANSLATE_NOOP("Doctor", "learned position"),
    "sinusoidal": QT_TRANSLATE_NOOP("Doctor", "sinusoidal position"),
    "alibi": QT_TRANSLATE_NOOP("Doctor", "ALiBi"),
}
#: Kinds of positions a shift of a whole sequence leaves the weights alone for (relative ones):
#: a rotation's angle between a query and a key, ALiBi's distance.
_RELATIVE = ("rotary", "alibi")


def module_word(kind: str | None) -> str:
    """The kind of embedding positions were read from, as a sentence names it ("the model's
    {word} embedding"): rotary, learned position, sinusoidal position, ALiBi."""
    return _MODULE_WORDS.get(kind or "", QT_TRANSLATE_NOOP("Doctor", "rotary"))


def _recorded_shift_text(index: int, counted: list[int], lead: list[int], given: np.ndarray, kind: str | None) -> str:
    e = counted[0]
    return message(
        QT_TRANSLATE_NOOP(
            "Doctor",
            "in call {index} the position_ids count the pads of the left-padded batch (batch element {e}'s first real "
            "token was given position {given} after {pads} pad(s)); {module} attention ignores a shift of a whole "
            "sequence, so its weights are those of each sequence's own positions; pass "
            "(attention_mask.cumsum(-1) - 1).clamp(min=0) all the same",
        ),
        module=module_word(kind),
        index=index,
        e=e,
        given=_number(float(given[e, lead[e]])),
        pads=lead[e],
    )


def _shift_text(index: int, e: int, f: int, apart: int) -> str:
    return message(
        QT_TRANSLATE_NOOP(
            "Doctor",
            "in call {index} the position_ids count the pads of the left-padded batch (batch elements {e} and {f} "
            "start with the same tokens, {apart} position(s) apart, and their queries and keys are the same vectors "
            "rotated); rotary attention ignores a shift of a whole sequence, so its weights are those of each "
            "sequence's own positions; pass (attention_mask.cumsum(-1) - 1).clamp(min=0) all the same",
        ),
        index=index,
        e=e,
        f=f,
        apart=apart,
    )


def _counted_pads(
    call: AttentionCall,
    q: np.ndarray,
    e: int,
    f: int,
    x: int,
    y: int,
    i: int,
    lead: list[int],
    words: list[list[str]],
    tol: _Tolerance,
    scale: float,
) -> PositionReading:
    heads = tuple(int(h) for h in range(q.shape[1]) if not _equal(q[e, h, x], q[f, h, y], scale, tol)) or tuple(
        range(q.shape[1])
    )
    largest = float(np.abs(q[e, :, x].astype(np.float64) - q[f, :, y].astype(np.float64)).max())
    prefix = " ".join(str(w) for w in words[e][: i + 1][:4]) + (" ..." if i + 1 > 4 else "")
    more, fewer = (e, f) if lead[e] > lead[f] else (f, e)
    text = message(
        QT_TRANSLATE_NOOP(
            "Doctor",
            "positions, not the mask: batch elements {e} and {f} start with the same tokens ({prefix}), so in this "
            "causal call their real token {i} must get the same queries, keys and values wherever the padding put "
            "it, yet its queries differ by up to {largest:.3g} (rows {x} and {y}); element {more} has {pads} more "
            "pad(s) before it than element {fewer}, and its position_ids count them (arange over a left-padded "
            "batch); the mask follows the padding here, so it was ruled out; pass position_ids = "
            "(attention_mask.cumsum(-1) - 1).clamp(min=0)",
        ),
        e=e,
        f=f,
        prefix=prefix,
        i=i,
        largest=largest,
        x=x,
        y=y,
        more=more,
        fewer=fewer,
        pads=abs(lead[e] - lead[f]),
    )
    return PositionReading("positions", text, heads, (e, f), tuple(sorted({x, y})), 2)


def _cached_step(
    index: int, call: AttentionCall, allowed: np.ndarray, pad_k: np.ndarray | None
) -> PositionReading | bool | tuple[int, int, int] | None:
    """A cached step's positions read from a new token and its copy in the cache: the reading
    when they are wrong, True when they were checked and right, (copy's key, token's key,
    distance) when the rotation between them is neither their distance nor a restart, None when
    no token repeats one in the cache, False when the call is no cached step (no query's last
    key is its own)."""
    assert call.queries is not None and call.keys is not None and call.values is not None
    k, v = np.asarray(call.keys), np.asarray(call.values)
    b, _h, n_q, n_k = call.shape
    tol = _tolerance(k.dtype)
    v_scale = max(float(np.abs(v).max()), 1e-30)
    cached = n_k - n_q
    # A cached step of a causal model: each query row that sees a key sees its own (bottom-right)
    # last; a call that lets a query see later keys is some other attention.
    own = np.asarray(allowed[:, :, np.arange(n_q), cached + np.arange(n_q)].all(1))  # (B, L_q)
    later = np.triu(np.ones((n_q, n_k), dtype=bool), cached + 1)
    if bool((allowed & later).any()) or not bool(own.any()):
        return False
    checked = False
    restarted: dict[int, list[tuple[int, int, int, int, int]]] = {}
    unexplained: tuple[int, int, int] | None = None
    for e in range(min(b, _ELEMENTS)):
        seen = allowed[e].any((0, 1))
        pads = ~seen if pad_k is None or pad_k.shape != (b, n_k) else pad_k[e]
        position = np.cumsum(~pads) - 1  # each real key's position among the real keys
        flat_v = v[e].transpose(1, 0, 2).reshape(n_k, -1).astype(np.float64)
        for r in range(min(n_q, _ROWS)):
            j = cached + r
            if not own[e, r] or pads[j]:
                continue  # padding: no position to read
            near = np.abs(flat_v[:cached] - flat_v[j]).max(-1) <= tol.equal * v_scale
            for old in np.flatnonzero(near & ~pads[:cached]):
                angle = _rotation(k[e, :, old].astype(np.float64), k[e, :, j].astype(np.float64), tol)
                if angle is None:
                    continue
                expected = int(position[j] - position[old])
                if _fits(angle, 0, tol) and _apart(expected, 0, tol):
                    continue  # the same key at two positions: no rotation to read (or a restart onto 0)
                if _fits(angle, expected, tol):
                    checked = True
                    continue
                # Restarted, the step's token is at r and its copy at its own position: ``old``
                # less the keys hidden before it that were padding (a window hides keys too, so
                # any count of them may be): told apart only among a few counts.
                hidden = int(pads[:old].sum())
                counts = range(hidden, -1, -1) if hidden <= _COUNTS else range(0)
                for restart in (r - (old - c) for c in counts):
                    if _fits(angle, restart, tol) and _apart(expected, restart, tol):
                        restarted.setdefault(e, []).append((r, j, int(old), expected, restart))
                        break
                else:
                    unexplained = unexplained or (int(old), j, expected)
    if restarted:
        return _restarted(call, restarted, cached)
    if checked:
        return True
    return unexplained


def _restarted(
    call: AttentionCall, found: dict[int, list[tuple[int, int, int, int, int]]], cached: int
) -> PositionReading:
    e = min(found)
    r, j, old, expected, restart = found[e][0]
    text = message(
        QT_TRANSLATE_NOOP(
            "Doctor",
            "positions, not the mask: this cached step's positions restart at 0: its new token at key {j} (query row "
            "{r}) repeats the token at key {old}, and at the first layer the rotation between their keys is {restart} "
            "position(s), where the {cached} cached token(s) before the step put them {expected} apart; the step was "
            "given positions counted from its own first token, not from the cache's length; offset them by the "
            "number of cached tokens (past_key_values.get_seq_length(), cache_position)",
        ),
        j=j,
        r=r,
        old=old,
        restart=restart,
        cached=cached,
        expected=expected,
    )
    rows = sorted({item[0] for items in found.values() for item in items})
    return PositionReading("positions", text, tuple(range(call.shape[1])), tuple(sorted(found)), tuple(rows), len(rows))
