"""Capture files (``.attnviz-capture``): a model run's attention calls, read lazily.

Layout (version 3, which reads versions 1 and 2 too, and writes a file that holds nothing of
version 3 as version 2; ``CAPTURE_FORMAT.md`` next to this module says it for other readers):

* 16 bytes of magic, ``ATTNVIZ-CAPTURE\\n``: a capture is told from a session (a zip archive)
  and from a tensor file by its first bytes, whatever its name;
* an unsigned little-endian 64-bit header length N (at most ``MAX_HEADER_BYTES``);
* N bytes of UTF-8 JSON (padded with spaces so that the data starts at a multiple of 64): the
  calls, their names, scalars and the dtype, shape and offset of each array, and the tokens;
* the data: each array little-endian and C-ordered at its offset (a multiple of 64) from the
  start of the data. Arrays the run shares (one mask passed to every layer) are stored once and
  named by several calls; other ranges never overlap.

Reading maps the file (``np.memmap``, read-only): an array is read from disk when it is used,
so a capture larger than memory opens at once. Before anything is mapped, the header length is
bounded, the JSON is parsed with duplicate keys and NaN/Infinity refused, and every offset,
shape and dtype is checked against the file's size. Nothing is ever unpickled. Every refusal is
a :class:`CaptureFileError` with one line naming the file.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import stat
import struct
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO, get_args

import numpy as np

from attnviz.io import _json
from attnviz.io._atomic import atomic_write
from attnviz.io._limits import Budget, label_lists, regular_file_size
from attnviz.io._safetensors import _DTYPES, safetensors_code
from attnviz.io.call_fields import call_field_error, checked_call_fields
from attnviz.io.errors import CaptureFileError, cannot_write, refusals
from attnviz.io.storable import storable
from attnviz.state import catalog
from attnviz.state.run import (
    MAX_WORLD_SIZE,
    SCORE_TERM_KINDS,
    AttentionCall,
    CallPath,
    CallTerm,
    MaskArguments,
    ModelRun,
    ModelRunError,
    Shard,
    Source,
)
from attnviz.text.tr import QT_TRANSLATE_NOOP, exception_message, message

__all__ = [
    "CAPTURE_SUFFIX",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MAGIC",
    "is_capture_file",
    "load_capture",
    "save_capture",
]

MAGIC = b"ATTNVIZ-CAPTURE\n"
FORMAT_NAME = "attnviz-capture"
FORMAT_VERSION = 3
#: The version a file is written as when it holds nothing of version 3 (an ALiBi term, a call's
#: unhonoured block sparsity): readable by version-2 readers.
_PLAIN_VERSION = 2
CAPTURE_SUFFIX = ".attnviz-capture"
#: The header holds names, scalars and tokens: a few kB per call, a few MB with long token lists
#: (64 sequences of 4,096 tokens take about 4 MB).
MAX_HEADER_BYTES = 16 * 2**20
#: Where the data starts and every array's offset: a multiple of this (cache lines, any dtype).
ALIGNMENT = 64
#: Arrays are queries, keys, values, outputs, weights (4-D) and masks (at most 4-D).
MAX_DIMS = 4

#: The arrays a call may hold, in the order they are written.
ARRAY_ROLES: tuple[str, ...] = (
    "queries",
    "keys",
    "values",
    "output",
    "weights",
    "attn_mask",
    "key_padding_mask",
    "attention_mask",
    "sinks",
    "positions",
)
#: A call's score-term arrays are named "term_0", "term_1"... after their place in its "terms".
TERM_ARRAY = "term_{index}"
_CALL_KEYS = {"name", "arrays", "is_causal", "scale", "fidelity", "note", "dtype"}
#: Version 2 adds these to a call and to the header.
_CALL_KEYS_2 = {"terms", "path", "tokens"}
#: Version 3 adds the positions a call's queries were given (its "positions" array), and from what.
_CALL_KEYS_3 = {"positions_from"}
#: What a call's positions were read from (``attnviz.capture.recorded_positions``).
_POSITIONS_FROM = ("rotary", "learned", "sinusoidal", "alibi")
_TOP_KEYS = {"format", "version", "source", "query_tokens", "key_tokens", "calls"}
_TOP_KEYS_2 = {"token_sets", "shard"}
_PATH_KEYS: dict[str, type | tuple[type, ...]] = {
    "implementation": str,
    "function": str,
    "weights_requested": (bool, type(None)),
    "fast_path": bool,
    "sdpa_backend": (str, type(None)),
    "packed_gqa": bool,
    "weights_only": bool,
}

#: Keys of a call's "path" that a file may leave out (written only where they say something).
_OPTIONAL_PATH_KEYS: tuple[str, ...] = ("unhonoured_blocks", "value_heads")
#: The most query heads a path's "value_heads" may list (far above any model's).
_MAX_HEADS = 1 << 14

_SOURCES: tuple[str, ...] = get_args(Source)
# ----------------------------------------------------------------------------- writing


def save_capture(path: str | os.PathLike[str], run: ModelRun) -> None:
    """Write ``run`` to ``path`` atomically (an existing file is replaced only on success).

    Call names must be unique (they are how a user tells calls apart). Raises
    :class:`CaptureFileError` when something cannot be stored or the write fails.
    """
    file_path = Path(path)
    names = [call.name for call in run.calls]
    repeated = next((name for name in names if names.count(name) > 1), None)
    if repeated is not None:
        raise CaptureFileError(
            file_path,
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "cannot be written: two calls are named '{name}' (call names must be unique)"
                ),
                name=repeated,
            ),
        )
    blobs: list[np.ndarray] = []
    offsets: dict[int, int] = {}  # id(array) -> offset: an array shared by calls is stored once
    size = 0

    def place(array: np.ndarray) -> dict[str, Any]:
        nonlocal size
        try:
            code = safetensors_code(array.dtype)
        except ValueError as exc:
            raise CaptureFileError(
                file_path,
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "cannot be written: {problem}"), problem=exception_message(exc)
                ),
            ) from exc
        if id(array) not in offsets:
            offsets[id(array)] = size
            blobs.append(array)
            size += -(-array.nbytes // ALIGNMENT) * ALIGNMENT
        return {"dtype": code, "shape": list(array.shape), "offset": offsets[id(array)]}

    token_sets: list[list[list[str]] | None] = []
    token_index: dict[int, int] = {}  # id(tokens) -> its place in token_sets: shared tables stored once

    def tokens_entry(tokens: np.ndarray | None) -> int | None:
        if tokens is None:
            return None
        if id(tokens) not in token_index:
            token_index[id(tokens)] = len(token_sets)
            token_sets.append(label_lists(tokens))
        return token_index[id(tokens)]

    try:
        run = storable(run)  # a live mask_mod or score_mod: the arrays it amounts to
    except ModelRunError as exc:
        raise CaptureFileError(
            file_path, message(QT_TRANSLATE_NOOP("FileErrors", "cannot be written: {problem}"), problem=exc)
        ) from exc
    calls = []
    for call in run.calls:
        stored = call
        positions = call.positions
        b, _h, n_q, _n_k = call.shape
        if positions is not None and (
            positions.ndim != 2 or positions.shape[1] != n_q or positions.shape[0] not in (1, b)
        ):
            stored = replace(call, positions=None, positions_from=None)  # edited to another length since
        arrays = {role: place(np.asarray(array)) for role, array in _call_arrays(stored)}
        terms: list[dict[str, Any]] = []
        for index, term in enumerate(stored.terms):
            entry: dict[str, Any] = {"kind": term.kind, "name": term.name}
            if term.kind == "softcap":
                entry["cap"] = term.cap
            else:
                entry["array"] = TERM_ARRAY.format(index=index)
                arrays[entry["array"]] = place(np.asarray(term.values))
            terms.append(entry)
        calls.append(
            {
                "name": stored.name,
                "arrays": arrays,
                "is_causal": stored.masks.is_causal,
                "scale": stored.scale,
                "fidelity": _json.fidelity_to_json(stored.fidelity),
                "note": str(stored.note),
                "dtype": stored.dtype,
                "terms": terms,
                "path": None if stored.path is None else stored.path.as_dict(),
                "tokens": {"queries": tokens_entry(stored.query_tokens), "keys": tokens_entry(stored.key_tokens)},
            }
        )
        if stored.positions is not None:  # written only where there are some (version 3)
            calls[-1]["positions_from"] = stored.positions_from
    shard = run.shard
    header = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION if _needs_version_3(run) else _PLAIN_VERSION,
        "source": run.source,
        "query_tokens": label_lists(run.query_tokens),
        "key_tokens": label_lists(run.key_tokens),
        "token_sets": token_sets,
        "shard": None
        if shard is None
        else {"rank": shard.rank, "world_size": shard.world_size, "sharding": shard.sharding},
        "calls": calls,
    }
    try:
        text = json.dumps(header, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    except ValueError as exc:  # a NaN scale or fidelity: JSON has no NaN
        raise CaptureFileError(
            file_path, message(QT_TRANSLATE_NOOP("FileErrors", "cannot be written: {problem}"), problem=str(exc))
        ) from exc
    if len(text) > MAX_HEADER_BYTES:
        raise CaptureFileError(
            file_path,
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "cannot be written: its header would be {size} bytes, more than the {limit} allowed "
                    "(too many tokens or calls)",
                ),
                size=f"{len(text):,}",
                limit=f"{MAX_HEADER_BYTES:,}",
            ),
        )
    text += b" " * (-(len(MAGIC) + 8 + len(text)) % ALIGNMENT)
    try:
        with atomic_write(file_path) as stream:
            stream.write(MAGIC)
            stream.write(struct.pack("<Q", len(text)))
            stream.write(text)
            _write_blobs(stream, blobs)
    except OSError as exc:
        raise CaptureFileError(file_path, cannot_write(exc)) from exc


def _call_arrays(call: AttentionCall) -> Iterator[tuple[str, np.ndarray]]:
    masks = call.masks
    for role in ARRAY_ROLES:
        array = getattr(masks if role in ("attn_mask", "key_padding_mask", "attention_mask") else call, role)
        if array is not None:
            yield role, array


def _write_blobs(stream: BinaryIO, blobs: list[np.ndarray]) -> None:
    for array in blobs:
        little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        # A flat uint8 view writes any dtype (bool too) without a tobytes() copy.
        stream.write(little.reshape(-1).view(np.uint8).data)
        stream.write(b"\0" * (-little.nbytes % ALIGNMENT))


# ----------------------------------------------------------------------------- reading


def is_capture_file(path: str | os.PathLike[str]) -> bool:
    """True when the file starts with a capture's magic (False for anything else, unreadable too).
    Never blocks: only a regular file is opened (a FIFO would wait for a writer for ever), and
    without blocking, should a FIFO take its place between the look and the opening."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as handle:
            return handle.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def load_capture(path: str | os.PathLike[str]) -> ModelRun:
    """Open a capture file as a :class:`ModelRun` whose arrays are read-only ``np.memmap`` views.

    Nothing is read beyond the header until an array is used. Raises :class:`CaptureFileError`
    (one line) for anything that is not a complete, valid capture of a version this code reads.
    The file must not be truncated or rewritten in place while the run is in use (a mapped file
    that shrinks makes reading the lost part fail); attnviz's own saves replace files atomically.
    """
    file_path = Path(path)
    budget = Budget(file_path, CaptureFileError)
    with refusals(CaptureFileError, file_path):
        size = regular_file_size(
            file_path, budget, QT_TRANSLATE_NOOP("FileErrors", "is a directory, not a capture file")
        )
        with open(file_path, "rb") as stream:
            header, data_start = _read_header(stream, size, budget)
        layout = _Layout(budget, size - data_start)
        version = header["version"]
        parsed = [_parse_call(index, raw, layout, version) for index, raw in enumerate(_calls_of(header, budget))]
        token_sets = _token_sets(header, budget)
        layout.check_overlaps()
        mapped = np.memmap(file_path, dtype=np.uint8, mode="r") if layout.spans else None
        calls = []
        for fields, arrays in parsed:
            views = {role: _view(mapped, data_start, entry) for role, entry in arrays.items()}
            masks = MaskArguments(
                views.pop("attn_mask", None),
                views.pop("key_padding_mask", None),
                views.pop("attention_mask", None),
                fields.pop("is_causal"),
            )
            terms = tuple(
                CallTerm(kind, name, values=None if array is None else views[array], cap=cap)
                for kind, name, array, cap in fields.pop("terms")
            )
            tokens = fields.pop("tokens")
            calls.append(
                AttentionCall(
                    queries=views.get("queries"),
                    keys=views.get("keys"),
                    values=views.get("values"),
                    output=views.get("output"),
                    weights=views.get("weights"),
                    masks=masks,
                    terms=terms,
                    sinks=views.get("sinks"),
                    positions=views.get("positions"),
                    query_tokens=_token_set(token_sets, tokens.get("queries"), budget),
                    key_tokens=_token_set(token_sets, tokens.get("keys"), budget),
                    **fields,
                )
            )
        try:
            run = ModelRun(
                tuple(calls),
                _tokens(header, "query_tokens", budget),
                _tokens(header, "key_tokens", budget),
                source=header["source"],
                shard=_shard(header.get("shard"), budget),
            )
        except ModelRunError as exc:
            raise budget.fail(exception_message(exc)) from exc
        for call in run.calls:
            _check_masks(call, budget)
            _check_terms(call, budget)
        return run


