"""A model's tensor files: heads, layers, GQA, masks under the names code uses, causality, scale and
tokens in each format; the rules that never guess, and the one-line refusals."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.lib.format as npformat
import pytest
import torch

from attnviz.compute.attention import run_state
from attnviz.io import TensorFile, guess_roles, load_tensor_file, save_arrays
from attnviz.io._limits import MAX_STORED_TEXT_CHARS
from attnviz.io.session_state import load_state_file, save_state_file
from attnviz.io.tensor_import import NO_SETTINGS_NOTE, StateFileError, state_from_tensor_file, tensor_file_focus
from attnviz.teaching.presets import DEFAULT_PRESET, PRESETS
from tests.io.memory_probe import probe

BASE = PRESETS[DEFAULT_PRESET].build()
RNG = np.random.default_rng(11)


def tensors(
    b: int = 2, h: int = 4, n_q: int = 5, n_k: int = 5, d: int = 8, h_kv: int | None = None, layers: int | None = None
) -> dict[str, np.ndarray]:
    lead = (b,) if layers is None else (layers, b)
    kv = h if h_kv is None else h_kv
    return {
        "q": RNG.standard_normal((*lead, h, n_q, d)).astype(np.float32),
        "k": RNG.standard_normal((*lead, kv, n_k, d)).astype(np.float32),
        "v": RNG.standard_normal((*lead, kv, n_k, 3)).astype(np.float32),
    }


def reference(
    q: np.ndarray, k: np.ndarray, allowed: np.ndarray | None = None, scale: float | None = None
) -> np.ndarray:
    """softmax(q k^T * scale) over the allowed keys, in float64 (rows with none: zeros, as SDPA)."""
    scores = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2)
    scores *= 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0))
    total = e.sum(-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def load(
    tf: TensorFile,
    head: int | None = None,
    layer: int | None = None,
    roles: dict[str, str] | None = None,
    notes: list[str] | None = None,
) -> Any:
    return state_from_tensor_file(tf, guess_roles(tf) if roles is None else roles, head, BASE, layer=layer, notes=notes)


def weights(state: Any, focus: tuple[int, int] = (0, 0)) -> np.ndarray:
    outcome = run_state(state, 0, focus)
    assert outcome.error is None and outcome.view is not None, outcome.error
    return outcome.view.weights


def file_of(tmp_path: Path, **arrays: Any) -> TensorFile:
    return TensorFile(
        tmp_path / "model.npz",
        "npz",
        {k: v for k, v in arrays.items() if k not in ("texts",)},
        texts=arrays.get("texts", {}),
    )


def refused_state(tf: TensorFile, *needles: str, roles: dict[str, str] | None = None) -> str:
    with pytest.raises(StateFileError) as info:
        load(tf, roles=roles)
    text = str(info.value)
    assert "\n" not in text and text.startswith(f"{tf.path.name}: "), text
    for needle in needles:
        assert needle in text, f"{needle!r} not in {text!r}"
    return text


# ------------------------------------------------------------------------------------- heads


def test_heads_layers_and_grouped_query_attention(tmp_path: Path) -> None:
    arrays = tensors(h=4, h_kv=2, layers=3)
    tf = file_of(tmp_path, **arrays)
    notes: list[str] = []
    state = load(tf, notes=notes)
    assert state.run.layers == 3 and state.run.heads(2) == 4
    assert "the file has 3 layers: layer 0 is shown" in notes and "the file has 4 heads: head 0 is shown" in notes
    assert NO_SETTINGS_NOTE in notes
    for layer in range(3):
        for head in range(4):
            # Consecutive query heads share a key/value head, as SDPA's enable_gqa.
            expected = reference(arrays["q"][layer][:, head], arrays["k"][layer][:, head // 2])
            np.testing.assert_allclose(weights(state, (layer, head)), expected, atol=1e-6)
    chosen = load(tf, head=3, layer=2)
    focus = tensor_file_focus(chosen, 2, 3)
    assert focus == (2, 3)
    np.testing.assert_array_equal(chosen.head_view(focus).keys, arrays["k"][2][:, 1])


@pytest.mark.parametrize(
    ("arrays", "needles"),
    [
        (
            {"q": np.zeros((2, 4, 5, 8)), "k": np.zeros((2, 3, 5, 8)), "v": np.zeros((2, 3, 5, 8))},
            ["the heads of queries (2, 4, 5, 8), keys (2, 3, 5, 8) and values (2, 3, 5, 8) do not fit together"],
        ),
        (
            {"q": np.zeros((3, 2, 4, 5, 8)), "k": np.zeros((2, 2, 4, 5, 8)), "v": np.zeros((2, 2, 4, 5, 8))},
            ["disagree on the number of layers"],
        ),
        (
            {"q": np.zeros((2, 4, 5, 8)), "k": np.zeros((2, 5, 8)), "v": np.zeros((2, 5, 8))},
            ["must all be (batch, heads, n, d) or all (layers, batch, heads, n, d)"],
        ),
        (
            {"q": np.zeros((2, 4, 5, 8)), "k": np.zeros((2, 4, 6, 8)), "v": np.zeros((2, 4, 5, 8))},
            ["the length of queries"],
        ),
    ],
)
def test_tensors_that_do_not_make_a_model_are_refused_in_one_line(
    tmp_path: Path, arrays: dict[str, np.ndarray], needles: list[str]
) -> None:
    refused_state(file_of(tmp_path, **arrays), *needles)


# ------------------------------------------------------------------------------------- masks


def test_every_mask_form_means_what_its_name_says(tmp_path: Path) -> None:
    arrays = tensors(b=2, h=3, n_q=4, n_k=6)
    keep = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]], bool)  # (B, L_k): True = attend
    expected = [reference(arrays["q"][:, h], arrays["k"][:, h], keep[:, None, :]) for h in range(3)]
    forms: dict[str, np.ndarray] = {
        "attention_mask": keep.astype(np.int64),
        "key_padding_mask": ~keep,
        "src_key_padding_mask": ~keep,
        "attn_mask": keep[:, None, None, :],
        "mask": keep[:, None, None, :],  # bool: SDPA's attn_mask
    }
    for name, mask in {**forms, "float key_padding_mask": np.where(keep, 0.0, -np.inf)}.items():
        array_name = name.split()[-1]
        notes: list[str] = []
        state = load(file_of(tmp_path, **arrays, **{array_name: mask}), notes=notes)
        for h in range(3):
            np.testing.assert_allclose(weights(state, (0, h)), expected[h], atol=1e-6, err_msg=name)
        if name == "mask":
            assert any("'mask' is read as SDPA's attn_mask: True = attend" in n for n in notes)
    # Whole numbers under the ambiguous name: Hugging Face's 0/1, said in a note.
    notes = []
    state = load(file_of(tmp_path, **arrays, mask=keep.astype(np.int32)), notes=notes)
    masks = state.head_view().masks
    assert masks is not None and masks.attention_mask is not None
    assert "'mask' holds whole numbers: read as Hugging Face's attention_mask, 1 = attend" in notes
    np.testing.assert_allclose(weights(state), expected[0], atol=1e-6)


def test_masks_per_head_per_layer_and_of_the_square_shape(tmp_path: Path) -> None:
    arrays = tensors(b=2, h=2, n_q=5, n_k=5, layers=2)
    per_head = RNG.random((2, 2, 5, 5)) > 0.3  # (B, H, L, L)
    per_head[..., 0] = True  # every row keeps a key
    per_layer = np.stack([per_head, ~per_head | np.eye(5, dtype=bool)])  # (layers, B, H, L, L)
    square = np.tril(np.ones((5, 5), bool))
    for name, mask, allowed in (
        ("attn_mask", per_layer, lambda lay, h: per_layer[lay][:, h]),
        ("attn_mask", per_head, lambda lay, h: per_head[:, h]),
        ("attn_mask", square, lambda lay, h: square),
    ):
        state = load(file_of(tmp_path, **arrays, **{name: mask}))
        for layer in range(2):
            for head in range(2):
                expected = reference(arrays["q"][layer][:, head], arrays["k"][layer][:, head], allowed(layer, head))
                np.testing.assert_allclose(
                    weights(state, (layer, head)), expected, atol=1e-6, err_msg=f"{mask.shape} {layer} {head}"
                )


def test_a_book_file_with_masks_and_tokens_keeps_its_3d_tensors(tmp_path: Path) -> None:
    q, k, v = (RNG.standard_normal(shape).astype(np.float32) for shape in ((2, 3, 4), (2, 6, 4), (2, 6, 2)))
    keep = np.array([[1] * 6, [1] * 2 + [0] * 4], bool)
    tf = file_of(
        tmp_path,
        q=q,
        k=k,
        v=v,
        attn_mask=keep[:, None, None, :],  # (B, 1, 1, L_k) from a model
        texts={"key_tokens": np.array(list("abcdef"))},
    )
    notes: list[str] = []
    state = load(tf, notes=notes)
    head = state.head_view()
    assert state.run.single_head and head.masks is not None and head.masks.attn_mask.shape == (2, 1, 6)
    assert state.settings.scoring == "scaled_dot" and state.settings.mask_mode == "sdpa"
    assert head.key_tokens.tolist() == [list("abcdef")] * 2 and head.query_tokens is None
    np.testing.assert_allclose(weights(state), reference(q, k, keep[:, None, :]), atol=1e-6)
    # d_q != d_k: no dot product can be taken: the book's additive scoring, said.
    notes = []
    other = load(file_of(tmp_path, q=q, k=k[..., :3], v=v), notes=notes)
    assert other.settings.scoring == "additive"
    assert any(
        "dot products need d_q = d_k (here 4 and 3): additive scoring with seeded parameters" in n for n in notes
    )
    # Only some inputs from the file: the current settings stay, and a note says which scoring.
    notes = []
    partial = load(file_of(tmp_path, k=np.zeros((2, 10, 2))), roles={"keys": "k"}, notes=notes)
    assert partial.settings == BASE.settings and "the current settings are kept: additive scoring" in notes


@pytest.mark.parametrize(
    ("extra", "needles"),
    [
        (
            {"attn_mask": np.ones((3, 5), bool)},
            [
                "'attn_mask' (attn_mask) has shape (3, 5), which does not broadcast to (2, 4, 5, 5) (batch, heads, "
                "queries, "
                "keys)",
                "(5, 5), (2, 1, 1, 5)",
            ],
        ),
        ({"attn_mask": np.ones((2, 3, 5, 5), bool)}, ["(2, 3, 5, 5), which does not broadcast to (2, 4, 5, 5)"]),
        (
            {"attn_mask": np.ones((2, 5), np.int64)},
            ["'attn_mask' (attn_mask) holds whole numbers (int64): SDPA's attn_mask is bool", "named attention_mask"],
        ),
        ({"key_padding_mask": np.ones((2, 6), bool)}, ["has shape (2, 6); a padding mask is (batch, keys) = (2, 5)"]),
        ({"key_padding_mask": np.ones((2, 5), np.int8)}, ["a key_padding_mask is bool (True = ignore)"]),
        ({"attention_mask": np.array([[1, 1, 2, 1, 1]] * 2)}, ["must hold 0 and 1 (1 = attend), found 2"]),
        ({"attention_mask": np.zeros((3, 5))}, ["has shape (3, 5); a padding mask is (batch, keys) = (2, 5)"]),
        (
            {"mask": np.ones((2, 5), bool), "attn_mask": np.ones((5, 5), bool)},
            ["would both be the attn_mask: leave one out"],
        ),
        (
            {"is_causal": np.array([1, 0])},
            ["'is_causal' (is_causal) is an array of shape (2,); expected true or false"],
        ),
        ({"scale": np.array(np.inf)}, ["'scale' (scale) is inf; expected one finite number"]),
        ({"is_causal": np.array(False), "texts": {"causal": np.array("bottom_right")}}, ["disagree"]),
        ({"texts": {"causal": np.array("sideways")}}, ["'causal' (causal) is 'sideways'; expected top_left"]),
    ],
)
def test_masks_and_flags_that_cannot_be_read_are_refused_in_one_line(
    tmp_path: Path, extra: dict[str, Any], needles: list[str]
) -> None:
    refused_state(file_of(tmp_path, **tensors(), **extra), *needles)


def test_a_layer_axis_on_a_mask_must_match_the_layers(tmp_path: Path) -> None:
    tf = file_of(tmp_path, **tensors(layers=3), attn_mask=np.ones((2, 2, 1, 5, 5), bool))
    refused_state(tf, "its first axis is 2 layers, the tensors have 3")


def test_causal_alignment_is_kept_through_heads_layers_and_sessions(tmp_path: Path) -> None:
    arrays = tensors(n_q=2, n_k=5, layers=2)
    tf = file_of(tmp_path, **arrays, texts={"causal": np.array("bottom_right")}, scale=np.array(0.5))
    state = load(tf)
    assert state.head_view().causal == "bottom_right" and state.head_view().scale == 0.5
    allowed = np.tril(np.ones((2, 5), bool), 3)  # the last query sees every key
    for layer in range(2):
        assert state.head_view((layer, 1)).causal == "bottom_right"
        np.testing.assert_allclose(
            weights(state, (layer, 1)),
            reference(arrays["q"][layer][:, 1], arrays["k"][layer][:, 1], allowed, 0.5),
            atol=1e-6,
        )
    path = tmp_path / "kv.attnviz"
    save_state_file(path, state, (1, 0))
    again = load_state_file(path)
    assert (
        again.run.calls[1].masks.causal_alignment == "bottom_right" and again.head_view((1, 0)).causal == "bottom_right"
    )
    notes: list[str] = []
    load(file_of(tmp_path, **arrays, is_causal=np.array(True)), notes=notes)
    assert any("is_causal with fewer queries (2) than keys (5) is aligned top-left" in n for n in notes)


def test_the_names_promise_a_mask_the_roles_leave_out_and_a_note_says_so(tmp_path: Path) -> None:
    tf = file_of(tmp_path, **tensors(), attention_mask=np.ones((2, 5), np.int64))
    notes: list[str] = []
    load(tf, roles={"queries": "q", "keys": "k", "values": "v"}, notes=notes)
    assert "'attention_mask' (attention_mask) was left out" in notes


def test_lengths_of_zeros_and_ones_are_lengths_but_a_note_asks(tmp_path: Path) -> None:
    q, k, v = np.zeros((2, 3, 4)), np.zeros((2, 5, 4)), np.zeros((2, 5, 1))
    notes: list[str] = []
    state = load(file_of(tmp_path, q=q, k=k, v=v, lens=np.array([[1, 1, 0], [1, 0, 0]])), notes=notes)
    assert state.settings.lens_mode == "2d"
    assert any("are all 0 or 1: each query sees at most key 0" in n for n in notes)


# ------------------------------------------------------------------------------------ tokens


@pytest.mark.parametrize(
    ("texts", "needles"),
    [
        (
            {"tokens": np.array(list("abcd"))},
            ["'tokens' (tokens) has shape (2, 4): 4 labels, but the queries are 5 and the keys 5"],
        ),
        ({"query_tokens": np.array(list("abcdef"))}, ["'query_tokens' has shape (2, 6), but there are 5 queries"]),
        (
            {"key_tokens": np.array([list("abcde")] * 3)},
            ["'key_tokens' (key_tokens) has shape (3, 5): 3 rows of labels for a batch of 2"],
        ),
        ({"tokens": np.array("abcde")}, ["'tokens' (tokens) is one text"]),
    ],
)
def test_tokens_of_the_wrong_length_are_refused_naming_the_shapes(
    tmp_path: Path, texts: dict[str, np.ndarray], needles: list[str]
) -> None:
    refused_state(file_of(tmp_path, **tensors(), texts=texts), *needles)


def test_text_where_numbers_are_needed_and_numbers_where_text_is(tmp_path: Path) -> None:
    tf = file_of(tmp_path, **tensors(), texts={"tokens": np.array(list("abcde"))})
    refused_state(
        tf,
        "'tokens' (queries) holds text (dtype <U1), not numbers",
        roles={"queries": "tokens", "keys": "k", "values": "v"},
    )
    refused_state(
        tf,
        "'k' (tokens) holds numbers, not text labels",
        roles={"queries": "q", "keys": "k", "values": "v", "tokens": "k"},
    )


def test_tokens_in_each_format(tmp_path: Path) -> None:
    arrays = {k: torch.from_numpy(v) for k, v in tensors(n_q=3, n_k=3).items()}
    batch = [["the", "cat", "[PAD]"], ["a", "dog", "ran"]]
    np.savez(
        tmp_path / "t.npz",
        **{k: v.numpy() for k, v in arrays.items()},
        tokens=np.array(batch),
        is_causal=np.array(True),
    )
    from safetensors.numpy import save_file

    save_file(
        {k: v.numpy() for k, v in arrays.items()},
        str(tmp_path / "t.safetensors"),
        metadata={"tokens": json.dumps(batch), "is_causal": "true", "scale": "0.25", "format": "np"},
    )
    torch.save({**arrays, "tokens": batch, "is_causal": True, "step": 7}, tmp_path / "t.pt")
    for name in ("t.npz", "t.safetensors", "t.pt"):
        tf = load_tensor_file(tmp_path / name)
        head = load(tf).head_view()
        assert head.query_tokens.tolist() == batch and head.key_tokens.tolist() == batch, name
        assert head.causal == "top_left", name
    assert load(load_tensor_file(tmp_path / "t.safetensors")).head_view().scale == 0.25


def test_text_is_bounded_before_it_is_built(tmp_path: Path) -> None:
    q = np.zeros((1, 2, 4), np.float32)
    np.savez(tmp_path / "wide.npz", q=q, tokens=np.array(["x" * 300]))
    with pytest.raises(Exception, match="array 'tokens' holds text 300 characters wide"):
        load_tensor_file(tmp_path / "wide.npz")
    torch.save({"q": torch.zeros(1), "tokens": [["a", "b"], ["c"]]}, tmp_path / "ragged.pt")
    with pytest.raises(Exception, match="holds lists of text of different lengths"):
        load_tensor_file(tmp_path / "ragged.pt")
    torch.save({"q": torch.zeros(1), "tokens": ["a", "y" * 1000]}, tmp_path / "long.pt")
    with pytest.raises(Exception, match="holds text 1,000 characters wide"):
        load_tensor_file(tmp_path / "long.pt")
    from safetensors.numpy import save_file

    save_file({"q": q}, str(tmp_path / "m.safetensors"), metadata={"tokens": json.dumps(["z" * 400]), "note": "[x"})
    with pytest.raises(Exception, match="array 'tokens' holds text 400 characters wide"):
        load_tensor_file(tmp_path / "m.safetensors")
    save_file({"q": q}, str(tmp_path / "ok.safetensors"), metadata={"note": "[not json", "ids": "[1, 2]"})
    kept = load_tensor_file(tmp_path / "ok.safetensors")
    assert kept.texts == {} and kept.metadata["ids"] == "[1, 2]"


def test_a_text_member_declaring_a_trillion_labels_is_refused_without_allocating(tmp_path: Path) -> None:
    header = io.BytesIO()
    npformat.write_array_header_1_0(header, {"descr": "<U8", "fortran_order": False, "shape": (10**12,)})
    path = tmp_path / "bomb.npz"
    save_arrays(path, {"q": np.zeros((1, 2, 4))})
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("tokens.npy", header.getvalue() + b"\0" * 64)
    result = probe(path, headroom_mb=256)
    limit = f"takes the file's text past the {MAX_STORED_TEXT_CHARS:,} characters allowed"
    assert result.error is not None and limit in result.error
    assert result.peak_mb < 50
