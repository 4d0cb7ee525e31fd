"""Tiny files that ask for huge allocations are refused before anything is allocated.

The hostile files are opened in a child process with a capped address space
(``tests/io/memory_probe.py``): before the fix, loading them zero-filled gigabytes.
"""

from __future__ import annotations

import io
import json
import pickle
import struct
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.lib.format as npformat
import pytest
import torch

from attnviz.io import Session, TensorFileError, load_session, load_tensor_file, save_session
from tests.io.memory_probe import Probe, bytearray_pt, header_bomb_npz, probe

Refused = Callable[..., TensorFileError]

# Issue 12's bound: refusing a hostile file costs under 300 MB more than the process used before.
MAX_PEAK_MB = 300


# --- building .pt files by hand ---------------------------------------------------------------


class Call:
    """Pickles as ``func(*args)``: a REDUCE of whatever global ``func`` is."""

    def __init__(self, func: object, *args: object) -> None:
        self.func, self.args = func, args

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return self.func, self.args


class Storage:
    """Pickles as torch's persistent id of a storage: ``("storage", type, key, location, numel[, view])``."""

    def __init__(self, *pid: object) -> None:
        self.pid = pid


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: object) -> object:
        return obj.pid if isinstance(obj, Storage) else None


def pickled(obj: object, protocol: int = 2) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=protocol).dump(obj)
    return buffer.getvalue()


def tensor(storage: Storage, shape: tuple[int, ...], stride: tuple[int, ...], offset: int = 0) -> Call:
    return Call(torch._utils._rebuild_tensor_v2, storage, offset, shape, stride, False, OrderedDict())


