"""The attnviz script: the current inputs and settings as a call of ``attnviz.engine.attend``.

Unlike the framework snippets, it needs attnviz: it writes the queries, keys, values, valid
lengths, learnable parameters and masks exactly (see ``arrays``) and calls ``attend`` with the
settings the app uses, so the script's weights equal the app's bit for bit, dropout included
(``attend`` draws it from the same seed). It prints the weights and output and asserts that
they match what the app showed (``check``).

No Qt; torch is only needed to run the script.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from attnviz.state.run import Focus
from attnviz.text.safe import printable, python_literal

from .arrays import DATA_FILE, MAX_EMBEDDED, MAX_INLINE, form, has_nonfinite, literal, packed_lines, write_data_file
from .base import Snippet, save_weights_option, unpack_function
from .inputs import SnippetInput, WrittenTerm, snippet_input
from .writer import CodeWriter, snippet_stages

if TYPE_CHECKING:
    from attnviz.state.document import State

    from ..compute import Outcome

__all__ = ["attnviz_snippet", "save_snippet_data", "snippet_data", "snippet_for_state"]

_TORCH_DTYPES = {
    "float64": "torch.float64",
    "float32": "torch.float32",
    "float16": "torch.float16",
    "int64": "torch.int64",
    "int32": "torch.int32",
    "int16": "torch.int16",
    "int8": "torch.int8",
    "uint8": "torch.uint8",
    "bool": "torch.bool",
}


def snippet_for_state(
    state: State,
    *,
    max_inline: int = MAX_INLINE,
    max_embedded: int = MAX_EMBEDDED,
    data_file: str = DATA_FILE,
    check: bool = True,
    outcome: Outcome | None = None,
    focus: tuple[int, int] = Focus(),
) -> str:
    """A runnable script reproducing the attention of ``state``'s head ``focus`` with
    ``attnviz.engine.attend``.

    ``outcome`` is the app's result for exactly this state and head when the caller has it (the
    window does: its compute thread made it), else it is computed here with ``compute.run_state``. An
    input the app refuses raises ``SnippetError``. The script leaves ``result`` (the
    AttentionResult) and ``weights`` in its namespace.
    """
    inp = snippet_input(state, outcome, focus=focus)
    return attnviz_snippet(inp, max_inline=max_inline, max_embedded=max_embedded, data_file=data_file, check=check).code


def snippet_data(
    state: State,
    *,
    max_inline: int = MAX_INLINE,
    max_embedded: int = MAX_EMBEDDED,
    outcome: Outcome | None = None,
    focus: tuple[int, int] = Focus(),
) -> dict[str, np.ndarray]:
    """The arrays the attnviz script of head ``focus`` reads from its data file (empty: the
    script needs no file)."""
    inp = snippet_input(state, outcome, focus=focus)
    return dict(attnviz_snippet(inp, max_inline=max_inline, max_embedded=max_embedded).data)


def save_snippet_data(
    state: State,
    path: str | Path,
    *,
    max_inline: int = MAX_INLINE,
    max_embedded: int = MAX_EMBEDDED,
    outcome: Outcome | None = None,
    focus: tuple[int, int] = Focus(),
) -> list[str]:
    """Write the data file (``.npz``) of the attnviz script of head ``focus`` to ``path``; the
    names written (none: no file)."""
    data = snippet_data(state, max_inline=max_inline, max_embedded=max_embedded, outcome=outcome, focus=focus)
    return write_data_file(data, path)


def _arrays(inp: SnippetInput) -> dict[str, np.ndarray]:
    """The arrays the script writes, by the name it gives them."""
    arrays = {"queries": inp.queries, "keys": inp.keys, "values": inp.values}
    if inp.valid_lens is not None:
        arrays["valid_lens"] = inp.valid_lens
    for name, value in inp.model_masks.items():
        arrays[name] = value
    if "documents" in inp.context:
        arrays["documents"] = inp.context["documents"]
    for name, term in _term_arrays(inp):
        assert term.values is not None
        arrays[name] = term.values
    if inp.params_given:
        for name, value in inp.params.items():
            arrays[f"params_{name}"] = value
    return arrays


def attnviz_snippet(
    inp: SnippetInput,
    *,
    max_inline: int = MAX_INLINE,
    max_embedded: int = MAX_EMBEDDED,
    data_file: str = DATA_FILE,
    check: bool = True,
) -> Snippet:
    """The attnviz script for ``inp``; with ``check`` it asserts the weights the app showed."""
    arrays = _arrays(inp)
    forms = {name: form(arr, max_inline, max_embedded) for name, arr in arrays.items()}
    expected = inp.app_weights if check else None
    expected_form = None if expected is None else form(expected, max_inline, max_embedded)
    if expected_form == "file":
        expected = None
    used = [*forms.values(), *([expected_form] if expected is not None else [])]
    inline = [a for n, a in arrays.items() if forms[n] == "inline"]
    if expected is not None and expected_form == "inline":
        inline.append(expected)

    w = CodeWriter()
    w.line("# attnviz: the current inputs and settings, as a script. Needs attnviz and torch.")
    if inp.focus:
        w.line(f"# The tensors are {printable(inp.focus)} of a model run.")
    w.line("# `python snippet.py --save-weights weights.npy` also saves the weights as a .npy file.")
    w.line("import numpy as np")
    w.line("import torch")
    if "embedded" in used:
        w.line("import base64, io, zlib")
    engine_names = ["attend", *(["make_mask"] if inp.context else []), *_term_classes(inp)]
    w.line(f"from attnviz.engine import {', '.join(engine_names)}")
    if has_nonfinite(inline):
        w.blank()
        w.line('nan, inf = float("nan"), float("inf")')
    if "embedded" in used:
        w.blank(2)
        unpack_function(w, "np")
        w.blank()
    if "file" in forms.values():
        w.blank()
        w.line(f"# The largest tensors are in {printable(data_file)} (np.load reads them back exactly);")
        w.line("# attnviz writes it with this script.")
        w.line(f"data = np.load({python_literal(data_file)})")
    w.blank()
    for name, arr in arrays.items():
        w.lines(_assign(name, arr, forms[name]))
    w.blank()
    if inp.params_given:
        entries = ", ".join(f"{python_literal(n)}: params_{n}" for n in inp.params)
        w.line(f"params = {{{entries}}}  # the learnable parameters the app uses")
        w.blank()
    args = ["queries", "keys", "values"]
    if inp.valid_lens is not None:
        args.append("valid_lens")
    # Additive attention's features, and a call's own score terms, only where there are some.
    stages = [
        s
        for s in snippet_stages()
        if (s != "hidden_features" or inp.scoring == "additive") and (s != "modified_scores" or inp.score_terms)
    ]
    for part in call_lines("result = attend(", [*args, *_kwargs(inp)], width=96):
        w.line(part, stages)
    w.line("weights = result.weights", "weights", "weights")
    w.line("output = result.output", "output", "output")
    w.lines(
        [
            "torch.set_printoptions(precision=4, sci_mode=False)",
            'print("weights", tuple(weights.shape))',
            "print(weights)",
            'print("output", tuple(output.shape))',
            "print(output)",
            "for warning in result.diagnostics.warnings:",
            '    print("warning:", warning)',
        ]
    )
    if check:
        w.blank()
        if expected is None:
            count = 0 if inp.app_weights is None else inp.app_weights.size
            w.line(f"# (the {count} weights are too many to embed a check of them)")
        else:
            w.line("# What attnviz showed for these inputs; this run must give the same.")
            w.lines(_assign("expected", expected, expected_form or "inline", short=expected.dtype == np.float32))
            w.line(
                "assert torch.allclose(weights.to(expected.dtype).cpu(), expected, rtol=1e-5, atol=1e-6, "
                "equal_nan=True), \\"
            )
            w.line('    "the weights differ from what attnviz showed"')
    w.blank()
    save_weights_option(
        w,
        "np.save(args.save_weights, weights.cpu().float().numpy() if weights.dtype in "
        "(torch.float16, torch.bfloat16) else weights.cpu().numpy())",
    )
    code, spans, functions = w.finish()
    data = {name: arr for name, arr in arrays.items() if forms[name] == "file"}
    return Snippet("attnviz", code, spans, functions, data, (), data_file)


# ------------------------------------------------------------------------------ internals


def call_lines(opening: str, arguments: list[str], width: int) -> list[str]:
    """``opening`` (``"f("``) with ``arguments`` and the closing parenthesis, on one line if it
    fits in ``width``, else as many arguments as fit on each line, indented: lines are broken
    between arguments only, never inside one (a string literal broken at a space is no longer
    Python)."""
    lines = [opening]
    for i, argument in enumerate(arguments):
        text = argument + (", " if i < len(arguments) - 1 else ")")
        if len(lines[-1]) + len(text.rstrip()) > width and lines[-1].strip() and lines[-1] != opening:
            lines[-1] = lines[-1].rstrip()
            lines.append("    ")
        lines[-1] += text
    if not arguments:
        lines[-1] += ")"
    return lines


def _kwargs(inp: SnippetInput) -> list[str]:
    """attend()'s keyword arguments as compute.run_state passes them; ones equal to attend's
    defaults are left out to keep the call short (dtype never is: the inputs are float64)."""
    kw = [f"scoring={inp.scoring!r}", f"mask_mode={inp.mask_mode!r}"]
    if inp.causal is not None:
        kw.append(f"causal={inp.causal!r}")
    for name in inp.model_masks:
        kw.append(f"{name}={name}")
    if inp.context:
        # The long-context masks: one description, its window aligned as the causal mask is.
        parts = [f"{name}={'documents' if name == 'documents' else repr(value)}" for name, value in inp.context.items()]
        if inp.causal is not None:
            parts.append(f"causal={inp.causal!r}")
        kw.append(f"mask=make_mask({', '.join(parts)})")
    if inp.score_terms:
        kw.append(f"score_terms=[{', '.join(_term_expressions(inp))}]")
    if inp.scale is not None:
        kw.append(f"scale={inp.scale!r}")
    if inp.params_given:
        kw.append("params=params")
    if inp.scoring == "additive" or inp.params_given:
        kw.append(f"num_hiddens={inp.num_hiddens!r}")
    if not inp.params_given and inp.param_seed != 0:
        kw.append(f"seed={inp.param_seed!r}")
    if inp.dropout != 0.0 or inp.train:
        kw += [f"dropout={inp.dropout!r}", f"train={inp.train!r}"]
    if inp.dropout_seed != 0:
        kw.append(f"dropout_seed={inp.dropout_seed!r}")
    kw.append(f"dtype={inp.dtype!r}")
    if inp.device != "cpu":
        kw.append(f"device={python_literal(inp.device)}")
    if inp.allow_nonfinite:
        kw.append("allow_nonfinite=True")
    return kw


def _torch_dtype(arr: np.ndarray) -> str:
    name = arr.dtype.name
    if name in _TORCH_DTYPES:
        return _TORCH_DTYPES[name]
    # Other float types (longdouble...) are written as float64, which holds their values here.
    return "torch.float64" if arr.dtype.kind == "f" else "torch.int64"


def _assign(name: str, arr: np.ndarray, how: str, short: bool = False) -> list[str]:
    shape = tuple(arr.shape)
    dt = _torch_dtype(arr)
    if how == "inline":
        return f"{name} = torch.tensor({literal(arr, '', short)}, dtype={dt})  # shape {shape}".split("\n")
    if how == "embedded":
        return [
            f"# {name}: {arr.size} numbers, shape {shape}: too many to print, so stored exactly as .npy bytes",
            f"{name} = torch.from_numpy(unpack(",
            *(f"    {chunk}" for chunk in packed_lines(arr)),
            "))",
        ]
    return [f'{name} = torch.from_numpy(data["{name}"])  # {arr.size} numbers, shape {shape}: from the data file']


_TERM_CLASSES = {"bias": "ScoreBias", "softcap": "SoftCap", "sinks": "Sinks"}


def _term_arrays(inp: SnippetInput) -> list[tuple[str, WrittenTerm]]:
    """The score terms that hold arrays, by the names the script gives them."""
    named = [t for t in inp.score_terms if t.values is not None]
    return [(f"score_term_{i}", t) for i, t in enumerate(named)]


def _term_classes(inp: SnippetInput) -> list[str]:
    return [c for kind, c in _TERM_CLASSES.items() if any(t.kind == kind for t in inp.score_terms)]


def _term_expressions(inp: SnippetInput) -> list[str]:
    """``attend``'s ``score_terms``, as the app passes them (``compute.engine_args.call_score_terms``)."""
    names = {id(term): name for name, term in _term_arrays(inp)}
    out = []
    for term in inp.score_terms:
        if term.kind == "softcap":
            out.append(f"SoftCap({term.cap!r})")
        else:
            out.append(f"{_TERM_CLASSES[term.kind]}({names[id(term)]}, {python_literal(term.name)})")
    return out
