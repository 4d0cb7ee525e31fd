"""Huge pages for the stage buffers: asked for when enabled and big enough, never otherwise."""

from __future__ import annotations

import torch

from attnviz.engine import memory


def test_huge_pages_are_asked_for_only_when_enabled(monkeypatch):
    calls: list[tuple[int, int, int]] = []
    monkeypatch.setattr(memory, "_madvise", lambda start, length, advice: calls.append((start, length, advice)) or 0)
    monkeypatch.setattr(memory, "_use_huge_pages", True)
    big = memory.empty_large((4, 1024, 1024), torch.float32, torch.device("cpu"))  # 16 MiB
    assert len(calls) == 1 and calls[0][2] == memory._MADV_HUGEPAGE
    start, length, _ = calls[0]
    assert start % memory._HUGE_PAGE == 0 and length % memory._HUGE_PAGE == 0
    assert big.data_ptr() <= start and start + length <= big.data_ptr() + big.numel() * 4
    memory.empty_large((16, 16), torch.float32, torch.device("cpu"))  # too small to matter
    assert len(calls) == 1
    memory.use_huge_pages(False)
    plain = memory.empty_large((4, 1024, 1024), torch.float32, torch.device("cpu"))
    assert len(calls) == 1 and plain.shape == (4, 1024, 1024)
    memory.use_huge_pages(True)
    memory.empty_large((4, 1024, 1024), torch.float32, torch.device("cpu"))
    assert len(calls) == 2
