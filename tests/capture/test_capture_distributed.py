"""Distributed runs (issue 23): each rank's capture under ``torchrun --nproc_per_node=2`` (gloo,
CPU, in child processes) carries its rank, the world size and the sharding; ``merge`` joins a
DDP run along the batch and a head-sharded model along the heads, equal to a single-process
capture of the whole batch to 1e-5; shards that do not line up are refused in one line, and the
doctor and ``render`` take several rank files at once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

import attnviz
from attnviz.capture import merge
from attnviz.cli.doctor import doctor_main
from attnviz.io import load_capture
from attnviz.state.run import ModelRunError, Shard

from . import dist_worker

pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")
ATOL = 1e-5
ROOT = Path(__file__).resolve().parents[2]


def torchrun(tmp_path: Path, mode: str) -> list[Path]:
    launcher = shutil.which("torchrun", path=str(Path(sys.executable).parent)) or shutil.which("torchrun")
    if launcher is None or not torch.distributed.is_available():
        pytest.skip("torchrun (torch.distributed) is not available")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [launcher, "--standalone", "--nproc_per_node=2", str(Path(dist_worker.__file__)), str(tmp_path), mode],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return [tmp_path / f"rank{r}.attnviz-capture" for r in range(2)]


def test_a_ddp_run_merged_along_the_batch_is_the_whole_batch(tmp_path):
    files = torchrun(tmp_path, "ddp")
    ranks = [load_capture(f) for f in files]
    assert [r.shard for r in ranks] == [Shard(0, 2, "data"), Shard(1, 2, "data")]
    assert [c.shape[0] for c in ranks[0].calls] == [2, 2]
    merged = merge(files)
    ids, mask, tokens = dist_worker.batch()
    model = dist_worker.bert()
    with torch.no_grad(), attnviz.capture(model, tokens=tokens) as cap:
        model(input_ids=ids, attention_mask=mask)
    whole = cap.to_run()
    assert merged.layers == whole.layers == 2 and merged.shard is None
    for ours, theirs in zip(merged.calls, whole.calls):
        assert ours.name == "module." + theirs.name  # DDP's wrapper names the modules
        assert ours.shape == theirs.shape == (4, 4, 6, 6)
        for role in ("queries", "keys", "values", "output"):
            np.testing.assert_allclose(getattr(ours, role), getattr(theirs, role), atol=ATOL, rtol=0)
        np.testing.assert_array_equal(np.asarray(ours.masks.attn_mask), np.asarray(theirs.masks.attn_mask))
        assert ours.query_tokens.tolist() == tokens and ours.fidelity <= ATOL
    assert merged.query_tokens.tolist() == tokens
    # The doctor and render take the ranks' files at once.
    assert doctor_main([str(f) for f in files]) == 0
    out = tmp_path / "w.npy"
    from attnviz.cli.render import render_main

    argv = ["--load", str(files[0]), "--load", str(files[1]), "--layer", "1", "--batch", "3", "--out", str(out)]
    assert render_main(argv) == 0
    expected = attnviz.capture.recompute_call(whole.calls[1])[0][3, 0].numpy()
    np.testing.assert_allclose(np.load(out), expected, atol=ATOL, rtol=0)


def test_a_head_sharded_model_merged_along_the_heads_is_the_whole_model(tmp_path):
    files = torchrun(tmp_path, "heads")
    merged = merge(files)
    ids, mask, tokens = dist_worker.batch()
    torch.manual_seed(2)
    x = torch.randn(dist_worker.BATCH, dist_worker.LENGTH, dist_worker.WIDTH)
    layer = dist_worker.HeadParallelAttention(0, dist_worker.HEADS)
    with torch.no_grad(), attnviz.capture(layer, tokens=tokens) as cap:
        layer(x, mask.bool())
    (whole,) = cap.to_run().calls
    (ours,) = merged.calls
    assert ours.shape == whole.shape == (4, 4, 6, 6)
    for role in ("queries", "keys", "values", "output"):
        np.testing.assert_allclose(getattr(ours, role), getattr(whole, role), atol=ATOL, rtol=0)
    w_ours = attnviz.capture.recompute_call(ours)[0]
    w_whole = attnviz.capture.recompute_call(whole)[0]
    torch.testing.assert_close(w_ours, w_whole, atol=ATOL, rtol=0)


def test_shards_that_do_not_line_up_are_refused(tmp_path):
    model = dist_worker.bert()
    ids, mask, tokens = dist_worker.batch()
    with torch.no_grad(), attnviz.capture(model, tokens=tokens) as cap:
        model(input_ids=ids, attention_mask=mask)
    run = cap.to_run()
    rank0, rank1 = replace(run, shard=Shard(0, 2, "data")), replace(run, shard=Shard(1, 2, "data"))
    assert merge([rank0, rank1]).calls[0].shape[0] == 8
    for runs, words in (
        ([rank0], "at least two"),
        ([rank0, run], "names no rank"),
        ([rank0, rank0], "each of 0 to 1 once"),
        ([rank0, replace(run, shard=Shard(1, 3, "data"))], "worlds of"),
        ([rank0, replace(rank1, calls=rank1.calls[:1])], "other calls"),
        ([rank0, replace(run, shard=Shard(1, 2, None))], None),
        ([replace(run, shard=Shard(0, 2, None)), replace(run, shard=Shard(1, 2, None))], "pass sharding"),
    ):
        if words is None:
            assert merge(runs).calls[0].shape[0] == 8  # one rank says "data": enough
            continue
        with pytest.raises(ModelRunError, match=words) as info:
            merge(runs)
        assert str(info.value).startswith("cannot merge the ranks: ") and "\n" not in str(info.value)
    heads = [replace(run, shard=Shard(r, 2, "heads")) for r in range(2)]
    assert merge(heads).calls[0].shape == (4, 8, 6, 6)