def _read_header(stream: BinaryIO, size: int, budget: Budget) -> tuple[dict[str, Any], int]:
    magic = stream.read(len(MAGIC))
    if magic != MAGIC:
        if magic.startswith(b"PK"):
            raise budget.fail(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "is not an attnviz capture (it is a zip archive: an attnviz session or a NumPy .npz?)"
                )
            )
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is not an attnviz capture (its first bytes do not match)"))
    prefix = stream.read(8)
    if len(prefix) < 8:
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is truncated: it ends before its header length"))
    (length,) = struct.unpack("<Q", prefix)
    if length > MAX_HEADER_BYTES:
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "is not a valid capture: it claims a {length}-byte header (at most {limit} allowed)"
                ),
                length=f"{length:,}",
                limit=f"{MAX_HEADER_BYTES:,}",
            )
        )
    data_start = len(MAGIC) + 8 + length
    if data_start > size:
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "is truncated: its header length ({length} bytes) is larger than the file"
                ),
                length=f"{length:,}",
            )
        )
    raw = stream.read(length)
    header = _json.read_description(
        raw,
        kind=QT_TRANSLATE_NOOP("FileErrors", "capture"),
        part=QT_TRANSLATE_NOOP("FileErrors", "capture header"),
        format_name=FORMAT_NAME,
        known_version=FORMAT_VERSION,
        fail=budget.fail,
    )
    version = header["version"]
    _only_keys(
        header,
        _TOP_KEYS | (_TOP_KEYS_2 if version >= 2 else set()),
        QT_TRANSLATE_NOOP("FileErrors", "the header"),
        budget,
    )
    if header.get("source") not in _SOURCES:
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "has an unknown source {value} (one of {known})"),
                value=repr(header.get("source"))[:40],
                known=", ".join(_SOURCES),
            )
        )
    return header, data_start


