"""A pickle reader that builds plain data and calls nothing but what its caller allows.

``pickle.Unpickler`` with a restricted ``find_class`` (what ``torch.load(weights_only=True)``
does) still lets a file choose allocation sizes: an allowed ``bytearray(6_400_000_000)``
zero-fills 6.4 GB from a 32-byte file, and the C unpickler grows its memo table to whatever
index a ``LONG_BINPUT`` names. This reader runs the opcodes itself, in Python, so that every
object it makes is backed by bytes of the pickle:

* globals resolve only through the caller's ``find_global``; the only things ever called are the
  :class:`Constructor` objects it returns (the caller's own functions, which build records);
* ``BUILD`` states are dropped rather than applied (they are Python attributes: an
  ``OrderedDict``'s ``_metadata``, a tensor subclass's ``__dict__``);
* the memo is a dict, numbers are at most ``MAX_NUMBER_BYTES`` long, dictionary keys are text or
  whole numbers below 2**61 (their hashes are themselves, so a file cannot make every key collide),
  and at most ``max_ops`` opcodes run: memory stays proportional to the pickle's size;
* everything else (object construction opcodes, extension codes, out-of-band buffers, the text
  opcodes of protocols 0 and 1) is refused.

The opcodes read are those protocols 2 to 5 use for tensors, storages and plain containers.
"""

from __future__ import annotations

import _compat_pickle
import pickletools
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from attnviz.io.errors import AttnvizFileError
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

MAX_NUMBER_BYTES = 64  # a 512-bit integer: far beyond any shape, offset or step count
_MAX_HASHED_INT = 2**61 - 1  # CPython hashes smaller ints to themselves (sys.hash_info.modulus)
_MAX_NAME_BYTES = 1024  # a GLOBAL's module or name: a dotted Python path
_OPCODE_NAMES = {op.code.encode("latin-1")[0]: op.name for op in pickletools.opcodes}


@dataclass(frozen=True)
class Constructor:
    """A global the pickle may call (``REDUCE``): ``build(*args)`` makes the object."""

    name: str
    build: Callable[..., Any]


class Truncated(Exception):
    """The pickle ended before its ``STOP``."""


Fail = Callable[[str], AttnvizFileError]


def load(
    data: bytes,
    start: int,
    *,
    find_global: Callable[[str, str], Any],
    persistent_load: Callable[[Any], Any],
    fail: Fail,
    max_ops: int,
) -> tuple[Any, int]:
    """The object pickled at ``data[start:]`` and the position just after its ``STOP``.

    Raises :class:`Truncated` when the data ends first, and ``fail(reason)`` for anything
    refused or damaged (``find_global`` and ``persistent_load`` raise ``fail(...)`` themselves).
    """
    machine = _Machine(data, start, find_global, persistent_load, fail)
    try:
        return machine.run(max_ops)
    except (AttnvizFileError, Truncated):
        raise
    except (IndexError, KeyError, TypeError, ValueError, UnicodeDecodeError, struct.error) as exc:
        # Stack underflow, a memo entry that was never stored, a constructor given the wrong
        # arguments: the pickle is damaged (nothing it asked for has been called).
        raise fail(QT_TRANSLATE_NOOP("FileErrors", "is truncated or damaged")) from exc


