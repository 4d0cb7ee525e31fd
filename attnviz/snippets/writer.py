"""A writer of Python source that remembers which lines compute which stage of attention.

A generator writes its snippet line by line; a line that computes a stage is written with that
stage's name (and the variable that holds the stage's value once the line has run), and every
line knows the function it is in. ``CodeWriter.finish`` then gives the code and, per stage, the
runs of consecutive lines that compute it (``StageSpan``), each with its enclosing function: the
data a view needs to show "these lines make this map".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import cache

from attnviz.text.safe import is_printable

__all__ = ["RETURN_VALUE", "CodeWriter", "StageSpan", "snippet_stages"]


@cache
def snippet_stages() -> tuple[str, ...]:
    """Every stage a snippet maps to lines, in pipeline order: additive attention's hidden
    features, then the engine's stages (``attnviz.engine.result.STAGES``).

    Read when a snippet is written, not when this module is imported: the engine imports torch,
    which the window must not load on its GUI thread while it is being built (a snippet is
    written from the engine's result, so torch is loaded by then)."""
    from ..engine.result import STAGES

    # A call's score terms (a captured model's position bias, soft-capping) are not the
    # chapter's: only the attnviz script of a call that has them writes lines for their stage.
    return ("hidden_features", *STAGES)


#: ``StageSpan.variable`` when the stage's value is what the span's last line returns.
RETURN_VALUE = "<return>"


@dataclass(frozen=True)
class StageSpan:
    """Lines ``first``..``last`` (1-based, inclusive) compute a stage, inside ``function``
    (``"<module>"`` at the top level), which spans ``function_lines``.

    ``variable`` names what holds the stage's value once line ``last`` has run: a local variable,
    ``RETURN_VALUE`` for what that line returns, or None where the lines say something about the
    stage without holding its value (a call, a branch taken when nothing is masked).
    """

    first: int
    last: int
    function: str
    function_lines: tuple[int, int]
    variable: str | None = None


@dataclass
class _Line:
    text: str
    stages: tuple[str, ...]
    #: What holds each stage's value once the line has run (stages not named: nothing).
    variables: dict[str, str]
    function: str


class CodeWriter:
    """Lines of code, indented by ``block()``, in functions opened by ``function()``."""

    def __init__(self) -> None:
        self._lines: list[_Line] = []
        self._indent = 0
        self._functions: list[str] = []
        self._ranges: dict[str, tuple[int, int]] = {}

    def line(
        self,
        text: str = "",
        stage: str | Iterable[str] | None = None,
        variable: str | Mapping[str, str] | None = None,
    ) -> None:
        """One line (indented to the current block); ``stage``: the stage(s) it computes;
        ``variable``: what holds their value once it has run (one name for every stage, or a
        name per stage)."""
        stages = () if stage is None else (stage,) if isinstance(stage, str) else tuple(stage)
        unknown = [s for s in stages if s not in snippet_stages()]
        if unknown:
            raise ValueError(f"unknown stage {unknown[0]!r}")
        function = self._functions[-1] if self._functions else "<module>"
        # A text of several lines (a nested literal) is several lines of the file: each counts.
        parts = text.split("\n")
        if variable is None:
            variables: dict[str, str] = {}
        elif isinstance(variable, str):
            variables = dict.fromkeys(stages, variable)
        else:
            variables = {stage: name for stage, name in variable.items() if stage in stages}
        for i, part in enumerate(parts):
            if not is_printable(part):
                # Text from a file reached the code raw (safe_text.printable / python_literal were
                # forgotten): a line break or a control character in it could run as code.
                raise ValueError(f"generated code holds a line break or control character: {ascii(part)}")
            indented = ("    " * self._indent + part) if part else ""
            last = i == len(parts) - 1
            self._lines.append(_Line(indented, stages, variables if last else {}, function))

    def lines(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.line(text)

    def blank(self, count: int = 1) -> None:
        for _ in range(count):
            self.line()

    @contextmanager
    def block(self) -> Iterator[None]:
        """The lines written inside are indented one level more."""
        self._indent += 1
        try:
            yield
        finally:
            self._indent -= 1

    @contextmanager
    def define(self, opening: str, doc: Sequence[str] = (), *, name: str | None = None) -> Iterator[None]:
        """A ``def`` or ``class`` opened by ``opening``, with the docstring of lines ``doc`` (a last
        empty line puts the closing quotes on a line of their own) and the lines written inside as
        its body; with ``name``, a ``function()`` of that name."""
        with self.function(name) if name else nullcontext():
            self.line(opening)
            with self.block():
                if doc:
                    self.lines([f'"""{doc[0]}', *doc[1:-1], f'{doc[-1]}"""'] if len(doc) > 1 else [f'"""{doc[0]}"""'])
                yield

    @contextmanager
    def function(self, name: str) -> Iterator[None]:
        """The lines written inside belong to function ``name`` ("Class.method" for a method);
        its range runs from the first of them to the last non-blank one."""
        if name in self._ranges or name in self._functions:
            raise ValueError(f"function {name!r} written twice")
        self._functions.append(name)
        start = len(self._lines) + 1
        try:
            yield
        finally:
            self._functions.pop()
            end = len(self._lines)
            while end >= start and not self._lines[end - 1].text:
                end -= 1
            self._ranges[name] = (start, end)

    @property
    def indent_width(self) -> int:
        """The columns a line written now is indented by."""
        return 4 * self._indent

    def finish(self) -> tuple[str, dict[str, tuple[StageSpan, ...]], dict[str, tuple[int, int]]]:
        """The code (ending in a newline), its stage spans and its functions' line ranges."""
        code = "\n".join(line.text for line in self._lines) + "\n"
        spans: dict[str, list[StageSpan]] = {}
        for stage in snippet_stages():
            run: list[int] = []
            for number, line in enumerate(self._lines, start=1):
                joins = run and number == run[-1] + 1 and self._lines[run[-1] - 1].function == line.function
                if stage in line.stages and joins:
                    run.append(number)
                    continue
                if run:
                    spans.setdefault(stage, []).append(self._span(run, stage))
                run = [number] if stage in line.stages else []
            if run:
                spans.setdefault(stage, []).append(self._span(run, stage))
        return code, {k: tuple(v) for k, v in spans.items()}, dict(self._ranges)

    def _span(self, run: list[int], stage: str) -> StageSpan:
        first, last = run[0], run[-1]
        function = self._lines[first - 1].function
        whole = self._ranges.get(function, (1, len(self._lines)))
        return StageSpan(first, last, function, whole, self._lines[last - 1].variables.get(stage))
