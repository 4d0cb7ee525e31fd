"""Copy as code: a short Python script that rebuilds the current inputs and runs the same attention.

``snippet_for_state(state)`` writes the queries, keys, values, valid lengths and learnable
parameters exactly (floats by ``repr``, which round-trips every float64 bit for bit) and calls
``attnviz.engine.attend`` with the settings the app uses, so the script's weights equal the app's.
The script prints the weights and output and, when attnviz could compute them, asserts that
they match what the app showed.

Tensors of more than ``max_inline`` numbers are not printed: up to ``max_embedded`` numbers they
are embedded as compressed base64 ``.npy`` bytes read back by ``np.load`` (still exact, still one
self-contained script); larger ones are read with ``np.load`` from a data file written by
``save_snippet_data``. A comment in the script says which form each tensor takes.

No Qt; torch is only needed to check the weights (``check=True``).
"""

from __future__ import annotations

import base64
import io
import math
import textwrap
import zlib
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .document import Settings, State
from .model_run import Focus, HeadView

if TYPE_CHECKING:
    from .compute import Outcome

#: Tensors with more numbers than this are not written out number by number.
MAX_INLINE = 2000
#: Tensors with more numbers than this go to a separate data file instead of into the script.
MAX_EMBEDDED = 1 << 16
#: The data file's default name (looked up in the current directory when the script runs).
DATA_FILE = "attnviz_snippet_data.npz"

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
_DEFAULTS = {f.name: f.default for f in fields(Settings)}


def _inputs(state: State, view: HeadView) -> dict[str, np.ndarray]:
    """The arrays the computation of head ``view`` uses, by the name the script gives them."""
    arrays = {"queries": view.queries, "keys": view.keys, "values": view.values}
    lens = state.valid_lens(view)
    if lens is not None:
        arrays["valid_lens"] = lens
    for name, value in state.params.items():
        arrays[f"params_{name}"] = np.asarray(value)
    return arrays


def _form(arr: np.ndarray, max_inline: int, max_embedded: int) -> str:
    if arr.size <= max_inline:
        return "inline"
    return "embedded" if arr.size <= max_embedded else "file"


def snippet_data(
    state: State, *, max_inline: int = MAX_INLINE, max_embedded: int = MAX_EMBEDDED, focus: Focus = Focus()
) -> dict[str, np.ndarray]:
    """The arrays the snippet of head ``focus`` reads from its data file (empty: the script needs
    no file)."""
    arrays = _inputs(state, state.head_view(focus))
    return {name: arr for name, arr in arrays.items() if _form(arr, max_inline, max_embedded) == "file"}


def save_snippet_data(
    state: State,
    path: str | Path,
    *,
    max_inline: int = MAX_INLINE,
    max_embedded: int = MAX_EMBEDDED,
    focus: Focus = Focus(),
) -> list[str]:
    """Write the snippet's data file (``.npz``) to ``path``; returns the names written (none: no file)."""
    data: dict[str, Any] = snippet_data(state, max_inline=max_inline, max_embedded=max_embedded, focus=focus)
    if data:
        with open(path, "wb") as fh:
            np.savez(fh, **data)
    return sorted(data)


