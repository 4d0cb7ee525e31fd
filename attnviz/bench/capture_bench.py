"""Capture benchmark: a 6-layer, 384-wide, 12-head BERT encoder (Hugging Face, SDPA attention,
random weights) on a padded batch of 8 x 128 tokens, CPU float32; the same encoder under
``attn_implementation="eager"`` (recorded through transformers' attention interface); a stack
of FlexAttention layers (``flex_attention`` with a causal + padding block mask and a
``score_mod``, run eagerly as on a CPU without a compiler); and a 24-layer encoder on 2048
tokens, recorded within the default memory budget or stopped with a warning.

Printed side by side: the forward pass with and without ``attnviz.capture`` (target: at most
1.3x, for each path), the fidelity check that ``to_run`` adds after it, the capture file's size and save time,
the time to open it again and to run the mask doctor on it, and the peak memory of a captured
forward pass (measured in a child process) against the memory budget. The window's figure
(``attnviz.show(capture)`` to a painted overview) belongs to the app's benchmark, which can open
the file ``write_bench_capture`` writes.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from attnviz.bench.engine_bench import interleaved_medians
from attnviz.bench.memory import PEAK_PROBE

#: The encoder of issue 13's target: 6 layers, 384 wide, 12 heads, batch 8, 128 tokens.
LAYERS, WIDTH, HEADS, BATCH, TOKENS = 6, 384, 12, 8, 128
TARGET_RATIO = 1.3


def bench_model(
    layers: int = LAYERS, width: int = WIDTH, heads: int = HEADS, implementation: str = "sdpa", positions: int = 512
) -> Any:
    """A BertModel with random weights and SDPA (or ``implementation``) attention (transformers
    is needed)."""
    import transformers

    config = transformers.BertConfig(
        vocab_size=1000,
        hidden_size=width,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * width,
        max_position_embeddings=positions,
        attn_implementation=implementation,
    )
    torch.manual_seed(0)
    return transformers.BertModel(config).eval()


def bench_batch(batch: int = BATCH, tokens: int = TOKENS) -> tuple[dict[str, torch.Tensor], list[list[str]]]:
    """Token ids and a padding mask (the first sequence full, the others 1/2 to all of it), and
    the tokens as strings ("[PAD]" where padded)."""
    g = torch.Generator().manual_seed(1)
    lengths = torch.randint(tokens // 2, tokens + 1, (batch,), generator=g)
    lengths[0] = tokens
    keep = torch.arange(tokens)[None] < lengths[:, None]
    ids = torch.randint(1, 1000, (batch, tokens), generator=g)
    words = [[f"t{int(i)}" if k else "[PAD]" for i, k in zip(row, row_keep)] for row, row_keep in zip(ids, keep)]
    return {"input_ids": ids, "attention_mask": keep.long()}, words


def write_bench_capture(path: str | Path, quick: bool = False) -> Path:
    """Capture the benchmark encoder's forward pass and save it to ``path`` (for other benchmarks:
    the window's time from ``attnviz.show`` to a painted overview)."""
    from attnviz.capture import capture

    model = bench_model(layers=2 if quick else LAYERS)
    inputs, words = bench_batch(*((2, 32) if quick else (BATCH, TOKENS)))
    with torch.no_grad(), capture(model, tokens=words) as cap:
        model(**inputs)
    cap.save(path)
    return Path(path)


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


_CHILD = (
    r"""
import json, sys, torch
from attnviz.bench.capture_bench import bench_batch, bench_model
import attnviz.capture
"""
    + PEAK_PROBE
    + r"""
layers, batch, tokens = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
torch.set_grad_enabled(False)
model = bench_model(layers=layers)
inputs, words = bench_batch(batch, tokens)
model(**inputs)  # one-off allocations of the libraries are not counted
reset_peak(); base = status("VmRSS"); model(**inputs); plain = status("VmHWM") - base
results, first = [], None
for share in sys.argv[4:]:  # "default", or a share of what the first capture recorded
    budget = None if share == "default" else float(share) * first
    reset_peak(); base = status("VmRSS")
    with attnviz.capture(model, tokens=words, memory_budget=budget) as cap:
        model(**inputs)
    captured = status("VmHWM") - base
    first = cap.recorded_bytes if first is None else first
    results.append({"plain_mib": plain, "captured_mib": captured, "recorded_mib": cap.recorded_bytes / 2**20,
                    "budget_mib": cap.memory_budget / 2**20, "calls": len(cap.calls),
                    "stopped": any("recording stopped" in w for w in cap.warnings)})
    del cap
print(json.dumps(results))
"""
)


