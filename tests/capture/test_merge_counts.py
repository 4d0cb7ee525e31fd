"""Counts read from rank files (issue 30): a world size that would size an allocation is refused in
one line before anything counts to it, and ranks that recorded other calls are named."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from attnviz.capture.merge import merge_runs
from attnviz.cli.doctor import doctor_main
from attnviz.io import AttnvizFileError, load_capture, save_capture
from attnviz.state.run import MAX_WORLD_SIZE, AttentionCall, ModelRun, ModelRunError, Shard


def _run(rank: int, world: int, names: tuple[str, ...] = ("layer.0", "layer.1")) -> ModelRun:
    g = np.random.default_rng(rank)
    calls = tuple(
        AttentionCall(name, *(g.standard_normal((1, 2, 3, 4)).astype(np.float32) for _ in range(3))) for name in names
    )
    return ModelRun(calls, shard=Shard(rank, world, "data"))


def _refusal(runs: list[ModelRun]) -> str:
    started = time.perf_counter()
    with pytest.raises(ModelRunError) as info:
        merge_runs(runs)
    # Seconds would mean counting to the world size (10^8 took 3 GB and tens of seconds).
    assert time.perf_counter() - started < 1.0
    text = str(info.value)
    assert text.startswith("cannot merge the ranks: ") and "\n" not in text and len(text) < 300, text
    return text


@pytest.mark.parametrize("world", [10**8, 10**4000])
def test_a_huge_world_is_refused_without_counting_to_it(world: int) -> None:
    text = _refusal([_run(0, world), _run(1, world)])
    assert f"the captures claim a world of more than {MAX_WORLD_SIZE:,} ranks" in text


def test_a_world_of_more_ranks_than_files_names_them() -> None:
    assert "the ranks given are [0, 1]; a world of 3 needs each of 0 to 2 once" in _refusal([_run(0, 3), _run(1, 3)])


def test_other_calls_are_named() -> None:
    other = _refusal([_run(0, 2), _run(1, 2, ("layer.0", "decoder.1"))])
    assert other.endswith("rank 1 recorded other calls than rank 0: its call 1 is 'decoder.1', rank 0's 'layer.1'")
    fewer = _refusal([_run(0, 2), _run(1, 2, ("layer.0",))])
    assert fewer.endswith(
        "rank 1 recorded other calls than rank 0 (1 against 2): rank 0 has 'layer.1' more, from call 1"
    )
    more = _refusal([_run(0, 2), _run(1, 2, ("layer.0", "layer.1", "layer.2"))])
    assert more.endswith("(3 against 2): rank 1 has 'layer.2' more, from call 2")


@pytest.mark.parametrize("world", [10**8, 10**4000])
def test_a_rank_file_claiming_a_huge_world_is_refused_when_read(tmp_path: Path, world: int, capsys) -> None:
    paths = [tmp_path / f"rank{r}.attnviz-capture" for r in range(2)]
    for rank, path in enumerate(paths):
        save_capture(path, _run(rank, world))
    with pytest.raises(AttnvizFileError, match=f"claims a world of more than {MAX_WORLD_SIZE:,} ranks"):
        load_capture(paths[0])
    started = time.perf_counter()
    assert doctor_main([str(p) for p in paths]) == 3
    assert time.perf_counter() - started < 1.0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "claims a world of more than" in err and len(err) < 300, err


def test_the_largest_world_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "rank.attnviz-capture"
    save_capture(path, _run(5, MAX_WORLD_SIZE))
    assert load_capture(path).shard == Shard(5, MAX_WORLD_SIZE, "data")
