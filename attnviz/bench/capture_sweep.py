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
``python -m attnviz.bench sweep [--only NAME ...] [--workers N] [--json FILE]``.
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

from attnviz.bench import sweep_check, sweep_configs, sweep_inputs, sweep_models, sweep_report
from attnviz.output.terminal import ExamplesFormatter, examples_epilog

TOLERANCE = sweep_check.TOLERANCE
#: Seconds one family may take (both implementations).
TIME_LIMIT = 120
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


def shrink(config: Any) -> None:
    """Make ``config`` small in place (see ``_shrink``), then keep its sub-configs consistent: a
    size that named another config's width (BLIP-2's Q-Former ``encoder_hidden_size``, the
    vision tower's ``hidden_size``) names its new width."""
    widths: dict[int, int] = {}
    # LLaVA-NeXT's resolutions are in pixels of the tower's own image size: that size is kept
    _shrink(config, set(), widths, small_images=getattr(config, "image_grid_pinpoints", None) is None)
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
    sweep_configs.repair(config)  # sizes tied together, once every size is shrunk


def _special_ids_in_vocabulary(config: Any) -> None:
    """Token ids the config names (image, video, audio placeholders, vision start and end...)
    that the shrunk vocabulary no longer holds, moved to its top, each to an id of its own."""
    remap: dict[int, int] = {}
    for sub in sweep_inputs.sub_configs(config):
        vocab = getattr(sub, "vocab_size", None)
        limit = vocab if isinstance(vocab, int) and vocab > 0 else 1000
        for name in list(vars(sub)):
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


