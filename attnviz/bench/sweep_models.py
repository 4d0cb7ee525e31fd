"""Which model the capture sweep builds for a config ``AutoModel`` does not map: a tower's or a
head-only family's class from the config's own modelling module, never the ``...PreTrainedModel``
base (its forward is ``nn.Module``'s, which takes nothing), and a config that is only a part of a
model (SAM's mask decoder, a tokenizer's decoder) said as such rather than tried.
Used by ``capture_sweep._build`` and ``capture_sweep.sweep_one``."""

from __future__ import annotations

from typing import Any

from attnviz.bench.sweep_configs import modelling_module


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


def candidates(config: Any, with_forward: bool = True) -> list[type]:
    """Model classes of the config's modelling module whose ``config_class`` is the config's
    class (and that define a forward of their own, unless ``with_forward`` is False), best
    first."""
    import transformers

    owner = type(config)
    module = modelling_module(config)
    if module is None:
        return []
    found = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, transformers.PreTrainedModel)
        and getattr(obj, "config_class", None) is owner
        and "PreTrained" not in obj.__name__
        and (_defines_forward(obj) or not with_forward)
    ]
    return sorted(found, key=_rank)


def model_class(config: Any) -> type:
    """The class to build ``config`` with when ``AutoModel`` does not map it; ``PartOnly`` where
    there is none."""
    found = candidates(config)
    if found:
        return found[0]
    name = type(config).__name__
    generating = candidates(config, with_forward=False)
    if generating:  # Qwen2.5-Omni: thinker and talker run through generate(), each a family
        raise PartOnly(
            f"{generating[0].__name__} has no forward: it generates through its parts, each swept as its own family"
        )
    raise PartOnly(f"{name} configures a part of another model: no model class of its own to build")


def key_heads_as_values(model: Any) -> bool:
    """Where an attention module projects keys to fewer heads than values (the modelling code
    sizes ``v_proj`` by ``num_attention_heads`` and ``k_proj`` by ``num_key_value_heads``, i.e.
    it assumes they are equal, as in the Nemotron 3 audio encoders' default config), give that
    module's config as many key/value heads as heads, and say whether any changed: the model
    is then built again. The sweep's shrinking sets 2 key/value heads for 4 heads, which such
    a model accepts at build and then runs with keys and values of different head counts."""
    import torch

    changed = False
    for module in model.modules():
        q, k, v = (getattr(module, n, None) for n in ("q_proj", "k_proj", "v_proj"))
        config = getattr(module, "config", None)
        if not all(isinstance(p, torch.nn.Linear) for p in (q, k, v)) or config is None:
            continue
        assert isinstance(q, torch.nn.Linear) and isinstance(k, torch.nn.Linear) and isinstance(v, torch.nn.Linear)
        if k.out_features < v.out_features == q.out_features:
            heads = getattr(config, "num_attention_heads", None)
            if isinstance(heads, int) and getattr(config, "num_key_value_heads", None) != heads:
                config.num_key_value_heads = heads
                changed = True
    return changed
