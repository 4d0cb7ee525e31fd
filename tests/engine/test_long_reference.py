"""Plain references for the long-context tests: masks from their definitions, attention from the
full matrix in float64. Written independently of attnviz.engine.mask_mods and long on purpose;
the tests at the bottom check the reference itself against ``attend`` (the book's engine)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

#: FlexAttention-style predicates (b, h, q_idx, kv_idx) -> bool, by name, with one parameter.
MASK_MODS = {
    "band": lambda p: lambda b, h, q, kv: (q - kv).abs() <= p,
    "stride": lambda p: lambda b, h, q, kv: (q % (p + 1)) == (kv % (p + 1)),
    "double_causal": lambda p: lambda b, h, q, kv: kv <= 2 * q + p,
    "checker": lambda p: lambda b, h, q, kv: (q // (p + 1) + kv // (p + 1)) % 2 == 0,
}


@dataclass
class MaskConfig:
    """One combination of mask sources, as ``overview``'s keyword arguments describe them."""

    causal: str | None = None
    window: int | None = None
    sinks: int | None = None
    documents: torch.Tensor | None = None  # (n,) ids, L_q == L_k
    doc_causal: bool = False
    prefix: int | None = None
    chunk: int | None = None
    valid_lens: object = None  # int or (1, n_q) tensor
    key_padding_mask: torch.Tensor | None = None  # (1, n_k) bool, True = ignore
    attention_mask: torch.Tensor | None = None  # (1, n_k) 0/1, 1 = attend
    mask_mod: tuple[str, int] | None = None
    extra: dict = field(default_factory=dict)

    def kwargs(self) -> dict:
        """Keyword arguments for ``overview`` / ``make_mask``."""
        out: dict = {}
        for name in (
            "causal",
            "window",
            "sinks",
            "prefix",
            "chunk",
            "valid_lens",
            "key_padding_mask",
            "attention_mask",
        ):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.documents is not None:
            from attnviz.engine.mask_mods import Documents

            out["mask"] = Documents(self.documents, causal=self.doc_causal)
        if self.mask_mod is not None:
            out["mask_mod"] = MASK_MODS[self.mask_mod[0]](self.mask_mod[1])
        return out


