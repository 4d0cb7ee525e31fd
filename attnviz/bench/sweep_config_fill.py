"""Fields a family's default config leaves unset (or lacks) although its modelling code reads
them to build the model, filled from what each field means, so that the sweep's small config
builds. Each rule is for a kind of field, not a family: a size left None that the model uses as a
dimension, ``layer_types`` left None where the layers index it, rotary parameters the model reads
per layer type, an attribute a sub-config lacks that the config around it (or its family's top
config) holds, a vocabulary map the model reads by token name, a model class chosen by
``architectures``. A config none applies to is left as it is. Run last by
``sweep_repairs.repair``, once every size is shrunk. And the inputs of the forecasters whose
horizon is filled here (``forecast_plans``, yielded by ``sweep_plans.extra_plans``).
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

from attnviz.bench.sweep_configs import is_int, modelling_source, put, read

#: Sizes a default config may leave None that a model uses as a dimension or a count, by what
#: they mean. A mixture of experts: a few experts, two of them per token, one shared; an
#: expert's width that of the (shrunk) dense layer.
EXPERTS = ("num_experts", "n_routed_experts", "num_local_experts")
EXPERTS_PER_TOKEN = ("num_experts_per_tok", "top_k_experts", "moe_top_k")
SHARED_EXPERTS = ("n_shared_experts",)
SMALL_EXPERTS, SMALL_TOP_K = 4, 2
#: A vocabulary left None (ESM's: its checkpoints name their alphabet): the size the sweep's
#: shrinking caps every vocabulary at.
VOCABULARY = 1000
#: A forecaster's horizon left None (the time-series transformers' ``prediction_length``): a
#: few steps; its ``context_length`` defaults to the horizon (the configs' own documentation).
HORIZON = 4
#: A VQ tokenizer's codebook, shrunk with the vocabulary it is mapped into.
CODEBOOK = 64


def _unset(config: Any, name: str) -> bool:
    """Whether ``config`` declares ``name`` and leaves it None (its own value: a per-layer
    attribute refuses a global read, which is not None)."""
    return name in vars(config) and vars(config)[name] is None


def _switched_off(config: Any) -> bool:
    """Whether ``config`` turns its experts off with a flag (Gemma 4's ``enable_moe_block``):
    its expert sizes are None because it has none."""
    return any(isinstance(v, bool) and not v and "moe" in k and not k.startswith("_") for k, v in vars(config).items())


def unset_sizes(config: Any, source: str) -> None:
    """A size the default leaves None that the modelling code builds weights of: a small value
    by what the size means. Experts where no count of them is set (an alias counts: Dots1 reads
    ``num_local_experts`` for ``n_routed_experts``) and no flag turns them off; a vocabulary the
    model embeds (``Embedding(config.vocab_size``: a None vocabulary elsewhere means no head
    of that kind: wav2vec2's CTC); a forecaster's horizon it checks for."""

    def reads(name: str) -> bool:
        return re.search(rf"config\.{name}\b", source) is not None

    counts = [n for n in EXPERTS if n in vars(config)]
    if counts and all(_unset(config, n) for n in counts) and any(reads(n) for n in EXPERTS):
        if not _switched_off(config):
            for name in counts:
                put(config, name, SMALL_EXPERTS)
            for name in EXPERTS_PER_TOKEN:
                if _unset(config, name):
                    put(config, name, SMALL_TOP_K)
            for name in SHARED_EXPERTS:
                if _unset(config, name) and reads(name):
                    put(config, name, 1)
            width = read(config, "intermediate_size")
            if _unset(config, "moe_intermediate_size") and is_int(width):
                put(config, "moe_intermediate_size", width)
    if _unset(config, "vocab_size") and re.search(r"Embedding\(\s*config\.vocab_size\b", source):
        put(config, "vocab_size", VOCABULARY)
    if _unset(config, "prediction_length") and reads("prediction_length"):
        put(config, "prediction_length", HORIZON)
        if _unset(config, "context_length"):
            # the context holds the decoder's known start where there is one (Autoformer's
            # ``label_length``, 10, taken from the context's end)
            start = read(config, "label_length")
            put(config, "context_length", max(HORIZON, start if is_int(start) else 0))


def unset_ids_and_bounds(config: Any, source: str) -> None:
    """A padding id left None that the model counts positions from (ESM's
    ``create_position_ids_from_input_ids``: positions start after the padding id, which ``ne``
    refuses as None): 1, RoBERTa's and ESM's alphabets' padding. A bound left None that the
    model clamps with unconditionally (DBRX's ``clip_qkv``: torch refuses two None bounds): the
    bound DBRX's checkpoints use, 8."""
    leaf = not any(hasattr(v, "to_dict") for v in vars(config).values())  # (Evolla's own pads its protein part)
    if leaf and _unset(config, "pad_token_id") and "create_position_ids_from_input_ids(input_ids" in source:
        put(config, "pad_token_id", 1)
    if _unset(config, "clip_qkv") and re.search(r"clamp\(min=\w+, max=self\.clip_qkv\)", source):
        put(config, "clip_qkv", 8.0)


def unset_layer_types(config: Any, source: str) -> None:
    """``layer_types`` left None where the layers index it (``config.layer_types[layer_idx]``:
    LFM2-MoE's, whose checkpoints list them): one layer of each kind the code compares a layer's
    type with, the last an attention layer (the masks are keyed "full_attention")."""
    layers = read(config, "num_hidden_layers")
    if not (_unset(config, "layer_types") and is_int(layers) and "config.layer_types[" in source):
        return
    named = re.findall(r"layer_types\[\w+\]\s*[!=]=\s*\"(\w+)\"", source)
    others = [k for k in dict.fromkeys(named) if "attention" not in k]
    kinds = (others + ["full_attention"] * layers)[: max(0, layers - 1)] + ["full_attention"]
    put(config, "layer_types", kinds)


def rope_per_layer_type(config: Any, source: str) -> None:
    """Rotary parameters the model reads per layer type (``rope_parameters[layer_type]``: Cohere
    Compass's, whose default leaves them empty): one entry for each type ``layer_types`` lists,
    the config's flat parameters where it has them, else default rotary at the base its
    upstream tests use (10,000); M-RoPE sections set at the top level go into each entry."""
    kinds, rope = read(config, "layer_types"), read(config, "rope_parameters")
    if not (isinstance(kinds, list) and kinds and isinstance(rope, dict)):
        return
    if "rope_parameters[layer_type]" not in source or any(isinstance(v, dict) for v in rope.values()):
        return  # (a config already keyed by type keeps its keys: LFM3's convolutions have none)
    flat = {k: v for k, v in rope.items() if k not in kinds and not isinstance(v, dict)}
    entry = {"rope_type": "default", "rope_theta": 10_000.0, **flat}
    put(config, "rope_parameters", {k: rope.get(k) or dict(entry) for k in dict.fromkeys(kinds)})


#: Attributes a sub-config may not declare that the modelling code reads of it (T5Gemma 2's
#: top config hands its ``dropout_rate`` down to its text config; DBRX's attention config is
#: read for the ``rope_theta`` its top config holds in its rotary parameters).
INHERITED = ("rope_theta", "initializer_range", "dropout_rate")


def _held(holder: Any, name: str) -> Any:
    value = read(holder, name)
    if value is None and name == "rope_theta":
        rope = read(holder, "rope_parameters")
        value = rope.get("rope_theta") if isinstance(rope, dict) else None
    return value


def _handed_down(config: Any, name: str, slot: str | None) -> Any:
    """``name`` as the family's top config hands it down by default to the sub-config ``config``
    is (``self.encoder.text_config.<name> = self.<name>`` in its configuration module, where
    ``config`` is held as ``slot``); None where no config of the module does so."""
    module = importlib.import_module(type(config).__module__)
    where = rf"\.{slot}" if slot else ""
    try:
        if not re.search(rf"{where}\.{name}\s*=\s*self\.{name}\b", inspect.getsource(module)):
            return None
    except (OSError, TypeError):
        return None
    # the configs with parts of their own, the one holding ``config``'s class first (every
    # config class has a ``sub_configs``, a vision tower's empty one included)
    tops = [o for o in vars(module).values() if isinstance(o, type) and getattr(o, "sub_configs", None)]
    tops.sort(key=lambda o: type(config) not in getattr(o, "sub_configs").values())  # noqa: B009
    for obj in tops:
        if obj is not type(config):
            try:
                value = _held(obj(), name)
            except Exception:  # noqa: BLE001 - a top config that does not build by default
                continue
            if value is not None:
                return value
    return None


def inherited(config: Any, holder: Any, source: str) -> None:
    """An attribute ``config`` lacks that the model reads of it: inside a config, where the code
    reads it by the name the holder gives ``config`` (DBRX's ``attn_config.rope_theta``), the
    holder's value; a sub-config built alone (Pix2Struct's text model, T5Gemma 2's text config),
    the value its family's top config hands down to it by default (a part it holds, as
    T5Gemma 2's encoder holds its text config, likewise)."""
    slot = next((k for k, v in vars(holder).items() if v is config), None) if holder is not None else None
    for name in INHERITED:
        if hasattr(config, name):
            continue
        value = None
        if slot is not None and re.search(rf"\b{slot}\.{name}\b", source):
            value = _held(holder, name)
        if value is None and re.search(rf"config\.{name}\b", source):
            value = _handed_down(config, name, slot)
        if value is not None:
            put(config, name, value)


def handed_down_sizes(config: Any) -> None:
    """Widths ``config``'s own ``__post_init__`` hands to a sub-config it holds
    (``self.ffn_config.hidden_size = self.d_model``: DBRX's experts read the model's width),
    handed again after the shrinking, which made the two differ. (Widths only: a layer index
    handed down, MiniCPM-V's ``insert_layer_id``, is cut with the layers.)"""
    try:
        text = inspect.getsource(type(config))
    except (OSError, TypeError):
        return
    for slot, name, own in re.findall(r"self\.(\w+)\.(\w+)\s*=\s*self\.(\w+)\s*$", text, re.MULTILINE):
        sub, value = read(config, slot), read(config, own)
        widths = name.endswith(("_size", "d_model", "_dim")) and own.endswith(("_size", "d_model", "_dim"))
        if widths and sub is not None and is_int(value) and is_int(read(sub, name)) and read(sub, name) != value:
            put(sub, name, value)


def vocabulary_map(config: Any, source: str) -> None:
    """A vocabulary map the model reads by token name (Chameleon's and Emu3's: the image
    placeholder, a VQ code's token, Emu3's end of line), which the default leaves None (the
    tokenizer's): the placeholder at the config's image token, each code of a codebook shrunk to
    64 at ids below it, the names the model parses them from."""
    if not (_unset(config, "vocabulary_map") and "vocab_map.get(" in source):
        return
    vq = read(config, "vq_config")
    size_name = next((n for n in ("num_embeddings", "codebook_size") if is_int(read(vq, n))), None)
    image = read(config, "image_token_id")
    if vq is None or size_name is None or not is_int(image):
        return
    put(vq, size_name, min(CODEBOOK, read(vq, size_name)))
    codes = read(vq, size_name)
    top = image - 1
    mapping: dict[str, int] = {"<image>": image}
    if '"<|extra_200|>"' in source:  # Emu3 ends each row of image tokens with it
        mapping["<|extra_200|>"] = top
        top -= 1
    for code in range(codes):
        if "IMGIMG" in source:  # Chameleon: the code's digits as letters A-J, between IMGIMG and Z
            name = "IMGIMG" + "".join(chr(ord("A") + int(d)) for d in str(code)) + "Z"
        else:  # Emu3: the code's six digits
            name = f"<|visual token{code:06d}|>"
        mapping[name] = top - code
    put(config, "vocabulary_map", mapping)


def architecture_named(config: Any) -> None:
    """A family ``AutoModel`` maps to several classes picks one by ``config.architectures``,
    which the default leaves None (transformers iterates it: Funnel's "'NoneType' object is not
    iterable"): an empty list, which picks the first class, as the mapping intends."""
    if read(config, "architectures") is not None:
        return
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    if isinstance(MODEL_MAPPING_NAMES.get(str(read(config, "model_type"))), (list, tuple)):
        put(config, "architectures", [])


def fill(config: Any) -> None:
    """Every rule, on ``config`` and each config inside it (each with the config around it)."""
    pending: list[tuple[Any, Any]] = [(config, None)]
    seen: list[Any] = []
    architecture_named(config)
    while pending:
        sub, holder = pending.pop(0)
        if any(sub is s for s in seen):
            continue
        seen.append(sub)
        source = modelling_source(sub) or modelling_source(config)
        unset_sizes(sub, source)
        unset_ids_and_bounds(sub, source)
        unset_layer_types(sub, source)
        rope_per_layer_type(sub, source)
        inherited(sub, holder, source)
        vocabulary_map(sub, source)
        handed_down_sizes(sub)
        for value in list(vars(sub).values()):
            for child in value if isinstance(value, (list, tuple)) else (value,):
                if hasattr(child, "to_dict") and hasattr(child, "model_type"):
                    pending.append((child, sub))


def forecast_plans(config: Any, params: Any) -> Iterator[tuple[str, list[str], Callable[[], dict[str, Any]]]]:
    """A probabilistic forecaster's inputs (the time-series transformers, Informer, Autoformer):
    a past window as long as its context plus its largest lag (``_past_length``), with its time
    features and observed mask, and the horizon's values and time features, so the decoder runs
    too; the sizes the config declares (``input_size`` series, ``num_time_features``, static
    features)."""
    import torch

    from attnviz.bench.sweep_inputs import BATCH

    lags, context = read(config, "lags_sequence"), read(config, "context_length")
    horizon = read(config, "prediction_length")
    if "past_time_features" not in params or not (lags and is_int(context) and is_int(horizon)):
        return
    past = context + max(lags)
    size, features = read(config, "input_size"), read(config, "num_time_features")
    series = () if not is_int(size) or size == 1 else (size,)
    features = features if is_int(features) else 0
    g = torch.Generator().manual_seed(0)

    def make() -> dict[str, Any]:
        values = torch.randn(BATCH, past, *series, generator=g)
        out = {
            "past_values": values,
            "past_time_features": torch.randn(BATCH, past, features, generator=g),
            "past_observed_mask": torch.ones_like(values),
            "future_values": torch.randn(BATCH, horizon, *series, generator=g),
            "future_time_features": torch.randn(BATCH, horizon, features, generator=g),
        }
        static_real = read(config, "num_static_real_features")
        if is_int(static_real) and static_real > 0:
            out["static_real_features"] = torch.randn(BATCH, static_real, generator=g)
        cardinality, static_cat = read(config, "cardinality"), read(config, "num_static_categorical_features")
        if is_int(static_cat) and static_cat > 0 and cardinality:
            out["static_categorical_features"] = torch.stack(
                [torch.randint(0, max(1, c), (BATCH,), generator=g) for c in cardinality], dim=1
            )
        return {k: v for k, v in out.items() if k in params}

    yield "past window with lags, time features and horizon", ["series"], make