class _Machine:
    def __init__(
        self,
        data: bytes,
        pos: int,
        find_global: Callable[[str, str], Any],
        persistent_load: Callable[[Any], Any],
        fail: Fail,
    ) -> None:
        self.data = data
        self.pos = pos
        self.find_global = find_global
        self.persistent_load = persistent_load
        self.fail = fail
        self.stack: list[Any] = []
        self.marks: list[int] = []
        self.memo: dict[int, Any] = {}

    def run(self, max_ops: int) -> tuple[Any, int]:
        dispatch = _DISPATCH
        data = self.data
        for _ in range(max_ops):
            if self.pos >= len(data):
                raise Truncated
            code = data[self.pos]
            self.pos += 1
            if code == 0x2E:  # STOP
                return self.stack.pop(), self.pos
            handler = dispatch.get(code)
            if handler is None:
                raise self.fail(
                    _unsafe(
                        message(
                            QT_TRANSLATE_NOOP(
                                "FileErrors", "its pickle uses the {opcode} opcode, which attnviz does not read"
                            ),
                            opcode=_OPCODE_NAMES.get(code, f"0x{code:02x}"),
                        )
                    )
                )
            handler(self)
        raise self.fail(
            _unsafe(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "its pickle describes more than {limit} objects"),
                    limit=f"{max_ops:,}",
                )
            )
        )

    # --- reading arguments

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise Truncated
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def uint(self, n: int) -> int:
        return int.from_bytes(self.take(n), "little")

    def line(self) -> str:
        end = self.data.find(b"\n", self.pos, self.pos + _MAX_NAME_BYTES)
        if end < 0:
            raise Truncated if len(self.data) - self.pos < _MAX_NAME_BYTES else ValueError("name too long")
        text = self.data[self.pos : end].decode("utf-8")
        self.pos = end + 1
        return text

    def long(self, n: int) -> int:
        if n > MAX_NUMBER_BYTES:
            raise self.fail(
                _unsafe(
                    message(
                        QT_TRANSLATE_NOOP(
                            "FileErrors", "its pickle holds a {n}-byte number (at most {limit} bytes are read)"
                        ),
                        n=f"{n:,}",
                        limit=MAX_NUMBER_BYTES,
                    )
                )
            )
        return int.from_bytes(self.take(n), "little", signed=True)

    # --- the stack

    def pop_mark(self) -> list[Any]:
        start = self.marks.pop()
        items = self.stack[start:]
        del self.stack[start:]
        return items

    def key(self, key: Any) -> Any:
        if isinstance(key, str) or (isinstance(key, int) and -_MAX_HASHED_INT < key < _MAX_HASHED_INT):
            return key
        raise self.fail(
            _unsafe(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "its pickle uses a {type} as a dictionary key (only text and whole numbers are read)",
                    ),
                    type=type(key).__name__,
                )
            )
        )

    def set_items(self, target: Any, items: list[Any]) -> None:
        if not isinstance(target, dict) or len(items) % 2:
            raise TypeError("SETITEMS needs a dict and key-value pairs")
        for index in range(0, len(items), 2):
            target[self.key(items[index])] = items[index + 1]

    def reduce(self) -> None:
        args = self.stack.pop()
        func = self.stack[-1]
        if not isinstance(func, Constructor) or not isinstance(args, tuple):
            raise TypeError("REDUCE needs an allowed constructor and an argument tuple")
        self.stack[-1] = func.build(*args)

    def global_(self, module: Any, name: Any) -> None:
        if not isinstance(module, str) or not isinstance(name, str):
            raise TypeError("STACK_GLOBAL needs two strings")
        # Python 3 writes protocol-2 pickles with Python 2's names (builtins is __builtin__);
        # pickle maps them back, and so is the caller asked for the names Python 3 uses.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        else:
            module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        self.stack.append(self.find_global(module, name))


def _unsafe(reason: str) -> str:
    return message(
        QT_TRANSLATE_NOOP("FileErrors", "is not a PyTorch file that can be loaded safely ({error})"), error=reason
    )


def _append(m: _Machine) -> None:
    value = m.stack.pop()
    _list_on_top(m, "APPEND").append(value)


def _appends(m: _Machine) -> None:
    items = m.pop_mark()
    _list_on_top(m, "APPENDS").extend(items)


def _list_on_top(m: _Machine, opcode: str) -> list[Any]:
    """The list ``opcode`` adds to: the top of the stack, refused if it is anything else."""
    target = m.stack[-1]
    if not isinstance(target, list):
        raise TypeError(f"{opcode} needs a list")
    return target


def _setitems(m: _Machine) -> None:
    items = m.pop_mark()
    m.set_items(m.stack[-1], items)


def _setitem(m: _Machine) -> None:
    value = m.stack.pop()
    key = m.stack.pop()
    m.set_items(m.stack[-1], [key, value])


def _pop(m: _Machine) -> None:
    if m.stack and (not m.marks or m.marks[-1] < len(m.stack)):
        m.stack.pop()
    else:
        m.pop_mark()


def _proto(m: _Machine) -> None:
    if m.uint(1) > 5:
        raise ValueError("unknown pickle protocol")