def _child_env() -> dict[str, str]:
    """A child's environment: this checkout's attnviz first on its path."""
    here = str(Path(__file__).parents[2])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)}


def peak_memory(layers: int, batch: int, tokens: int, shares: Sequence[float | None]) -> list[dict[str, Any]]:
    """Peak resident memory above the model of a plain forward pass and of a captured one per
    entry of ``shares`` (None: the default budget; a number: that share of what the first capture
    recorded), in one fresh process (Linux: the peak is reset with ``clear_refs`` before each)."""
    env = _child_env()
    args = ["default" if share is None else str(share) for share in shares]
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(layers), str(batch), str(tokens), *args],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    results: list[dict[str, Any]] = json.loads(out.strip().splitlines()[-1])
    return results


def run(repeats: int = 15, quick: bool = False) -> int:
    from attnviz.capture import capture, diagnose_run
    from attnviz.io import load_capture, save_capture

    layers, batch, tokens = (2, 2, 32) if quick else (LAYERS, BATCH, TOKENS)
    model = bench_model(layers=layers)
    inputs, words = bench_batch(batch, tokens)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"attnviz capture benchmark: BertModel (random weights, SDPA) {layers} layers x {WIDTH} wide x {HEADS} "
        f"heads, batch {batch} x {tokens} tokens padded, CPU float32, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, load average {load:.2f} at start; median of {repeats} interleaved runs"
    )

    def captured() -> Any:
        with capture(model, tokens=words) as cap:
            model(**inputs)
        return cap

    with torch.no_grad():
        figures = interleaved_medians({"plain": lambda: model(**inputs), "captured": captured}, repeats)
        cap = captured()
    ratio = figures["captured"] / figures["plain"]
    print(f"{'forward ms':>24} {'with capture ms':>16} {'ratio':>7}   target <= {TARGET_RATIO}x")
    print(
        f"{figures['plain']:24.1f} {figures['captured']:16.1f} {ratio:6.2f}x   "
        f"{'met' if ratio <= TARGET_RATIO else 'NOT met'}"
    )
    start = time.perf_counter()
    model_run = cap.to_run()  # every call's fidelity is computed here, once
    fidelity_ms = (time.perf_counter() - start) * 1e3
    worst = max(c.fidelity for c in model_run.calls if c.fidelity is not None)
    print(
        f"fidelity check of the {model_run.layers} calls (to_run, after the forward pass): {fidelity_ms:.1f} ms, "
        f"{fidelity_ms / figures['plain']:.2f}x a plain forward; largest difference {worst:.2e}"
    )

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.attnviz-capture"
        save_s = _median_seconds(lambda: save_capture(path, model_run), max(3, repeats // 3))
        size = path.stat().st_size
        open_s = _median_seconds(lambda: load_capture(path), max(3, repeats // 3))
        loaded = load_capture(path)
        doctor_s = _median_seconds(lambda: diagnose_run(loaded), max(3, repeats // 3))
    print(
        f"capture file: {size / 2**20:.1f} MiB ({cap.recorded_bytes / 2**20:.1f} MiB recorded), save "
        f"{save_s * 1e3:.1f} ms, open (memory-mapped) {open_s * 1e3:.2f} ms, mask doctor on the opened file "
        f"{doctor_s * 1e3:.1f} ms (target well under 1 s)"
    )

    # One child for both: a default budget, then 60% of what that one recorded.
    memory, stopped = peak_memory(layers, batch, tokens, (None, 0.6))
    print(
        f"peak memory above the model (child process): plain forward {memory['plain_mib']:.0f} MiB, captured "
        f"{memory['captured_mib']:.0f} MiB; {memory['recorded_mib']:.1f} MiB recorded of a "
        f"{memory['budget_mib']:.0f} MiB budget"
    )
    print(
        f"with a budget of {stopped['budget_mib']:.1f} MiB (60% of that): {stopped['calls']} of {layers} calls "
        f"recorded, {stopped['recorded_mib']:.1f} MiB, "
        f"stopped {'and said so' if stopped['stopped'] else 'SILENTLY'}; "
        f"peak {stopped['captured_mib']:.0f} MiB"
    )
    status = _paths(repeats, quick, inputs, words)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.attnviz-capture"
        save_capture(path, model_run)
        shown = show_to_overview(path)
    if "error" in shown:
        print(f"attnviz.show(capture) to a painted overview: failed ({shown['error']})")
        return 1
    print(
        f"attnviz.show(capture) to a painted layers x heads overview (child process, offscreen, window already up): "
        f"{shown['seconds']:.2f} s   target < {SHOW_TARGET_S} s: "
        f"{'met' if shown['seconds'] < SHOW_TARGET_S else 'NOT met'}"
        f" (heads grid painted after {shown['grid_seconds']:.2f} s)"
    )
    return status


def _ratio_line(label: str, plain: float, captured: float, extra: str = "") -> str:
    ratio = captured / plain
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    return f"{label:>24} {plain:10.1f} {captured:16.1f} {ratio:6.2f}x   {verdict}{extra}"


def _paths(repeats: int, quick: bool, inputs: dict[str, torch.Tensor], words: list[list[str]]) -> int:
    """The eager and flex rows, and the long run; 1 when a capture failed outright."""
    from attnviz.capture import capture

    layers = 2 if quick else LAYERS
    eager = bench_model(layers=layers, implementation="eager")

    def captured_eager() -> Any:
        with capture(eager, tokens=words) as cap:
            eager(**inputs)
        return cap

    print(f"{'path':>24} {'forward ms':>10} {'with capture ms':>16} {'ratio':>7}   target <= {TARGET_RATIO}x")
    with torch.no_grad():
        figures = interleaved_medians({"plain": lambda: eager(**inputs), "captured": captured_eager}, repeats)
        cap = captured_eager()
    worst = max((c.fidelity or 0.0) for c in cap.calls)
    print(
        _ratio_line(
            "eager (interface)",
            figures["plain"],
            figures["captured"],
            f"; {len(cap.calls)} calls, largest fidelity {worst:.1e}",
        )
    )
    flex = FlexStack(layers=layers)
    x, block_mask = flex.inputs(*((2, 64) if quick else (BATCH, TOKENS)))

    def captured_flex() -> Any:
        with capture(flex) as cap:
            flex(x, block_mask)
        return cap

    import warnings

    with torch.no_grad(), warnings.catch_warnings():
        # flex_attention says, once, that without torch.compile it runs unfused: what is measured here.
        warnings.filterwarnings("ignore", message="flex_attention called without torch.compile")
        flex(x, block_mask)  # flex_attention's first call compiles (eager backend): not timed
        figures = interleaved_medians(
            {"plain": lambda: flex(x, block_mask), "captured": captured_flex}, max(3, repeats // 3)
        )
        cap = captured_flex()
    worst = max((c.fidelity if c.fidelity is not None else float("inf")) for c in cap.calls)
    print(
        _ratio_line(
            "flex_attention",
            figures["plain"],
            figures["captured"],
            f"; {len(cap.calls)} calls, largest fidelity {worst:.1e} (block mask + score_mod, recomputed densely)",
        )
    )
    long_layers, long_tokens = (4, 256) if quick else (LONG_LAYERS, LONG_TOKENS)
    long = long_run(long_layers, long_tokens)
    if "error" in long:
        print(f"{long_layers} layers x {long_tokens} tokens: failed ({long['error']})")
        return 1
    print(
        f"{long_layers} layers x {long_tokens} tokens (batch 1, child process): forward {long['plain_s']:.2f} s, "
        f"with capture {long['captured_s']:.2f} s ({long['captured_s'] / long['plain_s']:.2f}x); "
        f"{long['calls']} of {long_layers} calls recorded, {long['recorded_mib']:.0f} MiB of the default "
        f"{long['budget_mib']:.0f} MiB budget, "
        + (
            "stopped and said so"
            if long["stopped"]
            else f"all within it; fidelity check {long['fidelity_s']:.1f} s, largest {long['fidelity']:.1e}"
        )
        + f"; peak {long['peak_mib']:.0f} MiB above the model"
    )
    return 0


#: The long run of issue 23: 24 layers, 2048 tokens.
LONG_LAYERS, LONG_TOKENS = 24, 2048


class FlexStack(torch.nn.Module):
    """Layers of projections and ``flex_attention`` (through its module, as a model calls it) with
    a relative-position ``score_mod`` and a causal + padding block mask."""

    def __init__(self, layers: int = LAYERS, width: int = WIDTH, heads: int = HEADS) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.heads, self.d = heads, width // heads
        self.qkv = torch.nn.ModuleList(torch.nn.Linear(width, 3 * width) for _ in range(layers))
        self.width = width

    def inputs(self, batch: int, tokens: int) -> tuple[torch.Tensor, Any]:
        from torch.nn.attention import flex_attention as flex

        lengths = torch.randint(tokens // 2, tokens + 1, (batch,), generator=torch.Generator().manual_seed(1))
        lengths[0] = tokens

        def causal_padding(b: Any, h: Any, q: Any, kv: Any) -> Any:
            return (kv <= q) & (kv < lengths[b])

        mask = flex.create_block_mask(causal_padding, batch, None, tokens, tokens, device="cpu")
        return torch.randn(batch, tokens, self.width, generator=torch.Generator().manual_seed(2)), mask

    def forward(self, x: torch.Tensor, block_mask: Any) -> torch.Tensor:
        from torch.nn.attention import flex_attention as flex

        b, n, _ = x.shape
        for qkv in self.qkv:
            q, k, v = (t.view(b, n, self.heads, self.d).transpose(1, 2) for t in qkv(x).chunk(3, -1))
            out = flex.flex_attention(q, k, v, score_mod=_relative, block_mask=block_mask)
            x = x + out.transpose(1, 2).reshape(b, n, -1)
        return x


def _relative(score: torch.Tensor, b: torch.Tensor, h: torch.Tensor, q: torch.Tensor, kv: torch.Tensor) -> Any:
    return score - 0.01 * (q - kv).abs()


_LONG_CHILD = (
    r"""
import json, sys, time, torch
from attnviz.bench.capture_bench import bench_batch, bench_model
import attnviz.capture
"""
    + PEAK_PROBE
    + r"""
layers, tokens = int(sys.argv[1]), int(sys.argv[2])
torch.set_grad_enabled(False)
model = bench_model(layers=layers, positions=tokens)
inputs, words = bench_batch(1, tokens)
model(**inputs)
start = time.perf_counter(); model(**inputs); plain = time.perf_counter() - start
reset_peak()
base = status("VmRSS")
start = time.perf_counter()
with attnviz.capture(model, tokens=words) as cap:
    model(**inputs)
captured = time.perf_counter() - start
stopped = any("recording stopped" in w for w in cap.warnings)
fidelity_s, worst = float("nan"), float("nan")
if not stopped:
    start = time.perf_counter()
    run = cap.to_run()
    fidelity_s = time.perf_counter() - start
    worst = max(c.fidelity for c in run.calls)
print(json.dumps({"plain_s": plain, "captured_s": captured, "calls": len(cap.calls), "stopped": stopped,
                  "recorded_mib": cap.recorded_bytes / 2**20, "budget_mib": cap.memory_budget / 2**20,
                  "fidelity_s": fidelity_s, "fidelity": worst, "peak_mib": status("VmHWM") - base}))
"""
)


def long_run(layers: int, tokens: int) -> dict[str, Any]:
    """A ``layers``-layer encoder on one sequence of ``tokens`` tokens captured under the default
    memory budget, in a fresh process: times, what was recorded, the fidelity check, peak memory."""
    env = _child_env()
    done = subprocess.run(
        [sys.executable, "-c", _LONG_CHILD, str(layers), str(tokens)], capture_output=True, text=True, env=env
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return dict(json.loads(lines[-1]))


#: From attnviz.show(capture) to a painted overview, once the window is up (issue 13).
SHOW_TARGET_S = 1.5

_SHOW_CHILD = r"""
import json, os, sys, tempfile, time
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["ATTNVIZ_STATE_DIR"] = tempfile.mkdtemp(prefix="attnviz-bench-")
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
import attnviz
from attnviz.state.document import ReplaceState
from attnviz.ui.window.main_window import MainWindow

def settle(done, timeout=120.0):
    end = time.monotonic() + timeout
    while not done():
        if time.monotonic() > end:
            raise TimeoutError("not painted in time")
        app.processEvents()
        time.sleep(0.002)

window = MainWindow()
window.show()
settle(lambda: window.session.is_current and not window.session.busy)  # the window is up, torch loaded
import attnviz.capture, attnviz.io  # what show() would import on first use, done before the clock
start = time.monotonic()
shown = attnviz.show(sys.argv[1], block=False)
overview = shown.overview_dock  # a capture of several calls opens on it
settle(lambda: overview.isVisible() and overview.view().statistics is not None and overview.view().draw_count > 0)
for _ in range(5):
    app.processEvents()
seconds = time.monotonic() - start
shown.heads_dock.raise_()
grid = shown.heads_dock.view()
settle(lambda: grid.draw_count > 0)
for _ in range(5):
    app.processEvents()
grid_seconds = time.monotonic() - start
print(json.dumps({"seconds": seconds, "grid_seconds": grid_seconds}))
"""


def show_to_overview(path: Path) -> dict[str, Any]:
    """Seconds from ``attnviz.show(path)`` to a painted layers x heads overview, measured in a
    child process whose window (and torch) is already up."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _SHOW_CHILD, str(path)], capture_output=True, text=True, timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return dict(json.loads(lines[-1]))
