"""The streaming overview and exact tiles equal the same reductions of the full matrix."""

from __future__ import annotations

import itertools
import math
import threading
import warnings
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.engine import AttentionInputError, attend
from attnviz.engine import long as long_mod
from attnviz.engine.long import OverviewCancelled, overview, tile, weight_row
from attnviz.engine.mask_keywords import make_mask
from attnviz.engine.mask_mods import Causal, Documents, SlidingWindow

from .test_long_reference import MaskConfig, binned, plain_attention, plain_mask
from .test_mask_mods import mask_configs

#: The bounds against the float64 reference: absolute for the weights and what is made of them
#: (bins, tiles: values in 0..1), relative for quantities in units of scores or nats (row max,
#: log-normaliser, entropy up to ln 4096 = 8.3, column sums). Computed in float64 (float64
#: inputs, or dtype="float64"), everything meets 1e-6 by far. Computed in float32, the scores
#: carry float32 rounding (see attnviz.engine.long): weights, bins and tiles still meet 1e-6 for
#: scaled dot products of ordinary activations (what the tests draw for float32), the relative
#: quantities 5e-6; test_float32_error_follows_the_scores shows what larger scores do.
TOL = 1e-6
TOL_F32_RELATIVE = 5e-6


def inputs(n_q: int, n_k: int, d: int, dtype: torch.dtype, seed: int, spread: float = 1.0):
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(n_q, d, generator=g, dtype=torch.float64) * spread).to(dtype)
    k = (torch.randn(n_k, d, generator=g, dtype=torch.float64) * spread).to(dtype)
    return q, k