def plain_mask(n_q: int, n_k: int, cfg: MaskConfig) -> torch.Tensor:
    """(n_q, n_k) bool, True = attend, straight from each source's definition."""
    q = torch.arange(n_q)[:, None]
    k = torch.arange(n_k)[None, :]
    allowed = torch.ones(n_q, n_k, dtype=torch.bool)
    off = n_k - n_q if cfg.causal == "bottom_right" else 0
    p = q + off  # the query's position, aligned as the causal mask is
    if cfg.causal is not None:
        allowed &= k <= p
    if cfg.window is not None:
        if cfg.sinks is not None:
            allowed &= ((p - k >= 0) & (p - k < cfg.window)) | ((k < cfg.sinks) & (k <= q))
        else:
            allowed &= (p - k).abs() < cfg.window
    if cfg.documents is not None:
        d = cfg.documents
        allowed &= d[:, None] == d[None, :]
        if cfg.doc_causal:
            allowed &= k <= q
    if cfg.prefix is not None:
        allowed &= (k < cfg.prefix) | (k <= q)
    if cfg.chunk is not None:
        allowed &= (q // cfg.chunk) == (k // cfg.chunk)
    if cfg.valid_lens is not None:
        vl = cfg.valid_lens
        lens = torch.full((n_q, 1), vl) if isinstance(vl, int) else torch.as_tensor(vl)[0][:, None]
        allowed &= k < lens
    if cfg.key_padding_mask is not None:
        allowed &= ~cfg.key_padding_mask[0][None, :]
    if cfg.attention_mask is not None:
        allowed &= cfg.attention_mask[0][None, :] == 1
    if cfg.mask_mod is not None:
        fn = MASK_MODS[cfg.mask_mod[0]](cfg.mask_mod[1])
        allowed &= fn(torch.tensor(0), torch.tensor(0), q, k)
    return allowed


def plain_attention(q: torch.Tensor, k: torch.Tensor, allowed: torch.Tensor, scale: float) -> dict[str, torch.Tensor]:
    """Weights and their reductions from the full (n_q, n_k) matrix, float64; empty rows zero."""
    s = (q.double() @ k.double().T) * scale
    empty = ~allowed.any(1)
    masked = s.masked_fill(~allowed, -math.inf)
    lse = torch.logsumexp(masked, 1)  # -inf on empty rows
    w = torch.exp(masked - lse.masked_fill(empty, 0.0)[:, None]).masked_fill(~allowed, 0.0)
    return {
        "scores": s,
        "weights": w,
        "row_max": masked.amax(1),
        "lse": lse,
        "entropy": -torch.xlogy(w, w).sum(1),
        "column_sums": w.sum(0),
        "allowed_keys": allowed.sum(1),
        "empty": empty,
    }


def binned(x: torch.Tensor, bh: int, bw: int, how: str) -> torch.Tensor:
    """x reduced over bins of bh x bw cells (the last ones may be smaller): "mean" or "max"."""
    n_q, n_k = x.shape
    rb, cb = -(-n_q // bh), -(-n_k // bw)
    if (rb * bh, cb * bw) == (n_q, n_k):  # whole bins: no padded copy (128 MiB at 4096 x 4096)
        padded = x.double()
    else:
        padded = torch.zeros(rb * bh, cb * bw, dtype=torch.float64)
        padded[:n_q, :n_k] = x.double()  # zero padding: weights are >= 0, so the max is unchanged
    blocks = padded.reshape(rb, bh, cb, bw)
    if how == "max":
        return blocks.amax((1, 3))
    rows = torch.tensor([min(bh, n_q - i * bh) for i in range(rb)], dtype=torch.float64)
    cols = torch.tensor([min(bw, n_k - j * bw) for j in range(cb)], dtype=torch.float64)
    return blocks.sum((1, 3)) / (rows[:, None] * cols[None, :])


# --------------------------------------------------------------------------- the reference itself


def test_plain_attention_matches_attend_in_strict_mode():
    from attnviz.engine import attend

    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, n, 8, generator=g, dtype=torch.float64) for n in (37, 41, 41))
    cfg = MaskConfig(causal="bottom_right", valid_lens=torch.randint(0, 42, (1, 37), generator=g))
    allowed = plain_mask(37, 41, cfg)
    ref = plain_attention(q[0], k[0], allowed, 1 / math.sqrt(8))
    r = attend(q, k, v, cfg.valid_lens, causal="bottom_right", mask_mode="strict")
    torch.testing.assert_close(r.mask[0], allowed)
    torch.testing.assert_close(r.weights[0], ref["weights"], rtol=0, atol=1e-12)
    torch.testing.assert_close(r.diagnostics.empty_rows[0], ref["empty"])


def test_plain_mask_of_an_explicit_attn_mask_is_what_attend_applies():
    from attnviz.engine import attend

    g = torch.Generator().manual_seed(4)
    n = 30
    docs = torch.sort(torch.randint(0, 4, (n,), generator=g)).values
    cfg = MaskConfig(causal="top_left", window=5, documents=docs)
    allowed = plain_mask(n, n, cfg)
    q, k, v = (torch.randn(1, n, 4, generator=g, dtype=torch.float64) for _ in range(3))
    r = attend(q, k, v, attn_mask=allowed, mask_mode="strict")
    ref = plain_attention(q[0], k[0], allowed, 0.5)
    torch.testing.assert_close(r.weights[0], ref["weights"], rtol=0, atol=1e-12)


def test_binned_reduces_ragged_edges_over_real_cells_only():
    x = torch.arange(35, dtype=torch.float64).view(5, 7)
    mean = binned(x, 2, 3, "mean")
    assert mean.shape == (3, 3)
    assert mean[2, 2] == x[4, 6]  # a 1 x 1 corner bin
    assert mean[0, 0] == x[:2, :3].mean()
    assert binned(x, 2, 3, "max")[2, 1] == x[4, 3:6].max()