def snippet_for_state(
    state: State,
    *,
    max_inline: int = MAX_INLINE,
    max_embedded: int = MAX_EMBEDDED,
    data_file: str = DATA_FILE,
    check: bool = True,
    outcome: Outcome | None = None,
    focus: Focus = Focus(),
) -> str:
    """A runnable script reproducing the attention of ``state``'s head ``focus`` with
    ``attnviz.engine.attend``.

    With ``check``, the script asserts it gets the weights the app computes for ``state``
    (NaN equal to NaN); an input the app refuses gets a comment with the app's message instead.
    ``outcome`` is the app's result for exactly this state and head when the caller has it (the
    window does: its compute thread made it), else it is computed here with ``compute.run_state``.
    The script leaves ``result`` (the AttentionResult) and ``weights`` in its namespace.
    """
    view = state.head_view(focus)
    arrays = _inputs(state, view)
    forms = {name: _form(arr, max_inline, max_embedded) for name, arr in arrays.items()}
    check_lines, expected = _check_lines(state, focus, max_inline, max_embedded, outcome) if check else ([], None)
    if expected is not None:
        forms_used = [*forms.values(), _form(expected, max_inline, max_embedded)]
        literals = [*(a for n, a in arrays.items() if forms[n] == "inline"), expected]
    else:
        forms_used = list(forms.values())
        literals = [a for n, a in arrays.items() if forms[n] == "inline"]
    # NaN and Inf have no literal: the script names them when a printed tensor holds one.
    nonfinite = any(a.dtype.kind == "f" and not np.isfinite(a).all() for a in literals)

    lines = [
        "# attnviz: the current inputs and settings, as a script. Needs attnviz and torch.",
        "import torch",
    ]
    if any(f != "inline" for f in forms_used):
        lines.append("import numpy as np")
    if "embedded" in forms_used:
        lines.append("import base64, io, zlib")
    lines.append("from attnviz.engine import attend")
    if nonfinite:
        lines += ["", 'nan, inf = float("nan"), float("inf")']
    if "embedded" in forms_used:
        lines += [
            "",
            "",
            "def unpack(text):",
            '    """An array stored as base64 of zlib-compressed .npy bytes (exact)."""',
            "    return np.load(io.BytesIO(zlib.decompress(base64.b64decode(text))))",
            "",
        ]
    if "file" in forms.values():
        lines += [
            "",
            f"# The largest tensors are in {data_file} (np.load reads them back exactly); attnviz",
            "# writes it next to this script when it copies the code (attnviz.snippet.save_snippet_data).",
            f'data = np.load("{data_file}")',
        ]
    lines.append("")

    for name, arr in arrays.items():
        lines += _assign(name, arr, forms[name])
    lines.append("")

    if state.params:
        entries = ", ".join(f'"{n}": params_{n}' for n in state.params)
        lines.append(f"params = {{{entries}}}  # the learnable parameters the app uses")
        lines.append("")

    args = ["queries", "keys", "values"]
    if "valid_lens" in arrays:
        args.append("valid_lens")
    call = f"result = attend({', '.join(args)}, {', '.join(_kwargs(state, view))})"
    lines += textwrap.wrap(call, width=96, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)
    lines += [
        "weights = result.weights",
        "torch.set_printoptions(precision=4, sci_mode=False)",
        'print("weights", tuple(weights.shape))',
        "print(weights)",
        'print("output", tuple(result.output.shape))',
        "print(result.output)",
        "for warning in result.diagnostics.warnings:",
        '    print("warning:", warning)',
    ]
    return "\n".join(lines + check_lines) + "\n"


# ------------------------------------------------------------------------------ internals


def _kwargs(state: State, view: HeadView) -> list[str]:
    """attend()'s keyword arguments as compute.run_state passes them; ones equal to attend's
    defaults are left out to keep the call short (dtype never is: the inputs are float64)."""
    s = state.settings
    kw = [f"scoring={s.scoring!r}", f"mask_mode={s.mask_mode!r}"]
    if view.causal is not None:
        kw.append(f"causal={view.causal!r}")
    if state.params:
        kw.append("params=params")
    if s.scoring == "additive" or state.params:
        kw.append(f"num_hiddens={s.num_hiddens!r}")
    if not state.params and s.param_seed != 0:
        kw.append(f"seed={s.param_seed!r}")
    if s.dropout != 0.0 or s.train:
        kw += [f"dropout={s.dropout!r}", f"train={s.train!r}"]
    if s.dropout_seed != 0:
        kw.append(f"dropout_seed={s.dropout_seed!r}")
    kw.append(f"dtype={s.dtype!r}")
    if s.device != "cpu":
        kw.append(f"device={s.device!r}")
    if getattr(s, "allow_nonfinite", False):
        kw.append("allow_nonfinite=True")
    return kw


