"""Positions read from one capture (issue 34): a cached step whose rotary positions restart at 0,
and position_ids counting the pads of a left-padded batch, each beside its correct twin (the same
weights, right positions) and the variants the doctor was not built on (Llama's eager and SDPA
paths, Qwen2, Mistral with a sliding window, GPT-2's learned positions). What one capture cannot
show is a note that says so and names ``attnviz check``; never an error, never silence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import attnviz
from attnviz.capture import diagnose_run, format_finding
from attnviz.cli.doctor import doctor_main
from tests.compare import bug_models as bugs
from tests.compare.models import VOCAB, batch, gpt2, llama, transformers


def lines(findings: Any) -> str:
    return "\n".join([*(format_finding(f) for f in findings), *findings.notes])


def restart(model: Any) -> Any:
    """A transformers decoder whose rotary positions count from each call's first token."""
    rotary = model.model.rotary_emb.forward
    model.model.rotary_emb.forward = lambda x, position_ids: rotary(x, position_ids - position_ids[:, :1])
    return model


def step_diagnosis(
    model: Any, repeat: bool, lengths: tuple[int, ...] = (6, 6, 6), side: str = "right", copy_of: int = 1
) -> Any:
    """The doctor on a capture of one cached step after a 4-token prefill; the step's token is
    key ``copy_of``'s again (``repeat``) or a token of its own."""
    inputs = batch(lengths, side=side) if side == "left" else bugs.padded(lengths)
    ids = inputs["input_ids"]
    # A token of its own: one no sequence has in its first 4 (both vocabularies hold 1-29).
    new = next(t for t in range(1, bugs.VOCAB) if not bool((ids[:, :4] == t).any()))
    step = ids[:, copy_of : copy_of + 1] if repeat else torch.full_like(ids[:, :1], new)
    arguments = bugs.cached_step(model, inputs, 4, step)
    with attnviz.capture(model) as cap, torch.no_grad():
        model(**arguments)
    return diagnose_run(cap.to_run())


def qwen2() -> Any:
    t = transformers()
    torch.manual_seed(0)
    config = t.Qwen2Config(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        attn_implementation="sdpa",
    )
    return t.Qwen2ForCausalLM(config).eval()


def mistral(window: int | None = 3) -> Any:
    t = transformers()
    torch.manual_seed(0)
    config = t.MistralConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        sliding_window=window,
        attn_implementation="eager",
    )
    return t.MistralForCausalLM(config).eval()


# ----------------------------------------------------------------------------- a cached step


def test_a_cached_step_whose_rotary_positions_restart_is_named_from_its_capture_alone():
    found = step_diagnosis(bugs.RotaryDecoder(restart_positions=True), repeat=True)
    (finding,) = found
    assert (finding.kind, finding.severity, finding.call, finding.name) == ("positions", "error", 0, "layers.0")
    assert finding.batch == (0, 1, 2) and finding.rows == (0,) and finding.heads == (0, 1, 2, 3)
    for words in (
        "positions, not the mask",
        "positions restart at 0",
        "new token at key 4 (query row 0) repeats the token at key 1",
        "rotation between their keys is -1 position(s)",
        "the 4 cached token(s) before the step put them 3 apart",
    ):
        assert words in finding.message, finding.message
    # The twin: the same weights, the step at position 4. Checked (its copy of key 1 is 3 apart): no note.
    twin = step_diagnosis(bugs.RotaryDecoder(), repeat=True)
    assert twin == [] and twin.notes == [], lines(twin)