def _only_keys(obj: dict[str, Any], known: set[str], where: str, budget: Budget) -> None:
    unknown = sorted(set(obj) - known)
    if unknown:
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "has an unknown entry '{key}' in {where}"), key=unknown[0], where=where
            )
        )


def _calls_of(header: dict[str, Any], budget: Budget) -> list[dict[str, Any]]:
    calls = header.get("calls")
    if not isinstance(calls, list) or not calls or not all(isinstance(c, dict) for c in calls):
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "has no calls, or a damaged call list"))
    seen: set[Any] = set()
    for call in calls:
        name = call.get("name")
        if isinstance(name, str) and name in seen:
            raise budget.fail(message(QT_TRANSLATE_NOOP("FileErrors", "has two calls named '{name}'"), name=name))
        seen.add(name)
    return calls


class _Layout:
    """Checks each array's place in the data against the file's size and the other arrays."""

    def __init__(self, budget: Budget, data_size: int) -> None:
        self.budget = budget
        self.data_size = data_size
        #: (offset, end) -> (dtype code, shape, where): the arrays seen, one per stored range.
        self.spans: dict[tuple[int, int], tuple[str, tuple[int, ...], str]] = {}

    def entry(self, raw: Any, where: str) -> tuple[str, tuple[int, ...], int]:
        fail = self.budget.fail
        if not isinstance(raw, dict) or set(raw) != {"dtype", "shape", "offset"}:
            raise fail(message(QT_TRANSLATE_NOOP("FileErrors", "has a damaged entry for {where}"), where=where))
        code, shape, offset = raw["dtype"], raw["shape"], raw["offset"]
        if not isinstance(code, str) or code not in _DTYPES or code == "BF16":
            raise fail(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "has an unsupported dtype {dtype} for {where}"),
                    dtype=repr(code)[:20],
                    where=where,
                )
            )
        if (
            not isinstance(shape, list)
            or not 1 <= len(shape) <= MAX_DIMS
            or not all(_whole(s) and s >= 1 for s in shape)
        ):
            raise fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors", "has an invalid shape for {where} (1 to {most} dimensions, each at least 1)"
                    ),
                    where=where,
                    most=MAX_DIMS,
                )
            )
        if not _whole(offset) or offset < 0 or offset % ALIGNMENT:
            raise fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors", "has an invalid offset for {where} (a multiple of {alignment} is needed)"
                    ),
                    where=where,
                    alignment=ALIGNMENT,
                )
            )
        nbytes = math.prod(shape) * _DTYPES[code].itemsize
        end = offset + nbytes
        if end > self.data_size:
            raise fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "is truncated or lies: {where} needs bytes {begin}-{end} of the data, but only {size} "
                        "bytes follow the header",
                    ),
                    where=where,
                    begin=f"{offset:,}",
                    end=f"{end:,}",
                    size=f"{self.data_size:,}",
                )
            )
        seen = self.spans.get((offset, end))
        if seen is not None and seen[:2] != (code, tuple(shape)):
            raise fail(
                message(QT_TRANSLATE_NOOP("FileErrors", "has overlapping data for {a} and {b}"), a=seen[2], b=where)
            )
        self.spans.setdefault((offset, end), (code, tuple(shape), where))
        return code, tuple(shape), offset

    def check_overlaps(self) -> None:
        # Shared ranges were checked to be the same array; any other overlap lets a small file
        # claim more data than it holds.
        ordered = sorted((begin, end, info[2]) for (begin, end), info in self.spans.items())
        for (_b1, end1, where1), (begin2, _e2, where2) in itertools.pairwise(ordered):
            if begin2 < end1:
                raise self.budget.fail(
                    message(QT_TRANSLATE_NOOP("FileErrors", "has overlapping data for {a} and {b}"), a=where1, b=where2)
                )


