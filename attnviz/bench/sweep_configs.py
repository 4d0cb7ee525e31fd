"""What the capture sweep builds from a config: the class that runs it where ``AutoModel`` maps
none (a sub-model's config: an encoder, a decoder, a vision tower) or maps one without a forward of
its own (a generation-only wrapper, a retrieval model's base class), and the config's per-layer
patterns and attention sizes kept consistent when the sweep shrinks it (``capture_sweep.shrink``):
a hybrid's two layers hold one layer of each kind, latent attention's (MLA) sizes shrink together.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from types import ModuleType
from typing import Any


def modelling_module(config: Any) -> ModuleType | None:
    """The modelling module of ``config``'s family (``configuration_x`` -> ``modeling_x``), or
    None where it has none."""
    return _module(type(config).__module__.replace(".configuration_", ".modeling_"))


def modelling_source(config: Any) -> str:
    """The source of ``config``'s modelling module ("" where it has none): what the sweep's
    rules read to tell what a family's code does. Read once per module (the repairs run on every
    sub-config, several rounds, each asking)."""
    return _source(type(config).__module__.replace(".configuration_", ".modeling_"))


@functools.cache
def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


@functools.cache
def _source(name: str) -> str:
    module = _module(name)
    try:
        return inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        return ""


def has_forward(model_class: type) -> bool:
    """Whether ``model_class`` defines a forward (``nn.Module``'s own raises)."""
    import torch

    forward = getattr(model_class, "forward", None)
    return forward is not None and forward is not torch.nn.Module.forward


#: Inputs the sweep makes (``sweep_inputs.plans``): a class taking one of them is preferred.
MADE = ("input_ids", "pixel_values", "input_features", "input_values")


def _rank(model_class: type) -> tuple[int, int, int]:
    # one that takes inputs the sweep makes; a base model first, then an encoder, decoder or
    # tower of its own, then a task head
    name = model_class.__name__
    forward = getattr(model_class, "forward")  # noqa: B009 - a class mypy knows as a bare type
    takes_none = not set(MADE) & set(inspect.signature(forward).parameters)
    kind = 0 if name.endswith("Model") else 1 if "For" not in name else 2
    return (takes_none, kind, len(name))


def model_class(config: Any) -> type | None:
    """The class of ``config``'s modelling module that runs it: its ``config_class`` is the
    config's class (or its name is the config's without ``Config``), it defines a forward, it is
    not the abstract ``...PreTrainedModel``; a ``...Model`` before an encoder or tower, before a
    task head (``...ForDepthEstimation``)."""
    import torch

    owner = type(config)
    module = modelling_module(config)
    if module is None:
        return None
    bare = owner.__name__.removesuffix("Config")
    found = [
        obj
        for name, obj in vars(module).items()
        if isinstance(obj, type)
        and issubclass(obj, torch.nn.Module)
        and hasattr(obj, "_from_config")
        and not name.endswith("PreTrainedModel")
        and (getattr(obj, "config_class", None) is owner or name == bare)
        and has_forward(obj)
    ]
    return min(found, key=_rank) if found else None


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def put(config: Any, name: str, value: Any) -> None:
    try:
        setattr(config, name, value)
    except Exception:  # noqa: BLE001 - some configs guard attributes
        pass


def read(config: Any, name: str) -> Any:
    try:
        return getattr(config, name, None)
    except Exception:  # noqa: BLE001 - per-layer attributes refuse a global read
        return None


def at_most(config: Any, name: str, value: int) -> None:
    """``config.name`` made ``value`` where it is a larger whole number."""
    current = read(config, name)
    if is_int(current) and current > value:
        put(config, name, value)


def _keep_stages(config: Any, before: int, kept: int) -> None:
    """A backbone whose stages were cut (Swin's, ConvNeXt's ``depths``) names as many stages as
    it has (``stage_names``: the stem, then one per stage), and a neck reading it by name asks only
    for stages that are left (``out_features``; the last where none is)."""
    names = read(config, "stage_names")
    if not isinstance(names, (list, tuple)) or len(names) != before + 1:
        return
    left = list(names[: kept + 1])
    wanted = [n for n in (read(config, "out_features") or []) if n in left] or [left[-1]]
    try:
        config.stage_names = left
        config.set_output_features_output_indices(out_features=wanted, out_indices=None)
    except Exception:  # noqa: BLE001 - a config that guards its stages keeps them
        return


def keep_layer_kinds(config: Any, before: int | None, stages: bool = True) -> None:
    """After ``config``'s layers were cut from ``before`` to a few: every per-layer list (its
    ``layer_types``, ``mlp_layer_types``, a list of widths) keeps the layers picked, which are the
    first of each kind of ``layer_types`` (a hybrid whose first layers are all linear attention
    or convolution keeps an attention layer), at least two; a period and offset of attention
    layers (Jamba's) and a hybrid's attention indices (Bamba's, unset by default) name a layer
    that is left."""
    layers = read(config, "num_hidden_layers")
    if not isinstance(before, int) or not is_int(layers) or before <= layers:
        return
    names = read(config, "stage_names")
    if not stages and isinstance(names, (list, tuple)) and len(names) == before + 1:
        # a backbone under a neck (Mask2Former's Swin): every stage stays, each with fewer blocks
        put(config, "num_hidden_layers", before)
        depths = read(config, "depths")
        if isinstance(depths, (list, tuple)) and all(is_int(d) for d in depths):
            put(config, "depths", type(depths)(min(int(d), 2) for d in depths))
        return
    kinds = read(config, "layer_types")
    picked: list[int] = []
    if isinstance(kinds, (list, tuple)) and len(kinds) == before:
        seen: set[Any] = set()
        for i, kind in enumerate(kinds):
            if kind not in seen:
                seen.add(kind)
                picked.append(i)
    for i in range(before):
        if len(picked) >= layers:
            break
        if i not in picked:
            picked.append(i)
    picked.sort()
    for name, value in list(vars(config).items()):
        # per-stage tuples too (ConvNeXt's ``depths`` and ``hidden_sizes``), where the stages are
        # the model's own (``stages``): a backbone under a neck keeps its stages and their names
        per_layer = isinstance(value, list) or (stages and isinstance(value, tuple))
        if per_layer and len(value) == before and not name.startswith("_"):
            put(config, name, type(value)(value[i] for i in picked))
    if stages:
        _keep_stages(config, before, len(picked))
    put(config, "num_hidden_layers", len(picked))
    last = len(picked) - 1
    kinds = read(config, "layer_types")
    if isinstance(kinds, list) and set(kinds) == {"linear_attention"} and _knows_full_attention(config):
        # a hybrid whose default holds no attention layer (Granite 4's, Bamba's) gets one
        put(config, "layer_types", kinds[:-1] + ["full_attention"])
    for name in ("attn_layer_offset", "expert_layer_offset"):
        if is_int(read(config, name)) and read(config, name) > last:
            put(config, name, last)
    if "attn_layer_indices" in vars(config):
        indices = [i for i in read(config, "attn_layer_indices") or () if i <= last]
        put(config, "attn_layer_indices", indices or [last])


def _knows_full_attention(config: Any) -> bool:
    """Whether ``config``'s modelling code builds a "full_attention" layer."""
    return '"full_attention"' in modelling_source(config)


def shrink_state_space(config: Any) -> None:
    """A Mamba-2 mixer's heads kept consistent with the (smaller) width: heads times head size is
    the width times the expansion (Bamba's, Granite 4's), and so is a mixer width the config sets
    apart (Falcon-H1's ``mamba_d_ssm``)."""
    heads, width = read(config, "mamba_n_heads"), read(config, "hidden_size")
    expand = read(config, "mamba_expand") if is_int(read(config, "mamba_expand")) else 2
    if is_int(heads) and is_int(width):
        put(config, "mamba_n_heads", 8)
        put(config, "mamba_d_head", expand * width // 8)
        if is_int(read(config, "mamba_d_ssm")):  # the mixer's width set apart (Falcon-H1's 1024): the same
            put(config, "mamba_d_ssm", expand * width)
        at_most(config, "mamba_d_state", 16)
        at_most(config, "mamba_chunk_size", 64)


def shrink_latent_attention(config: Any) -> None:
    """Multi-head latent attention (DeepSeek-V2/V3's, and the families built on it) shrunk as one:
    its ranks and its rotary, plain and value head sizes together, the rotary ``head_dim`` the
    rotary size, as many key/value heads as query heads (the latent is expanded per head), and
    a sparse indexer's heads (DeepSeek-V3.2's) as small."""
    if not is_int(read(config, "kv_lora_rank")):
        return
    sizes = {"kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 16}
    sizes.update({"qk_head_dim": 16, "index_head_dim": 16, "index_n_heads": 4, "index_topk": 4})
    if is_int(read(config, "q_lora_rank")):
        sizes["q_lora_rank"] = 32
    for name, value in sizes.items():
        if is_int(read(config, name)):
            put(config, name, value)
    if is_int(read(config, "head_dim")):
        put(config, "head_dim", sizes["qk_rope_head_dim"])
    heads = read(config, "num_attention_heads")
    if is_int(heads) and is_int(read(config, "num_key_value_heads")):
        put(config, "num_key_value_heads", heads)


#: Latent attention's sizes (and heads) that ``shrink_latent_attention`` and the heads' shrink
#: give every layer alike.
_LATENT_PER_LAYER = (
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "kv_lora_rank",
    "q_lora_rank",
    "qk_rope_head_dim",
    "qk_nope_head_dim",
    "qk_head_dim",
    "v_head_dim",
)


def uniform_latent_layers(config: Any) -> None:
    """A latent-attention config whose layers differ in heads and latent sizes (transformers'
    heterogeneous configs: Dots 3 Note's sliding layers, 64 heads and a rank of 1024 against
    128 and 512) made alike in those sizes before the shrink: such a size refuses a global read
    (``AmbiguousGlobalPerLayerAttributeError``), so the shrink would leave the width, heads and
    ranks full size, and its overrides name the full model's layer indices; shrunk, every layer
    takes the same small sizes anyway. Other per-layer attributes stay, on the layers left."""
    spec = vars(config).get("_heterogeneity_spec")
    unchecked = getattr(config, "_getattr_without_heterogeneous_validation", None)
    if spec is None or unchecked is None or not is_int(unchecked("kv_lora_rank", None)):
        return
    layers = unchecked("num_hidden_layers", None)
    kept = {
        index: {name: value for name, value in overrides.items() if name not in _LATENT_PER_LAYER}
        for index, overrides in spec.per_layer_overrides.items()
        if not is_int(layers) or index < layers
    }
    kept = {index: overrides for index, overrides in kept.items() if overrides}
    try:
        config.per_layer_config = kept or None
    except Exception:  # noqa: BLE001 - a config that refuses the overrides keeps its own
        return


def unset_sizes(config: Any) -> None:
    """Sizes a default config leaves unset although its model needs them (HunYuan's ``head_dim``):
    the value its modelling code would assume where it has one."""
    width, heads = read(config, "hidden_size"), read(config, "num_attention_heads")
    if "head_dim" in vars(config) and read(config, "head_dim") is None and is_int(width) and is_int(heads):
        put(config, "head_dim", width // max(1, heads))
    if not is_int(read(config, "num_experts_per_tok")) and is_int(read(config, "n_routed_experts")):
        put(config, "num_experts_per_tok", 2)  # DeepSeek-V2's default leaves its top-k unset
    layers = read(config, "num_hidden_layers")
    if is_int(layers):
        # layers sharing another's keys and values (Gemma 3n's last 15) are fewer than the layers
        at_most(config, "num_kv_shared_layers", 0)


def missing_library(why: str) -> bool:
    """Whether a build's failure names a library this environment lacks (timm, PIL, scipy,
    natten...): "... requires the timm library", "No module named 'scipy'"."""
    import re

    return re.search(r"requires the \w+ library|No module named|ImportError", why) is not None


#: The widest a config may be for the layers-only retry: a wider one, at its own width, takes
#: longer than the sweep's time limit on a loaded CPU (CSM's 2048: 320 s).
RETRY_WIDTH = 1024


def widest(config: Any) -> int:
    """The largest width any of ``config``'s configs declares (0 where none does)."""
    from attnviz.bench.sweep_inputs import sub_configs

    names = ("hidden_size", "d_model", "n_embd", "embed_dim", "dim")
    values = [read(c, n) for c in sub_configs(config) for n in names]
    return max((v for v in values if is_int(v)), default=0)


def spectrogram_frames(config: Any) -> None:
    """An audio transformer whose position table is sized by its input's frames (the AST's
    ``max_length``, 1024) takes 128 frames: eight times fewer patches to attend over."""
    if is_int(read(config, "num_mel_bins")) and is_int(read(config, "max_length")):
        at_most(config, "max_length", 128)
