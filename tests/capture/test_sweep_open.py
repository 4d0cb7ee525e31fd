"""The sweep's ``--open`` (issue 35): a capture the sweep makes is saved and opened by
``attnviz doctor``, ``attnviz render`` (every call) and the window's File > Open (every call
shown), in one child; a right capture gives no problem, an unreadable one a single line. One
child serves both files (starting it, with torch and the window, is most of the time)."""

from __future__ import annotations

from typing import Any

import pytest

from attnviz.bench import capture_sweep, sweep_open


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def test_a_sweep_capture_opens_every_way_and_a_broken_file_says_why_in_one_line(transformers, tmp_path):
    config = transformers.CONFIG_MAPPING["gpt2"]()
    capture_sweep.shrink(config)
    path = sweep_open.capture_path(tmp_path, "gpt2", "eager")
    try:
        verdict = capture_sweep.sweep_implementation(config, "eager", save_to=path)
        assert path.exists()
        assert verdict["status"] == "exact", verdict
        assert verdict["opened"]["problems"] == [], verdict["opened"]
        broken = tmp_path / "broken.attnviz-capture"
        broken.write_bytes(b"not a capture")
        opened = sweep_open.open_capture(broken)
    finally:
        sweep_open.close_opener()
    assert len(opened["problems"]) == 1, opened
    line = opened["problems"][0]
    assert line.startswith("opening: ") and "\n" not in line and "Traceback" not in line


def test_the_opening_limit_counts_the_childs_cpu_time_not_the_machines_load() -> None:
    # A child that waits (for its share of a loaded machine, or in sleep) spends wall time, not
    # CPU time: the limit is on the latter, so a busy machine does not fail a capture that is quick.
    import subprocess
    import sys
    import time

    code = "import time\nend = time.process_time() + 1.5\nwhile time.process_time() < end: pass\ntime.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 60
        while sweep_open._cpu_seconds(child.pid) < 1.4 and time.monotonic() < deadline:
            time.sleep(0.2)
        spun = sweep_open._cpu_seconds(child.pid)
        assert spun >= 1.4  # its CPU time is counted
        time.sleep(2.0)  # now asleep: 2 s of wall time, next to nothing of CPU
        assert sweep_open._cpu_seconds(child.pid) - spun < 0.5
    finally:
        child.kill()
        child.wait()


def test_rows_the_models_own_mask_leaves_no_key_are_found_not_failed(tmp_path) -> None:
    # A model whose mask leaves a query no key (BLT's empty last patch) and fills it with a finite
    # number: the row is the values' mean, what the model computed. The doctor says so; the sweep
    # keeps it apart (``found``), not as a false alarm. A row the doctor cannot explain still fails.
    import torch

    class Padded(torch.nn.Module):
        def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            # patches (queries) over the bytes (keys) they hold: 0-1, 2-4, and none for the last
            low = torch.finfo(torch.float32).min
            mask = torch.full((1, 1, 3, 5), low)
            mask[..., 0, :2] = 0.0
            mask[..., 1, 2:] = 0.0
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, 2, 3, 8, generator=g)
    k, v = (torch.randn(1, 2, 5, 8, generator=g) for _ in range(2))
    opened = _opened(Padded(), (q, k, v), tmp_path / "padded.attnviz-capture")
    assert opened["problems"] == [], opened
    assert len(opened.get("found", [])) == 1 and "spread" in opened["found"][0], opened


def test_two_minimum_fills_added_by_the_model_are_found_not_failed(tmp_path) -> None:
    # Kosmos-2's text model adds its causal mask and its padding mask, each filled with float32's
    # lowest: their sum overflows to -inf. The doctor reads that from the model's own mask (a
    # warning where every row keeps a key); the sweep keeps it apart as found, not a false alarm.
    import torch

    class Added(torch.nn.Module):
        def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            low = torch.finfo(torch.float32).min
            causal = torch.triu(torch.full((4, 4), low), diagonal=1)
            padding = torch.zeros(1, 1, 1, 4)
            padding[..., -1] = low  # the last key padded
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=causal + padding)

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 4, 8, generator=g) for _ in range(3))
    opened = _opened(Added(), (q, k, v), tmp_path / "added.attnviz-capture")
    assert opened["problems"] == [], opened
    assert len(opened.get("found", [])) == 1 and "overflowed" in opened["found"][0], opened


def _opened(model: Any, inputs: tuple[Any, ...], path: Any) -> dict[str, Any]:
    """``model`` on ``inputs`` captured, saved to ``path`` and opened as the sweep opens it."""
    import torch

    import attnviz

    with torch.no_grad(), attnviz.capture(model) as cap:
        model(*inputs)
    cap.save(path)
    try:
        return sweep_open.open_capture(path)
    finally:
        sweep_open.close_opener()
