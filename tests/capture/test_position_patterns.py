"""Rotary code of patterns the first reading of positions missed (``recorded_positions``): learned
or increasing frequencies, interleaved rotation, a partial rotary dimension, YaRN-blended
frequencies, angles as positions over wavelengths, positions computed from the cache's length
inside the model; and positions named by the kind of code they came from (rotary, sinusoidal,
learned, ALiBi). Each pattern is a cached decoding step whose positions restart at 0 (the bug)
beside its twin (the same weights, positions offset by the cache): the doctor names the first
from one capture and stays silent on the second."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attnviz
from attnviz.capture import diagnose_run, format_finding
from attnviz.capture.recorded_positions import ALIBI, ROTARY, SINUSOIDAL, positions_from_angles, reading_from_function
from attnviz.cli.doctor import doctor_main
from attnviz.io.capture_file import save_capture

WIDTH, HEADS, VOCAB = 16, 2, 40
D = WIDTH // HEADS


def _geometric(n: int, base: float = 100.0) -> torch.Tensor:
    return base ** (-torch.arange(n, dtype=torch.float32) / n)


def _yarn(n: int) -> torch.Tensor:
    """YaRN's blend: high frequencies kept, low ones interpolated 4x, a linear ramp between."""
    extrapolated = _geometric(n, 1000.0)
    ramp = torch.clamp((torch.arange(n, dtype=torch.float32) - 1) / 2, 0, 1)
    return extrapolated * (1 - ramp) + extrapolated / 4 * ramp