def check_against_reference(q, k, cfg: MaskConfig, bins, block_size=128, scale=None, tiles=(), dtypes=(None,)):
    """Every output of overview and tile, computed in each of ``dtypes``, against the plain
    float64 computation."""
    n_q, n_k = q.shape[0], k.shape[0]
    allowed = plain_mask(n_q, n_k, cfg)
    ref = plain_attention(q, k, allowed, 1 / math.sqrt(q.shape[1]) if scale is None else scale)
    in_bins: dict[tuple, torch.Tensor] = {}  # the same reference for every dtype

    def binned_ref(name: str, bh: int, bw: int, how: str) -> torch.Tensor:
        if (name, bh, bw, how) not in in_bins:
            source = (~allowed).double() if name == "masked" else ref[name]
            in_bins[name, bh, bw, how] = binned(source, bh, bw, how)
        return in_bins[name, bh, bw, how]

    for dtype in dtypes:
        ov = overview(q, k, bins=bins, block_size=block_size, scale=scale, dtype=dtype, **cfg.kwargs())
        in_float64 = dtype in (torch.float64, "float64") or q.dtype == torch.float64
        assert ov.stats.log2_max.dtype == (torch.float64 if in_float64 else torch.float32)
        absolute = dict(rtol=0, atol=TOL)
        relative = dict(rtol=TOL if in_float64 else TOL_F32_RELATIVE, atol=TOL)
        bh, bw = ov.bin_rows, ov.bin_cols
        assert bh == -(-n_q // bins[0]) and bw == -(-n_k // bins[1])
        torch.testing.assert_close(ov.mean, binned_ref("weights", bh, bw, "mean"), **absolute)
        torch.testing.assert_close(ov.max, binned_ref("weights", bh, bw, "max"), **absolute)
        torch.testing.assert_close(ov.masked_share, binned_ref("masked", bh, bw, "mean"), **absolute)
        torch.testing.assert_close(ov.column_sums, ref["column_sums"], **relative)
        torch.testing.assert_close(ov.entropy, ref["entropy"], **relative)
        stats = ov.stats
        torch.testing.assert_close(stats.allowed_keys, ref["allowed_keys"])
        torch.testing.assert_close(stats.empty_rows, ref["empty"])
        # -inf on empty rows on both sides; finite elsewhere.
        torch.testing.assert_close(stats.row_max, ref["row_max"], **relative)
        torch.testing.assert_close(stats.log_normalizer, ref["lse"], **relative)
        for rows, cols in tiles:
            t = tile(q, k, ov, rows, cols)
            torch.testing.assert_close(t.weights.double(), ref["weights"][rows, cols], **absolute)
            torch.testing.assert_close(t.allowed, allowed[rows, cols])
            # A float32 score is a sum of d float32 products: its rounding is absolute, about
            # 2^-24 times the sum of the products' magnitudes, not relative to the (possibly tiny)
            # score itself (see test_float32_error_follows_the_scores).
            score_tol = (
                relative
                if in_float64
                else dict(
                    rtol=TOL_F32_RELATIVE,
                    atol=max(
                        TOL, _score_rounding(q[rows], k[cols], 1 / math.sqrt(q.shape[1]) if scale is None else scale)
                    ),
                )
            )
            torch.testing.assert_close(t.scores.double(), ref["scores"][rows, cols], **score_tol)
        for name in ("mean", "max", "masked_share", "column_sums", "entropy"):
            assert not torch.isnan(getattr(ov, name)).any(), name
    return ov, ref


def _score_rounding(q: torch.Tensor, k: torch.Tensor, scale: float) -> float:
    """A bound on float32 rounding of the scaled scores of q and k (as in the test below)."""
    if q.numel() == 0 or k.numel() == 0:
        return 0.0
    return 8 * 2.0**-24 * float((q.double().abs() @ k.double().abs().T).max()) * abs(scale) * 1.5


SIZES = st.integers(1, 260)


@st.composite
def cases(draw, sizes=SIZES):
    n_q = draw(sizes)
    n_k = n_q if draw(st.booleans()) else draw(sizes)
    cfg = draw(mask_configs(n_q, n_k))
    d = draw(st.sampled_from([1, 3, 16, 64]))
    bins = (draw(st.integers(1, n_q + 3)), draw(st.integers(1, n_k + 3)))
    if draw(st.booleans()):
        bins = (1024, 1024)
    return n_q, n_k, cfg, d, bins


def region(data, n: int) -> slice:
    a = data.draw(st.integers(0, n - 1))
    return slice(a, data.draw(st.integers(a + 1, n)))


@settings(max_examples=60, deadline=None)
@given(
    cases(),
    st.sampled_from([torch.float64, torch.float32]),
    st.sampled_from([1, 5, 32, 128]),
    st.sampled_from([64, 1000, 1 << 21]),
    st.sampled_from([None, 1.0, 0.3]),
    st.integers(0, 2**31 - 1),
    st.data(),
)
@pytest.mark.slow
def test_overview_and_tiles_equal_the_full_matrix(case, dtype, block_size, block_elements, scale, seed, data):
    n_q, n_k, cfg, d, bins = case
    dtypes: tuple = (None,)
    if dtype == torch.float32:
        scale = None  # float32: scaled dot products of unit-variance activations (see TOL)
        dtypes = (None, torch.float64)
    q, k = inputs(n_q, n_k, d, dtype, seed)
    tiles = [(region(data, n_q), region(data, n_k)) for _ in range(2)]
    # Small blocks of rows: many blocks, growing and shrinking, on small inputs too.
    with mock.patch.object(long_mod, "BLOCK_ELEMENTS", block_elements):
        check_against_reference(q, k, cfg, bins, block_size, scale, tiles, dtypes)


@pytest.mark.slow
@settings(max_examples=3, deadline=None)
@given(cases(st.just(4096)), st.integers(0, 2**31 - 1), st.data())
def test_at_4096_tokens(case, seed, data):
    n_q, n_k, cfg, _, bins = case
    q, k = inputs(n_q, n_k, 64, torch.float32, seed)
    tiles = [(region(data, n_q), region(data, n_k))]
    check_against_reference(q, k, cfg, bins, tiles=tiles, dtypes=(None, "float64"))


@pytest.mark.parametrize(
    "cfg",
    [
        MaskConfig(causal="top_left", window=1024, attention_mask=(torch.arange(4096) < 3700).long()[None]),
        MaskConfig(
            documents=torch.sort(torch.randint(0, 9, (4096,), generator=torch.Generator().manual_seed(2))).values,
            doc_causal=True,
        ),
        MaskConfig(causal="bottom_right", mask_mod=("checker", 100)),
    ],
    ids=["window+padding", "documents", "mask_mod"],
)
@pytest.mark.slow
def test_typical_long_masks_at_4096_tokens(cfg):
    q, k = inputs(4096, 4096, 64, torch.float32, 7)
    n = 4096
    check_against_reference(
        q,
        k,
        cfg,
        (1024, 1024),
        tiles=[(slice(0, n), slice(n - 700, n)), (slice(1000, 2024), slice(0, 1024))],
        dtypes=(None, torch.float64),
    )


def test_float32_error_follows_the_scores():
    """float32 in, float32 out: a weight is off by about the float32 rounding of the scores, so
    unscaled scores of magnitude ~30 give errors of a few 1e-6, and float64 inputs remove it."""
    q, k = inputs(200, 200, 64, torch.float32, 11)
    ov = overview(q, k, scale=1.0, causal=True, bins=(200, 200))
    ref = plain_attention(q, k, plain_mask(200, 200, MaskConfig(causal="top_left")), 1.0)
    bound = 8 * 2.0**-24 * float((q.double().abs() @ k.double().abs().T).max()) * 1.5
    err = float((ov.mean - ref["weights"]).abs().max())
    assert 1e-7 < err < bound
    ov64 = overview(q.double(), k.double(), scale=1.0, causal=True, bins=(200, 200))
    assert float((ov64.mean - ref["weights"]).abs().max()) < 1e-12


def test_large_scores_in_float64():
    """Scores of several hundred: every row's softmax is nearly one-hot; nothing overflows."""
    q, k = inputs(300, 280, 16, torch.float64, 1, spread=12.0)
    check_against_reference(
        q, k, MaskConfig(causal="top_left", window=50), (64, 64), tiles=[(slice(0, 300), slice(0, 280))]
    )


def test_fully_masked_rows_are_zero_flagged_and_never_nan():
    n = 64
    lens = torch.full((1, n), 20)
    lens[0, 10:30] = 0  # rows 10..29 see no key at all
    q, k = inputs(n, n, 8, torch.float32, 5)
    cfg = MaskConfig(valid_lens=lens)
    ov, _ = check_against_reference(q, k, cfg, (16, 16), tiles=[(slice(0, n), slice(0, n))])
    empty = ov.stats.empty_rows
    assert empty[10:30].all() and empty.sum() == 20
    assert torch.isneginf(ov.stats.row_max[empty]).all() and torch.isneginf(ov.stats.log_normalizer[empty]).all()
    assert (ov.entropy[empty] == 0).all()
    assert (weight_row(q, k, ov, 15) == 0).all()
    # Everything masked: all rows empty, every bin 0 and fully masked.
    nothing = overview(q, k, bins=(8, 8), valid_lens=0)
    assert nothing.stats.empty_rows.all() and nothing.computed_cells == 0
    assert (nothing.mean == 0).all() and (nothing.max == 0).all() and (nothing.masked_share == 1).all()


def test_weight_row_is_the_tiles_row_and_sums_to_one():
    q, k = inputs(100, 90, 8, torch.float64, 2)
    ov = overview(q, k, causal="bottom_right", window=20)
    row = weight_row(q, k, ov, -1)
    torch.testing.assert_close(row, tile(q, k, ov, slice(99, 100)).weights[0])
    assert row.shape == (90,) and abs(float(row.sum()) - 1) < 1e-12
    assert (row[:70] == 0).all()  # the last query's window: keys 70..89


def test_a_sliding_window_skips_the_blocks_it_masks():
    n = 8192
    q, k = inputs(n, n, 16, torch.float32, 3)
    ov = overview(q, k, causal=True, window=512)
    # A band of 512 keys plus, per block of rows, about its height and a key block either side.
    assert ov.computed_cells < n * (512 + 2 * 128 + 2 * 256)
    causal = overview(q[:2048], k[:2048], causal=True)
    assert 2048 * 2048 / 2 < causal.computed_cells < 2048 * 2048 * 0.7  # the triangle, in blocks


def test_grouped_query_heads_and_batches_select_the_right_matrix():
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 4, 30, 8, generator=g)
    k = torch.randn(2, 2, 40, 8, generator=g)  # 2 key heads for 4 query heads
    am = torch.ones(2, 40, dtype=torch.long)
    am[1, 33:] = 0
    ov = overview(q, k, batch=1, head=3, attention_mask=am, bins=(30, 40))
    ref = overview(q[1, 3], k[1, 1], attention_mask=am[1], bins=(30, 40))
    torch.testing.assert_close(ov.mean, ref.mean)
    torch.testing.assert_close(ov.stats.log_normalizer, ref.stats.log_normalizer)
    torch.testing.assert_close(tile(q, k, ov).weights, tile(q[1, 3], k[1, 1], ref).weights)
    three_d = overview(q[:, 0], k[:, 0], batch=1, bins=(30, 40))
    torch.testing.assert_close(three_d.mean, overview(q[1, 0], k[1, 0], bins=(30, 40)).mean)
    as_numpy = overview(q[0, 0].numpy(), np.asarray(k[0, 0]), bins=(30, 40))
    torch.testing.assert_close(as_numpy.mean, overview(q[0, 0], k[0, 0], bins=(30, 40)).mean)


