"""What every framework's snippet shares: the ``Snippet`` it makes, the order of its parts, the data.

A framework generator subclasses ``FrameworkGenerator`` (through ``modules.ModuleGenerator`` where
the scoring function is a class) and gives its ``Ops``, its imports and what it declares its own
way; the attention itself is ``chapter.ChapterCode``'s, the opening comment ``header``'s. Written
here: the order of the parts, the arrays (as literals, embedded bytes or a data file, made into
tensors with the framework's ``Ops.array``), the printing and the ``--save-weights`` option.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np

from attnviz.text.safe import printable, python_literal
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from .arrays import DATA_FILE, MAX_EMBEDDED, MAX_INLINE, form, has_nonfinite, literal, packed_lines, write_data_file
from .chapter import ChapterCode
from .header import header_lines
from .inputs import MASK_MODES, SCORINGS, SnippetError, SnippetInput
from .ops import spell
from .writer import CodeWriter, StageSpan, snippet_stages

__all__ = ["ArrayKind", "FrameworkGenerator", "Snippet", "save_weights_option", "unpack_function"]

#: How an array becomes a tensor: the compute dtype, a parameter's own dtype, whole numbers, booleans.
ArrayKind = Literal["float", "param", "int", "bool"]


@dataclass(frozen=True)
class Snippet:
    """A script in one framework, and where in it each stage is computed.

    ``stage_spans[stage]``: the runs of lines computing ``stage`` (a name of ``writer.snippet_stages()``),
    each with its enclosing function and that function's range; ``functions``: every function's
    (first, last) line. ``data``: the arrays the script loads from its data file (empty: it needs
    none). ``leaves_out``: what the app does that the script does not, also said at its top.
    """

    framework: str
    code: str
    stage_spans: Mapping[str, tuple[StageSpan, ...]]
    functions: Mapping[str, tuple[int, int]]
    data: Mapping[str, np.ndarray] = field(default_factory=dict)
    leaves_out: tuple[str, ...] = ()
    data_file: str = DATA_FILE

    @property
    def stage_lines(self) -> dict[str, list[tuple[int, int]]]:
        """Per stage, the (first, last) line ranges (1-based, inclusive) that compute it."""
        return {stage: [(s.first, s.last) for s in spans] for stage, spans in self.stage_spans.items()}

    @property
    def stages(self) -> tuple[str, ...]:
        """The stages this snippet computes, in pipeline order."""
        return tuple(stage for stage in snippet_stages() if stage in self.stage_spans)

    def lines(self, first: int, last: int) -> list[str]:
        """Lines ``first``..``last`` (1-based, inclusive) of the code."""
        return self.code.splitlines()[first - 1 : last]

    def save_data(self, path: str | Path, inputs: Iterable[str | Path | None] = ()) -> list[str]:
        """Write the data file the script loads to ``path``, never over one of ``inputs``; the
        names written (none: no file)."""
        return write_data_file(self.data, path, inputs)


class FrameworkGenerator(ChapterCode):
    """Writes one snippet; a subclass per framework gives its ``Ops`` and what it declares its own way."""

    framework: ClassVar[str]
    title: ClassVar[str]
    #: The packages the snippet imports ("torch and numpy").
    needs: ClassVar[str]
    #: The snippet's imports after the standard library's.
    import_lines: ClassVar[tuple[str, ...]]
    #: The name numpy goes by in the snippet (MXNet's own numpy takes "np").
    numpy_name: ClassVar[str] = "np"
    #: The dtypes this framework computes in; another is computed in float32 and said so.
    dtypes: ClassVar[tuple[str, ...]] = ("float32", "float64", "float16", "bfloat16")

    def __init__(
        self,
        inp: SnippetInput,
        *,
        data_file: str = DATA_FILE,
        max_inline: int = MAX_INLINE,
        max_embedded: int = MAX_EMBEDDED,
    ) -> None:
        if inp.scoring not in SCORINGS:
            raise SnippetError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Snippet", "the scoring function {name} has no {framework} code: it is not one of attnviz's own"
                    ),
                    name=repr(inp.scoring),
                    framework=self.title,
                )
            )
        if inp.mask_mode not in MASK_MODES:
            raise SnippetError(
                message(
                    QT_TRANSLATE_NOOP("Snippet", "the mask mode {name} has no {framework} code"),
                    name=repr(inp.mask_mode),
                    framework=self.title,
                )
            )
        unwritten = [printable(t.name, 80) for t in inp.score_terms if t.kind != "bias"]
        if unwritten:
            # The chapter's attention adds biases (they are in ``inp.bias``); nothing else.
            raise SnippetError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Snippet",
                        "this call's scores go through the model's {terms}, which the chapter's {framework} code "
                        "does not compute; the attnviz script does",
                    ),
                    terms=", ".join(unwritten),
                    framework=self.title,
                )
            )
        super().__init__(inp)
        self.data_file = data_file
        self.max_inline, self.max_embedded = max_inline, max_embedded
        #: The arrays the script uses, by name, in the order they are written, and their kinds.
        self.arrays: dict[str, tuple[np.ndarray, ArrayKind]] = {}
        self.leaves_out: list[str] = []
        self.dtype = inp.dtype if inp.dtype in self.dtypes else "float32"
        if self.dtype != inp.dtype:
            self.leaves_out.append(
                f"{self.title} has no {inp.dtype} here: this script computes in float32, so its weights differ "
                f"from attnviz's {inp.dtype} ones in the last digits {inp.dtype} keeps"
            )
        self._collect_arrays()

    # ------------------------------------------------------------------ the parts, in order

    def build(self) -> Snippet:
        self.w.lines(header_lines(self.inp, self.title, self.dtype, self.needs, self.leaves_out))
        self.w.blank()
        self.imports()
        self.w.blank(2)
        self.helpers()
        self.define_attention()
        self.data_section()
        self.w.line("# ---- the attention, as attnviz computed it ----")
        self.mask_lines()
        self.run()
        self.show_and_save()
        code, spans, functions = self.w.finish()
        if "scores" not in spans:
            # No scaling: the scaled scores are the raw ones, made by the same lines.
            spans["scores"] = spans["raw_scores"]
        data = {name: self._stored(arr, kind) for name, (arr, kind) in self.arrays.items() if self._form(arr) == "file"}
        return Snippet(self.framework, code, spans, functions, data, tuple(self.leaves_out), self.data_file)

    def imports(self) -> None:
        self.stdlib_imports()
        self.w.lines(self.import_lines)

    def helpers(self) -> None:
        """masked_softmax and what it needs (causal mask, dropout with a given draw, pooling)."""
        self.masked_softmax()
        if self.inp.causal is not None:
            self.causal_mask()
        self.dropout_helper()
        if self.clean_pool:
            self.pool()

    # To be written by each framework's way of declaring things.
    def dropout_helper(self) -> None:
        """What applies the draw the app made (``dropout_keep``), where the snippet needs it."""
        raise NotImplementedError

    def define_attention(self) -> None:
        """The scoring function as a module (or a function), computing ``ChapterCode.scores``."""
        raise NotImplementedError

    def run(self) -> None:
        """Build the attention, give it the parameters, call it: ``output`` and ``weights``."""
        raise NotImplementedError

    # ------------------------------------------------------------------ shared parts

    def data_section(self) -> None:
        """The arrays, each as literals, embedded bytes or from the data file."""
        w = self.w
        arrays = self.arrays
        forms = {name: self._form(arr) for name, (arr, _kind) in arrays.items()}
        npn = self.numpy_name
        w.blank(2)
        w.line("# ---- the inputs and parameters attnviz used ----")
        self.dtype_lines()
        inline = [self._stored(arr, kind) for name, (arr, kind) in arrays.items() if forms[name] == "inline"]
        if has_nonfinite(inline):
            w.line('nan, inf = float("nan"), float("inf")')
        if "embedded" in forms.values():
            w.blank()
            unpack_function(w, npn)
            w.blank()
        if "file" in forms.values():
            w.line(f"# The largest arrays are in {printable(self.data_file)}, which attnviz wrote with this script.")
            w.line(f"data = {npn}.load({python_literal(self.data_file)})")
        for name, (arr, kind) in arrays.items():
            stored = self._stored(arr, kind)
            how = forms[name]
            shape = tuple(arr.shape)
            if how == "inline":
                w.line(f"{name} = {self.tensor(literal(stored), kind, stored)}  # {shape}")
            elif how == "embedded":
                w.line(f"# {name}: {arr.size} numbers, shape {shape}, stored exactly as .npy bytes")
                prefix, suffix = self.tensor("\0", kind, stored).split("\0")
                w.line(f"{name} = {prefix}unpack(")
                with w.block():
                    w.lines(packed_lines(stored))
                w.line(f"){suffix}")
            else:
                w.line(f"{name} = {self.tensor(f'data[{name!r}]', kind, stored)}  # {shape}, from the data file")
            if name == "values" and self.inp.valid_lens is None:
                w.line("valid_lens = None  # no valid lengths: every key counts")
        w.blank()

    def show_and_save(self) -> None:
        w = self.w
        w.blank()
        w.line('print("attention weights", tuple(weights.shape))')
        w.line("print(weights)")
        w.line('print("output", tuple(output.shape))')
        w.line("print(output)")
        w.blank()
        save_weights_option(w, f"{self.numpy_name}.save(args.save_weights, {self.to_numpy('weights')})")

    def tensor(self, source: str, kind: ArrayKind, arr: np.ndarray) -> str:
        """The expression making a tensor of ``kind`` from ``source`` (a literal, ``unpack(...)``
        or ``data[...]``)."""
        ops = self.ops
        if kind == "bool":
            return spell(ops.bool_array, src=source)
        if kind == "float":
            dtype = "dtype"
        else:
            name = ops.int_dtype if kind == "int" else "float64" if arr.dtype == np.float64 else "float32"
            dtype = spell(ops.dtype_name, name=name)
        return spell(ops.array, src=source, dtype=dtype)

    def dtype_lines(self) -> None:
        """The line choosing the compute dtype (``dtype = ...``)."""
        self.w.line(f"dtype = {spell(self.ops.compute_dtype or self.ops.dtype_name, name=self.dtype)}")

    def to_numpy(self, name: str) -> str:
        """The expression turning tensor ``name`` into a numpy array (halves as float32)."""
        half = self.dtype in ("float16", "bfloat16")
        return spell(self.ops.half_to_numpy if half else self.ops.to_numpy, x=name)

    # ------------------------------------------------------------------ helpers for subclasses

    def stdlib_imports(self, extra: tuple[str, ...] = ()) -> None:
        """The standard library's imports the snippet needs, sorted, then a blank line (if any)."""
        lines = list(extra)
        if self.needs_unpack():
            lines += ["import base64", "import io", "import zlib"]
        if self.inp.scoring == "scaled_dot" and self.inp.scale is None:
            lines.append("import math")
        if lines:
            self.w.lines(sorted(lines))
            self.w.blank()

    def needs_unpack(self) -> bool:
        return any(self._form(arr) == "embedded" for arr, _kind in self.arrays.values())

    def lens_array(self) -> np.ndarray | None:
        """The valid lengths, lengths above the number of keys written as that number (the same
        meaning, "every key", in a type every framework compares)."""
        lens = self.inp.valid_lens
        if lens is None:
            return None
        return np.minimum(np.asarray(lens, dtype=np.int64), self.inp.shape[2]).astype(np.int32)

    # ------------------------------------------------------------------ internals

    def _collect_arrays(self) -> None:
        inp = self.inp
        arrays = self.arrays
        arrays["queries"] = (inp.queries, "float")
        arrays["keys"] = (inp.keys, "float")
        arrays["values"] = (inp.values, "float")
        lens = self.lens_array()
        if lens is not None:
            arrays["valid_lens"] = (lens, "int")
        if inp.mask is not None:
            arrays["extra_mask"] = (inp.mask, "bool")
        if inp.bias is not None:
            arrays["bias"] = (inp.bias, "float")
        if inp.dropping and inp.dropout < 1.0 and inp.dropout_keep is not None:
            arrays["dropout_keep"] = (inp.dropout_keep, "bool")
        for name, value in inp.params.items():
            arrays[name] = (value, "param")

    def _form(self, arr: np.ndarray) -> str:
        return form(arr, self.max_inline, self.max_embedded)

    @staticmethod
    def _stored(arr: np.ndarray, kind: ArrayKind) -> np.ndarray:
        """The array as written: booleans as 0/1 (short literals every framework reads)."""
        return np.asarray(arr, dtype=np.uint8) if kind == "bool" else np.asarray(arr)


def unpack_function(w: CodeWriter, numpy_name: str) -> None:
    """``unpack(text)``: the array that ``arrays.packed_lines`` wrote, read back exactly."""
    with w.define("def unpack(text):", ["An array stored exactly, as base64 of zlib-compressed .npy bytes."]):
        w.line(f"return {numpy_name}.load(io.BytesIO(zlib.decompress(base64.b64decode(text))))")


def save_weights_option(w: CodeWriter, save: str) -> None:
    """The script's ``--save-weights PATH`` option, which runs ``save``, a line saving the weights."""
    w.line('if __name__ == "__main__":')
    with w.block():
        w.line("import argparse")
        w.blank()
        w.line('parser = argparse.ArgumentParser(description="attention weights and output, as attnviz showed")')
        w.line('parser.add_argument("--save-weights", metavar="PATH", help="also save the weights as a .npy file")')
        w.line("args, _ = parser.parse_known_args()  # a notebook's own arguments are ignored")
        w.line("if args.save_weights:")
        with w.block():
            w.line(save)