def _whole(value: Any) -> bool:
    # bool is an int subclass; JSON true must not pass as a number.
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_call(
    index: int, raw: dict[str, Any], layout: _Layout, version: int = FORMAT_VERSION
) -> tuple[dict[str, Any], dict[str, tuple[str, tuple[int, ...], int]]]:
    fail = layout.budget.fail
    where_call = message(QT_TRANSLATE_NOOP("FileErrors", "call {index}"), index=index)
    known = _CALL_KEYS | (_CALL_KEYS_2 if version >= 2 else set()) | (_CALL_KEYS_3 if version >= 3 else set())
    _only_keys(raw, known, where_call, layout.budget)
    try:
        fields = checked_call_fields(raw, index)
    except ValueError as exc:
        raise fail(exception_message(exc)) from None
    name = fields["name"]
    arrays = raw.get("arrays")
    if not isinstance(arrays, dict):
        raise fail(message(QT_TRANSLATE_NOOP("FileErrors", "has no array list for call '{name}'"), name=name))
    terms = _terms_of(raw.get("terms", []), name, layout.budget, version)
    term_arrays = {array for _kind, _name, array, _cap in terms if array is not None}
    unknown = sorted(set(arrays) - set(ARRAY_ROLES) - term_arrays)
    missing = sorted(term_arrays - set(arrays))
    for arrays_named, complaint in (
        (missing, QT_TRANSLATE_NOOP("FileErrors", "has no array '{array}' for a score term of call '{name}'")),
        (unknown, QT_TRANSLATE_NOOP("FileErrors", "has an unknown array '{array}' in call '{name}'")),
    ):
        if arrays_named:
            raise fail(message(complaint, array=arrays_named[0], name=name))
    entries = {
        role: layout.entry(
            arrays[role],
            message(QT_TRANSLATE_NOOP("FileErrors", "array '{array}' of call '{name}'"), array=role, name=name),
        )
        for role in (*ARRAY_ROLES, *sorted(term_arrays))
        if role in arrays
    }
    dtype = raw.get("dtype")
    if dtype is not None and dtype not in catalog.DTYPE_OPTIONS:
        expected = QT_TRANSLATE_NOOP("FileErrors", "null or a dtype attnviz knows")
        raise fail(exception_message(call_field_error(index, "dtype", dtype, expected)))
    positions_from = raw.get("positions_from")
    if ("positions" in arrays) != (positions_from is not None) or positions_from not in (None, *_POSITIONS_FROM):
        raise fail(message(QT_TRANSLATE_NOOP("FileErrors", "has invalid positions in call '{name}'"), name=name))
    fields = {
        **fields,
        "positions_from": positions_from,
        "dtype": dtype,
        "terms": terms,
        "path": _path_of(raw.get("path"), name, layout.budget, version),
        "tokens": _tokens_ref(raw.get("tokens"), name, layout.budget),
    }
    return fields, entries