def _shrink(config: Any, seen: set[int], widths: dict[int, int], small_images: bool = True) -> None:
    """Make ``config`` small in place (and its sub-configs): 2 layers, width 64, 4 heads (2 key/value
    heads), a vocabulary of at most 1000; lists per stage (Swin's depths) are left as they are.
    Attributes a config guards (read-only properties, per-layer ones that refuse a global read)
    are left as they are."""
    if id(config) in seen:
        return
    seen.add(id(config))

    def read(name: str) -> Any:
        try:
            return getattr(config, name, None)
        except Exception:  # noqa: BLE001 - per-layer attributes refuse a global read
            return None

    def put(name: str, value: int) -> None:
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

    for name in _LAYERS:
        set_int(name, 2)
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
    set_int("vocab_size", 1000)
    for name in ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id"):
        if is_int(read(name)) and read(name) >= 1000:
            put(name, 2)
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
        # Qwen2-VL's M-RoPE sections split half the (now smaller) head dimension
        sections, half = rope["mrope_section"], head_dim // 2
        scaled = [max(1, s * half // sum(sections)) for s in sections]
        scaled[0] += half - sum(scaled)
        rope["mrope_section"] = scaled
    set_int("mm_tokens_per_image", 16)  # Gemma 3's pooled image: 4 x 4 of the tower's patches
    set_int("num_experts", 4)
    set_int("num_local_experts", 4)
    set_int("n_routed_experts", 4)
    set_int("num_experts_per_tok", 2)  # top-k of the (now 4) experts
    set_int("n_group", 1)
    set_int("topk_group", 1)
    for value in list(vars(config).values()):
        for sub in value if isinstance(value, (list, tuple)) else (value,):
            if hasattr(sub, "to_dict") and hasattr(sub, "model_type"):
                _shrink(sub, seen, widths, small_images)


def _build(config: Any, implementation: str) -> Any:
    """The family's base model: ``AutoModel``'s, or for a sub-model's config that ``AutoModel``
    does not map (a CLIP text model, a vision tower, a head-only family) the class of its
    modelling module whose ``config_class`` it is (``sweep_models``)."""
    import transformers

    try:
        return transformers.AutoModel.from_config(config, attn_implementation=implementation).eval()
    except ValueError as exc:
        if "Unrecognized configuration class" not in str(exc):
            raise
        model_class: Any = sweep_models.model_class(config)
        return model_class._from_config(config, attn_implementation=implementation).eval()


def sweep_one(model_type: str) -> dict[str, Any]:
    """Build, run and capture one family on each implementation (in a worker process)."""
    import warnings

    warnings.filterwarnings("ignore")
    import torch
    import transformers

    torch.set_num_threads(1)
    result: dict[str, Any] = {"family": model_type}
    try:
        config_class = transformers.CONFIG_MAPPING[model_type]
        config = config_class()
        shrink(config)
    except Exception as exc:  # noqa: BLE001 - a family that does not build is counted apart
        result["built"] = f"config: {type(exc).__name__}: {str(exc)[:120]}"
        return result
    expected = None
    for implementation in sorted(IMPLEMENTATIONS, key=lambda i: i != "eager"):  # eager's calls first
        result[implementation] = sweep_implementation(config, implementation, expected)
        if implementation == "eager" and result["eager"]["status"] == "exact":
            expected = result["eager"]["calls"]
    whys = [str(result[i].get("why", "")) for i in IMPLEMENTATIONS]
    parts = [w for w in whys if w.startswith(sweep_models.PartOnly.__name__)]
    # a config of a part (SAM's mask decoder) is no architecture to run: said apart, as unbuilt
    result["built"] = parts[0] if len(parts) == len(whys) else "yes"
    return result


def sweep_implementation(config: Any, implementation: str, expected_calls: int | None = None) -> dict[str, Any]:
    """One family's verdict on one implementation: its model built from the (shrunk) config, the
    inputs made for it, one forward under capture, every call and reported map checked (and at
    least ``expected_calls`` calls: the other implementation's)."""
    import torch

    from attnviz.capture import capture

    try:
        torch.manual_seed(0)
        model = _build(config, implementation)
        if sweep_models.key_heads_as_values(model):  # a model that assumes as many key heads as heads
            torch.manual_seed(0)
            model = _build(config, implementation)
    except Exception as exc:  # noqa: BLE001
        return {"status": "not offered", "why": f"{type(exc).__name__}: {str(exc)[:120]}"}
    built = sweep_inputs.build(model, config)
    if isinstance(built, str):  # the model itself does not run on any inputs made for it
        return {"status": "not run", "why": built}
    maps = sweep_check.reported_maps(built.output)
    kinds = {"inputs": built.kinds, **({"skipped": built.skipped} if built.skipped else {})}
    try:
        torch.manual_seed(sweep_inputs.FORWARD_SEED)  # the same noise as the run whose maps are compared
        with torch.no_grad(), capture(model) as cap:
            model(**built.inputs, output_attentions=True)
        status, detail = sweep_check.classify(cap, maps, expected_calls)
    except Exception as exc:  # noqa: BLE001 - a capture that breaks the model is the worst outcome
        status, detail = (
            "errors",
            {"why": f"{type(exc).__name__}: {str(exc)[:160]}", "trace": traceback.format_exc()[-400:]},
        )
    return {"status": status, **kinds, **detail}


def _worker(queue_in: Any, queue_out: Any) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    while True:
        model_type = queue_in.get()
        if model_type is None:
            return
        queue_out.put(sweep_one(model_type))


def families(only: list[str] | None = None) -> list[str]:
    import transformers

    names = sorted(transformers.CONFIG_MAPPING.keys())
    return [n for n in names if only is None or n in only]


class _Worker:
    """A worker process that sweeps one family at a time. It lives across families (importing
    torch and transformers costs seconds, more than most families), and is replaced when a
    family takes longer than ``TIME_LIMIT`` or kills it."""

    def __init__(self, ctx: Any) -> None:
        self.q_in, self.q_out = ctx.Queue(), ctx.Queue()
        self.process = ctx.Process(target=_worker, args=(self.q_in, self.q_out), daemon=True)
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
        late = time.monotonic() - self.since > TIME_LIMIT
        if late or not self.process.is_alive():
            return {"family": self.family, "built": "yes", "sdpa": {"status": "errors", "why": "time limit or crash"}}
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
) -> int:
    import transformers

    if from_json:  # the report of earlier runs (parts of one sweep run side by side), not run again
        saved = []
        for path in from_json:
            with open(path) as f:
                saved.append(json.load(f))
        versions = {part["transformers"] for part in saved}
        if len(versions) != 1:
            raise SystemExit(f"the files come from different transformers versions: {', '.join(sorted(versions))}")
        merged = [r for part in saved for r in part["results"]]
        merged.sort(key=lambda r: str(r["family"]))
        sweep_report.report(merged, saved[0]["transformers"])
        if readme:
            sweep_report.write_readme(readme, merged, saved[0]["transformers"])
        return 0

    names = families(only)
    print(f"attnviz capture sweep: {len(names)} configs of transformers {transformers.__version__}, {workers} workers")
    ctx = mp.get_context("spawn")
    results: list[dict[str, Any]] = []
    pending = list(names)
    start = time.monotonic()
    pool = [_Worker(ctx) for _ in range(min(workers, len(names)))]
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
            if result.get("sdpa", {}).get("why") == "time limit or crash":
                worker.stop(kill=True)  # a hung or dead worker is replaced
                worker = pool[i] = _Worker(ctx)
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
            ]
        ),
        formatter_class=ExamplesFormatter,
    )
    parser.add_argument("--only", nargs="*", help="families (model types) to run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", help="write every result to this file")
    parser.add_argument("--readme", help="rewrite this README's coverage section from the report")
    parser.add_argument(
        "--from-json", nargs="+", help="report the --json files of earlier runs (parts of one sweep) instead of running"
    )
    args = parser.parse_args(sys.argv[2:] if argv is None else argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return run(args.only, args.workers, args.json, args.readme, args.from_json)
