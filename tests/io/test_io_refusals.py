"""Unsafe, damaged, oversized and unsupported files are refused with a one-line TensorFileError.

The pickle payloads here are live: loading them with plain ``pickle``/``torch.load(weights_only=
False)`` does create the marker file (checked by the control tests), so "no marker" proves the
loader did not run them.
"""

from __future__ import annotations

import json
import os
import pickle
import struct
import sys
import time
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.lib.format as npformat
import pytest
import torch

from attnviz.io import TensorFileError, load_tensor_file, save_arrays

Refused = Callable[..., TensorFileError]


class OpensFile:
    """Unpickling this creates ``path`` (via ``open(path, "w")``)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.path), "w"))


class RunsShell:
    """Unpickling this runs ``touch path`` through ``os.system``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch '{self.path}'",))


# --- code execution ---------------------------------------------------------------------------


def test_control_payloads_are_live(tmp_path: Path) -> None:
    marker = tmp_path / "control"
    pickle.loads(pickle.dumps(OpensFile(marker))).close()
    assert marker.exists()
    marker.unlink()
    torch.save({"x": OpensFile(marker)}, tmp_path / "c.pt")
    torch.load(tmp_path / "c.pt", weights_only=False)["x"].close()
    assert marker.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="uses a POSIX shell command")
def test_pt_with_shell_payload_is_refused_and_not_run(tmp_path: Path, refused: Refused) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    torch.save({"queries": torch.ones(2), "payload": RunsShell(marker)}, path)
    refused(path, "would call", "system")
    assert not marker.exists()


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_pt_with_open_payload_is_refused_and_not_run(tmp_path: Path, refused: Refused, legacy: bool) -> None:
    marker = tmp_path / "created"
    path = tmp_path / "evil.pt"
    torch.save(OpensFile(marker), path, _use_new_zipfile_serialization=not legacy)
    refused(path, "would call", "open")
    assert not marker.exists()


def test_plain_pickle_named_pt_is_refused(tmp_path: Path, refused: Refused) -> None:
    marker = tmp_path / "created"
    for protocol, name in ((2, "p2.pt"), (4, "p4.pth")):
        (tmp_path / name).write_bytes(pickle.dumps(OpensFile(marker), protocol=protocol))
        refused(tmp_path / name)
    assert not marker.exists()


def test_object_arrays_are_refused_without_unpickling(tmp_path: Path, refused: Refused) -> None:
    marker = tmp_path / "created"
    payload = np.array([OpensFile(marker), 1], dtype=object)
    np.save(tmp_path / "obj.npy", payload, allow_pickle=True)
    refused(tmp_path / "obj.npy", "Python objects")
    with zipfile.ZipFile(tmp_path / "obj.npz", "w") as archive, archive.open("keys.npy", "w") as member:
        npformat.write_array(member, payload, allow_pickle=True)
    refused(tmp_path / "obj.npz", "array 'keys'", "Python objects")
    assert not marker.exists()


# --- truncated and damaged --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("suffix", "needle"),
    [
        (".npy", "is truncated"),
        (".npz", "truncated or damaged"),
        (".safetensors", "is truncated"),
        (".pt", "truncated or damaged"),
    ],
)
def test_files_cut_in_half(
    tmp_path: Path, refused: Refused, cut_in_half: Callable[[Path], Path], suffix: str, needle: str
) -> None:
    path = tmp_path / f"keys{suffix}"
    rng = np.random.default_rng(0)
    arrays = (
        {"keys": rng.standard_normal((64, 64))}
        if suffix == ".npy"
        else {"q": rng.standard_normal((64, 64)), "m": np.ones(100, bool)}
    )
    save_arrays(path, arrays)
    load_tensor_file(path)  # intact, it loads
    refused(cut_in_half(path), needle)