def _needs_version_3(run: ModelRun) -> bool:
    """The run holds what version 3 added: an "alibi" term, a path's "unhonoured_blocks", a call's
    positions."""
    return any(
        any(term.kind == "alibi" for term in call.terms)
        or call.positions is not None
        or (call.path is not None and (call.path.unhonoured_blocks is not None or call.path.value_heads is not None))
        for call in run.calls
    )


def _terms_of(
    raw: Any, call: str, budget: Budget, version: int = FORMAT_VERSION
) -> list[tuple[str, str, str | None, float | None]]:
    """A call's "terms": (kind, name, array, cap) each, checked."""

    def bad() -> Exception:
        return budget.fail(
            message(QT_TRANSLATE_NOOP("FileErrors", "has an invalid 'terms' in call '{name}'"), name=call)
        )

    if not isinstance(raw, list):
        raise bad()
    out: list[tuple[str, str, str | None, float | None]] = []
    for index, term in enumerate(raw):
        if (
            not isinstance(term, dict)
            or term.get("kind") not in SCORE_TERM_KINDS
            or not isinstance(term.get("name"), str)
        ):
            raise bad()
        kind = term["kind"]
        if kind == "softcap":
            cap = _json.whole_or_float(term.get("cap"))
            if set(term) != {"kind", "name", "cap"} or cap is None or not cap > 0:
                raise bad()
            out.append((kind, term["name"], None, float(cap)))
        else:
            if (
                kind not in ("bias", "alibi")
                or (kind == "alibi" and version < 3)
                or set(term) != {"kind", "name", "array"}
                or term["array"] != TERM_ARRAY.format(index=index)
            ):
                raise bad()
            out.append((kind, term["name"], term["array"], None))
    return out