def zip_pt(
    path: Path,
    obj: object,
    records: dict[str, bytes],
    byteorder: bytes | None = b"little",
    data_pkl: bytes | None = None,
) -> Path:
    """A zip-format ``.pt`` laid out as ``torch.save`` does (``archive/data.pkl``, ``archive/data/<key>``);
    ``data_pkl`` replaces the pickle of ``obj``."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", pickled(obj) if data_pkl is None else data_pkl)
        archive.writestr("archive/version", b"3\n")
        if byteorder is not None:
            archive.writestr("archive/byteorder", byteorder)
        for key, data in records.items():
            archive.writestr(f"archive/data/{key}", data)
    return path


LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def legacy_pt(path: Path, obj: object, records: list[tuple[str, int, bytes]]) -> Path:
    """A legacy ``.pt``: magic, protocol, system info and object pickles, the storage keys, then
    each storage as its element count (int64, little-endian) and its bytes."""
    info = {"protocol_version": 1001, "little_endian": True, "type_sizes": {"short": 2, "int": 4, "long": 4}}
    parts = [pickled(LEGACY_MAGIC), pickled(1001), pickled(info), pickled(obj), pickled([k for k, _, _ in records])]
    for _key, numel, data in records:
        parts += [struct.pack("<q", numel), data]
    path.write_bytes(b"".join(parts))
    return path


def check_probe(result: Probe, *needles: str) -> None:
    assert result.error is not None and result.error.startswith("TensorFileError: "), result
    assert "\n" not in result.error
    for needle in needles:
        assert needle in result.error, (needle, result.error)
    assert result.peak_mb < MAX_PEAK_MB, result


# --- the files of issue 12 --------------------------------------------------------------------


def test_32_byte_pt_asking_for_6_gb_is_refused_without_allocating(tmp_path: Path) -> None:
    path = bytearray_pt(tmp_path / "tiny.pt")
    assert path.stat().st_size == 32
    check_probe(probe(path), "tiny.pt: ", "would call builtins.bytearray")


def test_legacy_pt_storage_larger_than_the_file_is_refused_before_allocating(tmp_path: Path) -> None:
    # ~200 bytes whose one storage declares 6.7 billion floats (25 GiB); the tensor is one element.
    huge = 25 * 2**30 // 4
    path = legacy_pt(
        tmp_path / "small.pt",
        {"q": tensor(Storage("storage", torch.FloatStorage, "0", "cpu", huge, None), (1,), (1,))},
        [("0", huge, b"\0" * 4)],
    )
    assert path.stat().st_size < 400
    check_probe(probe(path), "storage", "26,843,545,600 bytes")


def test_zip_pt_calling_bytearray_is_refused(tmp_path: Path) -> None:
    path = zip_pt(tmp_path / "z.pt", {"q": Call(bytearray, 6_400_000_000)}, {})
    check_probe(probe(path), "would call builtins.bytearray")


def test_zip_pt_storage_declaring_more_than_its_record_holds_is_refused(tmp_path: Path) -> None:
    huge = 25 * 2**30 // 4
    storage = Storage("storage", torch.FloatStorage, "0", "cpu", huge)
    path = zip_pt(tmp_path / "z.pt", {"q": tensor(storage, (1,), (1,))}, {"0": b"\0" * 4})
    check_probe(probe(path), "storage '0'", "26,843,545,600 bytes", "4 bytes")


def test_npz_whose_npy_header_declares_a_gigabyte_is_refused_before_reading_it(tmp_path: Path) -> None:
    path = header_bomb_npz(tmp_path / "bomb.npz")
    assert path.stat().st_size < 2_000_000
    check_probe(probe(path), "array 'keys'", "1,000,000,000-byte .npy header")


def test_session_whose_manifest_header_declares_a_gigabyte_is_refused_before_reading_it(tmp_path: Path) -> None:
    path = header_bomb_npz(tmp_path / "work.attnviz", member="__session__.npy")
    result = probe(path)
    assert result.error is not None and result.error.startswith("SessionFileError: work.attnviz: "), result
    assert "1,000,000,000-byte .npy header" in result.error
    assert result.peak_mb < MAX_PEAK_MB, result


def test_session_whose_manifest_inflates_to_millions_of_objects_is_refused(tmp_path: Path) -> None:
    # 16 MB of "{}," (5 million empty JSON objects) compresses to some 16 kB; parsed, it took 450 MB.
    text = '{"format": "attnviz-session", "version": 1, "arrays": [], "settings": {"x": [' + "{}," * 5_000_000 + "{}]}}"
    path = tmp_path / "objects.attnviz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("__session__.npy", "w", force_zip64=True) as member:
            npformat.write_array(member, np.array(text))
    assert path.stat().st_size < 200_000
    result = probe(path)
    assert result.error is not None and "member '__session__' is longer than the" in result.error, result
    assert result.peak_mb < MAX_PEAK_MB, result


# --- .pt files read without torch.load ---------------------------------------------------------


def test_legacy_storage_record_disagreeing_with_its_declaration(tmp_path: Path, refused: Refused) -> None:
    storage = Storage("storage", torch.FloatStorage, "0", "cpu", 4, None)
    path = legacy_pt(tmp_path / "lie.pt", {"q": tensor(storage, (4,), (1,))}, [("0", 1000, b"\0" * 16)])
    refused(path, "storage '0'", "declares 4 elements", "1,000")


def test_tensor_reaching_past_its_storage(tmp_path: Path, refused: Refused) -> None:
    storage = Storage("storage", torch.FloatStorage, "0", "cpu", 4)
    path = zip_pt(tmp_path / "past.pt", {"q": tensor(storage, (3,), (2,))}, {"0": b"\0" * 16})
    refused(path, "array 'q'", "past the end of its storage")


def test_strided_view_spanning_more_than_the_budget(tmp_path: Path, refused: Refused) -> None:
    storage = Storage("storage", torch.FloatStorage, "0", "cpu", 1000)
    path = zip_pt(tmp_path / "wide.pt", {"q": tensor(storage, (2,), (999,))}, {"0": b"\0" * 4000})
    refused(path, "array 'q'", "spanning 4.0 kB", max_bytes=1000)
    assert load_tensor_file(path).arrays["q"].shape == (2,)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        # LONG_BINPUT at index 2^31: a C unpickler would grow its memo table to match.
        (b"\x80\x02}r\xff\xff\xff\x7f.", None),
        (b"\x80\x02" + b"}" * 5_000_000 + b".", "more than 2,000,000 objects"),
        (b"\x80\x02\x8b\xff\xff\xff\x7f" + b"\0" * 64 + b".", "number"),
        (b"\x80\x02}(" + b"K\x01K\x02\x86" + b"K\x03u.", "dictionary key"),
        (b"\x80\x02\x96" + struct.pack("<Q", 10**12) + b".", "opcode"),
        (b"\x80\x02cbuiltins\nset\n)R.", "would call builtins.set"),
        (b"\x80\x02c__main__\nEvil\n)R.", "would call __main__.Evil"),
        (b"\x80\x02]\x94h\x00\x85b.", None),
        (b"\x80\x02X\xff\xff\xff\x7fabc.", "truncated"),
        (b"\x80\x02K\x01R.", "damaged"),
    ],
    ids=["memo-index", "op-count", "long4", "tuple-key", "bytearray8", "set", "class", "build", "unicode", "reduce"],
)
def test_hostile_pickles_are_refused_in_one_line(
    tmp_path: Path, refused: Refused, data: bytes, needle: str | None
) -> None:
    path = zip_pt(tmp_path / "p.pt", None, {}, data_pkl=data)
    error = refused(path) if needle is None else refused(path, needle)
    assert len(str(error)) < 300


def test_pickle_larger_than_allowed(tmp_path: Path, refused: Refused) -> None:
    from attnviz.io._torchfile import MAX_PICKLE_BYTES

    path = zip_pt(tmp_path / "big.pt", None, {}, data_pkl=b"\x80\x02N" + b"N0" * (MAX_PICKLE_BYTES // 2) + b".")
    refused(path, "data.pkl")


def test_real_checkpoints_load_without_torch_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("torch.load was called")

    monkeypatch.setattr(torch, "load", forbidden)
    base = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4)
    tensors = {
        "f64": base,
        "f32_t": base.float().transpose(1, 2),
        "f16_slice": base.half()[:, 1:, ::2],
        "bf16": base.to(torch.bfloat16),
        "i64": torch.arange(-3, 3),
        "i32": torch.arange(5, dtype=torch.int32),
        "i16": torch.arange(5, dtype=torch.int16),
        "i8": torch.arange(-2, 3, dtype=torch.int8),
        "u8": torch.arange(5, dtype=torch.uint8),
        "u16": torch.tensor([0, 1, 65535], dtype=torch.uint16),
        "u32": torch.tensor([0, 1, 2**32 - 1], dtype=torch.uint32),
        "u64": torch.tensor([0, 1, 2**63], dtype=torch.uint64),
        "bool": torch.tensor([True, False, True]),
        "neg_bit": torch.tensor([1 + 2j, 3 - 4j]).conj().imag,
        "shared": base[1],
        "expanded": torch.ones(1, 3).expand(4, 3),
    }
    for legacy in (False, True):
        path = tmp_path / f"all{legacy}.pt"
        torch.save(tensors, path, _use_new_zipfile_serialization=not legacy)
        loaded = load_tensor_file(path).arrays
        assert list(loaded) == list(tensors), legacy
        for name, expected in tensors.items():
            want = expected.float() if expected.dtype == torch.bfloat16 else expected
            want_np = want.resolve_neg().numpy() if hasattr(want, "resolve_neg") else want.numpy()
            np.testing.assert_array_equal(loaded[name], want_np, err_msg=f"{name} legacy={legacy}")
            assert loaded[name].dtype == want_np.dtype and loaded[name].flags.c_contiguous, name


def test_compressed_storage_records_load(tmp_path: Path) -> None:
    # torch.save stores records uncompressed; an archive re-zipped with compression still loads.
    torch.save({"q": torch.arange(12.0).reshape(3, 4).t()}, tmp_path / "plain.pt")
    with (
        zipfile.ZipFile(tmp_path / "plain.pt") as plain,
        zipfile.ZipFile(tmp_path / "deflated.pt", "w", zipfile.ZIP_DEFLATED) as deflated,
    ):
        for info in plain.infolist():
            deflated.writestr(info.filename, plain.read(info))
    expected = np.arange(12.0, dtype=np.float32).reshape(3, 4).T
    np.testing.assert_array_equal(load_tensor_file(tmp_path / "deflated.pt").arrays["q"], expected)


def test_big_endian_zip_pt(tmp_path: Path) -> None:
    values = np.arange(6, dtype=">f4")
    storage = Storage("storage", torch.FloatStorage, "0", "cuda:0", 6)
    path = zip_pt(tmp_path / "be.pt", {"q": tensor(storage, (2, 3), (3, 1))}, {"0": values.tobytes()}, byteorder=b"big")
    np.testing.assert_array_equal(load_tensor_file(path).arrays["q"], np.arange(6, dtype=np.float32).reshape(2, 3))


# --- safetensors --------------------------------------------------------------------------------


def test_safetensors_with_a_name_twice_is_refused(tmp_path: Path, refused: Refused) -> None:
    entry = '{"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}'
    text = ('{"q": ' + entry + ', "q": ' + entry.replace("[0, 4]", "[4, 8]") + "}").encode()
    path = tmp_path / "dup.safetensors"
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"\0" * 8)
    assert json.loads(text) == {"q": json.loads(entry.replace("[0, 4]", "[4, 8]"))}  # plain JSON: the last wins
    refused(path, "'q' appears twice")
    inner = b'{"q": {"dtype": "F32", "dtype": "I32", "shape": [1], "data_offsets": [0, 4]}}'
    path.write_bytes(struct.pack("<Q", len(inner)) + inner + b"\0" * 4)
    refused(path, "'dtype' appears twice")


# --- sessions stay readable ---------------------------------------------------------------------


def test_npy_headers_within_the_bound_still_load(tmp_path: Path) -> None:
    path = tmp_path / "long.npz"
    array = np.zeros((1,) * 30, np.float32)
    with zipfile.ZipFile(path, "w") as archive, archive.open("q.npy", "w") as member:
        npformat.write_array(member, array, version=(2, 0))
    assert load_tensor_file(path).arrays["q"].shape == (1,) * 30
    save_session(tmp_path / "s.attnviz", Session({"q": np.ones(3)}, {"note": "x" * 100_000}))
    assert load_session(tmp_path / "s.attnviz").settings["note"] == "x" * 100_000


@pytest.mark.filterwarnings("ignore::UserWarning")  # nested tensors are a prototype feature of torch
def test_tensor_kinds_attnviz_does_not_read_are_named(tmp_path: Path, refused: Refused) -> None:
    kinds = {
        "quantized": (torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.qint8), "is quantized (torch.qint8)"),
        "meta": (torch.empty(3, device="meta"), "is on device 'meta'"),
        "nested": (
            torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]),
            "is a kind of tensor attnviz does not read (nested)",
        ),
    }
    for name, (value, needle) in kinds.items():
        torch.save({"q": torch.ones(2), name: value}, tmp_path / f"{name}.pt")
        refused(tmp_path / f"{name}.pt", f"array '{name}' {needle}")


def test_tensors_with_attributes_and_sizes_load(tmp_path: Path) -> None:
    noted = torch.arange(4.0)
    noted.note = "kept by torch, dropped here"  # type: ignore[attr-defined]
    torch.save({"noted": noted, "shape": torch.Size([2, 3])}, tmp_path / "a.pt")
    loaded = load_tensor_file(tmp_path / "a.pt")
    np.testing.assert_array_equal(loaded.arrays["noted"], np.arange(4.0, dtype=np.float32))
    assert loaded.skipped == ["shape.0 (int, not a tensor)", "shape.1 (int, not a tensor)"]
    old = Call(torch._utils._rebuild_tensor, Storage("storage", torch.IntStorage, "0", "cpu", 3, None), 1, (2,), (1,))
    path = legacy_pt(tmp_path / "v1.pt", {"q": old}, [("0", 3, np.array([7, 8, 9], "<i4").tobytes())])
    np.testing.assert_array_equal(load_tensor_file(path).arrays["q"], [8, 9])
