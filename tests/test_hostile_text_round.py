"""A second, independent round of hostile strings (issue 30's "generated code is data-safe").

``test_snippet_safety.py`` and ``test_output_safety.py`` hold the first round. This one is written
apart from them, with strings they do not use: every Unicode line break (``\\r\\n`` too) before
code, each quote Python and the typographers know, backslashes at the end of a name, NUL, ESC
sequences that set the clipboard (OSC 52), make links (OSC 8) or hold a device control string,
each bidi embedding, override and isolate, zero-width and byte-order marks, lone and reversed
surrogate halves, f-string and %-format fields, names of thousands of characters. Each goes into
every field a file can fill (call name, score-term name, token, note, the data file's path; the
head's description, the mask sources and the device a snippet input holds) and through all five
code writers. Every snippet must parse with each line printable; the PyTorch and attnviz ones are
run, all in one child process under a memory limit, and a payload that would create a marker file
if any part of it ran as code never creates it. The same strings go into an SVG export (parsed as
XML) and through the command lines' terminal output.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnviz.snippets import FRAMEWORKS, generate, make_snippet, snippet_input
from attnviz.state.document import State
from attnviz.state.run import AttentionCall, CallTerm, MaskArguments, ModelRun
from attnviz.text.safe import is_printable, printable, python_literal

ROOT = Path(__file__).resolve().parents[1]

BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
BIDI = [chr(c) for c in range(0x202A, 0x202F)] + [chr(c) for c in range(0x2066, 0x206A)]
QUOTES = ['"', "'", "`", '"""', "'''", "\u2018", "\u2019", "\u201c", "\u201d", "\u00ab", "\u00bb", "\u201e"]
QUOTES += ["\u201a", "\u2039", "\u203a", "\uff02", "\uff07", "\u02bc", "\u2032", "\u2033"]
ESCAPES = [
    "\x1b]52;c;cHduZWQ=\x07",  # OSC 52: sets the clipboard of the terminal that prints it
    "\x1b]8;;https://example.invalid\x1b\\link\x1b]8;;\x1b\\",  # OSC 8: a hyperlink
    "\x1bP1$qm\x1b\\",  # a device control string
    "\x1b[6n",  # asks the terminal to type its cursor position back
    "\x9b2J",  # C1 CSI: clears the screen on terminals that take 8-bit controls
    "\x1bc",  # resets the terminal
]
SURROGATES = ["\ud800", "\udfff", "\udcff", "\ud83d\ude00", "\ude00\ud83d"]
INVISIBLE = ["\u200b", "\ufeff", "\u00ad", "\u2060", "\u180e", "\u034f"]


def payload(marker: Path) -> str:
    return f"__import__('pathlib').Path({str(marker)!r}).touch()"


def hostile_strings(marker: Path) -> list[str]:
    """The round's strings: each would run ``payload`` if a writer put it raw where it lands."""
    run = payload(marker)
    out = [f"x{b}{run}{b}#" for b in BREAKS]
    out += [f"x{q}+{run}+{q}" for q in QUOTES]
    out += [f"x{q}){b}{run}{b}#{q}" for q, b in zip(QUOTES, BREAKS * 2)]
    out += [f"{c}x{c}\n{run}" for c in BIDI]
    out += [f"a\x00{run}", f"\x00\n{run}\n#", f"{ESCAPES[0]}\n{run}"]
    out += [f"e{e}" for e in ESCAPES]
    out += ["name\\", "name\\\\\\", "\\", f"x\\\n{run}", f"{run}\\", "\\'", '\\"']
    out += ["{__import__('os')}", "{0}{name!r}", "%(x)s%s%%", "{{}}"]
    out += ["L" * 5000, "word " * 1500 + f"\n{run}", "\u00e9" * 3000, "\u4e2d" * 400 + f"\u2028{run}"]
    out += [f"s{s}{run}" for s in SURROGATES]
    out += [f"i{z}\n{run}" for z in INVISIBLE]
    return out