def _path_of(raw: Any, call: str, budget: Budget, version: int = FORMAT_VERSION) -> CallPath | None:
    if raw is None:
        return None
    if (
        not isinstance(raw, dict)
        or set(raw) - set(_OPTIONAL_PATH_KEYS if version >= 3 else ()) != set(_PATH_KEYS)
        or not all(isinstance(raw[key], kind) for key, kind in _PATH_KEYS.items())
        or not _unhonoured_blocks_ok(raw.get("unhonoured_blocks"))
        or not _value_heads_ok(raw.get("value_heads"))
    ):
        raise budget.fail(message(QT_TRANSLATE_NOOP("FileErrors", "has an invalid 'path' in call '{name}'"), name=call))
    return CallPath(
        **{key: raw[key] for key in _PATH_KEYS},
        unhonoured_blocks=None if raw.get("unhonoured_blocks") is None else float(raw["unhonoured_blocks"]),
        value_heads=None if raw.get("value_heads") is None else tuple(int(h) for h in raw["value_heads"]),
    )


def _value_heads_ok(value: Any) -> bool:
    """None, or the KV head of each query head: whole numbers from 0, each below the count of heads."""
    if value is None:
        return True
    return (
        isinstance(value, list)
        and 0 < len(value) <= _MAX_HEADS
        and all(type(h) is int and 0 <= h < len(value) for h in value)
    )


