"""Role guessing from array names, the role dialog's description, and head selection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attnviz.io import (
    ROLES,
    describe,
    guess_roles,
    load_tensor_file,
    needs_head_choice,
    save_arrays,
    select_head,
)


def arrays(*names: str) -> dict[str, np.ndarray]:
    return {name: np.zeros(1) for name in names}


def test_roles_constant() -> None:
    assert ROLES == ("queries", "keys", "values", "valid_lens", "mask")


def test_exact_role_names() -> None:
    assert guess_roles(arrays(*ROLES, "other")) == {role: role for role in ROLES}


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (("q", "k", "v"), {"queries": "q", "keys": "k", "values": "v"}),
        (("Q", "K", "V"), {"queries": "Q", "keys": "K", "values": "V"}),
        (("Query", "KEY", "value"), {"queries": "Query", "keys": "KEY", "values": "value"}),
        (("valid_len", "attn_mask"), {"valid_lens": "valid_len", "attn_mask": "attn_mask"}),
        (("lengths", "Attention_Mask"), {"valid_lens": "lengths", "attention_mask": "Attention_Mask"}),
        (
            ("src_key_padding_mask", "is_causal", "scale"),
            {"key_padding_mask": "src_key_padding_mask", "is_causal": "is_causal", "scale": "scale"},
        ),
        (
            ("attn.q", "attn.k", "attn.v", "attn.valid_lens"),
            {"queries": "attn.q", "keys": "attn.k", "values": "attn.v", "valid_lens": "attn.valid_lens"},
        ),
        (("layer/Q", "layer/mask"), {"queries": "layer/Q", "mask": "layer/mask"}),
        (("weights", "bias", "qk"), {}),
    ],
)
def test_aliases_case_and_nesting(names: tuple[str, ...], expected: dict[str, str]) -> None:
    assert guess_roles(arrays(*names)) == expected


def test_whole_name_beats_suffix_and_ambiguity_is_left_to_the_user() -> None:
    assert guess_roles(arrays("attn.q", "q"))["queries"] == "q"
    guessed = guess_roles(arrays("layer0.q", "layer1.q", "layer0.k"))
    assert "queries" not in guessed
    assert guessed["keys"] == "layer0.k"
    assert "keys" not in guess_roles(arrays("k", "key"))


def test_guess_and_describe_take_a_tensor_file(tmp_path: Path) -> None:
    save_arrays(tmp_path / "x.npz", {"Q": np.zeros((2, 3, 4), np.float32), "lengths": np.array([1, 2])})
    loaded = load_tensor_file(tmp_path / "x.npz")
    assert guess_roles(loaded) == {"queries": "Q", "valid_lens": "lengths"}
    assert describe(loaded) == [("Q", (2, 3, 4), "float32"), ("lengths", (2,), "int64")]
    with pytest.raises(TypeError):
        guess_roles(42)


def test_select_head_takes_one_head_as_a_copy() -> None:
    x = np.arange(2 * 4 * 5 * 3, dtype=np.float32).reshape(2, 4, 5, 3)
    assert needs_head_choice(x)
    head = select_head(x, 2)
    assert head.shape == (2, 5, 3)
    np.testing.assert_array_equal(head, x[:, 2])
    np.testing.assert_array_equal(select_head(x, 2, head_axis=-3), x[:, 2])
    np.testing.assert_array_equal(select_head(x, np.int64(1), head_axis=0), x[1])
    head[...] = -1
    assert x.min() == 0  # the original is untouched
    assert not needs_head_choice(x[0])
    assert not needs_head_choice(np.zeros((2, 3)))


@pytest.mark.parametrize(
    ("shape", "head", "axis", "needle"),
    [
        ((2, 4, 5, 3), 4, 1, "head 4 is out of range: the array has 4 heads on axis 1 (valid: 0-3)"),
        ((2, 4, 5, 3), -1, 1, "head -1 is out of range"),
        ((2, 5, 3), 0, 1, "needs a 4-D (batch, heads, n, d) array, got 3-D"),
        ((2, 4, 5, 3), 0, 4, "head_axis 4 is out of range"),
        ((2, 4, 5, 3), 1.5, 1, "must be integers"),
        ((2, 4, 5, 3), True, 1, "not booleans"),
        ((2, 0, 5, 3), 0, 1, "has 0 heads"),
    ],
)
def test_select_head_errors(shape: tuple[int, ...], head: object, axis: int, needle: str) -> None:
    with pytest.raises(ValueError) as info:
        select_head(np.zeros(shape), head, head_axis=axis)  # type: ignore[arg-type]
    assert needle in str(info.value)
