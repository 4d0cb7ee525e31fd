"""Block sparsity a FlexAttention block table holds that the recording cannot honour is said at
the call and by the doctor (issue 33). PyTorch's CPU flex_attention computes every block, so a
block table built by hand (``mask_mod = noop``) masks nothing there, while a GPU skips the blocks
it leaves out; before, the call's note said only "only its mask_mod masks" and the doctor said
nothing. The shares are counted here from the table by hand."""

from __future__ import annotations

import pytest
import torch

import attnviz
from attnviz.capture import diagnose_run, format_finding
from attnviz.capture.block_tables import unhonoured_share
from attnviz.io import load_capture

flex = pytest.importorskip("torch.nn.attention.flex_attention")

B, H, N, D, BLOCK = 1, 2, 32, 8, 8
N_B = N // BLOCK


@pytest.fixture(autouse=True)
def eager_flex(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(flex, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)


def causal(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx


def _listed(h: int, i: int) -> list[int]:
    """Key blocks of query block ``i``, head ``h``: its own and the first; head 1 also the one before."""
    return sorted({0, i, max(0, i - h)})


def _table(mask_mod=None) -> object:
    indices = [[_listed(h, i) + [0] * (N_B - len(_listed(h, i))) for i in range(N_B)] for h in range(H)]
    counts = [[len(_listed(h, i)) for i in range(N_B)] for h in range(H)]
    return flex.BlockMask.from_kv_blocks(
        torch.tensor([counts], dtype=torch.int32),
        torch.tensor([indices], dtype=torch.int32),
        BLOCK_SIZE=BLOCK,
        seq_lengths=(N, N),
        mask_mod=mask_mod,
    )


def _skipped(allows) -> int:
    """Blocks the hand-built table skips where ``allows(i, j)`` (the mask_mod allows a cell)."""
    return sum(1 for h in range(H) for i in range(N_B) for j in range(N_B) if j not in _listed(h, i) and allows(i, j))


def _captured(block_mask: object, tmp_path) -> attnviz.capture.Capture:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(B, H, N, D, generator=g) for _ in range(3))
    with torch.no_grad(), attnviz.capture() as cap:
        flex.flex_attention(q, k, v, block_mask=block_mask)
    assert len(cap.calls) == 1, cap.warnings
    return cap


def test_a_noop_table_on_the_cpu_is_said_at_the_call_in_the_doctor_and_in_a_file(tmp_path) -> None:
    share = _skipped(lambda i, j: True) / (H * N_B * N_B)
    assert share > 0.3  # the table skips much: what a GPU would not compute
    cap = _captured(_table(), tmp_path)
    call = cap.calls[0]
    assert call.path.unhonoured_blocks == pytest.approx(share)
    assert f"{100 * share:.1f}% of blocks, which its block table skips and its mask_mod (noop_mask) allows" in call.note
    assert call.fidelity is not None and call.fidelity < 1e-5  # shown as the CPU computed it
    for run in (cap.to_run(), None):
        if run is None:
            cap.save(tmp_path / "table.attnviz-capture")
            run = load_capture(tmp_path / "table.attnviz-capture")
            assert run.calls[0].path.unhonoured_blocks == pytest.approx(share)
        found = [f for f in diagnose_run(run) if f.kind == "block_table"]
        assert len(found) == 1 and found[0].severity == "warning"
        line = format_finding(found[0])
        assert line.startswith(f"warning: call 0 ({run.calls[0].name}): its FlexAttention block table skips ")
        assert f"{100 * share:.1f}% of blocks that its mask_mod allows" in line


def test_blocks_the_mask_mod_empties_anyway_are_not_counted() -> None:
    # Causal mask_mod: the skipped blocks above the diagonal hold no allowed cell; those below do.
    share = _skipped(lambda i, j: j <= i) / (H * N_B * N_B)
    assert 0 < share < _skipped(lambda i, j: True) / (H * N_B * N_B)
    assert unhonoured_share(_table(causal), on_gpu=False) == pytest.approx(share)
    # The same mask_mod indexing a tensor (its index ranges cannot be followed): cell by cell.
    dense = torch.ones(N, N, dtype=torch.bool).tril()

    def indexed(b, h, q_idx, kv_idx):
        return dense[q_idx, kv_idx]

    assert unhonoured_share(_table(indexed), on_gpu=False) == pytest.approx(share)
    # create_block_mask's own table skips only what the mask_mod empties: nothing is ignored.
    own = flex.create_block_mask(causal, None, None, N, N, device="cpu", BLOCK_SIZE=BLOCK)
    assert unhonoured_share(own, on_gpu=False) == 0.0
    # On a GPU the table is honoured (engine.block_masks reads it): nothing to say.
    assert unhonoured_share(_table(), on_gpu=True) is None


def test_a_causal_block_mask_on_the_cpu_has_no_doctor_note(tmp_path) -> None:
    own = flex.create_block_mask(causal, None, None, N, N, device="cpu", BLOCK_SIZE=BLOCK)
    cap = _captured(own, tmp_path)
    assert cap.calls[0].path.unhonoured_blocks == 0.0
    assert "only its mask_mod masks (as recorded)" in cap.calls[0].note
    assert [f.kind for f in diagnose_run(cap.to_run()) if f.kind == "block_table"] == []


def test_a_file_with_a_share_out_of_range_is_refused(tmp_path) -> None:
    import json
    import re
    import struct

    from attnviz.io import CaptureFileError

    path = tmp_path / "table.attnviz-capture"
    _captured(_table(), tmp_path).save(path)
    blob = path.read_bytes()
    start = blob.index(b"{")
    size = struct.unpack("<Q", blob[start - 8 : start])[0]
    text = blob[start : start + size].decode()
    header = json.loads(text)
    assert header["calls"][0]["path"]["unhonoured_blocks"] > 0
    for value in ("7", "-1", '"h"'):
        bad = re.sub(r'("unhonoured_blocks":\s*)[^,}]+', lambda m, value=value: m.group(1) + value, text)
        assert bad != text and len(bad) <= len(text)
        damaged = tmp_path / "bad.attnviz-capture"
        damaged.write_bytes(blob[:start] + bad.ljust(len(text)).encode() + blob[start + size :])
        with pytest.raises(CaptureFileError, match="has an invalid 'path' in call"):
            load_capture(damaged)