def test_small_inputs_agree_with_attend_in_strict_mode():
    g = torch.Generator().manual_seed(9)
    q, k, v = (torch.randn(1, n, 8, generator=g, dtype=torch.float64) for n in (50, 60, 60))
    vl = torch.randint(0, 61, (1, 50), generator=g)
    r = attend(q, k, v, vl, causal="bottom_right", mask_mode="strict")
    ov = overview(q[0], k[0], valid_lens=vl, causal="bottom_right", bins=(50, 60))
    torch.testing.assert_close(tile(q[0], k[0], ov).weights, r.weights[0], rtol=0, atol=1e-12)
    torch.testing.assert_close(ov.mean, r.weights[0], rtol=0, atol=1e-12)  # one cell per bin
    torch.testing.assert_close(ov.stats.empty_rows, r.diagnostics.empty_rows[0])


def test_progress_reports_every_block_and_stop_cancels_between_blocks():
    q, k = inputs(4000, 4000, 8, torch.float32, 4)
    seen: list[tuple[int, int]] = []
    with mock.patch.object(long_mod, "BLOCK_ELEMENTS", 1 << 16):
        overview(q, k, causal=True, progress=lambda done, total: seen.append((done, total)))
        assert len(seen) > 10 and seen[-1] == (4000, 4000)
        assert all(b[0] > a[0] for a, b in itertools.pairwise(seen))
        calls = []

        def stop() -> bool:
            calls.append(1)
            return len(calls) > 3

        with pytest.raises(OverviewCancelled):
            overview(q, k, causal=True, should_stop=stop)
        assert len(calls) == 4  # polled before each block; the fourth poll stopped it