def rotate_unseen(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """bug_models.rotate with its angles computed outside torch (numpy): no capture sees the
    positions turned into angles, and no module holds them."""
    import numpy as np

    angle = positions.numpy()[:, None, :, None].astype(np.float64) * np.array([0.3, 1.0])
    cos, sin = (torch.from_numpy(f(angle)).float() for f in (np.cos, np.sin))
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


def test_a_step_whose_positions_are_recorded_is_read_without_a_repeated_token():
    # bug_models.rotate multiplies the positions by inverse frequencies: the capture sees them.
    found = step_diagnosis(bugs.RotaryDecoder(restart_positions=True), repeat=False)
    (finding,) = found
    assert (finding.kind, finding.severity, finding.call) == ("positions", "error", 0), lines(found)
    assert "positions restart at 0 while 4 key(s) are cached" in finding.message
    twin = step_diagnosis(bugs.RotaryDecoder(), repeat=False)
    assert twin == [] and twin.notes == [], lines(twin)


def test_a_step_whose_token_repeats_none_in_its_cache_is_said_to_be_unchecked(monkeypatch):
    monkeypatch.setattr(bugs, "rotate", rotate_unseen)
    for model in (bugs.RotaryDecoder(restart_positions=True), bugs.RotaryDecoder()):
        found = step_diagnosis(model, repeat=False)
        assert found == [], lines(found)
        (note,) = found.notes
        assert note.startswith("positions not checked in the cached step(s) of call(s) 0, 1")
        assert "attnviz check --checks kv_cache" in note


MODELS = {
    "llama sdpa": lambda: llama(implementation="sdpa"),
    "llama eager": lambda: llama(implementation="eager"),
    "qwen2": qwen2,
    "mistral": lambda: mistral(None),
}


@pytest.mark.parametrize("name", MODELS)
def test_restarted_positions_in_transformers_decoders(name):
    found = step_diagnosis(restart(MODELS[name]()), repeat=True)
    (finding,) = found
    assert (finding.kind, finding.severity, finding.call) == ("positions", "error", 0), lines(found)
    assert finding.name == "model.layers.0.self_attn" and finding.rows == (0,)
    assert "positions restart at 0" in finding.message
    twin = step_diagnosis(MODELS[name](), repeat=True)
    assert twin == [] and twin.notes == [], lines(twin)


def test_a_sliding_window_cache_that_dropped_keys_is_read_from_the_positions_recorded():
    # Mistral's window of 3 keeps the last 2 keys in its cache: a key's place in the call is no
    # longer its position, so the rotation between copies cannot name a restart; the rotary
    # module's tables, recorded at capture (the restart is made inside its forward), can.
    twin = step_diagnosis(mistral(3), repeat=True, copy_of=3)
    assert twin == [] and twin.notes == [], lines(twin)
    found = step_diagnosis(restart(mistral(3)), repeat=True, copy_of=3)
    (finding,) = found
    assert (finding.kind, finding.severity, finding.call) == ("positions", "error", 0), lines(found)
    assert "positions restart at 0 while 2 key(s) are cached" in finding.message
    assert found.notes == []


def test_a_left_padded_step_reads_positions_among_real_keys():
    # Left padded, generate()'s positions: the step's token is real token 4 - pads, its copy
    # real token 1 - pads (both after the pads). The twin is silent; a restart is still named.
    twin = step_diagnosis(llama(), repeat=True, lengths=(6, 4, 5), side="left")
    assert [f for f in twin if f.kind == "positions"] == [], lines(twin)
    found = step_diagnosis(restart(llama()), repeat=True, lengths=(6, 4, 5), side="left")
    (finding,) = [f for f in found if f.kind == "positions"]
    # Element 1 has two pads: its key 1 is one, no copy of a real token to read.
    assert finding.batch == (0, 2) and "positions restart at 0" in finding.message, lines(found)


def test_a_model_without_rotary_positions_is_never_blamed():
    # GPT-2's keys carry no rotation; its learned position embedding was called with the step's
    # position (4, after 4 cached tokens), recorded at capture: checked, nothing to say.
    found = step_diagnosis(gpt2(), repeat=True)
    assert found == [] and found.notes == [], lines(found)


# ----------------------------------------------------------------------------- a left-padded batch


def capture_left_padded(model: Any, inputs: dict[str, Any], tokens: bool = True) -> Any:
    keep = inputs["attention_mask"]
    cap = attnviz.capture(model, tokens=bugs.tokens(inputs["input_ids"], keep) if tokens else None)
    with cap, torch.no_grad():
        model(**inputs)
    return cap


def test_arange_positions_over_left_padding_are_named_from_one_capture():
    found = diagnose_run(capture_left_padded(*bugs.arange_positions_bos()).to_run())
    (finding,) = found
    assert (finding.kind, finding.severity, finding.call) == ("positions", "error", 0), lines(found)
    assert finding.batch == (0, 1) and finding.rows == (0, 2)
    for words in (
        "positions, not the mask",
        "batch elements 0 and 1 start with the same tokens (w1)",
        "element 1 has 2 more pad(s) before it than element 0",
        "arange over a left-padded batch",
        "the mask follows the padding here, so it was ruled out",
    ):
        assert words in finding.message, finding.message
    twin = diagnose_run(capture_left_padded(*bugs.arange_positions_bos_twin()).to_run())
    assert twin == [] and twin.notes == [], lines(twin)


def test_a_rotary_shift_of_whole_sequences_is_a_note_not_an_error():
    # Rotary positions only: arange moves each sequence as a whole, which rotary attention ignores
    # (attnviz check finds the batch equal to each sequence alone).
    found = diagnose_run(capture_left_padded(*bugs.arange_positions_bos(absolute=False)).to_run())
    assert found == [], lines(found)
    (note,) = found.notes
    assert "position_ids count the pads" in note and "rotary attention ignores" in note


def test_gpt2_left_padded_without_position_ids_is_named():
    # transformers' GPT-2 counts positions with arange when it is given none.
    inputs = bugs.with_bos(batch((6, 4, 3), side="left"))
    found = diagnose_run(capture_left_padded(gpt2(), inputs).to_run())
    assert [f.kind for f in found if f.severity == "error"] == ["positions"], lines(found)
    assert "element 1 has 2 more pad(s)" in found[0].message
    own = (inputs["attention_mask"].cumsum(-1) - 1).clamp(min=0)
    twin = diagnose_run(capture_left_padded(gpt2(), {**inputs, "position_ids": own}).to_run())
    assert [f for f in twin if f.severity == "error"] == [] and twin.notes == [], lines(twin)


def test_what_a_left_padded_capture_cannot_show_is_said():
    # No tokens (the padding is not known): the positions were not checked.
    found = diagnose_run(capture_left_padded(gpt2(), bugs.with_bos(batch((6, 4, 3), side="left")), False).to_run())
    assert [f for f in found if f.severity == "error"] == [], lines(found)
    assert any(n.startswith("positions not checked in the left-padded batch") for n in found.notes), lines(found)
    assert any("attnviz check --checks padding" in n for n in found.notes)
    # Tokens but no two elements that start alike: GPT-2's position embedding, recorded at
    # capture, was given the pads' count (arange over the batch).
    found = diagnose_run(capture_left_padded(gpt2(), batch((6, 4, 3), side="left"), True).to_run())
    (finding,) = found
    assert (finding.kind, finding.severity, finding.batch) == ("positions", "error", (1, 2)), lines(found)
    assert "batch element 1's first real token (row 2, after 2 pad(s)) was given position 2" in finding.message
    assert "learned position embeddings" in finding.message
    # Right padded: arange is each sequence's own; nothing to say.
    right = diagnose_run(capture_left_padded(gpt2(), bugs.with_bos(batch((6, 4, 3)))).to_run())
    assert right.notes == [], lines(right)


# ----------------------------------------------------------------------------- the command line


def test_attnviz_doctor_exits_1_on_wrong_positions_and_0_on_their_twins(tmp_path: Path, capsys):
    inputs = bugs.padded((6, 6, 6))
    for restarted, status in ((True, 1), (False, 0)):
        model = bugs.RotaryDecoder(restart_positions=restarted)
        arguments = bugs.cached_step(model, inputs, 4, inputs["input_ids"][:, 1:2])
        with attnviz.capture(model) as cap, torch.no_grad():
            model(**arguments)
        path = tmp_path / f"step-{restarted}.attnviz-capture"
        cap.save(path)
        assert doctor_main([str(path)]) == status
        out = capsys.readouterr().out
        assert ("positions restart at 0" in out) == restarted, out
    for factory, status in ((bugs.arange_positions_bos, 1), (bugs.arange_positions_bos_twin, 0)):
        path = tmp_path / f"{factory.__name__}.attnviz-capture"
        capture_left_padded(*factory()).save(path)
        assert doctor_main([str(path)]) == status
        out = capsys.readouterr().out
        assert ("position_ids count them" in out) == (status == 1), out
    unchecked = tmp_path / "unchecked.attnviz-capture"
    capture_left_padded(gpt2(), batch((6, 4, 3), side="left"), tokens=False).save(unchecked)
    assert doctor_main([str(unchecked)]) == 0
    out = capsys.readouterr().out
    assert "note: positions not checked in the left-padded batch" in out


class _TextImageFusion(torch.nn.Module):
    """Grounding DINO's shape: a text encoder with learned positions, then a layer given the image
    features and the text features at once, whose text queries attend to every image key."""

    def __init__(self) -> None:
        super().__init__()
        self.embed_positions = torch.nn.Embedding(16, 8)
        self.fusion = _Fusion()

    def forward(self, text: torch.Tensor, image: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(text.shape[1])[None].expand(text.shape[0], -1)
        return self.fusion(image, text + self.embed_positions(positions))


class _Fusion(torch.nn.Module):
    def forward(self, vision_features: torch.Tensor, text_features: torch.Tensor) -> torch.Tensor:
        q, k = text_features[:, None], vision_features[:, None]
        return torch.nn.functional.scaled_dot_product_attention(q, k, k)


def test_text_queries_over_image_keys_are_no_cached_step_whose_positions_restart():
    # The text's positions count from 0 and its queries see 12 image keys: read as a cached step,
    # that is the "positions restart" finding. The layer was given two sequences, so it is not one.
    model = _TextImageFusion()
    g = torch.Generator().manual_seed(0)
    text, image = torch.randn(2, 4, 8, generator=g), torch.randn(2, 12, 8, generator=g)
    with attnviz.capture(model) as cap, torch.no_grad():
        model(text, image)
    (call,) = cap.calls
    assert call.positions is None
    assert not [f for f in diagnose_run(cap.to_run()) if "positions" in format_finding(f)]
    # A layer given one sequence whose last 4 states are the text's (a cached step's keys end with
    # the step's own) keeps the positions, and their restart at 0 is found.
    model.fusion = _CachedStep()
    with attnviz.capture(model) as cap, torch.no_grad():
        model(text, image)
    assert cap.calls[0].positions is not None
    assert any("positions restart at 0" in format_finding(f) for f in diagnose_run(cap.to_run()))


class _CachedStep(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attend = _LastFourAttend()

    def forward(self, cached: torch.Tensor, step: torch.Tensor) -> torch.Tensor:
        return self.attend(torch.cat([cached, step], 1))


class _LastFourAttend(torch.nn.Module):
    def forward(self, states: torch.Tensor) -> torch.Tensor:
        q, k = states[:, None, -4:], states[:, None]
        return torch.nn.functional.scaled_dot_product_attention(q, k, k)


class _TowerAndResampler(torch.nn.Module):
    """Idefics2's shape: a vision tower with learned patch positions and attention of its own,
    then a resampler whose latents attend over the tower's features and themselves (as many
    latents as patches: no two lengths to tell them by)."""

    def __init__(self) -> None:
        super().__init__()
        self.tower = _Tower()
        self.resampler = _Resampler()

    def forward(self, patches: torch.Tensor) -> torch.Tensor:
        return self.resampler(self.tower(patches))


class _Tower(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.position_embedding = torch.nn.Embedding(16, 8)
        self.attn = _SelfAttend()

    def forward(self, patches: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(patches.shape[1])[None].expand(patches.shape[0], -1)
        return self.attn(patches + self.position_embedding(positions))


class _SelfAttend(torch.nn.Module):
    def forward(self, states: torch.Tensor) -> torch.Tensor:
        q = states[:, None]
        return torch.nn.functional.scaled_dot_product_attention(q, q, q)[:, 0]


class _Resampler(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.latents = torch.nn.Parameter(torch.randn(4, 8, generator=torch.Generator().manual_seed(3)))
        self.attn = _LatentsOverFeatures()

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.attn(self.latents[None].expand(features.shape[0], -1, -1), features)


class _LatentsOverFeatures(torch.nn.Module):
    def forward(self, latents: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        q, k = latents[:, None], torch.cat([features, latents], 1)[:, None]
        return torch.nn.functional.scaled_dot_product_attention(q, k, k)


def test_positions_read_in_another_stack_are_not_a_later_calls_own():
    # The tower's 4 patch positions count from 0; the resampler's 4 latents see 4 features and
    # themselves: read as a cached step, "positions restart". The positions belong to the tower,
    # a branch with attention calls of its own: its call keeps them, the resampler's does not.
    model = _TowerAndResampler()
    with attnviz.capture(model) as cap, torch.no_grad():
        model(torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(0)))
    tower, resampler = cap.calls
    assert tower.positions is not None and tower.positions.tolist() == [[0, 1, 2, 3]] * 2
    assert resampler.positions is None
    assert not [f for f in diagnose_run(cap.to_run()) if "positions" in format_finding(f)]
