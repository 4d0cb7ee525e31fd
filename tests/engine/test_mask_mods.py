"""Mask descriptions: each equals its definition, composes by AND, and knows its block structure."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.engine import AttentionInputError
from attnviz.engine.mask_keywords import make_mask
from attnviz.engine.mask_mods import (
    EMPTY,
    FULL,
    PARTIAL,
    AllOf,
    Causal,
    Chunked,
    Documents,
    KeyPadding,
    MaskMod,
    PrefixLM,
    SinkWindow,
    SlidingWindow,
    ValidLength,
    runs,
)

from .test_long_reference import MASK_MODS, MaskConfig, plain_mask


@st.composite
def mask_configs(draw, n_q: int, n_k: int) -> MaskConfig:
    """A random combination of mask sources for an (n_q, n_k) matrix."""
    cfg = MaskConfig()
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    if draw(st.booleans()):
        cfg.causal = draw(st.sampled_from(["top_left", "bottom_right"]))
    if draw(st.booleans()):
        cfg.window = draw(st.integers(1, max(1, n_k + 2)))
        if draw(st.booleans()):
            cfg.sinks = draw(st.integers(0, 8))
            cfg.causal = None if cfg.causal == "bottom_right" else cfg.causal  # sinks are top-left
    if n_q == n_k and draw(st.integers(0, 3)) == 0:
        n_docs = draw(st.integers(1, 6))
        ids = torch.randint(0, n_docs, (n_k,), generator=g)
        cfg.documents = ids if draw(st.booleans()) else torch.sort(ids).values  # scattered or packed
        cfg.doc_causal = draw(st.booleans())
    if draw(st.integers(0, 4)) == 0:
        cfg.prefix = draw(st.integers(0, n_k))
    if draw(st.integers(0, 4)) == 0:
        cfg.chunk = draw(st.integers(1, max(1, n_k)))
    choice = draw(st.integers(0, 5))
    if choice == 1:
        cfg.valid_lens = draw(st.integers(0, n_k + 1))
    elif choice == 2:
        cfg.valid_lens = torch.randint(0, n_k + 2, (1, n_q), generator=g)
    elif choice == 3:
        cfg.key_padding_mask = torch.rand(1, n_k, generator=g) < 0.2
    elif choice == 4:
        am = torch.ones(1, n_k, dtype=torch.long)
        am[0, draw(st.integers(0, n_k)) :] = 0  # right padding, as tokenizers make it
        cfg.attention_mask = am
    if draw(st.integers(0, 3)) == 0:
        cfg.mask_mod = (draw(st.sampled_from(sorted(MASK_MODS))), draw(st.integers(0, 40)))
    return cfg


@st.composite
def masks_with_sizes(draw, max_size: int = 300):
    n_q = draw(st.integers(1, max_size))
    n_k = n_q if draw(st.booleans()) else draw(st.integers(1, max_size))
    return n_q, n_k, draw(mask_configs(n_q, n_k))


def reference_states(allowed: torch.Tensor, bq: int, bk: int) -> torch.Tensor:
    n_q, n_k = allowed.shape
    states = torch.empty(-(-n_q // bq), -(-n_k // bk), dtype=torch.uint8)
    for i in range(states.shape[0]):
        for j in range(states.shape[1]):
            cell = allowed[i * bq : (i + 1) * bq, j * bk : (j + 1) * bk]
            states[i, j] = FULL if cell.all() else PARTIAL if cell.any() else EMPTY
    return states


# --------------------------------------------------------------------------- definitions


@settings(max_examples=150, deadline=None)
@given(masks_with_sizes())
def test_every_combination_equals_its_definition(case):
    n_q, n_k, cfg = case
    mask = make_mask(**cfg.kwargs())
    torch.testing.assert_close(mask.dense(n_q, n_k), plain_mask(n_q, n_k, cfg))


@settings(max_examples=60, deadline=None)
@given(masks_with_sizes(), st.data())
def test_any_region_equals_that_region_of_the_whole_mask(case, data):
    n_q, n_k, cfg = case
    r0 = data.draw(st.integers(0, n_q - 1))
    r1 = data.draw(st.integers(r0 + 1, n_q))
    c0 = data.draw(st.integers(0, n_k - 1))
    c1 = data.draw(st.integers(c0 + 1, n_k))
    mask = make_mask(**cfg.kwargs())
    torch.testing.assert_close(
        mask.allowed(n_q, n_k, slice(r0, r1), slice(c0, c1)), plain_mask(n_q, n_k, cfg)[r0:r1, c0:c1]
    )


def test_the_descriptions_as_documented():
    def dense(mask, n_q=6, n_k=6):
        return mask.dense(n_q, n_k).int().tolist()

    assert dense(Causal()) == torch.ones(6, 6).tril().int().tolist()
    # bottom_right: the last query lines up with the last key.
    assert Causal("bottom_right").dense(2, 4).int().tolist() == [[1, 1, 1, 0], [1, 1, 1, 1]]
    assert SlidingWindow(2, causal=True).dense(4, 4).int().tolist() == [
        [1, 0, 0, 0],
        [1, 1, 0, 0],
        [0, 1, 1, 0],
        [0, 0, 1, 1],
    ]
    assert SlidingWindow(2).dense(4, 4).int().tolist() == [[1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1], [0, 0, 1, 1]]
    assert SinkWindow(sinks=1, window=2).dense(5, 5).int().tolist() == [
        [1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 1, 1, 0, 0],
        [1, 0, 1, 1, 0],
        [1, 0, 0, 1, 1],
    ]
    assert PrefixLM(2).dense(4, 4).int().tolist() == [[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    assert Chunked(2).dense(4, 4).int().tolist() == [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]
    assert Chunked(2, causal=True).dense(4, 4).int().tolist() == [
        [1, 0, 0, 0],
        [1, 1, 0, 0],
        [0, 0, 1, 0],
        [0, 0, 1, 1],
    ]
    assert Documents(torch.tensor([0, 0, 1, 1]), causal=True).dense(4, 4).int().tolist() == [
        [1, 0, 0, 0],
        [1, 1, 0, 0],
        [0, 0, 1, 0],
        [0, 0, 1, 1],
    ]
    assert ValidLength(2).dense(2, 4).int().tolist() == [[1, 1, 0, 0], [1, 1, 0, 0]]
    assert KeyPadding.from_attention_mask([1, 1, 0]).dense(1, 3).int().tolist() == [[1, 1, 0]]
    assert KeyPadding.from_key_padding_mask(torch.tensor([False, True, False])).dense(1, 3).int().tolist() == [
        [1, 0, 1]
    ]
    assert dense(AllOf(())) == torch.ones(6, 6).int().tolist()


def test_and_composes_and_flattens():
    both = SlidingWindow(3) & Causal() & ValidLength(4)
    assert isinstance(both, AllOf) and len(both.parts) == 3
    expected = SlidingWindow(3, causal=True).dense(6, 6) & (torch.arange(6) < 4)[None, :]
    torch.testing.assert_close(both.dense(6, 6), expected)


def test_documents_with_separate_query_ids_and_scattered_ids():
    kid = torch.tensor([5, 5, 7, 7, 7])
    qid = torch.tensor([7, 9, 5])
    mask = Documents(kid, query_ids=qid).dense(3, 5)
    assert mask.int().tolist() == [[0, 0, 1, 1, 1], [0, 0, 0, 0, 0], [1, 1, 0, 0, 0]]
    scattered = torch.tensor([0, 1, 0, 1])
    assert Documents(scattered).dense(4, 4).int().tolist() == [[1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1]]
    assert Documents(scattered).bind(4, 4).has_predicates  # scattered ids: a predicate
    assert not Documents(torch.tensor([0, 0, 1, 1])).bind(4, 4).has_predicates  # packed: ranges


def test_per_batch_sources_pick_the_batch_element():
    lens = torch.tensor([1, 3])
    assert ValidLength(lens).dense(1, 4, batch=1).int().tolist() == [[1, 1, 1, 0]]
    per_query = torch.tensor([[1, 2], [3, 4]])
    assert ValidLength(per_query).dense(2, 4, batch=1).int().tolist() == [[1, 1, 1, 0], [1, 1, 1, 1]]
    am = torch.tensor([[1, 0, 0], [1, 1, 0]])
    assert KeyPadding.from_attention_mask(am).dense(1, 3, batch=1).int().tolist() == [[1, 1, 0]]
    docs = torch.tensor([[0, 0, 1], [0, 1, 1]])
    assert Documents(docs).dense(3, 3, batch=1).int().tolist() == [[1, 0, 0], [0, 1, 1], [0, 1, 1]]


def test_mask_mod_gets_flex_attention_arguments():
    seen = {}

    def mod(b, h, q_idx, kv_idx):
        seen.update(b=b, h=h, q=q_idx.shape, kv=kv_idx.shape)
        return (q_idx + kv_idx + b + h) % 2 == 0

    out = MaskMod(mod).allowed(5, 7, slice(1, 4), slice(2, 7), batch=3, head=1)
    assert seen["b"].dim() == 0 and int(seen["b"]) == 3 and int(seen["h"]) == 1
    assert seen["q"] == (3, 1) and seen["kv"] == (1, 5)
    q, kv = torch.arange(1, 4)[:, None], torch.arange(2, 7)[None, :]
    torch.testing.assert_close(out, (q + kv + 4) % 2 == 0)
    # A predicate may return any shape that broadcasts: here one value per key.
    torch.testing.assert_close(MaskMod(lambda b, h, q, kv: kv < 2).dense(2, 3), torch.tensor([[True, True, False]] * 2))


def test_bad_descriptions_raise_clear_errors():
    cases = [
        (lambda: SlidingWindow(0), "window"),
        (lambda: SlidingWindow(3, align="middle"), "causal"),
        (lambda: Chunked(-1), "chunk"),
        (lambda: PrefixLM(1.5), "prefix"),
        (lambda: make_mask(sinks=4), "sinks need a window"),
        (lambda: make_mask(causal="sideways"), "causal"),
        (lambda: MaskMod(3), "mask_mod must be a function"),
        (lambda: MaskMod(lambda b, h, q, kv: q - kv).dense(3, 3), "bool tensor"),
        (lambda: MaskMod(lambda b, h, q, kv: q.foo).dense(3, 3), "mask_mod failed: AttributeError"),
        (lambda: MaskMod(lambda b, h, q, kv: torch.ones(2, 2, 2, dtype=torch.bool)).dense(3, 3), "shape"),
        (lambda: Documents(torch.tensor([0, 1])).dense(3, 3), "documents"),
        (lambda: Documents(torch.tensor([0, 1, 1])).dense(2, 3), "query_ids"),
        (lambda: Documents(torch.tensor([0.5, 1.0])).dense(2, 2), "whole numbers"),
        (lambda: KeyPadding.from_attention_mask([1, 2]), r"0 \(padding\) and 1"),
        (lambda: KeyPadding.from_key_padding_mask([1, 0]), "boolean"),
        (
            lambda: KeyPadding.from_attention_mask(torch.ones(1, 1, 3, 3)).dense(3, 3),
            r"attention_mask must have shape \(3,\) or \(batch, 3\)",
        ),
        (lambda: ValidLength(torch.tensor([1, 2])).dense(1, 3, batch=2), "batch 2"),
        (lambda: ValidLength(-1).dense(1, 3), ">= 0"),
        (lambda: Causal().dense(1 << 14, 1 << 14), "too large"),
        (lambda: Causal().allowed(4, 4, slice(0, 4, 2)), "step 1"),
        (lambda: Causal().allowed(4, 4, slice(3, 1)), "selects nothing"),
        (lambda: Causal().block_structure(4, 4, 0), "block_size"),
        (lambda: Causal().bind(0, 4), "n_q"),
        (lambda: AllOf((Causal(), "causal")), "Mask descriptions only"),
    ]
    for build, words in cases:
        with pytest.raises(AttentionInputError, match=words):
            build()


# --------------------------------------------------------------------------- block structure


@settings(max_examples=80, deadline=None)
@given(masks_with_sizes(200), st.integers(1, 70), st.integers(1, 70))
def test_block_structure_is_exact(case, bq, bk):
    n_q, n_k, cfg = case
    structure = make_mask(**cfg.kwargs()).block_structure(n_q, n_k, (bq, bk))
    expected = reference_states(plain_mask(n_q, n_k, cfg), bq, bk)
    torch.testing.assert_close(structure.states, expected)
    assert structure.count(EMPTY) + structure.count(PARTIAL) + structure.count(FULL) == expected.numel()
    assert structure.sparsity == (expected == EMPTY).sum().item() / expected.numel()


@settings(max_examples=120, deadline=None)
@given(masks_with_sizes(260), st.integers(1, 64), st.data())
def test_row_block_classes_never_miss_an_allowed_or_masked_cell(case, block, data):
    """What the overview relies on: 'some' covers every allowed cell, 'full' never claims a
    masked cell (exact with one range per row), and the masked columns cover every masked cell
    of the blocks it computes."""
    n_q, n_k, cfg = case
    align = data.draw(st.sampled_from([1, 2, 3]))
    block *= align  # the overview's key blocks are whole multiples of the bin width
    r0 = data.draw(st.integers(0, n_q - 1))
    r1 = data.draw(st.integers(r0 + 1, n_q))
    allowed = plain_mask(n_q, n_k, cfg)[r0:r1]
    rb = make_mask(**cfg.kwargs()).bind(n_q, n_k).row_block(r0, r1, block)
    n_k_pad = -(-n_k // align) * align
    for j in range(rb.n_blocks):
        cells = allowed[:, j * block : (j + 1) * block]
        assert not cells.any() or bool(rb.some[j])
        assert not bool(rb.full[j]) or bool(cells.all())
        if rb.ivs is None or len(rb.ivs) == 1:
            assert bool(rb.full[j]) == bool(cells.all())
    for j0, j1 in runs(rb.some):
        c0, c1 = j0 * block, min(j1 * block, n_k_pad)
        covered = torch.zeros(c1 - c0, dtype=torch.bool)
        for a, b in rb.masked_columns(c0, c1, align):
            assert a % align == 0 and b % align == 0 and c0 <= a < b <= c1
            covered[a - c0 : b - c0] = True
            torch.testing.assert_close(rb.masked(a, b)[:, : max(0, min(b, n_k) - a)], ~allowed[:, a : min(b, n_k)])
        real = allowed[:, c0 : min(c1, n_k)]
        assert real[:, ~covered[: real.shape[1]]].all(), "a masked cell outside the masked columns"
        assert covered[n_k - c0 :].all(), "the padding keys must be masked"


def test_sliding_window_needs_only_two_strips_per_block():
    """Why a window is cheap: inside a band only its two edges are masked."""
    rb = SlidingWindow(4096, causal=True).bind(32768, 32768).row_block(10000, 10256, 128)
    blocks = runs(rb.some)
    assert len(blocks) == 1
    c0, c1 = blocks[0][0] * 128, blocks[0][1] * 128
    assert c1 - c0 <= 4096 + 256 + 2 * 128
    strips = rb.masked_columns(c0, c1, 32)
    assert len(strips) == 2 and sum(b - a for a, b in strips) <= 2 * (256 + 128)
    structure = SlidingWindow(4096, causal=True).block_structure(32768, 32768)
    assert 0.85 < structure.sparsity < 0.9  # about 1 - 4096 / 32768 of the blocks are skipped


# --------------------------------------------------------------------------- FlexAttention


flex = pytest.importorskip("torch.nn.attention.flex_attention", reason="this torch has no FlexAttention")


def flex_states(mask_mod, n_q: int, n_k: int) -> torch.Tensor:
    bm = flex.create_block_mask(mask_mod, 1, 1, n_q, n_k, device="cpu")
    states = torch.zeros(bm.kv_num_blocks.shape[-1], -(-n_k // 128), dtype=torch.uint8)
    for i in range(states.shape[0]):
        states[i, bm.kv_indices[0, 0, i, : bm.kv_num_blocks[0, 0, i]].long()] = PARTIAL
        if bm.full_kv_num_blocks is not None:
            states[i, bm.full_kv_indices[0, 0, i, : bm.full_kv_num_blocks[0, 0, i]].long()] = FULL
    return states


FLEX_CASES = [
    ("sliding window + causal", make_mask(causal=True, window=200)),
    ("sinks + window", SinkWindow(sinks=4, window=150)),
    (
        "documents, causal",
        Documents(
            torch.sort(torch.randint(0, 5, (640,), generator=torch.Generator().manual_seed(1))).values, causal=True
        ),
    ),
    ("prefix-LM", PrefixLM(300)),
    ("chunked", Chunked(192, causal=True)),
    ("padding", make_mask(causal=True, attention_mask=(torch.arange(640) < 500).long())),
    ("mask_mod", MaskMod(MASK_MODS["checker"](63))),
]


@pytest.mark.parametrize("name, mask", FLEX_CASES, ids=[c[0] for c in FLEX_CASES])
def test_block_structure_equals_flex_attentions_block_mask(name, mask):
    n = 640  # a multiple of FlexAttention's 128: no padded edge blocks (see BlockStructure)
    ours = mask.block_structure(n, n).states
    torch.testing.assert_close(ours, flex_states(mask.mask_mod(n, n), n, n))


def test_edge_blocks_differ_from_flex_only_by_its_padding():
    """FlexAttention pads to whole blocks and counts the padding as masked, so its edge blocks
    are never full; ours describe the real cells. The interior agrees."""
    n = 300
    mask = make_mask(causal=True, window=200)
    ours = mask.block_structure(n, n).states
    theirs = flex_states(mask.mask_mod(n, n), n, n)
    torch.testing.assert_close(ours[:-1, :-1], theirs[:-1, :-1])
    assert ((theirs[-1] == FULL) | (theirs[:, -1] == FULL)).sum() == 0
    assert (ours == FULL).sum() > (theirs == FULL).sum()


def test_predicates_are_evaluated_a_few_columns_at_a_time(monkeypatch):
    from attnviz.engine import mask_mods

    monkeypatch.setattr(mask_mods, "_PREDICATE_CELLS", 64)  # forces many column chunks
    cfg = MaskConfig(mask_mod=("checker", 6), causal="top_left")
    mask = make_mask(**cfg.kwargs())
    expected = plain_mask(90, 130, cfg)
    torch.testing.assert_close(mask.block_structure(90, 130, (16, 8)).states, reference_states(expected, 16, 8))
    rb = mask.bind(90, 130).row_block(10, 50, 8)
    torch.testing.assert_close(rb.allowed(0, 130), expected[10:50])