def _unhonoured_blocks_ok(value: Any) -> bool:
    """None, or a share of blocks: a number in [0, 1]."""
    if value is None:
        return True
    number = _json.whole_or_float(value)
    return number is not None and 0.0 <= float(number) <= 1.0


def _tokens_ref(raw: Any, call: str, budget: Budget) -> dict[str, int | None]:
    if raw is None:
        return {}
    if (
        not isinstance(raw, dict)
        or set(raw) != {"queries", "keys"}
        or not all(value is None or (_whole(value) and value >= 0) for value in raw.values())
    ):
        raise budget.fail(
            message(QT_TRANSLATE_NOOP("FileErrors", "has an invalid 'tokens' in call '{name}'"), name=call)
        )
    return dict(raw)


def _token_sets(header: dict[str, Any], budget: Budget) -> list[Any]:
    raw = header.get("token_sets", [])
    if not isinstance(raw, list):
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "has damaged token_sets (a list of token tables is needed)"))
    return [[None, table] for table in raw]


def _token_set(sets: list[Any], index: int | None, budget: Budget) -> np.ndarray | None:
    """Token table ``index`` as a (B, L) str array, built (and counted) once however many calls
    name it."""
    if index is None:
        return None
    if index >= len(sets):
        raise budget.fail(
            message(QT_TRANSLATE_NOOP("FileErrors", "names token table {index}, which it does not have"), index=index)
        )
    entry = sets[index]
    if entry[0] is None:
        entry[0] = _tokens({"token_sets": entry[1]}, "token_sets", budget)
    return entry[0]


def _shard(raw: Any, budget: Budget) -> Shard | None:
    if raw is None:
        return None
    if (
        not isinstance(raw, dict)
        or set(raw) != {"rank", "world_size", "sharding"}
        or not (_whole(raw["rank"]) and _whole(raw["world_size"]) and 0 <= raw["rank"] < raw["world_size"])
        or raw["sharding"] not in (None, "data", "heads")
    ):
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "has an invalid 'shard' (rank, world_size, sharding)"))
    if raw["world_size"] > MAX_WORLD_SIZE:
        # Said without the number itself: a 4,000-digit one would be the line.
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "claims a world of more than {most} ranks"),
                most=f"{MAX_WORLD_SIZE:,}",
            )
        )
    return Shard(raw["rank"], raw["world_size"], raw["sharding"])