def state_of(name: str, term: str, token: str, note: str) -> State:
    """A captured run of one call named ``name`` with a bias named ``term``, a token ``token`` and a
    note ``note``."""
    rng = np.random.default_rng(11)
    q, k, v = (rng.standard_normal((1, 2, 3, 4)).astype(np.float32) for _ in range(3))
    bias = CallTerm("bias", term, values=rng.standard_normal((1, 2, 3, 3)).astype(np.float32))
    tokens = np.array([[token, "b", "c"]], dtype=object).astype(str)
    call = AttentionCall(name, q, k, v, MaskArguments(is_causal=True), note=note, terms=(bias,), query_tokens=tokens)
    return State.from_run(ModelRun((call,), query_tokens=tokens, key_tokens=tokens, source="capture"))


def assert_data_safe_code(code: str, where: object) -> None:
    """Python, and every line one line of printable text (no break of another kind, control, bidi
    or surrogate in a comment or a literal)."""
    ast.parse(code)
    compile(code, "snippet.py", "exec")
    bad = [line[:120] for line in code.split("\n") if not is_printable(line)]
    assert not bad, (where, bad)


_CHILD = """
import contextlib, io, json, resource, runpy, sys
limit = 6 << 30
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
results = {}
for path in json.loads(open(sys.argv[1], encoding="utf-8").read()):
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(path, run_name="snippet")
        results[path] = "ok"
    except Exception as exc:
        results[path] = type(exc).__name__ + ": " + str(exc)[:200]
print(json.dumps(results))
"""


def run_in_child(paths: list[Path], work: Path) -> dict[str, str]:
    """Run each script in one fresh interpreter (torch imported once), capped at 6 GiB of address
    space; what each ended with, by path."""
    listing = work / "scripts.json"
    listing.write_text(json.dumps([str(p) for p in paths]), "utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(listing)], capture_output=True, text=True, cwd=work, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_fresh_round_of_hostile_strings_through_every_field_and_all_five_writers(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    strings = hostile_strings(marker)
    n = len(strings)
    scripts: list[Path] = []
    expect_ok: dict[str, bool] = {}
    (tmp_path / "scripts").mkdir()
    for i in range(n):
        # Each string visits every field: the call's name, the term, the token, the note, the folder.
        name, term, token, note, folder = (strings[(i + j) % n] for j in range(5))
        state = state_of(name, term, token, note)
        try:
            data_dir = tmp_path / "data" / f"{i}" / folder
            data_dir.mkdir(parents=True)
            data_file, writable = (data_dir / "inputs.npz").as_posix(), True
        except (OSError, ValueError, UnicodeError):  # NUL, a component over 255 bytes, a lone surrogate
            data_file, writable = f"{tmp_path.as_posix()}/absent/{folder}/inputs.npz", False
        for framework in FRAMEWORKS:
            snippet = make_snippet(state, framework, data_file=data_file, max_inline=4, max_embedded=10)
            assert snippet.data, "the arrays go to the data file: its path is in the code"
            assert_data_safe_code(snippet.code, (framework, i))
            assert python_literal(data_file) in snippet.code  # the path as a literal, exactly
            if framework in ("pytorch", "attnviz"):
                if writable:
                    snippet.save_data(data_file)
                script = tmp_path / "scripts" / f"{i:03d}_{framework}.py"
                script.write_text(snippet.code, "utf-8")
                scripts.append(script)
                expect_ok[str(script)] = writable
    results = run_in_child(scripts, tmp_path)
    assert not marker.exists(), "a hostile string ran as code"
    for script, result in results.items():
        if expect_ok[script]:
            assert result == "ok", (script, result)
        else:  # np.load of a path no file system holds: the snippet's own error, nothing else ran
            refusals = ("FileNotFoundError", "OSError", "ValueError", "UnicodeEncodeError")
            assert result.startswith(refusals), (script, result)
    assert len(results) == len(scripts) == 2 * n


@pytest.mark.slow
def test_the_snippet_inputs_own_texts_are_data_safe_in_every_writer(tmp_path: Path) -> None:
    """The head's description, the mask sources and the device are texts too (the device is the
    attnviz script's literal): each hostile string in each, all five writers, parsed."""
    marker = tmp_path / "pwned"
    base = snippet_input(state_of("attn", "bias", "a", ""))
    for text in hostile_strings(marker):
        inp = replace(base, focus=text, mask_sources=(text, f"m{text}"), device=text)
        for framework in FRAMEWORKS:
            assert_data_safe_code(generate(inp, framework).code, (framework, text[:40]))
    assert not marker.exists()


_ATOMS = [*BREAKS, *BIDI, *QUOTES, *ESCAPES, *SURROGATES, *INVISIBLE, "\x00", "\\", "#", "{", "}", "a", " "]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.lists(st.sampled_from(_ATOMS), max_size=16).map("".join), other=st.text(max_size=40))
def test_random_mixtures_of_the_rounds_characters_give_parsable_printable_code(name: str, other: str) -> None:
    state = state_of(name, other + name, name[::-1], other)
    for framework in FRAMEWORKS:
        code = make_snippet(state, framework, data_file=f"{name}/{other}.npz", max_inline=4, max_embedded=10).code
        assert_data_safe_code(code, framework)
    line = printable(name + other)
    assert is_printable(line) and len(line.splitlines()) <= 1
    assert ast.literal_eval(python_literal(name + other)) == name + other