def test_legacy_pt_cut_in_half(tmp_path: Path, refused: Refused, cut_in_half: Callable[[Path], Path]) -> None:
    path = tmp_path / "old.pt"
    torch.save({"q": torch.rand(64, 64)}, path, _use_new_zipfile_serialization=False)
    refused(cut_in_half(path), "truncated or damaged")


def test_npz_member_with_truncated_data(tmp_path: Path, refused: Refused) -> None:
    path = tmp_path / "short.npz"
    with zipfile.ZipFile(path, "w") as archive, archive.open("q.npy", "w") as member:
        npformat.write_array_header_1_0(member, {"descr": "<f4", "fortran_order": False, "shape": (100,)})
        member.write(b"\0" * 40)
    refused(path, "array 'q' is truncated", "400 bytes", "40 bytes")


def test_npy_header_claiming_more_data_than_present(tmp_path: Path, refused: Refused) -> None:
    path = tmp_path / "short.npy"
    with open(path, "wb") as handle:
        npformat.write_array_header_1_0(handle, {"descr": "<f4", "fortran_order": False, "shape": (1000,)})
        handle.write(b"\0" * 16)
    refused(path, "is truncated", "4.0 kB", "16 bytes")


def test_npy_with_damaged_header(tmp_path: Path, refused: Refused) -> None:
    path = tmp_path / "bad.npy"
    path.write_bytes(npformat.MAGIC_PREFIX + b"\x01\x00\x10\x00{'descr': nonsense" + b" " * 20)
    refused(path, "damaged .npy header")


# --- size limits ------------------------------------------------------------------------------


def test_billion_element_npy_header_is_refused_before_allocating(tmp_path: Path, refused: Refused) -> None:
    path = tmp_path / "keys.npy"
    with open(path, "wb") as handle:
        npformat.write_array_header_1_0(handle, {"descr": "<f4", "fortran_order": False, "shape": (1_000_000_000,)})
        handle.write(b"\0" * 64)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        refused(path, "holds 1,000,000,000 elements (4.0 GB)", "more than the 67,108,864 allowed")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 2.0
    assert peak < 1_000_000, f"peak Python allocation {peak:,} bytes"


def test_huge_npz_member_is_refused_before_inflating(tmp_path: Path, refused: Refused) -> None:
    path = tmp_path / "bomb.npz"
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("values.npy", "w") as member,
    ):
        npformat.write_array_header_1_0(member, {"descr": "<f8", "fortran_order": False, "shape": (50_000, 50_000)})
        member.write(b"\0" * 1_000_000)  # compresses to almost nothing
    refused(path, "array 'values' holds 2,500,000,000 elements")


def test_stride_zero_pt_tensor_is_refused_by_its_shape(tmp_path: Path, refused: Refused) -> None:
    path = tmp_path / "wide.pt"
    torch.save({"keys": torch.zeros(1).expand(1_000_000_000)}, path)
    assert path.stat().st_size < 10_000  # the file is tiny; only the shape is huge
    tracemalloc.start()
    try:
        refused(path, "array 'keys' holds 1,000,000,000 elements")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50_000_000


def test_custom_limits_per_array_and_in_total(tmp_path: Path, refused: Refused) -> None:
    path = tmp_path / "two.npz"
    save_arrays(path, {"a": np.zeros(60, np.float32), "b": np.zeros(60, np.float32)})
    refused(path, "array 'a' holds 60 elements", "50 allowed", max_elements=50)
    refused(path, "more than the 100 elements allowed in total", "array 'b'", max_elements=100)
    refused(path, "240 bytes", "200 bytes allowed", max_bytes=200)
    assert len(load_tensor_file(path, max_elements=120, max_bytes=480).arrays) == 2


def test_bfloat16_counts_as_float32_for_the_byte_limit(tmp_path: Path, refused: Refused) -> None:
    path = tmp_path / "bf.pt"
    torch.save({"q": torch.zeros(100, dtype=torch.bfloat16)}, path)
    refused(path, "(400 bytes)", max_bytes=399)
    assert load_tensor_file(path, max_bytes=400).arrays["q"].nbytes == 400


