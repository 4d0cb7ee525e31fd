"""Copy as code from a hostile file runs nothing but its own code (issue 30, items 1-3).

Call names, score-term names, tokens, notes and the data file's path are read from files other
people share. Every string that reaches a snippet is written as a Python literal or as one
printable line in a comment (``attnviz.text.safe``): here hostile strings (line breaks of every
Unicode kind, quotes, backslashes, NUL, ESC sequences, bidi overrides, long names) go into all of
them, every framework's snippet is compiled, the PyTorch and attnviz snippets are run, and a
payload that would create a marker file if it ran as code never creates it.
"""

from __future__ import annotations

import ast
import contextlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnviz.bench.safety_text import run_snippet
from attnviz.snippets import FRAMEWORKS, make_snippet
from attnviz.state.document import State
from attnviz.state.run import AttentionCall, CallTerm, MaskArguments, ModelRun
from attnviz.text.safe import BIDI_CONTROLS, LINE_BREAKS, is_printable, printable, python_literal

# Characters that end a comment, a string or a line, or change what the reader sees.
HOSTILE_CHARS = [*LINE_BREAKS, *BIDI_CONTROLS, "\x00", "\x1b", "\x7f", "\x9b", "\t", '"', "'", "\\", "#", "\ud800"]


def payloads(marker: Path) -> list[str]:
    """Texts that create ``marker`` if any part of them runs as Python, in every context a name
    can land in: a comment, a double- or single-quoted string, an f-string, a raw path."""
    run = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    return [
        f"x\n{run}\n#",
        f'x"+{run}+"',
        f"x'+{run}+'",
        f"x\r{run}\r#",
        f"x\u2028{run}\u2028#",
        f"x\x85{run}\x85#",
        f"x\x0c{run}\x0c#",
        f'x"""\n{run}\n"""',
        f"x\\\n{run}",
        f"x\x00\n{run}",
        f"\x1b[2J\x1b]0;title\x07x\n{run}",
        f"\u202e{run}\u202c\n{run}",
        "T5 relative position bias of the first decoder block, shared by all layers " * 3 + f"\n{run}",
    ]


def hostile_text(marker: Path) -> st.SearchStrategy[str]:
    """A payload with hostile characters and text around it, or hostile characters alone."""
    noise = st.lists(st.sampled_from([*HOSTILE_CHARS, "a", " ", "é", "{", "}", "%s"]), max_size=12).map("".join)
    return st.one_of(
        st.builds(lambda a, p, b: a + p + b, noise, st.sampled_from(payloads(marker)), noise),
        noise,
        st.text(max_size=30),
    )


def hostile_state(name: str, term: str, token: str, note: str) -> State:
    """A captured run of one call named ``name``, whose score term (a bias) is named ``term``, with
    tokens ``token`` and note ``note``."""
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((1, 2, 3, 4)).astype(np.float32) for _ in range(3))
    bias = CallTerm("bias", term, values=rng.standard_normal((1, 2, 3, 3)).astype(np.float32))
    tokens = np.array([[token, "b", "c"]], dtype=object).astype(str)
    call = AttentionCall(name, q, k, v, MaskArguments(is_causal=True), note=note, terms=(bias,), query_tokens=tokens)
    return State.from_run(ModelRun((call,), query_tokens=tokens, key_tokens=tokens, source="capture"))


