"""Inputs besides text, pixels and audio that a forward takes by name, made from the config alone
(the sweep's, ``sweep_inputs.build``): layout boxes per token (LayoutLM's, LiLT's, BROS's),
region features (LXMERT's), the Q-Former's own text (InstructBLIP's), the image positions of
Kosmos-2's text, Idefics' image mask per token, and the hidden states a tower or a Q-Former of
its own takes in place of ids (``embedding_plans``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from attnviz.bench.sweep_configs import is_int, read


def _first_int(configs: list[Any], names: tuple[str, ...], default: int) -> int:
    for c in configs:
        for name in names:
            value = read(c, name)
            if is_int(value) and value > 0:
                return int(value)
    return default


def _boxes(batch: int, length: int, corners: int, generator: Any) -> Any:
    """Boxes of one token each: ``corners`` 4 as whole (x0, y0, x1, y1) within 0..1000, x0 <= x1
    and y0 <= y1 (LayoutLM's); 8 as a quadrilateral's four points within 0..1 (BROS's)."""
    import torch

    if corners == 8:
        x0, y0 = torch.rand(2, batch, length, generator=generator) * 0.5
        x1, y1 = x0 + 0.25, y0 + 0.25
        return torch.stack([x0, y0, x1, y0, x1, y1, x0, y1], dim=-1)
    start = torch.randint(0, 500, (batch, length, 2), generator=generator)
    end = start + torch.randint(1, 500, (batch, length, 2), generator=generator)
    return torch.cat([start, end], dim=-1)


def complete(config: Any, params: Any, inputs: dict[str, Any], generator: Any) -> dict[str, Any]:
    """``inputs`` with what the forward also takes by name and a model needs: every maker whose
    parameter the forward has and the inputs lack."""
    import torch

    from attnviz.bench.sweep_inputs import sub_configs

    configs = sub_configs(config)
    out = dict(inputs)
    ids = out.get("input_ids")
    batch, length = (ids.shape[0], ids.shape[1]) if ids is not None else (2, 8)
    if "bbox" in params and "bbox" not in out and ids is not None:
        out["bbox"] = _boxes(batch, length, _first_int(configs, ("dim_bbox",), 4), generator)
    if "visual_feats" in params and "visual_feats" not in out:  # LXMERT's regions: features and boxes
        regions = 4
        features = _first_int(configs, ("visual_feat_dim",), 2048)
        out["visual_feats"] = torch.randn(batch, regions, features, generator=generator)
        out["visual_pos"] = torch.rand(batch, regions, _first_int(configs, ("visual_pos_dim",), 4), generator=generator)
    if "qformer_input_ids" in params and "qformer_input_ids" not in out:  # InstructBLIP's Q-Former prompt
        qformer = read(config, "qformer_config") or config
        vocab = min(_first_int([qformer], ("vocab_size",), 1000), 1000)
        out["qformer_input_ids"] = torch.randint(3, vocab, (batch, 5), generator=generator)
        if "qformer_attention_mask" in params:
            out["qformer_attention_mask"] = torch.ones(batch, 5, dtype=torch.long)
    pixels = out.get("pixel_values")
    if "image_attention_mask" in params and ids is not None and pixels is not None and pixels.dim() == 5:
        out["image_attention_mask"] = torch.ones(batch, length, pixels.shape[1], dtype=torch.long)  # Idefics
    return out


def image_positions(config: Any, params: Any) -> int | None:
    """How many text positions an image's embeddings take where the text marks them with a mask of
    its own rather than a token (Kosmos-2's ``image_embeds_position_mask``: its latent queries)."""
    if "image_embeds_position_mask" not in params:
        return None
    return _first_int([config], ("latent_query_num",), 64)


def embedding_plans(config: Any, params: Any) -> Iterator[tuple[str, list[str], Callable[[], dict[str, Any]]]]:
    """A forward that takes hidden states in place of ids (a multimodal fusion layer of its own,
    a Q-Former, an encoder fed features): random states of each width the config names, with
    encoder states where it cross-attends."""
    import torch

    from attnviz.bench.sweep_inputs import BATCH, sub_configs

    name = next((n for n in ("hidden_states", "query_embeds", "inputs_embeds") if n in params), None)
    if name is None:
        return
    configs = sub_configs(config)
    widths: list[int] = []
    for key in ("input_dim", "hidden_size", "d_model", "embed_dim", "hidden_dim"):
        value = read(config, key)
        if is_int(value) and value > 0 and value not in widths:
            widths.append(int(value))
    for width in widths:

        def make(width: int = width) -> dict[str, Any]:
            g = torch.Generator().manual_seed(0)
            out: dict[str, Any] = {name: torch.randn(BATCH, 8, width, generator=g)}
            if "encoder_hidden_states" in params:
                encoder = _first_int(configs, ("encoder_hidden_size",), width)
                out["encoder_hidden_states"] = torch.randn(BATCH, 6, encoder, generator=g)
            return out

        yield f"states (B, L, {width})", ["states"], make


def trajectory_plans(config: Any, params: Any) -> Iterator[tuple[str, list[str], Callable[[], dict[str, Any]]]]:
    """A Decision Transformer's trajectory: states, actions, rewards and returns to go per step,
    of the sizes its config names, with the steps' times and a mask."""
    import torch

    from attnviz.bench.sweep_inputs import BATCH

    if not {"states", "actions", "returns_to_go", "timesteps"} <= set(params):
        return
    steps = 6

    def make() -> dict[str, Any]:
        g = torch.Generator().manual_seed(0)
        states = _first_int([config], ("state_dim",), 17)
        actions = _first_int([config], ("act_dim",), 4)
        return {
            "states": torch.randn(BATCH, steps, states, generator=g),
            "actions": torch.randn(BATCH, steps, actions, generator=g),
            "rewards": torch.randn(BATCH, steps, 1, generator=g),
            "returns_to_go": torch.randn(BATCH, steps, 1, generator=g),
            "timesteps": torch.arange(steps).repeat(BATCH, 1),
            "attention_mask": torch.ones(BATCH, steps, dtype=torch.long),
        }

    yield f"trajectory ({steps} steps)", ["trajectory"], make
