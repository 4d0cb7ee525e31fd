"""Text read from files, shown where it could act: one line of printable text, or a Python literal.

Names, tokens, notes and paths come from files other people share. Written raw they act: a line
break ends a comment in generated code and the rest runs; an ESC sequence drives the terminal that
prints it; a bidi override makes an editor show code other than what runs; NUL or another control
character makes an SVG file ill-formed XML (XML 1.0 forbids them). Everything that writes such text
into code, a terminal or XML goes through here:

- ``printable(text)``: one line of printable text, for comments in generated code, terminal lines
  (``tr.clean``, so every message's values), labels and XML text (escape ``&<>"`` after, as XML
  needs): every kind of line break and tab becomes a space; ESC and the other C0 and C1 controls,
  bidi controls, unpaired surrogates and XML's noncharacters are escaped as visible text
  (``\\x1b``, ``\\u202e``), so what a name holds is seen and nothing in it acts.
- ``python_literal(text)``: a Python string literal that reads back as ``text`` and holds printable
  characters only (Python's ``repr`` escapes every control, line break, bidi control and
  surrogate), so the code shows what it does and a literal is never split across lines.
- ``xml_characters(document)``: a whole XML document (an SVG export) with the characters XML 1.0
  forbids removed, its line breaks kept: the last guard behind ``printable`` on its texts.
- ``is_printable(text)``: whether ``printable`` would leave ``text`` as it is (generated code is
  checked with it line by line).

No Qt, no torch: the engine's neighbours, the command lines and the window all use it.
"""

from __future__ import annotations

import re

__all__ = ["BIDI_CONTROLS", "LINE_BREAKS", "is_printable", "printable", "python_literal", "xml_characters"]

#: Every character Python's ``str.splitlines`` (and so editors, and Unicode) takes as a line break.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: The bidirectional formatting characters: embeddings, overrides, isolates, marks.
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"

# Never shown raw: C0 and C1 controls (a terminal acts on ESC, BEL, backspace, CSI), DEL, lone
# surrogates (the stand-ins for a file name's undecodable bytes: printing them fails), the
# bidirectional controls (they reorder the text around them, so a name can pose as another, or
# code read in an editor as other code) and U+FFFE, U+FFFF (not characters, in XML neither).
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff{BIDI_CONTROLS}\ufffe\uffff]")
# Line breaks and tabs, with the spaces around them: one space in their place keeps one line.
_BREAKS = re.compile(f"\\s*[\t{LINE_BREAKS}\x1f]\\s*")
# What XML 1.0 does not allow anywhere in a document (https://www.w3.org/TR/xml/#charsets).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def printable(text: object, limit: int | None = None) -> str:
    """``text`` as one line of printable text: each line break or tab (with the spaces around it)
    one space; control characters (ESC among them: an escape sequence is left as harmless text),
    lone surrogates and bidirectional controls escaped (``\\x1b``, ``\\u202e``; an undecodable
    byte of a file name as ``\\xff``). With ``limit``, at most that many characters (an ellipsis
    says some were cut)."""
    line = str(text)
    if not is_printable(line):
        line = _UNSAFE.sub(_escape, _BREAKS.sub(" ", line))
    if limit is not None and len(line) > limit:
        line = line[: max(limit - 1, 0)] + "…"
    return line


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # how os.fsdecode keeps an undecodable byte (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_characters(document: str) -> str:
    """``document`` with every character XML 1.0 forbids removed (C0 controls but tab and line
    breaks, unpaired surrogates, U+FFFE, U+FFFF): a parser reads it whatever its texts held."""
    return _NOT_XML.sub("", document)


def is_printable(text: str) -> bool:
    """Whether ``text`` is one line with no control, bidi or surrogate character."""
    return _UNSAFE.search(text) is None and _BREAKS.search(text) is None


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