def test_a_computation_in_another_thread_stops_when_asked():
    q, k = inputs(6000, 6000, 16, torch.float32, 6)
    stop = threading.Event()
    started = threading.Event()
    outcome: list[object] = []

    def work() -> None:
        try:
            overview(q, k, progress=lambda done, total: started.set(), should_stop=stop.is_set)
            outcome.append("finished")
        except OverviewCancelled:
            outcome.append("cancelled")

    thread = threading.Thread(target=work)
    thread.start()
    assert started.wait(30)
    stop.set()
    thread.join(30)
    assert outcome == ["cancelled"]


def test_bad_inputs_raise_clear_errors():
    q, k = inputs(10, 12, 4, torch.float32, 0)
    ov = overview(q, k)
    nan_q = q.clone()
    nan_q[3, 1] = math.nan
    cases = [
        (lambda: overview(q, k[:, :3]), "same feature size"),
        (lambda: overview(q[None], k), "both be"),
        (lambda: overview(q[None, None, None], k[None, None, None]), "both be"),
        (lambda: overview(q, k, batch=1), "batch must be an index below 1"),
        (lambda: overview(q[None], k[None], head=1), "head must be an index below 1"),
        (lambda: overview(torch.zeros(2, 3, 10, 4), torch.zeros(2, 2, 12, 4)), "multiple of the key heads"),
        (lambda: overview(torch.zeros(2, 10, 4), torch.zeros(3, 12, 4)), "batch sizes differ"),
        (lambda: overview(nan_q, k), r"queries contain NaN or Inf at \(3, 1\)"),
        (lambda: overview(q.bool(), k), "real numbers"),
        (lambda: overview("abc", k), "numeric"),
        (lambda: overview(torch.zeros(0, 4), k), "at least one row"),
        (lambda: overview(q, k, bins=(0, 4)), "bins"),
        (lambda: overview(q, k, bins=4), "bins must be"),
        (lambda: overview(q, k, scale=0.0), "scale"),
        (lambda: overview(q, k, block_size=0), "block_size"),
        (lambda: overview(q, k, dtype="float16"), "dtype"),
        (lambda: overview(q, k, window=-2), "window"),
        (lambda: overview(q, k, mask_mod=lambda b, h, qi, ki: qi), "bool tensor"),
        (lambda: tile(q, k, ov, slice(0, 20, 2)), "step 1"),
        (lambda: tile(q, k, ov, slice(5, 5)), "selects nothing"),
        (lambda: tile(q[:5], k, ov), "these row statistics"),
        (lambda: weight_row(q, k, ov, 10), "query must be a row index"),
    ]
    for build, words in cases:
        with pytest.raises(AttentionInputError, match=words):
            build()
    with mock.patch.object(long_mod, "MAX_TILE_CELLS", 50), pytest.raises(AttentionInputError, match="too large"):
        tile(q, k, ov)


def test_scores_that_overflow_float32_are_refused():
    q = torch.full((4, 2), 3e19)
    with pytest.raises(AttentionInputError, match="overflow"):
        overview(q, q.clone())