def _number(x: object) -> str:
    if isinstance(x, (bool, np.bool_)):
        return repr(bool(x))
    if isinstance(x, (int, np.integer)):
        return repr(int(x))
    f = float(x)  # type: ignore[arg-type]
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    # repr of a Python float is the shortest text that reads back as the same float64, and a
    # float32/float16 value is exactly a float64: the literal reproduces every bit.
    return repr(f)


def _short(x: float) -> str:
    """The shortest text that reads back as the same float32 (for the tolerant check only:
    read through float64 it could, in rare cases, land one float32 away)."""
    if not math.isfinite(x):
        return _number(x)
    return (
        np.format_float_positional(np.float32(x), unique=True, trim="0")
        if abs(x) >= 1e-4 or x == 0
        else np.format_float_scientific(np.float32(x), unique=True, trim="0")
    )


def _literal(arr: np.ndarray, indent: str, short: bool = False) -> str:
    """A nested list literal, the innermost rows one per line."""
    fmt = _short if short else _number
    if arr.ndim == 0:
        return fmt(arr.item())
    if arr.ndim == 1:
        return "[" + ", ".join(fmt(x) for x in arr.tolist()) + "]"
    inner = indent + "    "
    parts = [inner + _literal(sub, inner, short) + "," for sub in arr]
    return "[\n" + "\n".join(parts) + "\n" + indent + "]"


def _torch_dtype(arr: np.ndarray) -> str:
    name = arr.dtype.name
    if name in _TORCH_DTYPES:
        return _TORCH_DTYPES[name]
    # Other float types (longdouble...) are written as float64, which holds their values here.
    return "torch.float64" if arr.dtype.kind == "f" else "torch.int64"


def _pack(arr: np.ndarray) -> str:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(arr), allow_pickle=False)
    return base64.b64encode(zlib.compress(buf.getvalue(), 9)).decode("ascii")


def _assign(name: str, arr: np.ndarray, form: str, short: bool = False) -> list[str]:
    shape = tuple(arr.shape)
    dt = _torch_dtype(arr)
    if form == "inline":
        return [f"{name} = torch.tensor({_literal(arr, '', short)}, dtype={dt})  # shape {shape}"]
    if form == "embedded":
        text = _pack(arr)
        chunks = textwrap.wrap(text, 96, break_on_hyphens=False)
        body = "\n".join(f'    "{c}"' for c in chunks)
        return [
            f"# {name}: {arr.size} numbers, shape {shape}: too many to print, so stored exactly as .npy bytes",
            f"{name} = torch.from_numpy(unpack(",
            body,
            "))",
        ]
    return [f'{name} = torch.from_numpy(data["{name}"])  # {arr.size} numbers, shape {shape}: from the data file']


def _check_lines(
    state: State, focus: Focus, max_inline: int, max_embedded: int, outcome: Outcome | None = None
) -> tuple[list[str], np.ndarray | None]:
    """The script's closing check, and the weights it embeds (None: no check)."""
    if outcome is None:
        from .compute import run_state

        outcome = run_state(state, 0, focus)
    if outcome.view is None:
        message = (outcome.error or "unknown error").replace("\n", " ")
        return ["", f"# attnviz could not compute these inputs: {message}"], None
    expected = outcome.view.weights
    form = _form(expected, max_inline, max_embedded)
    if form == "file":
        return ["", f"# (the {expected.size} weights are too many to embed a check of them)"], None
    lines = ["", "# What attnviz showed for these inputs; this run must give the same."]
    lines += _assign("expected", expected, form, short=expected.dtype == np.float32)
    lines += [
        "assert torch.allclose(weights.to(expected.dtype).cpu(), expected, rtol=1e-5, atol=1e-6, equal_nan=True), \\",
        '    "the weights differ from what attnviz showed"',
    ]
    return lines, expected
