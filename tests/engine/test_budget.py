"""One memory budget per computation, checked before anything is allocated (issue 12, item 2)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap

import pytest
import torch

import attnviz.engine.budget as budget
from attnviz.engine import (
    DEFAULT_MEMORY_BUDGET,
    DeviceOutOfMemoryError,
    MemoryBudgetError,
    attend,
    budget_for,
    estimate_memory,
    set_default_memory_budget,
)
from attnviz.engine.devices import is_out_of_memory

GiB = 2**30


def run_capped(code: str, cap_bytes: int) -> dict:
    """Run ``code`` in a child process whose address space is capped, so that a bug allocating
    without bound fails there instead of taking the machine down; it prints one JSON line."""
    prelude = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({cap_bytes}, {cap_bytes}))\n"
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS caps the address space on Linux")
def test_a_30000_token_computation_keeping_every_stage_is_refused_at_once_naming_the_budget():
    report = run_capped(
        """
        import json, time, torch
        from attnviz.engine import attend, MemoryBudgetError
        q = torch.randn(1, 30000, 64)
        start = time.perf_counter()
        try:
            attend(q, q, q, keep="all")
            print(json.dumps({"refused": False}))
        except MemoryBudgetError as exc:
            print(json.dumps({"refused": True, "seconds": time.perf_counter() - start, "message": str(exc),
                              "needed": exc.needed, "budget": exc.budget, "field": exc.field}))
    """,
        3 * GiB,
    )
    assert report["refused"], report
    assert report["seconds"] < 1.0
    assert report["budget"] <= 4 * GiB and report["needed"] > 10 * GiB
    message = report["message"]
    assert "attention of shape (1, 30000, 30000)" in message and "needs about 10.1 GiB" in message
    assert "more than the memory budget of" in message
    assert "keep=('weights', 'output') needs about 3.41 GiB" in message  # what would fit
    assert "long-context overview" in message and report["field"] == "memory_budget"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS caps the address space on Linux")
def test_the_cpu_allocators_own_failure_is_reported_as_out_of_memory():
    report = run_capped(
        """
        import json, math, torch
        from attnviz.engine import attend, DeviceOutOfMemoryError
        q = torch.randn(1, 30000, 64)
        try:
            attend(q, q, q, memory_budget=math.inf)  # no budget: the allocator itself fails
            print(json.dumps({"raised": None}))
        except DeviceOutOfMemoryError as exc:
            print(json.dumps({"raised": "DeviceOutOfMemoryError", "message": str(exc), "cause": str(exc.__cause__)}))
    """,
        3 * GiB,
    )
    assert report["raised"] == "DeviceOutOfMemoryError", report
    assert "can't allocate memory" in report["cause"]
    assert report["message"].startswith("out of memory on cpu for batch 1, 30000 queries x 30000 keys")


def test_every_allocator_wording_is_recognised():
    assert is_out_of_memory(
        RuntimeError(
            "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't "
            "allocate memory: you tried to allocate 3600000000 bytes."
        )
    )
    assert is_out_of_memory(RuntimeError("DefaultCPUAllocator: not enough memory: you tried to allocate 10 bytes."))
    assert is_out_of_memory(RuntimeError("MPS backend out of memory (MPS allocated: 1 GB)"))
    assert is_out_of_memory(MemoryError())
    assert not is_out_of_memory(RuntimeError("shape mismatch"))


def test_the_estimate_counts_each_distinct_stage_once():
    e = estimate_memory((2, 4, 100, 8), (2, 4, 50, 8), (2, 4, 50, 16))
    stage = 2 * 4 * 100 * 50 * 4
    # No mask: masked_scores is scores, no dropout: applied_weights is weights.
    assert e.stages == {"raw_scores": stage, "scores": stage, "weights": stage}
    masked = estimate_memory((2, 4, 100, 8), (2, 4, 50, 8), (2, 4, 50, 16), masked=True, dropout=0.1, train=True)
    assert masked.stages == {
        "raw_scores": stage,
        "scores": stage,
        "mask": stage // 4,
        "masked_scores": stage,
        "weights": stage,
        "applied_weights": stage,
    }
    minimal = estimate_memory((2, 4, 100, 8), (2, 4, 50, 8), (2, 4, 50, 16), keep=("weights",), dtype="float64")
    assert minimal.stages == {"weights": 2 * stage}
    dot = estimate_memory((1, 10, 8), (1, 20, 8), (1, 20, 8), scoring="dot")
    assert "raw_scores" not in dot.stages  # no scale: raw_scores is scores
    assert e.other > 2 * 4 * 100 * 16 * 4  # the output at least
    assert e.total == sum(e.stages.values()) + e.other


def test_the_estimate_bounds_what_attend_allocates():
    """The stage tensors attend() returns never hold more than the estimate said."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (
        torch.randn(3, 2, 300, 8, generator=g),
        torch.randn(3, 2, 500, 8, generator=g),
        torch.randn(3, 2, 500, 4, generator=g),
    )
    r = attend(q, k, v, torch.tensor([10, 200, 500]), causal=True)
    held = {
        id(t): t.numel() * t.element_size()
        for t in (r.raw_scores, r.scores, r.mask, r.masked_scores, r.weights, r.applied_weights, r.output)
        if t is not None
    }
    e = estimate_memory(q.shape, k.shape, v.shape, masked=True)
    assert sum(held.values()) <= e.total
    assert sum(held.values()) >= sum(e.stages.values())


