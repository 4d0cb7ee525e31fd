"""Inputs for a video tracker whose forward takes an inference session (SAM 2's, SAM 3's and
EdgeTAM's video models): the session is built from a short random clip at the config's image
size, with a prompt on frame 0 as a processor's ``add_inputs_to_inference_session`` would leave
it (one positive point for an object, in the model's pixel coordinates; SAM 3's video model is
prompted by text: random token ids of its text encoder's vocabulary), frame 0 is run once, and the
plan is the forward on frame 1, tracked from frame 0's memory. That one forward runs every kind
of attention the tracker has: the image encoder's on the new frame, the memory attention over
frame 0's memory and object pointers, and the mask decoder's two-way attention.

A session is state the forward changes (it stores each frame's output and drops the prompts it
used), so the sweep's two runs of the same inputs (the reference and the captured one) would
differ: the model gets a pre-hook that hands each forward a fresh copy of the session as it was
after frame 0 (``_fresh_session``).

``tracker_widths`` is the config repair these models need once shrunk (``sweep_repairs.repair``)."""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Iterator
from typing import Any

from attnviz.bench.sweep_configs import is_int, put, read

Plan = tuple[str, list[str], Callable[[], dict[str, Any]]]

#: Frames of the clip: frame 0 prompted, frame 1 tracked (more would only repeat the same calls).
FRAMES = 2
#: Token ids of a text prompt, every one real (SAM 3's processor pads each prompt to 32 with a mask).
TEXT_LENGTH = 8