def test_the_rounds_strings_make_a_well_formed_svg_and_inert_terminal_lines(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from attnviz.cli.doctor import doctor_main
    from attnviz.cli.render import main as render_main
    from attnviz.io import CaptureFileError
    from attnviz.io.capture_file import save_capture
    from attnviz.io.session_state import save_state_file

    strings = [s for s in hostile_strings(tmp_path / "pwned") if len(s) < 200]
    joined = "".join(strings[::3])
    for i, text in enumerate(strings[:: max(1, len(strings) // 12)]):
        state = state_of(f"layer{text}", f"bias{joined}", f"t{text}", f"n{text}")
        source = tmp_path / f"{i}.attnviz"
        save_state_file(source, state, (0, 0))
        out = tmp_path / f"w{i}.svg"
        status = render_main(["--load", str(source), "--out", str(out)])
        printed = capsys.readouterr()
        assert status == 0, printed.err
        document = out.read_text("utf-8")
        root = ElementTree.fromstring(document)  # well-formed XML, or ParseError
        assert root.tag.endswith("svg")
        assert not any(c in document for c in "\x00\x1b\x9b\x85\u2028\u2029\u202e\u2066")
        capture = tmp_path / f"{i}.attnviz-capture"
        try:
            save_capture(capture, state.run)
        except CaptureFileError as exc:  # JSON in UTF-8 holds no lone surrogate: refused in one line
            assert "surrogates not allowed" in str(exc) and is_printable(str(exc)), str(exc)
            continue
        for argv in ([str(capture)], [str(capture), "--pad-token", text]):
            doctor_main(argv)
            printed = capsys.readouterr()
            for line in (printed.out + printed.err).split("\n"):
                assert is_printable(line), line[:120]


def test_a_parameter_name_that_is_no_identifier_is_refused_not_written(tmp_path: Path) -> None:
    """Every writer spells a learnable parameter's name as a variable (``params_W_q``): the engine
    gives only its scoring functions' names, and snippet_input refuses any other in one line."""
    from attnviz.compute import run_state
    from attnviz.snippets import SnippetError
    from attnviz.teaching.presets import PRESETS

    state = PRESETS["additive-toy"].build()
    outcome = run_state(state)
    assert outcome.view is not None and set(outcome.view.params) == {"W_q", "W_k", "w_v"}
    for framework in FRAMEWORKS:  # the engine's own names are written
        assert_data_safe_code(make_snippet(state, framework, outcome=outcome).code, framework)
    evil = f"a={payload(tmp_path / 'pwned')};b"
    params = {**outcome.view.params, evil: np.zeros(1, np.float32)}
    hostile = replace(outcome, view=replace(outcome.view, params=params))
    with pytest.raises(SnippetError, match="a learnable parameter named .* cannot be written as code") as info:
        snippet_input(state, hostile)
    assert "\n" not in str(info.value)