def _persid(m: _Machine) -> None:
    m.stack.append(m.persistent_load(m.stack.pop()))


def _build(m: _Machine) -> None:
    m.stack.pop()  # the state: Python attributes, deliberately not applied (see the module doc)


def _memo_put(m: _Machine, index: int) -> None:
    m.memo[index] = m.stack[-1]


# Handlers' return values are ignored: each one changes the machine.
_DISPATCH: dict[int, Callable[[_Machine], object]] = {
    0x80: _proto,
    0x95: lambda m: m.take(8),  # FRAME: a read-ahead hint, nothing to build
    0x28: lambda m: m.marks.append(len(m.stack)),  # MARK
    0x30: _pop,  # POP
    0x31: lambda m: m.pop_mark(),  # POP_MARK
    0x32: lambda m: m.stack.append(m.stack[-1]),  # DUP
    0x4E: lambda m: m.stack.append(None),  # NONE
    0x88: lambda m: m.stack.append(True),  # NEWTRUE
    0x89: lambda m: m.stack.append(False),  # NEWFALSE
    0x4A: lambda m: m.stack.append(int.from_bytes(m.take(4), "little", signed=True)),  # BININT
    0x4B: lambda m: m.stack.append(m.uint(1)),  # BININT1
    0x4D: lambda m: m.stack.append(m.uint(2)),  # BININT2
    0x8A: lambda m: m.stack.append(m.long(m.uint(1))),  # LONG1
    0x8B: lambda m: m.stack.append(m.long(m.uint(4))),  # LONG4
    0x47: lambda m: m.stack.append(struct.unpack(">d", m.take(8))[0]),  # BINFLOAT
    0x8C: lambda m: m.stack.append(m.take(m.uint(1)).decode("utf-8", "surrogatepass")),  # SHORT_BINUNICODE
    0x58: lambda m: m.stack.append(m.take(m.uint(4)).decode("utf-8", "surrogatepass")),  # BINUNICODE
    0x8D: lambda m: m.stack.append(m.take(m.uint(8)).decode("utf-8", "surrogatepass")),  # BINUNICODE8
    0x43: lambda m: m.stack.append(m.take(m.uint(1))),  # SHORT_BINBYTES
    0x42: lambda m: m.stack.append(m.take(m.uint(4))),  # BINBYTES
    0x8E: lambda m: m.stack.append(m.take(m.uint(8))),  # BINBYTES8
    0x29: lambda m: m.stack.append(()),  # EMPTY_TUPLE
    0x74: lambda m: m.stack.append(tuple(m.pop_mark())),  # TUPLE
    0x85: lambda m: m.stack.append((m.stack.pop(),)),  # TUPLE1
    0x86: lambda m: m.stack.extend([(m.stack.pop(-2), m.stack.pop())]),  # TUPLE2
    0x87: lambda m: m.stack.extend([(m.stack.pop(-3), m.stack.pop(-2), m.stack.pop())]),  # TUPLE3
    0x5D: lambda m: m.stack.append([]),  # EMPTY_LIST
    0x61: _append,  # APPEND
    0x65: _appends,  # APPENDS
    0x7D: lambda m: m.stack.append({}),  # EMPTY_DICT
    0x73: _setitem,  # SETITEM
    0x75: _setitems,  # SETITEMS
    0x63: lambda m: m.global_(m.line(), m.line()),  # GLOBAL
    0x93: lambda m: m.global_(m.stack.pop(-2), m.stack.pop()),  # STACK_GLOBAL
    0x52: lambda m: m.reduce(),  # REDUCE
    0x62: _build,  # BUILD
    0x51: _persid,  # BINPERSID
    0x71: lambda m: _memo_put(m, m.uint(1)),  # BINPUT
    0x72: lambda m: _memo_put(m, m.uint(4)),  # LONG_BINPUT
    0x94: lambda m: _memo_put(m, len(m.memo)),  # MEMOIZE
    0x68: lambda m: m.stack.append(m.memo[m.uint(1)]),  # BINGET
    0x6A: lambda m: m.stack.append(m.memo[m.uint(4)]),  # LONG_BINGET
}
