"""Every supported format writes and reads back the same arrays, names, order and dtypes."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attnviz.io import load_tensor_file, save_arrays


def assert_same(loaded: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    assert list(loaded) == list(expected)
    for name, array in expected.items():
        assert loaded[name].dtype == array.dtype, name
        assert loaded[name].shape == array.shape, name
        np.testing.assert_array_equal(loaded[name], array, err_msg=name)


@pytest.mark.parametrize("suffix", [".npz", ".pt", ".pth", ".safetensors"])
def test_multi_array_round_trip(tmp_path: Path, sample_arrays: dict[str, np.ndarray], suffix: str) -> None:
    path = tmp_path / f"inputs{suffix}"
    save_arrays(path, sample_arrays)
    loaded = load_tensor_file(path)
    assert loaded.format == {".pth": "pt"}.get(suffix, suffix[1:])
    assert loaded.path == path
    assert loaded.skipped == []
    assert_same(loaded.arrays, sample_arrays)
    # Loaded arrays own their memory: no lingering memory map or torch storage.
    assert all(a.flags.owndata or a.base is None or a.base.flags.owndata for a in loaded.arrays.values())
    assert all(a.flags.writeable and a.flags.c_contiguous for a in loaded.arrays.values())


@pytest.mark.parametrize("name", ["valid_lens", "mask", "queries", "values"])
def test_npy_round_trip_names_array_after_file(tmp_path: Path, sample_arrays: dict[str, np.ndarray], name: str) -> None:
    path = tmp_path / f"{name}.npy"
    save_arrays(path, {"whatever": sample_arrays[name]})
    loaded = load_tensor_file(path)
    assert loaded.format == "npy"
    assert_same(loaded.arrays, {name: sample_arrays[name]})


def test_npy_refuses_several_arrays(tmp_path: Path, sample_arrays: dict[str, np.ndarray]) -> None:
    from attnviz.io import TensorFileError

    with pytest.raises(TensorFileError, match="exactly one array"):
        save_arrays(tmp_path / "two.npy", {"a": sample_arrays["queries"], "b": sample_arrays["keys"]})
    assert not (tmp_path / "two.npy").exists()


def test_files_written_by_numpy_itself(tmp_path: Path, sample_arrays: dict[str, np.ndarray]) -> None:
    np.savez_compressed(tmp_path / "c.npz", **sample_arrays)  # type: ignore[arg-type]
    assert_same(load_tensor_file(tmp_path / "c.npz").arrays, sample_arrays)
    big_endian = np.arange(12, dtype=">f8").reshape(3, 4)
    np.save(tmp_path / "be.npy", big_endian)
    loaded = load_tensor_file(tmp_path / "be.npy").arrays["be"]
    assert loaded.dtype == np.float64 and loaded.dtype.isnative
    np.testing.assert_array_equal(loaded, big_endian)
    fortran = np.asfortranarray(np.arange(12, dtype=np.int16).reshape(3, 4))
    np.save(tmp_path / "f.npy", fortran)
    np.testing.assert_array_equal(load_tensor_file(tmp_path / "f.npy").arrays["f"], fortran)


def test_our_files_are_readable_by_numpy_and_torch(tmp_path: Path, sample_arrays: dict[str, np.ndarray]) -> None:
    save_arrays(tmp_path / "a.npz", sample_arrays)
    with np.load(tmp_path / "a.npz", allow_pickle=False) as archive:
        assert_same(dict(archive), sample_arrays)
    save_arrays(tmp_path / "a.pt", sample_arrays)
    loaded = torch.load(tmp_path / "a.pt", weights_only=True)
    assert_same({k: v.numpy() for k, v in loaded.items()}, sample_arrays)


def test_safetensors_interoperates_with_reference_library(tmp_path: Path, sample_arrays: dict[str, np.ndarray]) -> None:
    st_numpy = pytest.importorskip("safetensors.numpy")
    save_arrays(tmp_path / "ours.safetensors", sample_arrays)
    theirs = st_numpy.load_file(str(tmp_path / "ours.safetensors"))
    assert set(theirs) == set(sample_arrays)
    for name, array in sample_arrays.items():
        np.testing.assert_array_equal(theirs[name], array)
        assert theirs[name].dtype == array.dtype
    st_numpy.save_file(sample_arrays, str(tmp_path / "theirs.safetensors"), metadata={"source": "test"})
    loaded = load_tensor_file(tmp_path / "theirs.safetensors")
    assert loaded.metadata == {"source": "test"}
    assert_same({k: loaded.arrays[k] for k in sample_arrays}, sample_arrays)


def test_bfloat16_becomes_float32(tmp_path: Path) -> None:
    tensor = torch.linspace(-3, 3, 24).reshape(2, 3, 4).to(torch.bfloat16)
    expected = tensor.to(torch.float32).numpy()
    torch.save({"queries": tensor}, tmp_path / "bf.pt")
    loaded = load_tensor_file(tmp_path / "bf.pt").arrays["queries"]
    assert loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, expected)

    st_torch = pytest.importorskip("safetensors.torch")
    st_torch.save_file({"keys": tensor}, str(tmp_path / "bf.safetensors"))
    loaded = load_tensor_file(tmp_path / "bf.safetensors").arrays["keys"]
    assert loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, expected)


def test_pt_containers_are_flattened(tmp_path: Path) -> None:
    q, k = torch.ones(1, 2, 3), torch.zeros(1, 4, 3)
    checkpoint = {"attn": {"q": q, "k": k}, "lens": torch.tensor([4]), "step": 3, "deep": {"a": {"b": q}}}
    torch.save(checkpoint, tmp_path / "ckpt.pt")
    loaded = load_tensor_file(tmp_path / "ckpt.pt")
    assert list(loaded.arrays) == ["attn.q", "attn.k", "lens"]
    np.testing.assert_array_equal(loaded.arrays["attn.k"], k.numpy())
    assert loaded.arrays["lens"].dtype == np.int64
    assert loaded.skipped == ["deep.a (nested too deeply)"]
    assert loaded.scalars == {"step": 3}  # a plain value at the top: is_causal=True, scale=0.125

    torch.save([q, (k, q)], tmp_path / "list.pt")
    assert list(load_tensor_file(tmp_path / "list.pt").arrays) == ["0", "1.0", "1.1"]

    torch.save(q, tmp_path / "queries.pt")
    assert list(load_tensor_file(tmp_path / "queries.pt").arrays) == ["queries"]


def test_pt_parameters_views_and_legacy_format(tmp_path: Path) -> None:
    weight = torch.nn.Parameter(torch.randn(3, 4))
    base = torch.arange(20.0).reshape(4, 5)
    torch.save({"w": weight, "view": base[1:3, ::2], "wide": torch.ones(1, 3).expand(4, 3)}, tmp_path / "p.pt")
    loaded = load_tensor_file(tmp_path / "p.pt").arrays
    np.testing.assert_array_equal(loaded["w"], weight.detach().numpy())
    np.testing.assert_array_equal(loaded["view"], base[1:3, ::2].numpy())
    np.testing.assert_array_equal(loaded["wide"], np.ones((4, 3), np.float32))

    torch.save({"q": base}, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    loaded_legacy = load_tensor_file(tmp_path / "legacy.pt")
    assert loaded_legacy.format == "pt"
    np.testing.assert_array_equal(loaded_legacy.arrays["q"], base.numpy())


def test_content_wins_over_a_lying_extension(tmp_path: Path, sample_arrays: dict[str, np.ndarray]) -> None:
    save_arrays(tmp_path / "real.npz", sample_arrays)
    (tmp_path / "real.npz").rename(tmp_path / "looks_like.pt")
    loaded = load_tensor_file(tmp_path / "looks_like.pt")
    assert loaded.format == "npz"
    assert_same(loaded.arrays, sample_arrays)

    save_arrays(tmp_path / "x.safetensors", sample_arrays)
    (tmp_path / "x.safetensors").rename(tmp_path / "x.bin")
    assert load_tensor_file(tmp_path / "x.bin").format == "safetensors"

    save_arrays(tmp_path / "y.pt", sample_arrays)
    (tmp_path / "y.pt").rename(tmp_path / "y.npz")
    assert load_tensor_file(tmp_path / "y.npz").format == "pt"


def test_npz_non_array_members_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "extra.npz"
    save_arrays(path, {"q": np.ones(3)})
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("README.txt", "hello")
    loaded = load_tensor_file(path)
    assert list(loaded.arrays) == ["q"]
    assert loaded.skipped == ["README.txt (not an .npy array)"]


def test_empty_and_scalar_arrays(tmp_path: Path) -> None:
    arrays = {"empty": np.zeros((0, 4), np.float32), "scalar": np.array(3.5)}
    for suffix in (".npz", ".pt", ".safetensors"):
        save_arrays(tmp_path / f"e{suffix}", arrays)
        assert_same(load_tensor_file(tmp_path / f"e{suffix}").arrays, arrays)


def test_save_accepts_torch_tensors_and_replaces_atomically(tmp_path: Path) -> None:
    path = tmp_path / "t.npz"
    save_arrays(path, {"q": torch.ones(2, 2, requires_grad=True)})
    save_arrays(path, {"k": torch.zeros(3)})
    assert list(load_tensor_file(path).arrays) == ["k"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.npz"]


_dtypes = st.sampled_from([np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.bool_])


@settings(max_examples=30, deadline=None)
@given(
    array=hnp.arrays(_dtypes, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)),
    suffix=st.sampled_from([".npy", ".npz", ".pt", ".safetensors"]),
)
def test_any_supported_array_round_trips(
    tmp_path_factory: pytest.TempPathFactory, array: np.ndarray, suffix: str
) -> None:
    path = tmp_path_factory.mktemp("prop") / f"a{suffix}"
    save_arrays(path, {"a": array})
    loaded = load_tensor_file(path).arrays["a"]
    assert loaded.dtype == array.dtype and loaded.shape == array.shape
    # Bitwise comparison so NaN payloads and -0.0 count too.
    assert loaded.tobytes() == np.ascontiguousarray(array).tobytes()
