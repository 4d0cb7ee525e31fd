"""Engine benchmark: attnviz's weights-and-output path against the book's code and against the
sum of the unavoidable parts (QK^T, softmax, weights @ V) timed alone. CPU, float32."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

import torch

from attnviz.bench.reference import BookDotProductAttention
from attnviz.engine import attend


def interleaved_medians(fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 2) -> dict[str, float]:
    """Median milliseconds of each function, run in turn within every repeat.

    Interleaving puts every contender under the same conditions (other load on a shared
    machine, the allocator's state) instead of timing one after the other.
    """
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def bench_size(n: int, d: int, repeats: int) -> dict[str, float]:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, n, d, generator=g) for _ in range(3))
    valid_lens = torch.tensor([3 * n // 4])  # a padded batch: the last quarter of keys masked
    book = BookDotProductAttention(0.0).eval()
    scores = torch.bmm(q, k.transpose(1, 2)) / d**0.5
    weights = torch.softmax(scores, -1)
    with torch.no_grad():
        figures = interleaved_medians(
            {
                "book": lambda: book(q, k, v, valid_lens),
                "attnviz": lambda: attend(q, k, v, valid_lens, keep=("weights", "output")),
                "attnviz_all_stages": lambda: attend(q, k, v, valid_lens),
                "qk": lambda: torch.bmm(q, k.transpose(1, 2)),
                "softmax": lambda: torch.softmax(scores, -1),
                "wv": lambda: torch.bmm(weights, v),
            },
            repeats,
        )
    figures["parts"] = figures["qk"] + figures["softmax"] + figures["wv"]
    return figures


def run(sizes: tuple[int, ...] = (1024, 4096), d: int = 64, repeats: int = 15, memory: bool = True) -> int:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"attnviz engine benchmark: CPU float32, torch {torch.__version__}, {torch.get_num_threads()} threads, "
        f"{os.cpu_count()} CPUs, load average {load:.2f} at start; median of {repeats} interleaved runs; "
        "valid length 3/4 of the keys"
    )
    print(
        "'attnviz' is the weights-and-output path (keep=weights, output; diagnostics included); "
        "'all stages' keeps every stage; the parts are each timed alone on ready inputs."
    )
    header = (
        f"{'size':>16} {'book ms':>9} {'attnviz ms':>11} {'all stages':>11} {'QK^T':>7} {'softmax':>8} "
        f"{'W@V':>7} {'parts':>7} {'book/attnviz':>13} {'attnviz/parts':>14}"
    )
    print(header)
    ok = True
    for n in sizes:
        f = bench_size(n, d, repeats)
        speedup, overhead = f["book"] / f["attnviz"], f["attnviz"] / f["parts"]
        print(
            f"{f'(1, {n}, {n}, {d})':>16} {f['book']:9.1f} {f['attnviz']:11.1f} {f['attnviz_all_stages']:11.1f} "
            f"{f['qk']:7.1f} {f['softmax']:8.1f} {f['wv']:7.1f} {f['parts']:7.1f} {speedup:12.2f}x {overhead:13.2f}x"
        )
        if n >= 4096:
            ok &= speedup >= 1.5 and overhead <= 1.3
    if any(n >= 4096 for n in sizes):
        print("targets at 4096: book/attnviz >= 1.5x, attnviz/parts <= 1.3x:", "met" if ok else "NOT met")
    if memory:
        from attnviz.bench.memory import additive_peak_mib

        m = additive_peak_mib(2048, 64, d, include_book=True)
        print(
            f"additive attention (1, 2048, 2048), hidden 64: peak {m['peak_above_inputs_mib']:.0f} MiB above the "
            f"inputs (of which {m['returned_weights_mib']:.0f} MiB are the returned weights); book's code "
            f"{m['book_peak_above_inputs_mib']:.0f} MiB; the feature tensor at once would be "
            f"{m['naive_feature_tensor_mib']} MiB; target < 512 MiB"
        )
    return 0
