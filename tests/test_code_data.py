"""``attnviz code --data FILE``: arrays too big to print go to the data file, not into the script
as base64 (issue 36)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnviz.cli.code import code_main


def test_data_file_takes_three_512_by_64_arrays(tmp_path: Path, capsys, monkeypatch) -> None:  # noqa: ANN001
    rng = np.random.default_rng(0)
    arrays = {name: rng.standard_normal((1, 512, 64)).astype(np.float32) for name in ("queries", "keys", "values")}
    np.savez(tmp_path / "big.npz", **arrays)
    monkeypatch.chdir(tmp_path)
    assert code_main(["--load", "big.npz", "--data", "big_inputs.npz"]) == 0
    captured = capsys.readouterr()
    script = captured.out
    assert "base64" not in script and len(script) < 20_000
    assert "big_inputs.npz" in script and "loads its larger arrays" in captured.err
    with np.load(tmp_path / "big_inputs.npz") as data:
        stored = sorted(tuple(data[name].shape) for name in data.files)
    assert stored.count((1, 512, 64)) == 3
