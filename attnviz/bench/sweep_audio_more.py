"""Config repairs and inputs for the audio, codec and named-input families the other sweep modules
leave unbuilt or unrun (issue 35), each a rule read from the config or the modelling code, not a
family's name:

* config repairs (``REPAIRS``, run by ``sweep_repairs.repair`` on every config): convolution
  groups the shrunk width no longer divides (a codec's depthwise upsampling, 512 groups on 64
  channels); a size the default config makes as the sum of two widths (a codec's quantizer over
  its acoustic and semantic features joined) following the shrunk widths; as many key/value
  heads as heads where rotary positions count the heads or the config's class makes them so;
  sizes its own validation ties; a head wide enough for the rotary pairs it counts; and, where
  the build refuses, an attribute the modelling code reads that the config class leaves out
  (``build_reading_unset``), set to what it means;
* inputs (``fill``, ``plans``, ``retried``, hooked into ``sweep_inputs``): embeddings a forward
  requires by a name of its own (PI0's ``action_embeds``: (B, L, width) of the part that reads
  them); a flow-matching mel decoder's inputs as its own sampling loop makes them (Qwen2.5-Omni's
  DiT and its token-to-wave wrapper); images from several cameras with their mask (PI0's
  prefix); a drafter's main-model keys and values per layer type (Gemma 4's assistants);
  embeddings where a model's own id table is missing; a conditioning its layers take through
  ``**kwargs`` (Voxtral Realtime's text decoder); a chain of tokens with a bundle of their
  reference atoms made from the bundle's own docstring (ESMFold 2's trunk).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Any

from attnviz.bench import sweep_config_build
from attnviz.bench.sweep_configs import is_int, modelling_source, put, read

Plan = tuple[str, list[str], Callable[[], dict[str, Any]]]

BATCH = 2
#: Steps (tokens, codes, actions) of the sequences made here.
LENGTH = 8


def _int(value: Any) -> int | None:
    return int(value) if is_int(value) and value > 0 else None


def _default(config: Any) -> Any:
    try:
        return type(config)()
    except Exception:  # noqa: BLE001 - a config that cannot be made alone keeps its sizes
        return None


# ----------------------------------------------------------------------------- config repairs


def divisible_groups(config: Any) -> None:
    """Convolution groups (``*_groups``) that no longer divide the shrunk width: the largest
    count that divides both (a depthwise convolution, groups equal to the default width, stays
    depthwise). Mimi's and Pocket TTS's upsampling: 512 groups on 64 channels."""
    width = _int(read(config, "hidden_size"))
    if width is None:
        return
    for name in list(vars(config)):
        groups = _int(read(config, name))
        if name.endswith("_groups") and not name.startswith(("n_", "num_")) and groups and width % groups:
            put(config, name, math.gcd(groups, width))


def joined_widths(config: Any) -> None:
    """A size the default config sets to its own width plus a sub-config's (NeuCodec's and
    X-Codec 2's ``quantization_dim``: the acoustic and the semantic features joined, 1024 + 1024)
    that the shrinking left at the default's sum: the sum of the shrunk widths."""
    width = _int(read(config, "hidden_size"))
    default = _default(config) if width is not None else None
    if default is None or width is None:
        return
    own = _int(read(default, "hidden_size"))
    for sub_name, sub in list(vars(config).items()):
        sub_default = read(default, sub_name)
        if not hasattr(sub, "to_dict") or sub_default is None or own is None:
            continue
        other, other_default = _int(read(sub, "hidden_size")), _int(read(sub_default, "hidden_size"))
        if other is None or other_default is None:
            continue
        for name, value in list(vars(default).items()):
            # (an MLP's width that happens to equal the sum is no joined width: Mask2Former's 1024)
            mlp = any(w in name for w in ("feedforward", "intermediate", "ffn"))
            sized = name.endswith(("_dim", "_size")) and not name.startswith(("max_", "vocab")) and not mlp
            if not sized or value != own + other_default:
                continue
            if read(config, name) == value and value != width + other:
                put(config, name, width + other)


#: What an attribute means where the modelling code reads it and the config class leaves it out:
#: as many key/value heads as heads; a shared expert as wide as an expert's or the MLP's width.
_MEANINGS: dict[str, tuple[str, ...]] = {
    "num_key_value_heads": ("num_attention_heads",),
    "shared_expert_intermediate_size": ("moe_intermediate_size", "intermediate_size"),
}


