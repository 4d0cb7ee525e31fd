"""Which model the capture sweep builds for a config ``AutoModel`` does not map: a tower's or a
head-only family's class from the config's own modelling module, never the ``...PreTrainedModel``
base (its forward is ``nn.Module``'s, which takes nothing), and a config that is only a part of a
model (SAM's mask decoder, a tokenizer's decoder) said as such rather than tried.
Used by ``capture_sweep._build`` and ``capture_sweep.sweep_one``."""

from __future__ import annotations

import importlib
from typing import Any


class PartOnly(Exception):
    """The config has no model class of its own: it configures a part built inside another
    model (whose family the sweep captures)."""


def _defines_forward(cls: type) -> bool:
    import torch

    forward = getattr(cls, "forward", None)
    return forward is not None and forward is not torch.nn.Module.forward


def _rank(cls: type) -> tuple[int, int]:
    """Bare models first (``XModel``, ``XVisionEncoder``), task heads (``XForY``) after them;
    the shorter name first within each."""
    name = cls.__name__
    return (1 if "For" in name else 0, len(name))


def candidates(config: Any) -> list[type]:
    """Model classes of the config's modelling module whose ``config_class`` is the config's
    class and that define a forward of their own, best first."""
    import transformers

    owner = type(config)
    try:
        module = importlib.import_module(owner.__module__.replace(".configuration_", ".modeling_"))
    except ImportError:
        return []
    found = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, transformers.PreTrainedModel)
        and getattr(obj, "config_class", None) is owner
        and "PreTrained" not in obj.__name__
        and _defines_forward(obj)
    ]
    return sorted(found, key=_rank)


def model_class(config: Any) -> type:
    """The class to build ``config`` with when ``AutoModel`` does not map it; ``PartOnly`` where
    there is none."""
    found = candidates(config)
    if not found:
        raise PartOnly(
            f"{type(config).__name__} configures a part of another model: no model class of its own to build"
        )
    return found[0]