def tracker_widths(config: Any) -> None:
    """A tracker's memory (``memory_encoder_output_channels``, 64) is narrower than its image
    features (the vision neck's width, 256 by default), and its memory attention reads the memory
    64 wide (fixed in the modelling code), splitting each object pointer into pieces of that
    width. The shrinking made the features 64 wide too, where the pointers are no longer split and
    the memory concatenation fails (3-D memories beside 4-D pointers). So the features, and every
    width of the tracker that is theirs in the default config, are made twice the memory's; the
    tracker's image is its prompt encoder's (the one the shrinking made small, which the vision
    tower and mask decoder use), the memory attention's rotary grid the lowest level's feature
    grid, and its layers two."""
    memory, vision = read(config, "memory_encoder_output_channels"), read(config, "vision_config")
    if not is_int(memory) or vision is None or not is_int(read(vision, "fpn_hidden_size")):
        return
    default = type(config)()
    neck = read(read(default, "vision_config"), "fpn_hidden_size")
    width = 2 * memory
    if read(vision, "fpn_hidden_size") < width:
        put(vision, "fpn_hidden_size", width)
        for name, value in vars(default).items():
            if value == neck and is_int(value) and name.endswith(("hidden_size", "embed_dim")):
                put(config, name, width)
    prompt = read(config, "prompt_encoder_config")
    image, patch = read(prompt, "image_size"), read(prompt, "patch_size")
    if is_int(image) and is_int(patch) and patch > 0:
        if read(config, "image_size") != image:
            put(config, "image_size", image)
        if isinstance(read(config, "memory_attention_rope_feat_sizes"), list):
            put(config, "memory_attention_rope_feat_sizes", [image // patch] * 2)
        _latent_windows(config, default, image // patch)
    if is_int(read(config, "memory_attention_num_layers")) and read(config, "memory_attention_num_layers") > 2:
        put(config, "memory_attention_num_layers", 2)


def _latent_windows(config: Any, default: Any, grid: int) -> None:
    """EdgeTAM's perceiver pools each window of the memory grid into one 2-D latent (256 latents
    in windows of 4 x 4 of its default 64 x 64 grid) and its memory attention's keys sit on the
    latents' grid (``memory_attention_rope_k_sizes``): on the shrunk grid the windows keep their
    side, so there are fewer latents (a grid of 8 with 256 latents has windows of 0)."""
    latents = read(config, "perceiver_resampler_num_latents_2d")
    prompt = read(default, "prompt_encoder_config")
    image, patch = read(prompt, "image_size"), read(prompt, "patch_size")
    default_latents = read(default, "perceiver_resampler_num_latents_2d")
    if not (is_int(latents) and latents > 0 and is_int(image) and is_int(patch) and is_int(default_latents)):
        return
    window = max(1, (image // patch) // max(1, int(default_latents**0.5)))
    side = max(1, grid // window)
    if side * side < latents:
        put(config, "perceiver_resampler_num_latents_2d", side * side)
        if isinstance(read(config, "memory_attention_rope_k_sizes"), list):
            put(config, "memory_attention_rope_k_sizes", [side, side])


def shared_neck(config: Any) -> None:
    """A video model of a detector and a tracker (SAM 3's) feeds the tracker from a neck built on
    the detector's vision config: that neck is as wide as the tracker's features
    (``tracker_widths`` made them wider than the memory), and so is every part of the detector
    as wide as the neck in the default config (its DETR encoder and decoder read the neck)."""
    detector, tracker = read(config, "detector_config"), read(config, "tracker_config")
    if tracker is not None:
        tracker_widths(tracker)  # (the repairs run outer config first: the tracker's widths are set here)
    vision, tracked = read(detector, "vision_config"), read(tracker, "vision_config")
    width = read(tracked, "fpn_hidden_size")
    if vision is None or not is_int(width) or not is_int(read(vision, "fpn_hidden_size")):
        return
    put(vision, "fpn_hidden_size", width)
    default = type(detector)()
    neck = read(read(default, "vision_config"), "fpn_hidden_size")
    for name, part in vars(default).items():
        if hasattr(part, "to_dict") and read(part, "hidden_size") == neck and read(detector, name) is not None:
            put(read(detector, name), "hidden_size", width)


#: Thresholds a detector feeding a tracker applies to its scores (trained values, 0.5 and 0.7).
_THRESHOLDS = ("score_threshold_detection", "new_det_thresh")
#: The detector's queries kept when it feeds a tracker: each detection becomes an object tracked.
DETECTIONS = 2


def detections_tracked(config: Any) -> None:
    """A video model that tracks what its detector finds (SAM 3's) runs its tracker only on
    detections above trained thresholds, which random weights do not reach: frame 1 would run
    the detector alone. Its thresholds are 0, so every query is a detection and a new object, and
    its decoder has ``DETECTIONS`` queries, so the objects tracked are few."""
    detector = read(config, "detector_config")
    if detector is None or read(config, "tracker_config") is None:
        return
    for name in _THRESHOLDS:
        if isinstance(read(config, name), float):
            put(config, name, 0.0)
    decoder = read(detector, "detr_decoder_config")
    if is_int(read(decoder, "num_queries")) and read(decoder, "num_queries") > DETECTIONS:
        put(decoder, "num_queries", DETECTIONS)


REPAIRS = (tracker_widths, shared_neck, detections_tracked)


def _session_class(model: Any, params: Any) -> type | None:
    """The session class the forward names (its annotation), else its module's ``...InferenceSession``."""
    annotation = params["inference_session"].annotation
    if isinstance(annotation, type):
        return annotation
    module = importlib.import_module(type(model).__module__)
    found = [obj for name, obj in vars(module).items() if name.endswith("InferenceSession") and isinstance(obj, type)]
    return found[0] if found else None


def _image_size(config: Any) -> int:
    """The tracker's image side: its own ``image_size``, else its tracker's (SAM 3's video model)."""
    for owner in (config, read(config, "tracker_config")):
        size = read(owner, "image_size")
        if isinstance(size, (list, tuple)) and size:
            size = size[0]
        if is_int(size) and size > 0:
            return int(size)
    raise ValueError("the tracker's config names no image size")


def _text_vocabulary(config: Any) -> int:
    """The vocabulary of a text-prompted tracker's text encoder (SAM 3's detector's CLIP)."""
    from attnviz.bench.sweep_inputs import sub_configs

    for sub in sub_configs(config):
        if "text" in type(sub).__name__.lower() and is_int(read(sub, "vocab_size")):
            return int(read(sub, "vocab_size"))
    return 1000


def _prompt(session: Any, config: Any, size: int, generator: Any) -> None:
    """What the processor adds on frame 0: a text prompt's ids and mask where the session takes
    text (SAM 3's video model), else one positive point for object 1 at (0.4, 0.6) of the image,
    as (image, object, points, xy) coordinates in the model's pixels and (image, object, points)
    labels, the object marked as having new inputs."""
    import torch

    if hasattr(session, "add_prompt"):
        prompt_id = session.add_prompt("object")
        vocab = _text_vocabulary(config)
        session.prompt_input_ids[prompt_id] = torch.randint(
            3, max(4, min(vocab, 1000)), (1, TEXT_LENGTH), generator=generator
        )
        session.prompt_attention_masks[prompt_id] = torch.ones(1, TEXT_LENGTH, dtype=torch.long)
        return
    obj_idx = session.obj_id_to_idx(1)
    points = torch.tensor([[[[0.4 * size, 0.6 * size]]]])
    labels = torch.ones(1, 1, 1, dtype=torch.int32)
    session.add_point_inputs(obj_idx, 0, {"point_coords": points, "point_labels": labels})
    session.obj_with_new_inputs = [1]


def _fresh_session(template: Any) -> Callable[..., Any]:
    """A forward pre-hook that hands the forward a copy of ``template`` wherever it is given it."""

    def hook(module: Any, args: Any, kwargs: dict[str, Any]) -> Any:
        if kwargs.get("inference_session") is template:
            return args, {**kwargs, "inference_session": copy.deepcopy(template)}
        return None

    return hook


def plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """The tracker's forward on frame 1 of a clip whose frame 0 was prompted and run."""
    import torch

    if "inference_session" not in params:
        return
    session_class = _session_class(model, params)
    if session_class is None:
        return

    def make() -> dict[str, Any]:
        size = _image_size(config)
        generator = torch.Generator().manual_seed(0)
        video = torch.randn(FRAMES, 3, size, size, generator=generator)
        session = session_class(video=video, video_height=size, video_width=size, dtype=torch.float32)
        _prompt(session, config, size, generator)
        torch.manual_seed(0)
        with torch.no_grad():
            model(inference_session=session, frame_idx=0)
        # a text prompt's embeddings, cached on frame 0, are made again on frame 1 (the same
        # numbers): the captured forward then also runs the text encoder's attention
        getattr(session, "prompt_embeddings", {}).clear()
        model.register_forward_pre_hook(_fresh_session(session), with_kwargs=True)
        return {"inference_session": session, "frame_idx": 1}

    yield "video session: frame 1 tracked from a prompt on frame 0", ["video"], make
