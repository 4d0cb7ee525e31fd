"""One rank of a two-rank run under ``torchrun --nproc_per_node=2`` (gloo, CPU), for
test_capture_distributed.py: ``python dist_worker.py OUT_DIR ddp|heads``.

* ddp: a small BERT wrapped in DistributedDataParallel, each rank on its half of the batch;
* heads: a tensor-parallel attention layer, each rank holding half of the heads of a model
  whose full weights every rank builds from one seed (its projections' rows split by heads,
  the output projection's columns, the partial outputs summed with all_reduce).
Each rank saves ``rank{r}.attnviz-capture``."""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

import attnviz

BATCH, LENGTH, WIDTH, HEADS = 4, 6, 32, 4


def batch() -> tuple[torch.Tensor, torch.Tensor, list[list[str]]]:
    g = torch.Generator().manual_seed(7)
    ids = torch.randint(1, 60, (BATCH, LENGTH), generator=g)
    mask = torch.ones(BATCH, LENGTH, dtype=torch.long)
    mask[1, 4:] = 0
    mask[3, 2:] = 0
    tokens = [[f"w{j}" if m else "[PAD]" for j, m in enumerate(row)] for row in mask.tolist()]
    return ids, mask, tokens


def bert() -> nn.Module:
    import transformers

    config = transformers.BertConfig(
        vocab_size=60, hidden_size=WIDTH, num_hidden_layers=2, num_attention_heads=HEADS, intermediate_size=32
    )
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    return transformers.BertModel(config).eval()


class HeadParallelAttention(nn.Module):
    """Heads ``first`` to ``first + heads`` of a full attention layer (all of them in one process)."""

    def __init__(self, first: int, heads: int) -> None:
        super().__init__()
        torch.manual_seed(1)
        full = nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, WIDTH)
        d = WIDTH // HEADS
        rows = torch.arange(first * d, (first + heads) * d)
        self.heads, self.d = heads, d
        qkv_w = full[0].weight.view(3, WIDTH, WIDTH)[:, rows].reshape(-1, WIDTH)
        qkv_b = full[0].bias.view(3, WIDTH)[:, rows].reshape(-1)
        self.qkv = nn.Linear(WIDTH, 3 * heads * d)
        self.out = nn.Linear(heads * d, WIDTH, bias=False)
        with torch.no_grad():
            self.qkv.weight.copy_(qkv_w)
            self.qkv.bias.copy_(qkv_b)
            self.out.weight.copy_(full[1].weight[:, rows])

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q, k, v = (t.view(b, n, self.heads, self.d).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, None, :], is_causal=False)
        partial = self.out(o.transpose(1, 2).reshape(b, n, -1))
        if dist.is_initialized():
            dist.all_reduce(partial)
        return partial


def main() -> None:
    out, mode = Path(sys.argv[1]), sys.argv[2]
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    ids, mask, tokens = batch()
    with torch.no_grad():
        if mode == "ddp":
            model = nn.parallel.DistributedDataParallel(bert())
            share = slice(rank * BATCH // world, (rank + 1) * BATCH // world)
            with attnviz.capture(model, tokens=tokens[share]) as cap:
                model(input_ids=ids[share], attention_mask=mask[share])
        else:
            torch.manual_seed(2)
            x = torch.randn(BATCH, LENGTH, WIDTH)
            layer = HeadParallelAttention(rank * HEADS // world, HEADS // world)
            with attnviz.capture(layer, tokens=tokens, sharding="heads") as cap:
                layer(x, mask.bool())
    cap.save(out / f"rank{rank}.attnviz-capture")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
