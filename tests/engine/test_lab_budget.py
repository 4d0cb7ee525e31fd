"""The labs check the memory budget before they compute, as attend does, and say so clearly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import attnviz.engine.lab as lab_module
import attnviz.engine.scaling as scaling_module
from attnviz.compute.labs import run_masking_lab, run_scaling_lab
from attnviz.engine import MemoryBudgetError, estimate_memory
from attnviz.engine.lab import compare_conventions
from attnviz.engine.scaling import current_point, tanh_saturation
from attnviz.state.document import Snapshot, make_state


def inputs(batch: int = 2, n: int = 64) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(batch, n, 4, generator=g) for _ in range(3))
    return q, k, v, torch.full((batch,), n // 2)


def test_the_masking_lab_refuses_what_its_conventions_need_together(monkeypatch: pytest.MonkeyPatch) -> None:
    q, k, v, lens = inputs()
    one_run = estimate_memory(q.shape, k.shape, v.shape, keep=("mask", "masked_scores"), masked=True).total
    budget = 3 * one_run  # each convention's attend() alone fits: only the lab as a whole does not
    calls: list[str] = []
    real = lab_module.attend
    monkeypatch.setattr(lab_module, "attend", lambda *a, **kw: calls.append(kw["mask_mode"]) or real(*a, **kw))
    with pytest.raises(MemoryBudgetError) as info:
        compare_conventions(q, k, v, lens, memory_budget=budget)
    assert calls == []  # refused before anything ran
    text = str(info.value)
    assert text.startswith(
        "the masking lab (6 conventions, each keeping its weights, mask and masked scores) on "
        "inputs of shape (2, 64, 64) needs about "
    )
    assert "more than the memory budget of" in text and "fewer queries or keys" in text and "\n" not in text
    assert info.value.budget == int(budget) < info.value.needed and info.value.field == "memory_budget"
    report = compare_conventions(q, k, v, lens, memory_budget=info.value.needed)  # what it asked for is enough
    assert len(report.conventions) == 6 and len(calls) == 6


def test_a_causal_lab_counts_both_alignments(monkeypatch: pytest.MonkeyPatch) -> None:
    q, k, v, lens = inputs()
    with pytest.raises(MemoryBudgetError, match=r"the masking lab \(12 conventions"):
        compare_conventions(q, k, v, lens, causal=True, memory_budget=1)


def test_the_scaling_statistics_refuse_before_making_the_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    q, k, _v, lens = inputs(batch=4)

    def never(*_args: object) -> None:
        raise AssertionError("the (B, Q, K) tensors were being made")

    monkeypatch.setattr(scaling_module, "_allowed", never)
    with pytest.raises(MemoryBudgetError) as point:
        current_point(q, k, lens, memory_budget=600_000)
    assert str(point.value).startswith(
        "computing the scaling statistics of the current inputs on inputs of shape (4, 64, 64) needs about "
    )
    assert "a smaller batch: 2 of the 4 at a time" in str(point.value)  # 64 x 64 x 72 bytes each
    with pytest.raises(MemoryBudgetError, match="computing the tanh saturation of the current inputs"):
        tanh_saturation(q, k, valid_lens=lens, memory_budget=100_000)


def test_the_labs_show_a_budget_refusal_and_recognise_the_allocators_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    state = make_state(batch=2, n_queries=8, n_keys=8, d_q=2, d_k=2, d_v=2)
    state = state.with_head((0, 0), "queries", np.random.default_rng(0).standard_normal((2, 8, 2)))

    def over_budget(*_a: object, **_kw: object) -> None:
        raise MemoryBudgetError("the masking lab needs about 9 GiB, more than the memory budget of 4 GiB", 9, 4)

    monkeypatch.setattr(lab_module, "compare_conventions", over_budget)
    outcome = run_masking_lab(Snapshot(3, state))
    assert outcome.error is not None and "more than the memory budget of 4 GiB" in outcome.error
    assert outcome.error_field == "memory_budget"

    def allocator(*_a: object, **_kw: object) -> None:
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
            "you tried to allocate 8589934592 bytes. Error code 12 (Cannot allocate memory)"
        )

    monkeypatch.setattr(lab_module, "compare_conventions", allocator)
    assert run_masking_lab(Snapshot(4, state)).error == "out of memory on this computer: use a smaller input"
    monkeypatch.setattr(scaling_module, "current_point", allocator)
    scaled = run_scaling_lab(Snapshot(5, state))
    assert scaled.error == "out of memory on this computer: use a smaller input"  # was "unexpected error: ..."
