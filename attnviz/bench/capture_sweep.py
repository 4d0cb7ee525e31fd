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
from collections import Counter
from typing import Any

from attnviz.output.terminal import ExamplesFormatter, examples_epilog

TOLERANCE = 1e-4
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


def shrink(config: Any, seen: set[int] | None = None) -> None:
    """Make ``config`` small in place (and its sub-configs): 2 layers, width 64, 4 heads (2 key/value
    heads), a vocabulary of at most 1000; lists per stage (Swin's depths) are left as they are.
    Attributes a config guards (read-only properties, per-layer ones that refuse a global read)
    are left as they are."""
    seen = set() if seen is None else seen
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
            set_int(name, 64)
    for name in _FFN:
        set_int(name, 128)
    set_int("rotary_dim", 8)  # GPT-J's, GPT-NeoX's: at most the (now smaller) head dimension
    set_int("vocab_size", 1000)
    for name in ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id"):
        if is_int(read(name)) and read(name) >= 1000:
            put(name, 2)
    set_int("num_experts", 4)
    set_int("num_local_experts", 4)
    set_int("n_routed_experts", 4)
    set_int("num_experts_per_tok", 2)  # top-k of the (now 4) experts
    set_int("n_group", 1)
    set_int("topk_group", 1)
    for value in list(vars(config).values()):
        for sub in value if isinstance(value, (list, tuple)) else (value,):
            if hasattr(sub, "to_dict") and hasattr(sub, "model_type"):
                shrink(sub, seen)


def inputs_for(model: Any, config: Any) -> dict[str, Any]:
    """Inputs a model's forward takes: ids with a padded second row, a decoder's ids, pixels,
    audio, as its signature asks."""
    import inspect

    import torch

    g = torch.Generator().manual_seed(0)
    params = inspect.signature(model.forward).parameters
    vocab = int(
        getattr(config, "vocab_size", None) or getattr(getattr(config, "text_config", None), "vocab_size", None) or 1000
    )
    out: dict[str, Any] = {}
    if "input_ids" in params:
        out["input_ids"] = torch.randint(3, max(4, min(vocab, 1000)), (2, 8), generator=g)
        if "attention_mask" in params:
            out["attention_mask"] = torch.tensor([[1] * 8, [1] * 6 + [0] * 2])
    if getattr(config, "is_encoder_decoder", False) and "decoder_input_ids" in params:
        out["decoder_input_ids"] = torch.randint(3, max(4, min(vocab, 1000)), (2, 5), generator=g)
    vision = getattr(config, "vision_config", None) or config
    if "pixel_values" in params and (model.main_input_name == "pixel_values" or hasattr(config, "vision_config")):
        size = getattr(vision, "image_size", 224)
        size = size[0] if isinstance(size, (list, tuple)) else size
        channels = getattr(vision, "num_channels", 3)
        out["pixel_values"] = torch.randn(2, channels, int(size), int(size), generator=g)
    if model.main_input_name == "input_values" and "input_values" in params:
        out["input_values"] = torch.randn(2, 4000, generator=g)
    if model.main_input_name == "input_features" and "input_features" in params:
        bins = getattr(config, "num_mel_bins", 80)
        frames = 2 * getattr(config, "max_source_positions", 1500)
        out["input_features"] = torch.randn(2, bins, frames, generator=g)
    return out


def _classify(cap: Any, expected: int | None) -> tuple[str, dict[str, Any]]:
    calls = cap.calls
    detail: dict[str, Any] = {"calls": len(calls), "maps": expected, "warnings": [str(w) for w in cap.warnings][:3]}
    if not calls:
        return (
            "errors" if cap.warnings and not any("no attention call" in str(w) for w in cap.warnings) else "none"
        ), detail
    fidelities = [c.fidelity for c in calls if not c.weights_only]
    detail["weights_only"] = sum(c.weights_only for c in calls)
    detail["worst"] = max((f for f in fidelities if f is not None), default=None)
    detail["unverified"] = sum(f is None for f in fidelities)
    detail["paths"] = sorted({c.path.implementation for c in calls})
    exact = all(f is not None and f <= TOLERANCE for f in fidelities)
    if expected is not None and len(calls) < expected:
        detail["expected"] = expected
        exact = False
    if any("could not be recorded" in str(w) for w in cap.warnings):
        exact = False
    return ("exact" if exact else "partial"), detail


def _build(config: Any, implementation: str) -> Any:
    """The family's base model: ``AutoModel``'s, or for a sub-model's config that ``AutoModel``
    does not map (a CLIP text model, a vision tower) the ``...Model`` class of its modelling
    module whose ``config_class`` it is."""
    import importlib

    import transformers

    try:
        return transformers.AutoModel.from_config(config, attn_implementation=implementation).eval()
    except ValueError as exc:
        if "Unrecognized configuration class" not in str(exc):
            raise
        module = importlib.import_module(type(config).__module__.replace(".configuration_", ".modeling_"))
        owner = type(config)
        models = [obj for name, obj in vars(module).items() if name.endswith("Model") and isinstance(obj, type)]
        found = sorted((m for m in models if getattr(m, "config_class", None) is owner), key=lambda m: len(m.__name__))
        if not found:
            raise
        model_class: Any = found[0]
        return model_class._from_config(config, attn_implementation=implementation).eval()