def build_reading_unset(build: Callable[[Any, str], Any], config: Any, implementation: str) -> Any:
    """``build(config, implementation)``; where the modelling code reads an attribute the config's
    class never sets (transformers' own omission: ``'MoonshineStreamingConfig' object has no
    attribute 'num_key_value_heads'``, Qwen3-Omni's talker's ``shared_expert_intermediate_size``),
    that attribute set on the config it names from what it means (``_MEANINGS``) and built again.
    Done at the refusal, not as a repair: other configs of the same modules lack these names
    without any class reading them."""
    from attnviz.bench.sweep_inputs import sub_configs

    for _ in range(4):
        try:
            return build(config, implementation)
        except AttributeError as exc:
            said = re.search(r"'(\w+)' object has no attribute '(\w+)'", str(exc))
            if said is None or said.group(2) not in _MEANINGS:
                raise
            owner = next((c for c in sub_configs(config) if type(c).__name__ == said.group(1)), None)
            meaning = _MEANINGS[said.group(2)]
            value = next((v for n in meaning if (v := _int(read(owner, n))) is not None), None) if owner else None
            if owner is None or value is None or read(owner, said.group(2)) is not None:
                raise
            put(owner, said.group(2), value)
    return build(config, implementation)


def rotary_over_heads(config: Any) -> None:
    """A model whose rotary positions count heads, not tokens (NeuCodec's and X-Codec 2's
    decoders: ``position_ids = arange(num_attention_heads)``, cos/sin broadcast over the heads of
    queries and keys alike) takes as many key/value heads as heads, as its default config has;
    the shrinking's 2 for 4 leaves keys that the tables do not broadcast against."""

    heads = _int(read(config, "num_attention_heads"))
    if heads is None or _int(read(config, "num_key_value_heads")) in (None, heads):
        return
    if re.search(
        r"position_ids\s*=\s*torch\.arange\(\s*(?:self|config)\.num_attention_heads", modelling_source(config)
    ):
        put(config, "num_key_value_heads", heads)


def post_init_sizes(config: Any) -> None:
    """Key/value heads a config's ``__post_init__`` makes the head count whatever it is given
    (Dots3's audio encoder: ``num_key_value_heads = num_attention_heads``, its keys projected to
    the full width), which the shrinking then set to 2: the head count again, as its class
    makes it (after ``validated``: a config its class refuses cannot be made again)."""
    import inspect

    post = getattr(type(config), "__post_init__", None)
    try:
        source = inspect.getsource(post) if post is not None else ""
    except (OSError, TypeError):
        return
    assigned = set(re.findall(r"^\s*self\.(\w+)\s*=", source, re.M))
    if not assigned:
        return
    given = {k: v for k, v in config.to_dict().items() if not isinstance(v, dict) and not k.startswith("_")}
    try:
        fresh = type(config)(**given)
    except Exception:  # noqa: BLE001 - a config its class cannot remake keeps its sizes
        return
    # key/value heads only, where the class makes them the head count (other sizes it sets, a
    # vocabulary, a layer count, are the default's and were shrunk on purpose)
    made = read(fresh, "num_key_value_heads")
    if "num_key_value_heads" in assigned and made == read(config, "num_attention_heads") != read(
        config, "num_key_value_heads"
    ):
        put(config, "num_key_value_heads", made)


def validated(config: Any) -> None:
    """Sizes a config's own validation requires equal (``adapter_input_size must match
    hidden_size``, Dots3's audio adapter), as it says, where the shrinking set one of them only."""
    check = getattr(config, "validate_architecture", None)
    for _ in range(4):  # one size per refusal
        try:
            if callable(check):
                check()
            return
        except Exception as exc:  # noqa: BLE001 - the refusal names the sizes
            said = re.search(r"(\w+) must match (\w+)", str(exc))
            if said is None or _int(read(config, said.group(2))) is None:
                return
            if read(config, said.group(1)) == read(config, said.group(2)):
                return
            put(config, said.group(1), read(config, said.group(2)))


def rotary_pair_heads(config: Any) -> None:
    """A head whose rotary channels the config counts in pairs (ESMFold 2's atom encoder:
    ``num_spatial_rope_pairs_per_axis`` per axis and ``num_uid_rope_pairs``, 16 of a 32-wide head's
    pairs) keeps the default head size where the shrunk one holds fewer pairs than counted."""
    head = _int(read(config, "head_dim"))
    pairs = [n for n in vars(config) if n.startswith("num_") and "rope_pairs" in n]
    default = _default(config) if head is not None and pairs else None
    if default is None or head is None:
        return
    counted = sum(int(read(config, n)) * (3 if n.endswith("_per_axis") else 1) for n in pairs if _int(read(config, n)))
    wide = _int(read(default, "head_dim"))
    if counted > head // 2 and wide is not None and wide // 2 >= counted:
        put(config, "head_dim", wide)