def check_code(code: str) -> None:
    """The snippet is Python, and every line of it is printable text: no control character, line
    break of another kind or bidi control anywhere, in a comment or a literal."""
    ast.parse(code)
    compile(code, "snippet.py", "exec")
    assert all(is_printable(line) for line in code.split("\n")), [
        line for line in code.split("\n") if not is_printable(line)
    ]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_snippet_of_a_hostile_run_runs_anything_but_its_own_code(tmp_path, data):
    marker = tmp_path / "pwned"
    text = hostile_text(marker)
    name, term, token, note, folder = (data.draw(text, label) for label in ("name", "term", "token", "note", "folder"))
    state = hostile_state(name, term, token, note)
    # The data file in a folder of a hostile name (where the file system takes the name).
    data_dir = tmp_path / "data"
    try:
        (data_dir / folder).mkdir(parents=True, exist_ok=True)
        data_file = (data_dir / folder / "inputs.npz").as_posix()
        writable = True
    except (OSError, ValueError, UnicodeError):
        data_file, writable = f"{folder}/inputs.npz", False
    for framework in FRAMEWORKS:
        snippet = make_snippet(state, framework, data_file=data_file, max_inline=4, max_embedded=10)
        check_code(snippet.code)
        assert snippet.data, "the arrays go to the data file: its path is written into the code"
        if framework not in ("pytorch", "attnviz"):
            continue  # TensorFlow, MXNet, JAX are not installed here: parsed and compiled above
        if writable:
            snippet.save_data(data_file)
            run_snippet(snippet.code, tmp_path)
        else:
            with pytest.raises((OSError, ValueError)):  # np.load of a path no file system has
                run_snippet(snippet.code, tmp_path)
        assert not marker.exists(), (framework, name, term, data_file)


def test_a_long_score_term_name_is_never_broken_inside_its_literal(tmp_path):
    long = "T5 relative position bias of the first decoder block, shared by all layers"
    state = hostile_state("decoder.block.0.layer.0.SelfAttention", long, "a", "")
    snippet = make_snippet(state, "attnviz")
    check_code(snippet.code)
    assert python_literal(long) in snippet.code
    run_snippet(snippet.code, tmp_path)


def test_the_payloads_would_run_if_written_raw(tmp_path):
    """The test's payloads are real: written raw where the snippets once wrote names (a comment, a
    string in quotes), they create the marker."""
    marker = tmp_path / "pwned"
    comment, double, single, lone_cr, *_ = payloads(marker)
    cases = [
        f"# The tensors are {comment} of a model run.\n",
        f"# The tensors are {lone_cr} of a model run.\n",  # a lone \r ends a comment too
        f'data = "{double}"\n',
        f"data = '{single}'\n",
    ]
    for code in cases:
        marker.unlink(missing_ok=True)
        with contextlib.suppress(TypeError):  # touch() gives None, which "+" then refuses: too late
            run_snippet(code, tmp_path)
        assert marker.exists(), code


def test_printable_leaves_one_line_of_printable_text():
    assert printable("a\nb\r\nc\u2028d\x85e \x0b f\x1cg") == "a b c d e f g"
    assert printable("\x1b[31mred\x1b]0;title\x07") == "\\x1b[31mred\\x1b]0;title\\x07"  # seen, inert
    assert (
        printable("\u202eevil\u202c \u2066iso\u2069 \u200fm\u061c")
        == "\\u202eevil\\u202c \\u2066iso\\u2069 \\u200fm\\u061c"
    )
    assert printable("nul\x00 del\x7f \x9b \udcff \ud800 \ufffe") == "nul\\x00 del\\x7f \\x9b \\xff \\ud800 \\ufffe"
    assert printable("tab\there") == "tab here"
    assert printable("é 中文 🙂 {x} %s") == "é 中文 🙂 {x} %s"  # printable text is kept as it is
    assert printable("x" * 100, 10) == "x" * 9 + "…"
    for text in ("x\ny", "\u202e", "\x1b[1m", "a\tb", "\u2029"):
        assert not is_printable(text) and is_printable(printable(text))


@given(st.text())
def test_a_python_literal_reads_back_exactly_and_is_printable(text):
    literal = python_literal(text)
    assert ast.literal_eval(literal) == text
    assert is_printable(literal)


@given(st.text())
def test_printable_text_is_one_printable_line(text):
    line = printable(text)
    assert is_printable(line) and len(line.splitlines()) <= 1
    assert printable(line) == line
