"""A model's forward arguments found by what they mean, not by one spelling.

    args = model_arguments(model)
    args.cache          # "past_key_values" on transformers 5.23, "cache" on 5.24, None if none
    args.returned_cache(outputs)   # the cache a forward returned, whatever it is called there

transformers 5.24 renamed ``forward(past_key_values=)`` to ``forward(cache=)``; other libraries
say ``past``, ``kv_cache`` or ``layer_past``. A check that looked for one name skipped models that
took the other, and said nothing a user could act on. Here a parameter is the KV cache when its
name is one of the known spellings or its annotation names a cache type; the same for the
positions and the padding mask. No Qt, no transformers import: only the signature is read.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

__all__ = ["ModelArguments", "model_arguments"]

#: Spellings of the KV cache, the most common first (transformers <= 5.23, then 5.24).
CACHE_NAMES = ("past_key_values", "cache", "past", "kv_cache", "kv_caches", "caches", "layer_past", "past_key_value")
POSITION_NAMES = ("position_ids", "positions", "pos_ids", "position_idx")
CACHE_POSITION_NAMES = ("cache_position", "cache_positions")
MASK_NAMES = ("attention_mask", "attn_mask", "mask", "padding_mask")


@dataclass(frozen=True)
class ModelArguments:
    """The names ``forward`` gives the KV cache, the positions, the cache positions and the
    padding mask (None where it takes none); ``takes_kwargs``: it takes ``**kwargs`` too;
    ``names``: every parameter name, for messages."""

    cache: str | None
    positions: str | None
    cache_position: str | None
    attention_mask: str | None
    takes_kwargs: bool
    names: tuple[str, ...]

    def accepts(self, name: str) -> bool:
        return name in self.names or self.takes_kwargs

    def returned_cache(self, outputs: Any) -> Any:
        """The KV cache ``outputs`` hold: the attribute named as the argument, any known
        spelling, or the second element of a tuple output. None when there is none."""
        for name in (self.cache, *CACHE_NAMES):
            if name is None:
                continue
            value = outputs.get(name) if isinstance(outputs, dict) else getattr(outputs, name, None)
            if value is not None:
                return value
        if isinstance(outputs, tuple) and len(outputs) > 1:
            return outputs[1]
        return None


def model_arguments(model: Any) -> ModelArguments:
    """Read ``model.forward``'s signature (a model that is a plain callable: its own)."""
    forward = getattr(model, "forward", model)
    try:
        parameters = inspect.signature(forward).parameters
    except (TypeError, ValueError):
        return ModelArguments(None, None, None, None, False, ())
    names = tuple(n for n, p in parameters.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in parameters.values())

    def by_name(spellings: tuple[str, ...]) -> str | None:
        return next((n for n in spellings if n in names), None)

    cache = by_name(CACHE_NAMES)
    if cache is None:
        # A spelling not listed: an annotation that names a cache type (Cache, DynamicCache, ...).
        cache = next(
            (n for n in names if _annotation_text(parameters[n]).endswith("Cache") and "position" not in n), None
        )
    return ModelArguments(
        cache, by_name(POSITION_NAMES), by_name(CACHE_POSITION_NAMES), by_name(MASK_NAMES), takes_kwargs, names
    )


def _annotation_text(parameter: inspect.Parameter) -> str:
    """The annotation's last type name, "Optional[Cache]" / "Cache | None" read as "Cache"."""
    annotation = parameter.annotation
    if annotation is inspect.Parameter.empty:
        return ""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", repr(annotation))
    for noise in ("typing.", "Optional[", "Union[", "]", "None", "|", ","):
        text = text.replace(noise, " ")
    words = text.split()
    return next((w.rsplit(".", 1)[-1] for w in words if w.rsplit(".", 1)[-1].endswith("Cache")), "")