#: This module's repairs, run by ``sweep_repairs.repair`` on every config and sub-config.
REPAIRS = (divisible_groups, joined_widths, rotary_over_heads, validated, post_init_sizes, rotary_pair_heads)


# ----------------------------------------------------------------------------- inputs


def _widths(config: Any) -> list[int]:
    """Every distinct ``hidden_size`` of the config and its parts, innermost (a part's) first:
    embeddings a forward takes by a name of its own are usually a part's (PI0's action expert)."""
    from attnviz.bench.sweep_inputs import sub_configs

    found = [w for c in reversed(sub_configs(config)) if (w := _int(read(c, "hidden_size"))) is not None]
    return list(dict.fromkeys(found))


def fill(model: Any, config: Any, params: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """``inputs`` with each required ``*_embeds`` the forward still lacks (no shape line says its
    size: PI0's ``action_embeds``): (B, L, width) of the config's innermost width; a wrong width
    is resized as the refusal asks (``sweep_named.retried``, a matrix product's rows)."""
    import torch

    from attnviz.bench.sweep_named import required

    missing = [n for n in required(params) if n.endswith("_embeds") and n not in inputs]
    widths = _widths(config)
    if not missing or not widths:
        return inputs
    g = torch.Generator().manual_seed(9)
    return {**inputs, **{n: torch.randn(BATCH, LENGTH, widths[0], generator=g) for n in missing}}


def _first_int(config: Any, names: tuple[str, ...], default: int) -> int:
    from attnviz.bench.sweep_inputs import first, sub_configs

    value = _int(first(sub_configs(config), names))
    return value if value is not None else default


def flow_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A flow-matching mel decoder (Qwen2.5-Omni's DiT, its token-to-wave wrapper), fed as its
    own ``sample`` loop feeds it: codes (B, L) below ``num_embeds``; the noisy mel being
    denoised (B, L * repeats, mel_dim); the reference mel its speaker encoder reads as
    ``condition_vector`` (B, frames, mel_dim); the speaker vector repeated per frame as
    ``speaker_embedding`` (B, L * repeats, enc_emb_dim); one time step. The wrapper takes the
    codes, the speaker vector and the reference mel and runs two steps of its solver. Its
    parameters' names say nothing of their sizes and have no docstring: the recipe is read from
    that loop, kept here for any forward with these names."""
    import torch

    mel = _first_int(config, ("mel_dim",), 80)
    speaker = _first_int(config, ("enc_emb_dim",), 192)
    repeats = _first_int(config, ("repeats",), 2)
    codes = min(_first_int(config, ("num_embeds",), 1000), 1000)
    frames = LENGTH * repeats
    names = set(params)

    def codes_of(g: Any) -> Any:
        return torch.randint(1, codes, (BATCH, LENGTH), generator=g)

    if {"hidden_states", "condition_vector", "speaker_embedding", "quantized_code", "time_step"} <= names:

        def step() -> dict[str, Any]:
            g = torch.Generator().manual_seed(0)
            return {
                "hidden_states": torch.randn(BATCH, frames, mel, generator=g),
                "condition_vector": torch.randn(BATCH, frames, mel, generator=g),
                "speaker_embedding": torch.randn(BATCH, frames, speaker, generator=g),
                "quantized_code": codes_of(g),
                "time_step": torch.tensor(0.5),
            }

        yield "a flow step: noisy mel, reference mel, speaker, codes", ["audio codes"], step
    if {"code", "conditioning", "reference_mel"} <= names:

        def wave() -> dict[str, Any]:
            g = torch.Generator().manual_seed(0)
            out = {
                "code": codes_of(g),
                "conditioning": torch.randn(BATCH, speaker, generator=g),
                "reference_mel": torch.randn(BATCH, frames, mel, generator=g),
            }
            return {**out, **({"num_steps": 2} if "num_steps" in names else {})}

        yield "codes, speaker and reference mel (two solver steps)", ["audio codes"], wave


def camera_plans(config: Any, params: Any) -> Iterator[Plan]:
    """Images from several cameras with a mask saying which are present (PI0's prefix:
    ``pixel_values`` (B, cameras, C, H, W), ``pixel_attention_mask`` (B, cameras)), one camera
    each, and text holding one image token per patch of its vision tower."""
    import torch

    from attnviz.bench.sweep_inputs import _placeholder, sub_configs, text_with_media

    if not {"pixel_values", "pixel_attention_mask", "input_ids"} <= set(params):
        return
    tower = next((c for c in sub_configs(config) if _int(read(c, "image_size")) and _int(read(c, "patch_size"))), None)
    token = _placeholder(config, "image")
    if tower is None or token is None:
        return
    size, patch = int(read(tower, "image_size")), int(read(tower, "patch_size"))
    channels = _int(read(tower, "num_channels")) or 3

    def make() -> dict[str, Any]:
        g = torch.Generator().manual_seed(0)
        text = text_with_media(config, params, [("image", token, (size // patch) ** 2)], g)
        pixels = torch.randn(BATCH, 1, channels, size, size, generator=g)
        return {**text, "pixel_values": pixels, "pixel_attention_mask": torch.ones(BATCH, 1, dtype=torch.bool)}

    yield "text and one camera's image (B, cameras, C, H, W)", ["text", "image"], make


def shared_kv_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A drafter that attends to its main model's keys and values instead of its own (Gemma 4's
    assistants: ``shared_kv_states``, the last layer's (keys, values) per layer type, and the main
    model's states as ``inputs_embeds``, ``2 * backbone_hidden_size`` wide): keys and values of
    each layer type sized from that type's layer config (its key/value heads, its head size)."""
    import torch

    if "shared_kv_states" not in params or "inputs_embeds" not in params:
        return
    text = sweep_config_build.text_config(config)
    kinds = read(text, "layer_types")
    if not isinstance(kinds, list) or not kinds:
        return
    per_layer = read(text, "per_layer_config")
    backbone = _int(read(config, "backbone_hidden_size"))
    width = 2 * backbone if backbone is not None else _int(read(text, "hidden_size")) or 64

    def layer(index: int) -> Any:
        try:
            return per_layer[index] if per_layer is not None else text
        except Exception:  # noqa: BLE001 - a per-layer view that refuses: the text config's own sizes
            return text

    def make() -> dict[str, Any]:
        g = torch.Generator().manual_seed(0)
        states = {}
        for kind in dict.fromkeys(kinds):
            sizes = layer(kinds.index(kind))
            heads = _int(read(sizes, "num_key_value_heads")) or 1
            head = _int(read(sizes, "head_dim")) or 16
            shape = (BATCH, heads, LENGTH, head)
            states[kind] = (torch.randn(*shape, generator=g), torch.randn(*shape, generator=g))
        return {"inputs_embeds": torch.randn(BATCH, 1, width, generator=g), "shared_kv_states": states}

    yield "one step with the main model's keys and values per layer type", ["states"], make


#: A dataclass field's doc line: ``name: `(batch_size, num_atoms, 3)` what it holds.``
_FIELD = re.compile(r"^\s*(\w+): `\(([^`]*)\)`\s*(.*)$", re.M)


def _bundle(kind: type, config: Any, atoms: int, tokens: int, generator: Any) -> Any:
    """A dataclass of tensors made from its own docstring's shape lines: a field said one-hot
    over a count the config names is given raw, as indices below that count (the forward encodes
    it); masks all true; indices of a token or group count the atoms out over the tokens in order;
    coordinates and charges random and zero."""
    import torch

    fields = {
        name: ([d.strip() for d in dims.split(",")], text) for name, dims, text in _FIELD.findall(kind.__doc__ or "")
    }
    made: dict[str, Any] = {}
    for name, (dims, text) in fields.items():
        sizes = {"batch_size": BATCH, "num_atoms": atoms, "num_tokens": tokens}
        shape = [sizes.get(d) or _int(read(config, d)) or (int(d) if d.isdigit() else 1) for d in dims]
        if "one-hot" in text:  # raw: indices below the count of the last axis
            made[name] = torch.randint(1, max(2, shape[-1]), tuple(shape[:-1]), generator=generator)
        elif "mask" in name:
            made[name] = torch.ones(*shape, dtype=torch.bool)
        elif "token" in name or "uid" in name:  # the token each atom belongs to
            made[name] = (torch.arange(atoms) * tokens // atoms).expand(*shape).clone()
        elif "charge" in name:
            made[name] = torch.zeros(*shape)
        else:
            made[name] = torch.randn(*shape, generator=generator)
    return kind(**made)


def structure_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """A structure model fed tokens and their atoms (ESMFold 2's trunk: a bundle of reference
    atoms, ``EsmFold2AtomInputs``, beside per-token indices): the bundle from its docstring's
    shape lines (``_bundle``), four atoms per token; per-token inputs as one protein chain read
    in order (indices counting the tokens, chain, copy and entity ids 0, residue types below the
    config's count); pair features zero."""
    import dataclasses

    import torch

    from attnviz.bench.sweep_named import doc_shapes, required

    need = required(params)
    bundles = [n for n in need if dataclasses.is_dataclass(params[n].annotation)]
    if not bundles:
        return
    shapes = doc_shapes(model.forward)
    tokens = LENGTH
    types = _first_int(config, ("num_res_types",), 20)

    def make() -> dict[str, Any]:
        g = torch.Generator().manual_seed(0)
        out: dict[str, Any] = {n: _bundle(params[n].annotation, config, 4 * tokens, tokens, g) for n in bundles}
        for name in (n for n in need if n not in out):
            dims = shapes.get(name, ("", ["batch_size", "num_tokens"]))[1]
            shape = [
                tokens if d == "num_tokens" else BATCH if d == "batch_size" else int(d) if d.isdigit() else 1
                for d in dims
            ]
            if "mask" in name:
                out[name] = torch.ones(*shape, dtype=torch.long)
            elif len(shape) > 2:  # pair features (bonds): none
                out[name] = torch.zeros(*shape)
            elif "index" in name:
                out[name] = torch.arange(tokens).expand(*shape).clone()
            elif name.startswith("res_"):
                out[name] = torch.randint(1, types, tuple(shape), generator=g)
            else:
                out[name] = torch.zeros(*shape, dtype=torch.long)
        return out

    yield "a chain of tokens with their reference atoms", ["structure"], make


def plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """This module's plans (``sweep_inputs.plans``, before the docstring's)."""
    yield from structure_plans(model, config, params)
    yield from shared_kv_plans(config, params)
    yield from camera_plans(config, params)
    yield from flow_plans(config, params)


#: Keywords a layer takes that the sweep never makes itself (the model makes them, or they are
#: optional): not a conditioning the model expects from its caller.
_LAYER_OWN = {
    "hidden_states", "attention_mask", "position_ids", "position_embeddings", "past_key_values",
    "past_key_value", "cache_position", "encoder_hidden_states", "encoder_attention_mask", "use_cache",
    "output_attentions", "layer_head_mask", "cross_attn_layer_head_mask", "output_router_logits",
}  # fmt: skip


def layer_conditioning(model: Any, params: Any, inputs: dict[str, Any]) -> list[str]:
    """Tensors the model's layers take by a name its own forward does not have, which a caller
    hands through ``**kwargs`` (Voxtral Realtime's text decoder: ``t_cond``, the delay's time
    embedding its full model computes): their names."""
    import inspect

    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return []
    found: dict[str, None] = {}
    for module in model.modules():
        if module is model or "Layer" not in type(module).__name__:
            continue
        try:
            layer_params = inspect.signature(module.forward).parameters
        except (TypeError, ValueError):
            continue
        for name, p in layer_params.items():
            tensor = "Tensor" in str(p.annotation) and "None" in str(p.annotation)
            if tensor and name not in params and name not in _LAYER_OWN and name not in inputs:
                found[name] = None
    return list(found)


def stated(failures: list[str]) -> str | None:
    """The one failure that says why no plan could run on this implementation, where one does:
    a model whose attention looks its kernel up by name in a registry with no ``eager`` entry
    (Qwen2.5-Omni's DiT: ``ALL_ATTENTION_FUNCTIONS[...]``, no eager fallback) runs on SDPA only."""
    if any("KeyError: 'eager'" in f for f in failures):
        return "its attention has no eager path (it looks up 'eager' among the registered kernels): runs on sdpa only"
    return None


def retried(inputs: dict[str, Any], params: Any, message: str, config: Any, model: Any = None) -> dict[str, Any] | None:
    """Embeddings of the model's width where its forward reaches for an id table it does not
    have (Qwen3-Omni's talker: ``self.embed_tokens``, its table named ``codec_embedding``); where
    a layer meets None, the conditioning its layers take through ``**kwargs`` (one vector of the
    width per item, ``layer_conditioning``)."""
    import torch

    ids = inputs.get("input_ids")
    width = _int(read(config, "hidden_size")) or next(iter(_widths(config)), 64)
    if "NoneType" in message and model is not None:
        names = layer_conditioning(model, params, inputs)
        if names:
            g = torch.Generator().manual_seed(10)
            return {**inputs, **{n: torch.randn(BATCH, 1, width, generator=g) for n in names}}
    if "no attribute 'embed_tokens'" not in message or ids is None or "inputs_embeds" not in params:
        return None
    embeds = torch.randn(*ids.shape, width, generator=torch.Generator().manual_seed(4))
    return {**{k: v for k, v in inputs.items() if k != "input_ids"}, "inputs_embeds": embeds}
