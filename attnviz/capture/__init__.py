"""Capture a running PyTorch model's attention, open other tools' recordings, diagnose masks.

    with attnviz.capture(model, tokens=tokens) as cap:
        model(**batch)
    cap.calls          # every attention call, in order: name, queries, keys, values, masks, output
    cap.to_run()       # the app's ModelRun (numpy), fidelity checked
    cap.save("run.attnviz-capture")

    attnviz.capture.from_transformer_lens(cache, tokens=...)     # a TransformerLens ActivationCache
    attnviz.capture.capture_transformer_lens(model, tokens)      # run a HookedTransformer / TransformerBridge
    attnviz.capture.from_output_attentions(outputs.attentions)    # Hugging Face output_attentions
    attnviz.capture.diagnose_run(run)                             # the mask doctor's findings
    attnviz.capture.merge(["rank0.attnviz-capture", ...])         # the ranks of a distributed run

This package is callable: ``attnviz.capture(model)`` is ``attnviz.capture.capture(model)``, so
the short form works whether or not the package was imported by name first (type checkers see
a module: write ``from attnviz.capture import capture`` there). It imports torch; ``import
attnviz`` does not import it.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ..io.storable import storable
from .calls import CapturedCall, recompute_call
from .doctor import DEFAULT_PAD_TOKENS, FINDING_KINDS, Finding, diagnose_run, format_finding
from .merge import merge
from .other_tools import capture_transformer_lens, from_output_attentions, from_transformer_lens
from .recorder import DEFAULT_CAPTURE_BUDGET, Capture, capture

__all__ = [
    "DEFAULT_CAPTURE_BUDGET",
    "DEFAULT_PAD_TOKENS",
    "FINDING_KINDS",
    "Capture",
    "CapturedCall",
    "Finding",
    "capture",
    "diagnose_run",
    "format_finding",
    "from_output_attentions",
    "from_transformer_lens",
    "capture_transformer_lens",
    "merge",
    "recompute_call",
    "storable",
]


class _CallableModule(types.ModuleType):
    """The package itself, callable as ``capture``: ``import attnviz.capture`` binds the name
    ``attnviz.capture`` to this module, which would otherwise hide the function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Capture:
        return capture(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