class Turning(nn.Module):
    """One pattern of rotary code of a model's own: ``angles(positions)`` then a rotation of
    ``rotated`` dimensions of each head (``layout``: "half" pairs i and i + r/2, "pairs" 2i and
    2i + 1; "complex": as complex numbers)."""

    def __init__(self, pattern: str) -> None:
        super().__init__()
        self.pattern = pattern
        self.rotated = D // 2 if pattern == "partial" else D
        n = self.rotated // 2
        if pattern == "learned":
            self.freqs = nn.Parameter(torch.tensor([0.9, 0.05, 0.4, 0.17][:n]))
        elif pattern == "increasing":
            self.register_buffer("freqs", _geometric(n).flip(0), persistent=False)
        elif pattern == "yarn":
            self.register_buffer("freqs", _yarn(n), persistent=False)
        else:
            self.register_buffer("freqs", _geometric(n), persistent=False)

    def angles(self, positions: torch.Tensor) -> torch.Tensor:
        t = positions.float()
        if self.pattern == "partial":  # positions over wavelengths
            return t[:, None] / (1.0 / self.freqs)
        if self.pattern == "complex":
            return torch.einsum("i,j->ij", t, self.freqs)
        return t[:, None] * self.freqs

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        theta = self.angles(positions)  # (L, r/2)
        r = self.rotated
        head, rest = x[..., :r], x[..., r:]
        if self.pattern == "complex":
            pairs = torch.view_as_complex(head.float().reshape(*head.shape[:-1], -1, 2).contiguous())
            turned = torch.view_as_real(pairs * torch.polar(torch.ones_like(theta), theta)).flatten(-2)
        elif self.pattern in ("increasing", "learned"):  # pairs (2i, 2i + 1)
            cos, sin = theta.cos(), theta.sin()
            even, odd = head[..., 0::2], head[..., 1::2]
            turned = torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)
        else:  # halves (i, i + r/2); YaRN scales both tables alike
            scale = 1.0 + 0.1 * math.log(4.0) if self.pattern == "yarn" else 1.0
            cos, sin = (torch.cat([theta, theta], -1).cos() * scale, torch.cat([theta, theta], -1).sin() * scale)
            one, two = head[..., : r // 2], head[..., r // 2 :]
            turned = head * cos + torch.cat([-two, one], -1) * sin
        return torch.cat([turned, rest], -1)


class Layer(nn.Module):
    def __init__(self, pattern: str) -> None:
        super().__init__()
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.turn = Turning(pattern)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, cache: dict[str, Any], at: int) -> torch.Tensor:
        b, n, _ = x.shape
        q, k, v = (t.view(b, n, HEADS, D).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
        q, k = self.turn(q, positions), self.turn(k, positions)
        if at in cache:
            old_k, old_v = cache[at]
            k, v = torch.cat([old_k, k], 2), torch.cat([old_v, v], 2)
        cache[at] = (k, v)
        keep = torch.ones(n, k.shape[2], dtype=torch.bool).tril(k.shape[2] - n)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        return x + out.transpose(1, 2).reshape(b, n, WIDTH)


class CountingDecoder(nn.Module):
    """Its positions are computed inside forward from the cache's length (``restart``: from the
    new tokens alone, the bug)."""

    def __init__(self, pattern: str, restart: bool = False) -> None:
        super().__init__()
        torch.manual_seed(11)
        self.restart = restart
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.layers = nn.ModuleList(Layer(pattern) for _ in range(2))
        self.eval()

    def forward(self, ids: torch.Tensor, cache: dict[str, Any]) -> torch.Tensor:
        held = 0 if self.restart or 0 not in cache else cache[0][0].shape[2]
        positions = torch.arange(held, held + ids.shape[1])
        x = self.embed(ids)
        for at, layer in enumerate(self.layers):
            x = layer(x, positions, cache, at)
        return x


PATTERNS = ("learned", "increasing", "complex", "partial", "yarn")


def step(model: nn.Module) -> attnviz.ModelRun:
    ids = torch.randint(1, VOCAB, (2, 7), generator=torch.Generator().manual_seed(2))
    cache: dict[str, Any] = {}
    with torch.no_grad():
        model(ids[:, :5], cache)
        with attnviz.capture(model) as cap:
            model(ids[:, 5:], cache)
    return cap.to_run()


def lines(found: Any) -> str:
    return "\n".join([*map(format_finding, found), *found.notes])


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_restart_in_rotary_code_of_each_pattern_is_named_and_its_twin_passes(pattern: str):
    bug = step(CountingDecoder(pattern, restart=True))
    assert bug.calls[0].positions_from == ROTARY and bug.calls[0].positions.tolist() == [[0, 1]]
    found = diagnose_run(bug)
    assert [(f.kind, f.severity, f.call) for f in found] == [("positions", "error", 0)], lines(found)
    assert "positions restart at 0 while 5 key(s) are cached" in found[0].message
    assert "rotary embedding was called with positions 0 1" in found[0].message
    twin = step(CountingDecoder(pattern))
    assert twin.calls[0].positions.tolist() == [[5, 6]]
    result = diagnose_run(twin)
    assert list(result) == [] and result.notes == [], lines(result)


def test_the_doctor_exits_1_on_a_yarn_restart_and_0_on_its_twin(tmp_path: Path, capsys):
    for restart, status in ((True, 1), (False, 0)):
        path = tmp_path / f"{restart}.attnviz-capture"
        save_capture(path, step(CountingDecoder("yarn", restart)))
        assert doctor_main([str(path)]) == status
        out = capsys.readouterr().out
        assert ("positions restart at 0" in out) == restart, out


def test_products_that_are_no_positions_are_not_read():
    freqs = torch.tensor([0.9, 0.05, 0.4, 0.17])
    # Learned frequencies are read only with whole positions that count.
    assert positions_from_angles(torch.mul, (torch.tensor([[0.5], [1.5]]), freqs)) is None
    assert positions_from_angles(torch.mul, (torch.tensor([[3.0], [1.0]]), freqs)) is None
    assert positions_from_angles(torch.mul, (torch.tensor([[3.0], [4.0]]), freqs)).tolist() == [[3, 4]]
    # One whole number (a step of one token, or a 0/1 mask) times learned frequencies: not read.
    assert positions_from_angles(torch.mul, (torch.tensor([[1.0]]), freqs)) is None
    # Frequencies far above a few radians per position, or a norm over the hidden states.
    assert positions_from_angles(torch.mul, (torch.tensor([[3.0], [4.0]]), freqs * 100)) is None
    hidden = torch.randn(1, 4, 4)
    assert positions_from_angles(torch.Tensor.__truediv__, (hidden, hidden.norm(dim=-1, keepdim=True))) is None


def test_positions_are_named_by_the_kind_of_code_they_came_from():
    # ALiBi: one slope per head before the keys' positions (2^-8/H, its powers).
    slopes = 2.0 ** (-8.0 * torch.arange(1, 5) / 4)
    kind, read = reading_from_function(torch.mul, (slopes[:, None], torch.arange(6.0)[None, :]))
    assert kind == ALIBI and read.tolist() == [list(range(6))]
    # A sinusoidal table (sin and cos of one position in one row, in halves or interleaved).
    angles = torch.outer(torch.arange(32.0), _geometric(4, 10000.0))
    for table in (
        torch.cat([angles.sin(), angles.cos()], -1),
        torch.stack([angles.sin(), angles.cos()], -1).flatten(1),
    ):
        kind, read = reading_from_function(torch.Tensor.__getitem__, (table[None], (slice(None), slice(None, 3))))
        assert kind == SINUSOIDAL and read.tolist() == [[0, 1, 2]]
        kind, read = reading_from_function(F.embedding, (torch.tensor([[4, 5]]), table))
        assert kind == SINUSOIDAL and read.tolist() == [[4, 5]]
    # A rotary table stays rotary.
    rotary = torch.outer(torch.arange(32.0), _geometric(4)).cos()
    reading = reading_from_function(torch.Tensor.__getitem__, (torch.cat([rotary] * 2, -1), slice(0, 3)))
    assert reading is not None and reading[0] == ROTARY


class Where(nn.Module):
    """The absolute sinusoidal encoding, computed for the positions it is given, under a name
    that says nothing: its sines and cosines joined in one tensor say what it is."""

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        angles = positions.float()[..., None] * _geometric(WIDTH // 2, 10000.0)
        return torch.cat([angles.sin(), angles.cos()], -1)


class SinusoidalPositionalEmbedding(nn.Module):
    """The same, written into alternate columns (no join to see): its name says what it is."""

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        angles = positions.float()[..., None] * _geometric(WIDTH // 2, 10000.0)
        out = torch.zeros(*positions.shape, WIDTH)
        out[..., 0::2], out[..., 1::2] = angles.sin(), angles.cos()
        return out


class SinusoidalDecoder(nn.Module):
    """A decoder adding sinusoidal positions to its embeddings, given a left-padded batch with
    ``arange`` positions (the bug: they count the pads) or each sequence's own."""

    def __init__(self, own: bool, encoding: type[nn.Module]) -> None:
        super().__init__()
        torch.manual_seed(4)
        self.own = own
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.positions = encoding()
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        b, n = input_ids.shape
        given = (attention_mask.cumsum(-1) - 1).clamp(min=0) if self.own else torch.arange(n).expand(b, n)
        x = self.embed(input_ids) + self.positions(given)
        q, k, v = (t.view(b, n, HEADS, D).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
        keep = attention_mask.bool()[:, None, None, :] & torch.ones(n, n, dtype=torch.bool).tril()
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        return out.transpose(1, 2).reshape(b, n, WIDTH)


@pytest.mark.parametrize("encoding", [Where, SinusoidalPositionalEmbedding])
def test_sinusoidal_positions_counting_the_pads_are_an_error_not_a_rotary_note(encoding: type[nn.Module]):
    ids = torch.randint(1, VOCAB, (2, 6), generator=torch.Generator().manual_seed(3))
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1]])
    ids = ids * mask
    words = [[f"t{int(i)}" if m else "<pad>" for i, m in zip(row, keep)] for row, keep in zip(ids, mask)]
    runs = []
    for own in (False, True):
        model = SinusoidalDecoder(own, encoding).eval()
        with attnviz.capture(model, tokens=words) as cap, torch.no_grad():
            model(input_ids=ids, attention_mask=mask)
        runs.append(cap.to_run())
    bug, twin = runs
    assert bug.calls[0].positions_from == SINUSOIDAL
    found = diagnose_run(bug)
    errors = [f for f in found if f.severity == "error"]
    assert [(f.kind, f.batch) for f in errors] == [("positions", (1,))], lines(found)
    assert "adds sinusoidal position embeddings" in errors[0].message
    assert not any("rotary" in note for note in found.notes), lines(found)
    result = diagnose_run(twin)
    assert list(result) == [] and result.notes == [], lines(result)


def test_a_table_of_sines_and_cosines_read_in_attention_is_rotary_and_marian_s_is_sinusoidal():
    t = pytest.importorskip("transformers")
    ids = torch.randint(5, 90, (2, 6), generator=torch.Generator().manual_seed(1))
    # CodeGen rotates by rows of one sin|cos table picked inside its attention module.
    config = t.CodeGenConfig(vocab_size=100, n_embd=32, n_layer=1, n_head=4, rotary_dim=4, n_ctx=32, n_positions=32)
    # Marian adds rows of a sinusoidal table (an nn.Embedding of its own) to its embeddings.
    marian = t.MarianConfig(
        vocab_size=100,
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=16,
        decoder_ffn_dim=16,
        max_position_embeddings=64,
        pad_token_id=0,
        decoder_start_token_id=0,
    )
    for model, inputs, kind in (
        (t.CodeGenModel(config), {"input_ids": ids}, ROTARY),
        (t.MarianModel(marian), {"input_ids": ids, "decoder_input_ids": ids[:, :4]}, SINUSOIDAL),
    ):
        with attnviz.capture(model.eval()) as cap, torch.no_grad():
            model(**inputs)
        run = cap.to_run()
        assert {call.positions_from for call in run.calls} == {kind}
        assert run.calls[0].positions.tolist() == [list(range(6))]
        assert list(diagnose_run(run)) == [], lines(diagnose_run(run))
