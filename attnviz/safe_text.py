"""Text read from files, shown where it could act: one line of printable text, or a Python literal.

Names, tokens, notes and paths come from files other people share. Written raw they act: a line
break ends a comment in generated code and the rest runs; an ESC sequence drives the terminal that
prints it; a bidi override makes an editor show code other than what runs; NUL or another control
character makes an SVG file ill-formed XML (XML 1.0 forbids them). Everything that writes such text
into code, a terminal or XML goes through here:

- ``printable(text)``: one line of printable text, for comments, terminal lines and XML text
  (escape ``&<>"`` after, as XML needs): every kind of line break becomes a space; ESC sequences,
  other C0 and C1 controls, bidi controls, unpaired surrogates and XML's noncharacters are removed.
- ``python_literal(text)``: a Python string literal that reads back as ``text`` and holds printable
  characters only (Python's ``repr`` escapes every control, line break, bidi control and
  surrogate), so the code shows what it does and a literal is never split across lines.
- ``is_printable(text)``: whether ``printable`` would leave ``text`` as it is (generated code is
  checked with it line by line).

No Qt, no torch: the engine's neighbours, the command lines and the window all use it.
"""

from __future__ import annotations

import re

__all__ = ["BIDI_CONTROLS", "LINE_BREAKS", "is_printable", "printable", "python_literal"]

#: Every character Python's ``str.splitlines`` (and so editors, and Unicode) takes as a line break.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: The bidirectional formatting characters: embeddings, overrides, isolates, marks.
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"

# An ESC sequence is removed whole (leaving "[31m" behind would still be noise): CSI (ESC [ or
# the C1 CSI) with its parameters; OSC, DCS, SOS, PM, APC strings up to their terminator (BEL or
# ST) or the end of the text; any other ESC with the one character it introduces.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[\x20-\x7e]?",
    re.DOTALL,
)
_BREAKS = re.compile(f"[{LINE_BREAKS}]+")
# What is left to remove: C0 and C1 controls (tab and line breaks were handled), DEL, bidi
# controls, unpaired surrogates (no encoding writes them), U+FFFE and U+FFFF (not XML characters).
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI_CONTROLS}\ud800-\udfff\ufffe\uffff]")


def printable(text: object, limit: int | None = None) -> str:
    """``text`` as one line of printable text: line breaks as spaces, tabs as spaces, escape
    sequences and other control and bidi characters removed; with ``limit``, at most that many
    characters (an ellipsis says some were cut)."""
    line = str(text)
    if not is_printable(line):
        line = _ESCAPES.sub("", line)
        line = _BREAKS.sub(" ", line).replace("\t", " ")
        line = _UNSAFE.sub("", line)
    if limit is not None and len(line) > limit:
        line = line[: max(limit - 1, 0)] + "…"
    return line


def is_printable(text: str) -> bool:
    """Whether ``text`` is one line with no control, bidi or surrogate character."""
    return _UNSAFE.search(text) is None and _BREAKS.search(text) is None and "\t" not in text


def python_literal(text: object) -> str:
    """A Python string literal of ``text``, exactly, in printable characters on one line (in
    double quotes, as the code around it, where ``text`` holds no double quote)."""
    text = str(text)
    literal = repr(text)
    if literal.startswith("'") and '"' not in text:
        # repr chose single quotes, so ``text`` holds no quote at all: only the delimiters change.
        literal = f'"{literal[1:-1]}"'
    # repr escapes what str.isprintable refuses: controls, line and paragraph separators, format
    # characters (bidi among them), surrogates. Checked, not assumed: a literal is code.
    if not is_printable(literal):
        literal = ascii(text)
    return literal