def _attention_maps(attentions: Any) -> int | None:
    """How many of a model's ``output_attentions`` are attention maps, (B, H, L_q, L_k) rows
    that sum to 1 on most rows (not a linear attention's state: MiniMax's lightning layers
    return a (B, H, d, d) one); None when it returns none."""
    import torch

    if not isinstance(attentions, tuple) or not attentions or attentions[0] is None:
        return None
    maps = 0
    for a in attentions:
        if isinstance(a, torch.Tensor) and a.dim() == 4 and a.numel():
            sums = a.detach().float().sum(-1)
            maps += float(torch.isclose(sums, torch.ones_like(sums), atol=1e-3).float().mean()) > 0.5
    return maps


def sweep_one(model_type: str) -> dict[str, Any]:
    """Build, run and capture one family on each implementation (in a worker process)."""
    import warnings

    warnings.filterwarnings("ignore")
    import torch
    import transformers

    from attnviz.capture import capture

    torch.set_num_threads(1)
    result: dict[str, Any] = {"family": model_type}
    try:
        config_class = transformers.CONFIG_MAPPING[model_type]
        config = config_class()
        shrink(config)
    except Exception as exc:  # noqa: BLE001 - a family that does not build is counted apart
        result["built"] = f"config: {type(exc).__name__}: {str(exc)[:120]}"
        return result
    for implementation in IMPLEMENTATIONS:
        try:
            torch.manual_seed(0)
            model = _build(config, implementation)
        except Exception as exc:  # noqa: BLE001
            result[implementation] = {"status": "not offered", "why": f"{type(exc).__name__}: {str(exc)[:120]}"}
            continue
        try:
            inputs = inputs_for(model, config)
            with torch.no_grad():
                reference = model(**inputs, output_attentions=True)
            expected = _attention_maps(getattr(reference, "attentions", None))
        except Exception as exc:  # noqa: BLE001 - the model itself does not run on these inputs
            result[implementation] = {"status": "not run", "why": f"{type(exc).__name__}: {str(exc)[:120]}"}
            continue
        try:
            with torch.no_grad(), capture(model) as cap:
                model(**inputs, output_attentions=True)
            status, detail = _classify(cap, expected)
        except Exception as exc:  # noqa: BLE001 - a capture that breaks the model is the worst outcome
            status, detail = (
                "errors",
                {"why": f"{type(exc).__name__}: {str(exc)[:160]}", "trace": traceback.format_exc()[-400:]},
            )
        result[implementation] = {"status": status, **detail}
    result["built"] = "yes"
    return result


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


def run(only: list[str] | None = None, workers: int = 2, json_path: str | None = None) -> int:
    import transformers

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
            if len(results) % 20 == 0:
                print(f"  {len(results)}/{len(names)} after {time.monotonic() - start:.0f} s", flush=True)
    for worker in pool:
        worker.stop()
    report(results)
    if json_path:
        with open(json_path, "w") as out:
            json.dump(results, out, indent=1)
    return 0


def report(results: list[dict[str, Any]]) -> None:
    built = [r for r in results if r.get("built") == "yes"]
    print(f"\n{len(results)} configs; {len(built)} build from a small config and run")
    for implementation in IMPLEMENTATIONS:
        counts = Counter(r.get(implementation, {}).get("status", "-") for r in built)
        print(f"  {implementation:>6}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    best: Counter[str] = Counter()
    for r in built:
        statuses = [r.get(i, {}).get("status") for i in IMPLEMENTATIONS]
        offered = [s for s in statuses if s not in (None, "not offered", "not run")]
        maps = max((r.get(i, {}).get("maps") or 0 for i in IMPLEMENTATIONS), default=0)
        if not offered:
            best["no implementation ran"] += 1
        elif set(offered) == {"none"} and not maps:
            best["no attention maps (no call, no output_attentions)"] += 1
        elif "exact" in offered:
            best["exact on at least one"] += 1
        elif "partial" in offered:
            best["partial"] += 1
        else:
            best["none"] += 1
    print("  per family: " + ", ".join(f"{k} {v}" for k, v in sorted(best.items())))
    unbuilt = [r for r in results if r.get("built") != "yes"]
    if unbuilt:
        print(f"\nnot built from a small config ({len(unbuilt)}): " + ", ".join(r["family"] for r in unbuilt))
    print("\nfamilies not exact on any implementation they run:")
    for r in built:
        outcomes: dict[str, dict[str, Any]] = {i: r.get(i, {}) for i in IMPLEMENTATIONS}
        if any(s.get("status") == "exact" for s in outcomes.values()):
            continue
        if all(s.get("status") in ("none", "not offered", "not run", None) for s in outcomes.values()) and not any(
            s.get("maps") for s in outcomes.values()
        ):
            continue  # no attention maps at all: a convolutional, recurrent or state-space model
        ran = {i: s for i, s in outcomes.items() if s.get("status") not in (None, "not offered", "not run")}
        if not ran:
            continue
        text = "; ".join(
            f"{i}: {s.get('status')} ({s.get('calls', 0)} calls"
            + (f", worst {s['worst']:.1e}" if s.get("worst") is not None else "")
            + (f", {s['unverified']} unverified" if s.get("unverified") else "")
            + (f", expected {s['expected']}" if s.get("expected") else "")
            + (f", {s['why'][:80]}" if s.get("why") else "")
            + ")"
            for i, s in ran.items()
        )
        print(f"  {r['family']}: {text}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="attnviz bench sweep",
        description=__doc__.split("\n\n")[0],
        epilog=examples_epilog(
            ["attnviz bench sweep --only gpt2 llama", "attnviz bench sweep --workers 1 --json sweep.json"]
        ),
        formatter_class=ExamplesFormatter,
    )
    parser.add_argument("--only", nargs="*", help="families (model types) to run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", help="write every result to this file")
    args = parser.parse_args(sys.argv[2:] if argv is None else argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return run(args.only, args.workers, args.json)