def test_legacy_pt_larger_than_byte_limit(tmp_path: Path, refused: Refused) -> None:
    path = tmp_path / "old.pt"
    torch.save({"q": torch.zeros(1000)}, path, _use_new_zipfile_serialization=False)
    refused(path, "legacy (non-zip) PyTorch file", max_bytes=1000)


# --- safetensors headers ----------------------------------------------------------------------


def write_safetensors(
    path: Path, header: object, data: bytes = b"", *, raw: bytes | None = None, length: int | None = None
) -> Path:
    text = json.dumps(header).encode() if raw is None else raw
    path.write_bytes(struct.pack("<Q", len(text) if length is None else length) + text + data)
    return path


@pytest.mark.parametrize(
    ("header", "data", "needle"),
    [
        ({"q": {"dtype": "F32", "shape": [1000, 1000], "data_offsets": [0, 16]}}, 16, "lying header"),
        ({"q": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, 8, "is truncated"),
        (
            {
                "q": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                "k": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
            },
            12,
            "overlapping",
        ),
        (
            {"q": {"dtype": "F32", "shape": [100_000, 100_000], "data_offsets": [0, 40_000_000_000]}},
            16,
            "10,000,000,000 elements",
        ),
        ({"q": {"dtype": "C64", "shape": [2], "data_offsets": [0, 16]}}, 16, "complex"),
        ({"q": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}}, 2, "F8_E4M3"),
        ({"q": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, 4, "invalid shape"),
        ({"q": {"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}}, 4, "invalid shape"),
        ({"q": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}, 4, "invalid data offsets"),
        ({"q": [1, 2]}, 0, "damaged header entry"),
        ({"__metadata__": {"a": 1}}, 0, "metadata"),
        ([1, 2], 0, "not a JSON object"),
    ],
)
def test_safetensors_bad_headers(tmp_path: Path, refused: Refused, header: object, data: int, needle: str) -> None:
    refused(write_safetensors(tmp_path / "x.safetensors", header, b"\0" * data), needle)


def test_safetensors_bad_header_lengths(tmp_path: Path, refused: Refused) -> None:
    path = tmp_path / "x.safetensors"
    refused(write_safetensors(path, {}, length=2**60), "1,152,921,504,606,846,976-byte header")
    refused(write_safetensors(path, {}, length=5000), "header length (5,000 bytes) is larger than the file")
    refused(write_safetensors(path, None, raw=b"{not json"), "not valid JSON")
    path.write_bytes(b"\x01\x02\x03")
    refused(path, "too short")


# --- dtypes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("array", "needle"),
    [
        (np.ones(3, np.complex64), "complex numbers (complex64)"),
        (np.array(["ab", "c"]), "holds text"),
        (np.zeros(3, dtype=[("a", "f4"), ("b", "i4")]), "structured dtype"),
        (np.zeros(3, dtype="M8[s]"), "dates or times"),
        (np.zeros(3, dtype="V4"), "not supported"),
    ],
)
def test_unsupported_numpy_dtypes(tmp_path: Path, refused: Refused, array: np.ndarray, needle: str) -> None:
    np.save(tmp_path / "a.npy", array)
    refused(tmp_path / "a.npy", needle)
    np.savez(tmp_path / "a.npz", member=array)
    if array.dtype.kind == "U":  # text in an .npz is read as labels (tokens), but it is no tensor
        refused(tmp_path / "a.npz", "holds no arrays of numbers, only text (member)")
    else:
        refused(tmp_path / "a.npz", "array 'member'", needle)


@pytest.mark.skipif(np.dtype(np.longdouble).itemsize <= 8, reason="longdouble is float64 here")
def test_extended_precision_is_refused(tmp_path: Path, refused: Refused) -> None:
    np.save(tmp_path / "ld.npy", np.zeros(2, np.longdouble))
    refused(tmp_path / "ld.npy", "not supported")


@pytest.mark.parametrize(
    ("tensor", "needle"),
    [
        (torch.ones(3, dtype=torch.complex64), "complex"),
        (torch.zeros(3).to(torch.float8_e4m3fn), "float8_e4m3fn"),
        (torch.eye(3).to_sparse(), "sparse"),
    ],
)
def test_unsupported_torch_tensors(tmp_path: Path, refused: Refused, tensor: torch.Tensor, needle: str) -> None:
    torch.save({"t": tensor}, tmp_path / "t.pt")
    refused(tmp_path / "t.pt", "array 't'", needle)


def test_pt_without_tensors(tmp_path: Path, refused: Refused) -> None:
    torch.save(3, tmp_path / "int.pt")
    refused(tmp_path / "int.pt", "holds a Python int, not tensors")
    torch.save({"epoch": 3, "name": "run"}, tmp_path / "meta.pt")
    refused(tmp_path / "meta.pt", "holds no tensors")


def test_colliding_flattened_names(tmp_path: Path, refused: Refused) -> None:
    torch.save({"a.b": torch.ones(1), "a": {"b": torch.zeros(1)}}, tmp_path / "dup.pt")
    refused(tmp_path / "dup.pt", "'a.b'")


# --- paths that are not tensor files ----------------------------------------------------------


def test_paths_that_are_not_readable_files(tmp_path: Path, refused: Refused) -> None:
    (tmp_path / "dir.npy").mkdir()
    refused(tmp_path / "dir.npy", "is a directory")
    refused(tmp_path / "missing.pt", "does not exist")
    (tmp_path / "empty.safetensors").touch()
    refused(tmp_path / "empty.safetensors", "is empty")
    (tmp_path / "text.npy").write_text("hello, this is not numpy")
    refused(tmp_path / "text.npy", "is not a NumPy .npy file")
    (tmp_path / "text.pt").write_text("hello, this is not torch")
    refused(tmp_path / "text.pt", "is not a PyTorch file")
    (tmp_path / "notes.txt").write_text("hello")
    refused(tmp_path / "notes.txt", "is not a tensor file attnviz can read")
    zipfile.ZipFile(tmp_path / "empty.npz", "w").close()
    refused(tmp_path / "empty.npz", "holds no arrays")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_device_files_are_refused(refused: Refused) -> None:
    refused(Path("/dev/zero"), "not a regular file")


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file(tmp_path: Path, refused: Refused) -> None:
    path = tmp_path / "secret.npy"
    np.save(path, np.ones(3))
    path.chmod(0)
    try:
        refused(path, "permission denied")
    finally:
        path.chmod(0o600)


def test_export_refuses_bad_input(tmp_path: Path) -> None:
    with pytest.raises(TensorFileError, match="unknown extension"):
        save_arrays(tmp_path / "a.txt", {"a": np.ones(2)})
    with pytest.raises(TensorFileError, match="complex"):
        save_arrays(tmp_path / "a.npz", {"a": np.ones(2, np.complex128)})
    with pytest.raises(TensorFileError, match="Python objects"):
        save_arrays(tmp_path / "a.npz", {"a": np.array([None])})
    with pytest.raises(TensorFileError, match="reserved"):
        save_arrays(tmp_path / "a.safetensors", {"__metadata__": np.ones(2)})
    with pytest.raises(TensorFileError, match="cannot be written"):
        save_arrays(tmp_path / "no" / "such" / "dir.npz", {"a": np.ones(2)})
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_os_errors_while_reading_become_refusals(
    tmp_path: Path, refused: Refused, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root can read chmod-0 files, so simulate the permission error where the loader opens the file.
    import attnviz.io.tensors as tensors_module

    path = tmp_path / "locked.npy"
    np.save(path, np.ones(3))

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tensors_module, "open", denied, raising=False)
    refused(path, "permission denied")