def test_over_the_budget_the_error_says_what_would_fit():
    q = torch.randn(8, 2, 512, 16)
    vl = torch.tensor([100] * 8)
    stage = 8 * 2 * 512 * 512 * 4  # 16 MiB
    limit = 4 * stage
    with pytest.raises(MemoryBudgetError) as info:
        attend(q, q, q, vl, memory_budget=limit)
    exc = info.value
    assert exc.budget == limit and exc.needed > exc.budget
    estimate = estimate_memory(q.shape, q.shape, q.shape, masked=True)
    assert exc.needed == estimate.total
    text = str(exc)
    assert "attention of shape (8, 2, 512, 512) keeping raw_scores, scores, mask, masked_scores, weights" in text
    assert "(one float stage is 16 MiB), more than the memory budget of 64 MiB" in text
    assert "keep fewer stages: keep=('weights', 'output') needs about" in text
    fits = estimate.max_batch(limit)
    assert 1 <= fits < 8 and f"a smaller batch: {fits} of the 8 at a time" in text
    # Both pieces of advice hold.
    assert attend(q[:fits], q[:fits], q[:fits], vl[:fits], memory_budget=limit).weights.shape[0] == fits
    attend(q, q, q, vl, memory_budget=limit, keep=("weights", "output"))


def test_the_default_budget_is_configurable_and_capped_by_what_is_available(monkeypatch):
    cpu = torch.device("cpu")
    monkeypatch.setattr(budget, "available_memory", lambda device: 100 * GiB)
    assert budget_for(cpu) == DEFAULT_MEMORY_BUDGET == 4 * GiB
    monkeypatch.setattr(budget, "available_memory", lambda device: 2 * GiB)
    assert budget_for(cpu) == 1 * GiB  # half of what is available now
    q = torch.randn(1, 12000, 8)  # 550 MiB a stage
    with pytest.raises(
        MemoryBudgetError,
        match=r"more than the memory budget of 1 GiB \(half of the 2 GiB of memory "
        r"available now\)",
    ):
        attend(q, q, q)
    assert budget_for(cpu, 8 * GiB) == 8 * GiB  # an explicit budget is trusted
    monkeypatch.setattr(budget, "available_memory", lambda device: None)
    try:
        set_default_memory_budget(1024)
        assert budget_for(cpu) == 1024
        with pytest.raises(MemoryBudgetError, match="memory budget of 1 KiB"):
            attend(torch.randn(1, 32, 8), torch.randn(1, 32, 8), torch.randn(1, 32, 8))
        attend(torch.randn(1, 32, 8), torch.randn(1, 32, 8), torch.randn(1, 32, 8), memory_budget=math.inf)
    finally:
        set_default_memory_budget(None)
    assert budget_for(cpu) == DEFAULT_MEMORY_BUDGET
    with pytest.raises(ValueError, match="memory_budget must be a number of bytes > 0"):
        set_default_memory_budget(0)


def test_out_of_memory_during_the_computation_is_named(monkeypatch):
    import attnviz.engine.scoring as scoring

    def boom(*args, **kwargs):
        raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 4000000000 bytes.")

    monkeypatch.setattr(scoring.ScaledDotProduct, "scores", boom)
    with pytest.raises(DeviceOutOfMemoryError, match="out of memory on cpu for batch 2 x 3, 5 queries x 7 keys"):
        attend(torch.randn(2, 3, 5, 4), torch.randn(2, 3, 7, 4), torch.randn(2, 3, 7, 4))


def test_a_scoped_budget_holds_on_its_thread_only_and_ends_with_its_block() -> None:
    import threading

    from attnviz.engine import MemoryBudgetError, attend
    from attnviz.engine.budget import default_budget, memory_budget_scope

    q = torch.zeros(1, 1500, 2)  # every stage of 1500 x 1500 in float32: about 50 MiB
    process_default = default_budget()
    seen: list[float] = []
    with memory_budget_scope(20e6):
        assert default_budget() == 20e6
        with pytest.raises(MemoryBudgetError, match="budget"):
            attend(q, q, q)
        other = threading.Thread(target=lambda: seen.append(default_budget()))
        other.start()
        other.join()
        with memory_budget_scope(1e12):  # a scope never raises the process-wide default
            assert default_budget() == process_default
        assert default_budget() == 20e6
    assert seen == [process_default] and default_budget() == process_default
    assert attend(q, q, q).weights.shape == (1, 1500, 1500)
