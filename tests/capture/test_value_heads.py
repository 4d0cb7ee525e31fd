"""The grouping of KV heads a model's own attention code used, read from the values its softmax's
weights are multiplied by (``attnviz.capture.value_heads``), kept in capture files and named by
the doctor."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
import torch
from torch import nn

import attnviz
from attnviz.capture import diagnose_run, format_finding
from attnviz.capture.value_heads import value_heads
from attnviz.io.capture_file import CaptureFileError, load_capture, save_capture


def test_copies_among_the_values_are_the_kv_heads():
    kv = torch.randn(2, 2, 5, 4)
    weights = torch.rand(2, 6, 3, 5)
    tiled, interleaved = kv.repeat(1, 3, 1, 1), kv.repeat_interleave(3, 1)
    assert value_heads((2, 6, 3, 5), torch.matmul, (weights, tiled)) == (0, 1, 0, 1, 0, 1)
    assert value_heads((2, 6, 3, 5), torch.Tensor.__matmul__, (weights, interleaved)) == (0, 0, 0, 1, 1, 1)
    einsum = ("bhqk,bhkd->bhqd", weights, tiled)
    assert value_heads((2, 6, 3, 5), torch.einsum, einsum) == (0, 1, 0, 1, 0, 1)
    # (B * H, L, d) for bmm: batch-major, as a view of (B, H, L, d) is.
    flat = (weights.reshape(12, 3, 5), tiled.reshape(12, 5, 4))
    assert value_heads((2, 6, 3, 5), torch.bmm, flat) == (0, 1, 0, 1, 0, 1)
    # Every head its own (no grouped-query attention), the scores' product, another einsum: nothing.
    assert value_heads((2, 6, 3, 5), torch.matmul, (weights, torch.randn(2, 6, 5, 4))) is None
    assert value_heads((2, 6, 3, 5), torch.matmul, (torch.randn(2, 6, 3, 4), torch.randn(2, 6, 4, 5))) is None
    assert value_heads((2, 6, 3, 5), torch.einsum, ("bhqk,bhqd->bhkd", weights, torch.randn(2, 6, 3, 5))) is None
    # One head with a copy, another without: not KV heads expanded.
    odd = torch.cat([kv[:, :1], kv[:, :1], kv[:, 1:], torch.randn(2, 3, 5, 4)], 1)
    assert value_heads((2, 6, 3, 5), torch.matmul, (weights, odd)) is None


class OwnGqa(nn.Module):
    """Attention code of its own (a softmax, then a product by values held in a (B*H) layout),
    grouping 8 query heads over 2 KV heads by ``expand``, ``repeat`` or not at all (MQA: 1)."""

    def __init__(self, how: str, kv: int = 2) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.how, self.kv = how, kv
        self.q = nn.Linear(16, 16)
        self.k = nn.Linear(16, 2 * kv)
        self.v = nn.Linear(16, 2 * kv)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q = self.q(x).view(b, n, 8, 2).transpose(1, 2)
        k, v = (p(x).view(b, n, self.kv, 2).transpose(1, 2) for p in (self.k, self.v))
        if self.how == "expand":  # Falcon's way: (kv, group) flattened, h // groups
            k, v = (t[:, :, None].expand(b, self.kv, 8 // self.kv, n, 2).reshape(b, 8, n, 2) for t in (k, v))
        else:
            k, v = k.repeat(1, 8 // self.kv, 1, 1), v.repeat(1, 8 // self.kv, 1, 1)
        weights = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        out = torch.bmm(weights.reshape(b * 8, n, n), v.reshape(b * 8, n, 2))
        return out.view(b, 8, n, 2).transpose(1, 2).reshape(b, n, 16)


def captured(model: nn.Module) -> attnviz.ModelRun:
    with attnviz.capture(model) as cap, torch.no_grad():
        model(torch.randn(2, 5, 16))
    return cap.to_run()


def test_the_doctor_names_tiled_kv_heads_and_passes_the_others(tmp_path: Path):
    bug = captured(OwnGqa("repeat"))
    found = [f for f in diagnose_run(bug) if f.severity == "error"]
    assert [(f.kind, f.heads) for f in found] == [("grouping", (1, 3, 4, 6))], "\n".join(map(format_finding, found))
    assert "h % 2 (KV heads [0, 1, 0, 1, 0, 1, 0, 1])" in found[0].message
    for twin in (OwnGqa("expand"), OwnGqa("repeat", kv=1)):
        run = captured(twin)
        assert list(diagnose_run(run)) == [], "\n".join(map(format_finding, diagnose_run(run)))

    # Kept in capture files (version 3); a grouping naming heads beyond the call's is refused.
    path = tmp_path / "run.attnviz-capture"
    save_capture(path, bug)
    assert load_capture(path).calls[0].path.value_heads == (0, 1, 0, 1, 0, 1, 0, 1)
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[16:24])[0]
    header = json.loads(raw[24 : 24 + size])
    assert header["version"] == 3
    header["calls"][0]["path"]["value_heads"] = [0, 9, 0, 1, 0, 1, 0, 1]
    text = json.dumps(header, separators=(",", ":")).encode()
    text = text + b" " * (size - len(text))
    (tmp_path / "bad.attnviz-capture").write_bytes(raw[:24] + text + raw[24 + size :])
    with pytest.raises(CaptureFileError, match="invalid 'path'"):
        load_capture(tmp_path / "bad.attnviz-capture")