def _check_terms(call: AttentionCall, budget: Budget) -> None:
    """Score-term biases that broadcast to the call's (B, H, L_q, L_k) and are finite; sinks one
    per head."""
    b, h, n_q, n_k = call.shape
    for term in call.terms:
        values = term.values
        if values is None:
            continue
        if term.kind == "alibi":
            if values.shape != (h,) or values.dtype.kind != "f" or not bool(np.isfinite(values).all()):
                raise budget.fail(
                    message(
                        QT_TRANSLATE_NOOP(
                            "FileErrors",
                            "has ALiBi slopes of shape {shape} in call '{name}': one finite number per head ({heads})",
                        ),
                        shape=tuple(values.shape),
                        name=call.name,
                        heads=h,
                    )
                )
            continue
        fits = values.ndim >= 2 and all(s in (1, t) for s, t in zip(reversed(values.shape), (n_k, n_q, h, b)))
        if not fits or values.dtype.kind != "f":
            raise budget.fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "has a score term '{term}' of shape {shape} in call '{name}', which its attention of shape "
                        "{target} cannot take",
                    ),
                    term=term.name,
                    shape=tuple(values.shape),
                    name=call.name,
                    target=(b, h, n_q, n_k),
                )
            )
    sinks = call.sinks
    if sinks is not None and (sinks.shape not in ((h,), (b, h, n_q)) or sinks.dtype.kind != "f"):
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "has sinks of shape {shape} in call '{name}': floating-point numbers, one per head {heads} "
                    "or one per query of each head {per_query}",
                ),
                shape=tuple(sinks.shape),
                name=call.name,
                heads=(h,),
                per_query=(b, h, n_q),
            )
        )
    positions = call.positions
    if positions is not None and (
        positions.ndim != 2
        or positions.shape[1] != n_q
        or positions.shape[0] not in (1, b)
        or positions.dtype.kind != "f"
        or not bool(np.isfinite(positions).all())
    ):
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "has positions of shape {shape} in call '{name}': one finite number per query ({queries}), "
                    "for its batch ({batch}) or all of it",
                ),
                shape=tuple(positions.shape),
                name=call.name,
                queries=n_q,
                batch=b,
            )
        )


def _view(mapped: np.memmap | None, data_start: int, entry: tuple[str, tuple[int, ...], int]) -> np.ndarray:
    code, shape, offset = entry
    assert mapped is not None
    dtype = _DTYPES[code]
    begin = data_start + offset
    # A slice of the map is still an np.memmap: nothing is read until the array is used.
    return mapped[begin : begin + math.prod(shape) * dtype.itemsize].view(dtype).reshape(shape)


def _check_masks(call: AttentionCall, budget: Budget) -> None:
    """Masks that the engine can read as their argument declares: shapes that broadcast to the
    call's (B, H, L_q, L_k), dtypes the argument accepts."""
    b, h, n_q, n_k = call.shape
    masks = call.masks
    for role in ("attn_mask", "key_padding_mask", "attention_mask"):
        m = getattr(masks, role)
        if m is None:
            continue
        if role == "key_padding_mask" or (role == "attention_mask" and m.ndim == 2):
            fits = m.shape == (b, n_k)
        else:
            fits = m.ndim >= 2 and all(s in (1, t) for s, t in zip(reversed(m.shape), (n_k, n_q, h, b)))
        kinds = "bif" if role == "attention_mask" else "bf"
        if not fits or m.dtype.kind not in kinds:
            raise budget.fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "has a mask {role} of shape {shape} and dtype {dtype} in call '{name}', which its "
                        "attention of shape {target} cannot take",
                    ),
                    role=role,
                    shape=tuple(m.shape),
                    dtype=str(m.dtype),
                    name=call.name,
                    target=(b, h, n_q, n_k),
                )
            )


def _tokens(header: dict[str, Any], key: str, budget: Budget) -> np.ndarray | None:
    raw = header.get(key)
    if raw is None:
        return None
    if (
        not isinstance(raw, list)
        or not raw
        or not all(isinstance(row, list) for row in raw)
        or len({len(row) for row in raw}) != 1
        or not all(isinstance(token, str) for row in raw for token in row)
    ):
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "has damaged {key} (a list of equally long lists of strings is needed)"
                ),
                key=key,
            )
        )
    # Counted and measured on the list itself before numpy stores it (every string as wide as
    # the widest): the file's labels share one budget.
    return budget.labels(key, raw)
