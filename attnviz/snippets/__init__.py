"""Copy as code: the current inputs and settings as a script, in the framework the user works in.

``make_snippet(state, framework, focus=...)`` writes plain PyTorch, TensorFlow, MXNet or JAX code (no attnviz
needed) structured as the chapter teaches: a masked softmax over valid lengths, the scoring
function as a module (or a function, in JAX), the batched products, with the tensors and
learnable parameters the app used; or, as ``"attnviz"``, a call of ``attnviz.engine.attend``. Run,
a snippet prints the weights and the output; ``--save-weights PATH`` also saves the weights.

Each ``Snippet`` says which of its lines compute which stage (``stage_lines``, ``stage_spans``)
and what it leaves out (``leaves_out``, also written at its top).

The generators work from a ``SnippetInput`` that ``snippet_input(state, outcome, focus=...)`` makes
from one head of the state (``State.head_view(focus)``): the one place that reads a ``State``.
No Qt here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnviz.state.run import Focus
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from .arrays import DATA_FILE, MAX_EMBEDDED, MAX_INLINE
from .attnviz_script import attnviz_snippet, save_snippet_data, snippet_data, snippet_for_state
from .base import FrameworkGenerator, Snippet
from .inputs import SnippetError, SnippetInput, snippet_input
from .jax_code import JaxGenerator
from .mxnet_code import MXNetGenerator
from .tf_code import TensorFlowGenerator
from .torch_code import TorchGenerator
from .writer import RETURN_VALUE, StageSpan, snippet_stages

if TYPE_CHECKING:
    from attnviz.state.document import State

    from ..compute import Outcome

__all__ = [
    "DATA_FILE",
    "FRAMEWORKS",
    "FRAMEWORK_TITLES",
    "MAX_EMBEDDED",
    "MAX_INLINE",
    "RETURN_VALUE",
    "Snippet",
    "SnippetError",
    "SnippetInput",
    "StageSpan",
    "generate",
    "make_snippet",
    "save_snippet_data",
    "snippet_data",
    "snippet_for_state",
    "snippet_input",
    "snippet_stages",
]

_GENERATORS: dict[str, type[FrameworkGenerator]] = {
    "pytorch": TorchGenerator,
    "tensorflow": TensorFlowGenerator,
    "mxnet": MXNetGenerator,
    "jax": JaxGenerator,
}
#: Every framework a snippet can be written in, the default first.
FRAMEWORKS: tuple[str, ...] = (*_GENERATORS, "attnviz")
#: Their names as the menus show them (proper names: not translated).
FRAMEWORK_TITLES: dict[str, str] = {
    **{name: cls.title for name, cls in _GENERATORS.items()},
    "attnviz": "attnviz",
}


def generate(
    inp: SnippetInput,
    framework: str,
    *,
    data_file: str = DATA_FILE,
    max_inline: int = MAX_INLINE,
    max_embedded: int = MAX_EMBEDDED,
) -> Snippet:
    """The snippet for ``inp`` in ``framework`` (one of ``FRAMEWORKS``)."""
    if framework == "attnviz":
        return attnviz_snippet(inp, max_inline=max_inline, max_embedded=max_embedded, data_file=data_file)
    generator = _GENERATORS.get(framework)
    if generator is None:
        raise SnippetError(
            message(
                QT_TRANSLATE_NOOP("Snippet", "unknown framework {name}: expected one of {choices}"),
                name=repr(framework),
                choices=", ".join(FRAMEWORKS),
            )
        )
    return generator(inp, data_file=data_file, max_inline=max_inline, max_embedded=max_embedded).build()


def make_snippet(
    state: State,
    framework: str = "pytorch",
    *,
    outcome: Outcome | None = None,
    data_file: str = DATA_FILE,
    max_inline: int = MAX_INLINE,
    max_embedded: int = MAX_EMBEDDED,
    focus: tuple[int, int] = Focus(),
) -> Snippet:
    """Head ``focus`` of ``state`` as a snippet in ``framework``; ``outcome``: the app's result
    for this state and head (computed here when not given). Raises ``SnippetError`` for what
    cannot be written."""
    return generate(
        snippet_input(state, outcome, focus=focus),
        framework,
        data_file=data_file,
        max_inline=max_inline,
        max_embedded=max_embedded,
    )
