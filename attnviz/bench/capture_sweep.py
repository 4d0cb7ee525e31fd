"""Capture sweep: every architecture of the installed transformers, built from a small random
config, run under ``attnviz.capture`` on each attention implementation it offers ("sdpa",
"eager"), and classified per family:

* exact: every attention call recorded, and each one either recomputed by attnviz within the
  tolerance (fidelity, against the model's own output) or recorded as the model's own weights
  (attention code of its own, weights only);
* partial: calls recorded, but some not verifiable or off by more than the tolerance, or fewer
  calls than the model's ``output_attentions`` has layers;
* none: no call recorded; errors: the capture raised or warned that a call could not be
  recorded (the model itself ran).

A family that does not build from a small config, or whose forward fails without a capture, is
counted apart ("not built"), as is an implementation it does not offer. Families run in worker
processes (two at a time) with a time limit and a memory limit; a worker that hangs or crashes
is replaced, so one family costs only itself.
``python -m attnviz.bench sweep [--only NAME ...] [--workers N] [--json FILE] [--open DIR]``
(``--open``: each capture saved to DIR and opened by doctor, render and the window,
``sweep_open.py``; a failure is the verdict "errors" with its one line).
Not part of the test suite: it takes tens of minutes.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
import traceback
from typing import Any

from attnviz.bench import (
    sweep_audio_more,
    sweep_check,
    sweep_config_build,
    sweep_configs,
    sweep_grouped,
    sweep_inputs,
    sweep_models,
    sweep_open,
    sweep_repairs,
    sweep_report,
)
from attnviz.output.terminal import ExamplesFormatter, examples_epilog

TOLERANCE = sweep_check.TOLERANCE
#: Seconds one family may take (both implementations).
TIME_LIMIT = 120
TIMED_OUT = "took longer than the time limit"
#: Address space one worker may take: a family whose small config still allocates without bound
#: fails alone (MemoryError) instead of taking the machine with it.
MEMORY_LIMIT = 6 * 2**30
IMPLEMENTATIONS = ("sdpa", "eager")

_LAYERS: tuple[str, ...] = ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers")
_LAYERS += ("decoder_layers", "num_decoder_layers", "num_encoder_layers", "text_layers", "vision_layers")
_WIDTH = ("hidden_size", "d_model", "n_embd", "embed_dim", "dim")
_FFN = ("intermediate_size", "encoder_ffn_dim", "decoder_ffn_dim", "d_ff", "n_inner", "ffn_dim")
_HEADS: tuple[str, ...] = (
    "num_attention_heads",
    "n_head",
    "n_heads",
    "encoder_attention_heads",
    "decoder_attention_heads",
)
_HEADS += ("num_heads",)


def shrink(config: Any, layers_only: bool = False) -> None:
    """Make ``config`` small in place (see ``_shrink``), then keep its sub-configs consistent: a
    size that named another config's width (BLIP-2's Q-Former ``encoder_hidden_size``, the
    vision tower's ``hidden_size``) names its new width. ``layers_only``: fewer layers and
    experts, every width, vocabulary and image size kept (a config whose sizes depend on each
    other in ways the small one breaks: ConvNeXt's stage widths, a detector's channels)."""
    widths: dict[int, int] = {}
    # LLaVA-NeXT's resolutions are in pixels of the tower's own image size: that size is kept
    small_images = getattr(config, "image_grid_pinpoints", None) is None and not layers_only
    _shrink(config, set(), widths, small_images, layers_only)
    _special_ids_in_vocabulary(config)
    for sub in sweep_inputs.sub_configs(config):
        for name, value in list(vars(sub).items()):
            if (
                isinstance(value, int)
                and not isinstance(value, bool)
                and value in widths
                and name not in _WIDTH
                and name.endswith(_DIMS)
            ):
                try:
                    setattr(sub, name, widths[value])
                except Exception:  # noqa: BLE001 - some configs guard attributes
                    pass
    sweep_repairs.repair(config)  # sizes tied together, once every size is shrunk


def _special_ids_in_vocabulary(config: Any) -> None:
    """Token ids the config names (image, video, audio placeholders, vision start and end...)
    that the shrunk vocabulary no longer holds, moved to its top, each to an id of its own."""
    remap: dict[int, int] = {}
    for sub in sweep_inputs.sub_configs(config):
        vocab = getattr(sub, "vocab_size", None)
        limit = vocab if isinstance(vocab, int) and vocab > 0 else 1000
        # and the ids a config keeps under another name, read through its alias (Molmo2's
        # image_token_id is its image_patch_id)
        aliases = [n for n in getattr(type(sub), "attribute_map", {}) if isinstance(n, str)]
        for name in list(vars(sub)) + aliases:
            if not name.endswith(("_token_id", "_token_index")):
                continue
            value = getattr(sub, name, None)
            if value is None and name.startswith(("image_", "video_", "audio_")):
                # BLIP-2's image placeholder is unset by default: an id of its own at the top
                value = 10**9 + len(remap)
            if isinstance(value, int) and not isinstance(value, bool) and value >= min(limit, 1000):
                if value not in remap:
                    remap[value] = min(limit, 1000) - 1 - len(remap)
                try:
                    setattr(sub, name, remap[value])
                except Exception:  # noqa: BLE001 - some configs guard attributes
                    pass


#: Names of sizes that may be another config's width.
_DIMS = ("hidden_size", "_dim", "_dims", "d_model", "projection_size", "_channels", "hidden_dim")


def _shrink(
    config: Any, seen: set[int], widths: dict[int, int], small_images: bool = True, layers_only: bool = False
) -> None:
    """Make ``config`` small in place (and its sub-configs): 2 layers, width 64, 4 heads (2 key/value
    heads), a vocabulary of at most 1000; lists per stage (Swin's depths) are left as they are.
    Attributes a config guards (read-only properties, per-layer ones that refuse a global read)
    are left as they are."""
    if id(config) in seen:
        return
    # the model built is this config's own (its stages may be cut); a sub-config's stages are read
    # by name by the model around it (a neck over a backbone's feature maps): they stay
    top = not seen
    seen.add(id(config))

    def set_int(name: str, value: int) -> None:
        sweep_configs.at_most(config, name, value)

    before = sweep_configs.read(config, "num_hidden_layers")
    for name in _LAYERS:
        set_int(name, 2)
    sweep_configs.keep_layer_kinds(config, before, stages=top)
    if not layers_only:
        _shrink_sizes(config, widths, small_images)
    set_int("vocab_size", 1000)  # the embedding is most of a language model's weights
    for name in ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id"):
        value = sweep_configs.read(config, name)
        if sweep_configs.is_int(value) and value >= 1000:
            sweep_configs.put(config, name, 2)
    set_int("num_experts", 4)
    set_int("num_local_experts", 4)
    set_int("n_routed_experts", 4)
    set_int("num_experts_per_tok", 2)  # top-k of the (now 4) experts
    set_int("n_group", 1)
    set_int("topk_group", 1)
    for value in list(vars(config).values()):
        for sub in value if isinstance(value, (list, tuple)) else (value,):
            if hasattr(sub, "to_dict") and hasattr(sub, "model_type"):
                _shrink(sub, seen, widths, small_images, layers_only)


def _shrink_sizes(config: Any, widths: dict[int, int], small_images: bool = True) -> None:
    """``_shrink``'s widths, heads, vocabulary, image size and rotary sections."""
    sweep_configs.uniform_latent_layers(config)  # per-layer latent sizes refuse a global read

    def read(name: str) -> Any:
        try:
            return getattr(config, name, None)
        except Exception:  # noqa: BLE001 - per-layer attributes refuse a global read
            return None

    def put(name: str, value: Any) -> None:
        try:
            setattr(config, name, value)
        except Exception:  # noqa: BLE001 - some configs guard attributes
            pass

    def is_int(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    def set_int(name: str, value: int) -> None:
        current = read(name)
        if is_int(current) and current > value:
            put(name, value)

    if any(is_int(read(n)) for n in _HEADS):
        for name in _HEADS:
            set_int(name, 4)
        if is_int(read("num_key_value_heads")):
            put("num_key_value_heads", 2)
        if is_int(read("head_dim")):
            put("head_dim", 16)
        for name in _WIDTH:
            old = read(name)
            set_int(name, 64)
            if is_int(old) and old != read(name):
                widths[old] = read(name)
    for name in _FFN:
        set_int(name, 128)
    set_int("rotary_dim", 8)  # GPT-J's, GPT-NeoX's: at most the (now smaller) head dimension
    if small_images and is_int(read("image_size")) and is_int(read("patch_size")) and read("patch_size") > 0:
        # 8 x 8 patches: a multiple of every pixel shuffle and pooling (Idefics3's, Gemma 3's)
        side = read("image_size") // read("patch_size")
        if side > 8 or side % 4:
            put("image_size", 8 * read("patch_size"))
    rope = read("rope_parameters") or read("rope_scaling")
    head_dim = read("head_dim") if is_int(read("head_dim")) else None
    if head_dim is None and is_int(read("hidden_size")) and is_int(read("num_attention_heads")):
        head_dim = read("hidden_size") // max(1, read("num_attention_heads"))
    declared = "mrope_section" in (getattr(type(config), "ignore_keys_at_rope_validation", None) or ())
    if isinstance(rope, dict) and declared and not rope.get("mrope_section"):
        rope["mrope_section"] = [16, 24, 24]  # the modelling code's default, made explicit to be scaled
    if isinstance(rope, dict) and isinstance(rope.get("mrope_section"), list) and head_dim:
        # Qwen2-VL's M-RoPE sections split half the (now smaller) rotary dimension: the head's, or
        # the part of it a partial rotary factor names (GLM-4V's half)
        factor = rope.get("partial_rotary_factor") or read("partial_rotary_factor") or 1.0
        sections, half = rope["mrope_section"], int(head_dim * factor) // 2
        scaled = [max(1, s * half // sum(sections)) for s in sections]
        scaled[0] += half - sum(scaled)
        rope["mrope_section"] = scaled
    sweep_configs.shrink_latent_attention(config)
    sweep_configs.shrink_state_space(config)
    sweep_configs.spectrogram_frames(config)
    sweep_configs.unset_sizes(config)
    set_int("mm_tokens_per_image", 16)  # Gemma 3's pooled image: 4 x 4 of the tower's patches


def _build(config: Any, implementation: str) -> Any:
    """The family's base model: ``AutoModel``'s, or for a config that ``AutoModel`` does not map
    (a CLIP text model, a vision tower, a decoder of its own) or maps to a class without a forward
    (Bark's, a retrieval model's base) the module of its modelling code that runs it
    (``sweep_configs.model_class``; ``sweep_models`` says why a part's config has none)."""
    import transformers

    part = sweep_config_build.part_class(config)  # AutoModel would build MusicGen's decoder alone
    if part is not None:
        return part._from_config(config, attn_implementation=implementation).eval()
    try:
        model = transformers.AutoModel.from_config(config, attn_implementation=implementation)
    except ValueError as exc:
        # (a class AutoModel names that the package does not export: Voxtral Realtime's text model)
        if "Unrecognized configuration class" not in str(exc) and "Could not find" not in str(exc):
            raise
        model = None
    if model is None or not sweep_configs.has_forward(type(model)):
        # none: sweep_models raises PartOnly, saying whether the config is a part of another model
        model_class: Any = sweep_configs.model_class(config)
        paired = None if model_class else sweep_config_build.paired_model(config, implementation)  # Nougat's
        if paired is not None:
            return paired.eval()
        model_class = model_class or sweep_models.model_class(config)
        model = model_class._from_config(config, attn_implementation=implementation)
    return model.eval()


def sweep_one(model_type: str, open_dir: str | None = None) -> dict[str, Any]:
    """Build, run and capture one family on each implementation (in a worker process)."""
    import warnings

    warnings.filterwarnings("ignore")
    import torch

    torch.set_num_threads(1)
    result: dict[str, Any] = {"family": model_type}
    start = time.monotonic()
    for layers_only in (False, True):
        # a config whose sizes the small one breaks is tried again with its layers cut only
        try:
            config = sweep_config_build.default_config(model_type)
            shrink(config, layers_only)
        except Exception as exc:  # noqa: BLE001 - a family that does not build is counted apart
            result["built"] = f"config: {said(exc, 120)}"
            return result
        expected = None
        for implementation in sorted(IMPLEMENTATIONS, key=lambda i: i != "eager"):  # eager's calls first
            saved = sweep_open.capture_path(open_dir, model_type, implementation) if open_dir else None
            result[implementation] = sweep_implementation(config, implementation, expected, saved)
            if implementation == "eager" and result["eager"]["status"] == "exact":
                expected = result["eager"]["calls"]
        result["built"] = "yes"
        if layers_only:
            result["config"] = "layers cut only (the small config does not run)"
        late = time.monotonic() - start > TIME_LIMIT / 3
        wide = sweep_configs.widest(sweep_config_build.default_config(model_type)) > sweep_configs.RETRY_WIDTH
        if not _shrunk_too_far(result) or late or wide:
            break  # (a second try that would not end within the time limit is not made)
    whys = [str(result[i].get("why", "")) for i in IMPLEMENTATIONS]
    parts = [w for w in whys if w.startswith(sweep_models.PartOnly.__name__)]
    # a config of a part (SAM's mask decoder) is no architecture to run: said apart, as unbuilt
    if len(parts) == len(whys):
        result["built"] = parts[0]
    return result


def said(exc: BaseException, limit: int) -> str:
    """An exception in one line of the report: its type and its message with every run of
    whitespace made one space (transformers' ImportErrors begin with a line break)."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:limit]}"


def _shrunk_too_far(result: dict[str, Any]) -> bool:
    """Whether no implementation ran for a reason of the config's sizes (not a library missing)."""
    outcomes = [result.get(i, {}) for i in IMPLEMENTATIONS]
    if any(o.get("status") not in ("not run", "not offered") for o in outcomes):
        return False
    return not any(sweep_configs.missing_library(str(o.get("why", ""))) for o in outcomes)


def sweep_implementation(
    config: Any, implementation: str, expected_calls: int | None = None, save_to: Any = None
) -> dict[str, Any]:
    """One family's verdict on one implementation: its model built from the (shrunk) config, the
    inputs made for it, one forward under capture, every call and reported map checked (and at
    least ``expected_calls`` calls: the other implementation's). ``save_to``: a path where the
    capture is saved and then opened by doctor, render and the window (``sweep_open``)."""
    import torch

    from attnviz.capture import capture

    try:
        torch.manual_seed(0)
        model = sweep_audio_more.build_reading_unset(_build, config, implementation)  # attributes a class omits
        if sweep_models.key_heads_as_values(model):  # a model that assumes as many key heads as heads
            torch.manual_seed(0)
            model = _build(config, implementation)
    except Exception as exc:  # noqa: BLE001
        return {"status": "not offered", "why": said(exc, 120)}
    built = sweep_inputs.build(model, config)
    if isinstance(built, str):  # the model itself does not run on any inputs made for it
        return {"status": "not run", "why": built}
    maps = sweep_check.reported_maps(built.output)
    kinds = {"inputs": built.kinds, **({"skipped": built.skipped} if built.skipped else {})}
    try:
        torch.manual_seed(sweep_inputs.FORWARD_SEED)  # the same noise as the run whose maps are compared
        sweep_grouped.forget_earlier_forwards(model)  # a text tower cached by the first run runs again
        with torch.no_grad(), capture(model) as cap:
            model(**built.inputs, **sweep_inputs.ask_for_maps(model, built.inputs))
        status, detail = sweep_check.classify(cap, maps, expected_calls)
        if save_to is not None and cap.calls:
            cap.save(save_to)
            detail["opened"] = sweep_open.open_capture(save_to)
            if detail["opened"]["problems"]:  # the verdict on the capture is kept beside it
                detail["captured"], detail["why"] = status, detail["opened"]["problems"][0]
                status = "errors"
    except Exception as exc:  # noqa: BLE001 - a capture that breaks the model is the worst outcome
        status, detail = (
            "errors",
            {"why": said(exc, 160), "trace": traceback.format_exc()[-400:]},
        )
    return {"status": status, **kinds, **detail}


def _worker(queue_in: Any, queue_out: Any, open_dir: str | None = None) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    while True:
        model_type = queue_in.get()
        if model_type is None:
            sweep_open.close_opener()
            return
        queue_out.put(sweep_one(model_type, open_dir))


def families(only: list[str] | None = None) -> list[str]:
    import transformers

    names = sorted(transformers.CONFIG_MAPPING.keys())
    return [n for n in names if only is None or n in only]


class _Worker:
    """A worker process that sweeps one family at a time. It lives across families (importing
    torch and transformers costs seconds, more than most families), and is replaced when a
    family takes longer than ``TIME_LIMIT`` or kills it."""

    def __init__(self, ctx: Any, open_dir: str | None = None, time_limit: float = TIME_LIMIT) -> None:
        # Opening a capture three ways, every call shown, takes longer than capturing it
        self.time_limit = time_limit + (2 * sweep_open.LIMIT_S if open_dir else 0)
        self.q_in, self.q_out = ctx.Queue(), ctx.Queue()
        self.process = ctx.Process(target=_worker, args=(self.q_in, self.q_out, open_dir), daemon=True)
        self.process.start()
        self.family: str | None = None
        self.since = 0.0

    def give(self, family: str) -> None:
        self.family, self.since = family, time.monotonic()
        self.q_in.put(family)

    def poll(self) -> dict[str, Any] | None:
        """The result of the family given, a failure when it took too long or the worker died,
        or None while it runs."""
        import queue

        try:
            return self.q_out.get(timeout=0.2)
        except queue.Empty:
            pass
        late = time.monotonic() - self.since > self.time_limit
        if late:  # slow on this machine, not a capture that failed: not run, with the limit said
            why = f"{TIMED_OUT} ({self.time_limit:.0f} s on this machine)"
            return {"family": self.family, "built": "yes", "sdpa": {"status": "not run", "why": why}, "replace": True}
        if not self.process.is_alive():
            crashed = {"status": "errors", "why": "the worker crashed"}
            return {"family": self.family, "built": "yes", "sdpa": crashed, "replace": True}
        return None

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            self.q_in.put(None)
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()


def _write_json(path: str, version: str, results: list[dict[str, Any]]) -> None:
    with open(path, "w") as out:
        json.dump({"transformers": version, "results": results}, out, indent=1)


def run(
    only: list[str] | None = None,
    workers: int = 2,
    json_path: str | None = None,
    readme: str | None = None,
    from_json: list[str] | None = None,
    open_dir: str | None = None,
    time_limit: float = TIME_LIMIT,
) -> int:
    import transformers

    if from_json:  # the report of earlier runs (parts of one sweep run side by side), not run again
        merged, version = sweep_report.join(from_json)
        sweep_report.report(merged, version)
        if json_path:
            _write_json(json_path, version, merged)
        if readme:
            sweep_report.write_readme(readme, merged, version)
        return 0

    names = families(only)
    print(f"attnviz capture sweep: {len(names)} configs of transformers {transformers.__version__}, {workers} workers")
    ctx = mp.get_context("spawn")
    results: list[dict[str, Any]] = []
    pending = list(names)
    start = time.monotonic()
    if open_dir:
        os.makedirs(open_dir, exist_ok=True)
    pool = [_Worker(ctx, open_dir, time_limit) for _ in range(min(workers, len(names)))]
    for worker in pool:
        if pending:
            worker.give(pending.pop(0))
    while any(w.family is not None for w in pool):
        for i, worker in enumerate(pool):
            if worker.family is None:
                continue
            result = worker.poll()
            if result is None:
                continue
            results.append(result)
            if result.pop("replace", False):
                worker.stop(kill=True)  # a hung or dead worker is replaced
                worker = pool[i] = _Worker(ctx, open_dir, time_limit)
            worker.family = None
            if pending:
                worker.give(pending.pop(0))
            if json_path:  # every result kept as it comes: a sweep stopped early keeps what it ran
                _write_json(json_path, transformers.__version__, results)
            if len(results) % 20 == 0:
                print(f"  {len(results)}/{len(names)} after {time.monotonic() - start:.0f} s", flush=True)
    for worker in pool:
        worker.stop()
    version = transformers.__version__
    sweep_report.report(results, version)
    if json_path:
        _write_json(json_path, version, results)
    if readme:
        sweep_report.write_readme(readme, results, version)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="attnviz bench sweep",
        description=__doc__.split("\n\n")[0],
        epilog=examples_epilog(
            [
                "attnviz bench sweep --only gpt2 llava whisper",
                "attnviz bench sweep --workers 1 --json sweep.json",
                "attnviz bench sweep --from-json part1.json part2.json --readme README.md",
                "attnviz bench sweep --from-json all.json rerun.json --json joined.json",
            ]
        ),
        formatter_class=ExamplesFormatter,
    )
    parser.add_argument("--only", nargs="*", help="families (model types) to run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", help="write every result to this file")
    parser.add_argument("--readme", help="rewrite this README's coverage section from the report")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=TIME_LIMIT,
        help=f"seconds one family may take before it is counted not run (default {TIME_LIMIT})",
    )
    parser.add_argument(
        "--from-json",
        nargs="+",
        help="report the --json files of earlier runs (parts of one sweep) instead of running; a family in "
        "several files is taken from the last (a rerun); with --json, the joined results are written there",
    )
    parser.add_argument(
        "--open",
        metavar="DIR",
        help="save each capture to DIR and open it with attnviz doctor (silent on a right model), attnviz render "
        "(every call) and the window's File > Open (every call shown); a failure makes the verdict 'errors'",
    )
    args = parser.parse_args(sys.argv[2:] if argv is None else argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return run(args.only, args.workers, args.json, args.readme, args.from_json, args.open, args.time_limit)
