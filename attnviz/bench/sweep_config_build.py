"""The sweep's default config of a family, for the families whose default does not build as it
stands, and the one text config of a config that names two.

Two rules repair a default config, each about what its class declares, not about a family:

* a sub-config default naming a model type the registry spells otherwise (Nougat's encoder
  ``donut_swin``, registered as ``donut-swin``): the sub-config is given the registered spelling;
* a validator that demands a value of a sub-config's field (Gemma 4's assistant: "hidden_size_
  per_layer_input must be 0, got 256", then ``enable_moe_block``, ``vocab_size_per_layer_input``):
  the value it names is given to the sub-config that has the field, until the config builds.

``text_config``: ``get_text_config()``, or where a config names an encoder's and a decoder's text
config (MusicGen's ``text_encoder`` and ``decoder``) and ``get_text_config`` refuses to choose, the
decoder's (the text whose vocabulary the model's ids index and whose layers it generates with).
"""

from __future__ import annotations

import ast
import re
from typing import Any

#: Repairs tried on one default config before its last error is said.
MAX_REPAIRS = 8
_UNKNOWN_TYPE = re.compile(r"Unrecognized model type for subconfig: ([\w.-]+)")
_DEMANDED = re.compile(r"\b(\w+) must be (-?\d+(?:\.\d+)?|True|False|None), got ")


def default_config(model_type: str) -> Any:
    """``CONFIG_MAPPING[model_type]()``, repaired by the rules above where it raises; the first
    error is raised where no rule applies (or the repairs do not end)."""
    import transformers

    cls = transformers.CONFIG_MAPPING[model_type]
    kwargs: dict[str, Any] = {}
    first: Exception | None = None
    for _ in range(MAX_REPAIRS):
        try:
            return cls(**kwargs)
        except Exception as exc:  # noqa: BLE001 - each error read for a rule, else the first raised
            first = first or exc
            if not _repair(cls, exc, kwargs):
                raise first from None
    raise first or RuntimeError(model_type)


def text_config(config: Any) -> Any:
    """The config's text config (``get_text_config``), the decoder's where it names two."""
    if not hasattr(config, "get_text_config"):
        return config
    try:
        return config.get_text_config()
    except ValueError as exc:
        if "Multiple valid text configs" not in str(exc):
            raise
        return config.get_text_config(decoder=True)


def _repair(cls: Any, exc: BaseException, kwargs: dict[str, Any]) -> bool:
    """Add to ``kwargs`` what the first rule that reads ``exc`` gives; whether one did."""
    said = " ".join(str(e) for e in (exc, exc.__cause__) if e is not None)
    specs: dict[str, Any] = getattr(cls, "sub_configs_defaults", None) or {}
    unknown = _UNKNOWN_TYPE.search(said)
    if unknown:
        return _registered_spelling(specs, unknown.group(1).rstrip("."), kwargs)  # the sentence's full stop
    demanded = _DEMANDED.search(said)
    if demanded:
        return _demanded_value(cls, specs, demanded.group(1), ast.literal_eval(demanded.group(2)), kwargs)
    return False


def _registered_spelling(specs: dict[str, Any], model_type: str, kwargs: dict[str, Any]) -> bool:
    import transformers

    for spelling in (model_type.replace("_", "-"), model_type.replace("-", "_")):
        if spelling == model_type or spelling not in transformers.CONFIG_MAPPING:
            continue
        keys = [k for k, spec in specs.items() if getattr(spec, "model_type", None) == model_type]
        for key in keys:
            given: dict[str, Any] = kwargs[key] if isinstance(kwargs.get(key), dict) else {}
            kwargs[key] = {**given, "model_type": spelling}
        return bool(keys)
    return False


def _demanded_value(cls: Any, specs: dict[str, Any], name: str, value: Any, kwargs: dict[str, Any]) -> bool:
    import transformers

    for key, spec in specs.items():
        given: dict[str, Any] = kwargs[key] if isinstance(kwargs.get(key), dict) else {}
        model_type = given.get("model_type") or getattr(spec, "model_type", None)
        if model_type not in transformers.CONFIG_MAPPING:
            continue
        try:
            default = transformers.CONFIG_MAPPING[model_type](**getattr(spec, "init_kwargs", {}) or {})
        except Exception:  # noqa: BLE001 - a sub-config that does not build alone holds no field to set
            continue
        if hasattr(default, name) and given.get(name, object()) != value:
            kwargs[key] = {**given, "model_type": model_type, name: value}
            return True
    fields = getattr(cls, "__dataclass_fields__", {})
    if name in fields and kwargs.get(name, object()) != value:
        kwargs[name] = value
        return True
    return False


def part_class(config: Any) -> Any:
    """The class to build a composite config with where ``AutoModel`` maps it to the class of one
    of its parts (MusicGen's config to ``MusicgenModel``, the decoder alone, whose config class is
    the decoder's): its modelling module's own class for it (``MusicgenForConditionalGeneration``),
    None where ``AutoModel``'s class is the config's own."""
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    from attnviz.bench import sweep_configs, sweep_inputs

    try:
        mapped = MODEL_MAPPING[type(config)]
        owner = getattr(mapped, "config_class", None)
    except Exception:  # noqa: BLE001 - unmapped, or a class whose library is missing: AutoModel says so
        return None
    parts = {type(sub) for sub in sweep_inputs.sub_configs(config) if sub is not config}
    if owner is None or isinstance(config, owner) or owner not in parts:
        return None
    return sweep_configs.model_class(config)


def paired_model(config: Any, implementation: str) -> Any:
    """A config that pairs an ``encoder`` and a ``decoder`` config with no modelling code of its own
    (Nougat's: its checkpoints are vision encoder-decoder models, Donut-Swin to MBart) built as
    the generic encoder-decoder model of its encoder's kind (an image encoder's: the vision one);
    None for any other config."""
    import transformers

    encoder, decoder = getattr(config, "encoder", None), getattr(config, "decoder", None)
    if not (hasattr(encoder, "model_type") and hasattr(decoder, "model_type")):
        return None
    vision = getattr(encoder, "image_size", None) is not None or getattr(encoder, "num_channels", None) is not None
    pair_config, pair_model = (
        (transformers.VisionEncoderDecoderConfig, transformers.VisionEncoderDecoderModel)
        if vision
        else (transformers.EncoderDecoderConfig, transformers.EncoderDecoderModel)
    )
    paired = pair_config.from_encoder_decoder_configs(encoder, decoder)
    return pair_model._from_config(paired, attn_implementation=implementation)