def test_results_are_display_sized_and_numpy_convertible():
    q, k = inputs(5000, 3000, 8, torch.float32, 8)
    ov = overview(q, k, bins=(1024, 1024), mask=SlidingWindow(64) & Causal())
    assert ov.mean.shape == ov.max.shape == ov.masked_share.shape == (1000, 1000)  # bins of 5 x 3 cells
    assert ov.row_edges()[-1] == 5000 and ov.col_edges()[-1] == 3000 and len(ov.row_edges()) == 1001
    for name in ("mean", "max", "masked_share", "column_sums", "entropy"):
        assert isinstance(getattr(ov, name).numpy(), np.ndarray)
    assert ov.seconds > 0


# --------------------------------------------------------------------------- FlexAttention parity


flex = pytest.importorskip("torch.nn.attention.flex_attention", reason="this torch has no FlexAttention")

FLEX_MASKS = {
    "window+padding": dict(causal=True, window=150, attention_mask=(torch.arange(640) < 600).long()),
    "sinks": dict(sinks=4, window=100),
    "documents": dict(
        mask=Documents(
            torch.sort(torch.randint(0, 6, (640,), generator=torch.Generator().manual_seed(5))).values, causal=True
        )
    ),
    "prefix": dict(prefix=200),
    "chunked": dict(chunk=96, causal=True),
    "mask_mod": dict(mask_mod=lambda b, h, q, kv: (q - kv).abs() % 5 != 1),
    "empty rows": dict(
        causal="bottom_right", window=64, valid_lens=torch.randint(0, 700, (1, 512), generator=torch.Generator())
    ),
}


def flex_run(q, k, v, mask_mod, compiled: bool):
    """FlexAttention on (1, 1, L, d) tensors; eager returns the lse too (compiled on CPU cannot)."""
    n_q, n_k = q.shape[0], k.shape[0]
    block_mask = flex.create_block_mask(mask_mod, 1, 1, n_q, n_k, device="cpu")
    args = (q[None, None], k[None, None], v[None, None])
    if compiled:
        return torch.compile(flex.flex_attention)(*args, block_mask=block_mask)[0, 0], None
    with warnings.catch_warnings():  # "called without torch.compile": the eager reference is what we want
        warnings.simplefilter("ignore")
        out, aux = flex.flex_attention(*args, block_mask=block_mask, return_aux=flex.AuxRequest(lse=True))
    return out[0, 0], aux.lse[0, 0]


@pytest.mark.parametrize("name", list(FLEX_MASKS))
def test_row_statistics_and_weights_equal_flex_attention(name):
    """FlexAttention (eager: its reference implementation) gives the same log-normaliser per row
    and, through the exact weights, the same output; fully masked rows give 0 and -inf there too."""
    kwargs = FLEX_MASKS[name]
    n_q = 512 if name == "empty rows" else 640
    g = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(n_q, 64, generator=g), torch.randn(640, 64, generator=g), torch.randn(640, 32, generator=g)
    ov = overview(q, k, **kwargs)
    out, lse = flex_run(q, k, v, make_mask(**kwargs).mask_mod(n_q, 640), compiled=False)
    torch.testing.assert_close(ov.stats.log_normalizer.float(), lse, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(tile(q, k, ov).weights @ v, out, rtol=1e-5, atol=1e-5)
    if name == "empty rows":
        assert ov.stats.empty_rows.any() and (out[ov.stats.empty_rows] == 0).all()


@pytest.mark.slow
def test_output_equals_compiled_flex_attention():
    """The fused kernel torch.compile makes of FlexAttention on the CPU (it cannot return the lse
    there, so the output is compared). Compiling takes tens of seconds."""
    pytest.importorskip("torch._inductor", reason="no inductor to compile FlexAttention with")
    from torch._inductor.cpu_vec_isa import pick_vec_isa

    if not pick_vec_isa():
        # PyTorch's own limit, not ours: inductor's FlexAttention template for the CPU calls
        # at::vec::transpose_block and pack_vnni2, which exist for a vector ISA only (a CPU
        # without AVX2, or ATEN_CPU_CAPABILITY=default: the C++ does not compile).
        pytest.skip("inductor has no vector ISA on this CPU: its FlexAttention template cannot compile")
    kwargs = FLEX_MASKS["window+padding"]
    g = torch.Generator().manual_seed(2)
    q, k, v = torch.randn(640, 64, generator=g), torch.randn(640, 64, generator=g), torch.randn(640, 64, generator=g)
    ov = overview(q, k, **kwargs)
    out, _ = flex_run(q, k, v, make_mask(**kwargs).mask_mod(640, 640), compiled=True)
    torch.testing.assert_close(tile(q, k, ov).weights @ v, out, rtol=1e-5, atol=1e-5)
