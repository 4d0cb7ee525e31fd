"""The capture sweep's inputs and verdicts (issue 35), on a handful of vision, audio and
multimodal families: the inputs made from each config alone (image tokens as many as the model's
own vision features, grid patches, audio features) run the model, every call of every tower is
recorded and checked against a reference of its own, every map the model reports is a recorded
call. The verdict can fail (a reported map altered is found); the README's coverage section is the
report's own text. The full sweep is a bench (``python -m attnviz.bench sweep``), not a test.
Tiny random configs, built here; nothing is downloaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import attnviz
from attnviz.bench import capture_sweep, sweep_check, sweep_inputs, sweep_report

from .sweep_support import small_config

ROOT = Path(__file__).resolve().parents[2]

#: family: the media its inputs must hold.
FAMILIES = {
    "llava": "image",
    "qwen2_vl": "image",
    "gemma3": "image",
    "paligemma": "image",
    "blip-2": "image",
    "clip": "image",
    "siglip": "image",
    "whisper": "audio",
    "qwen2_audio": "audio",
}


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_inputs_made_from_the_config_run_and_every_call_is_exact(transformers, family):
    config = small_config(transformers, family)
    verdict = capture_sweep.sweep_implementation(config, "eager")
    assert verdict["status"] == "exact", verdict
    assert FAMILIES[family] in verdict["inputs"], verdict
    # Every call, the towers' too, was checked (none left unverified) and every map the model
    # reports is a recorded call (BLIP-2 reports its Q-Former's cross-attention twice: maps are
    # matched, not counted).
    assert verdict["unverified"] == 0 and verdict["unmatched"] == 0
    assert verdict["maps"] > 0 and verdict["calls"] >= 2


@pytest.mark.parametrize("family", ["llava", "whisper", "qwen2_vl"])
def test_the_sdpa_path_too(transformers, family):
    verdict = capture_sweep.sweep_implementation(small_config(transformers, family), "sdpa")
    assert verdict["status"] == "exact", verdict
    assert verdict["worst"] is not None and verdict["worst"] <= sweep_check.TOLERANCE


def test_image_tokens_are_as_many_as_the_models_features(transformers):
    config = small_config(transformers, "llava")
    model = capture_sweep._build(config, "eager")
    built = sweep_inputs.build(model, config)
    assert not isinstance(built, str), built
    ids = built.inputs["input_ids"]
    features = sweep_inputs.media_rows(model, "get_image_features", {"pixel_values": built.inputs["pixel_values"]})
    assert int((ids == config.image_token_id).sum()) == features
    assert built.inputs["attention_mask"][1, -sweep_inputs.PADDED :].eq(0).all()
    # Random text never holds a token id the config gives a meaning to.
    text = ids[ids != config.image_token_id]
    assert not set(text.tolist()) & sweep_inputs.special_ids(config)


def test_a_reported_map_no_call_reproduces_makes_it_partial(transformers):
    config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=4, vocab_size=50)
    model = transformers.GPT2Model(config).eval()
    model.set_attn_implementation("eager")
    ids = torch.tensor([[5, 7, 9, 11, 13], [2, 4, 6, 8, 10]])
    with torch.no_grad(), attnviz.capture(model) as cap:
        out = model(ids, output_attentions=True)
    maps = sweep_check.reported_maps(out)
    assert len(maps) == 2
    assert sweep_check.classify(cap, maps)[0] == "exact"
    altered = [maps[0], (maps[1][0], maps[1][1].roll(1, dims=-1))]
    status, detail = sweep_check.classify(cap, altered)
    assert status == "partial"
    assert "1 of 2 reported maps not recorded (attentions[1]" in detail["why"]


def test_a_call_of_weights_only_is_checked_as_weights_over_its_keys(transformers):
    # BLOOM's attention of its own is recorded through its softmax: weights only, nothing to
    # recompute them from. They must still be weights over the keys (an exact verdict checks
    # every call): altered to more than 1 per row, the verdict is partial.
    config = transformers.BloomConfig(n_layer=1, hidden_size=32, n_head=4, vocab_size=50)
    model = transformers.BloomModel(config).eval()
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(torch.tensor([[5, 7, 9, 11, 13]]))
    own = [c for c in cap.calls if c.weights_only]
    assert own and sweep_check.classify(cap, [])[0] == "exact"
    own[0].recorded_weights = own[0].recorded_weights * 2
    status, detail = sweep_check.classify(cap, [])
    assert status == "partial" and "no distribution over their keys" in detail["why"]


def results() -> list[dict[str, Any]]:
    return [
        {
            "family": "gpt2",
            "built": "yes",
            "sdpa": {"status": "exact", "inputs": ["text"]},
            "eager": {"status": "exact"},
        },
        {
            "family": "odd|one",
            "built": "yes",
            "sdpa": {"status": "partial", "inputs": ["text", "image"], "why": "2 calls | off"},
            "eager": {"status": "not offered", "why": "no eager"},
        },
        {"family": "broken", "built": "config: ValueError"},
        {"family": "silent", "built": "yes", "sdpa": {"status": "not run", "why": "needs a processor"}},
        {
            "family": "blind",
            "built": "yes",
            "sdpa": {
                "status": "exact",
                "inputs": ["text"],
                "skipped": "image: pixels (B, C, H, W): ValueError: 5 dims",
            },
            "eager": {
                "status": "exact",
                "inputs": ["text"],
                "skipped": "image: pixels (B, C, H, W): ValueError: 5 dims",
            },
        },
    ]


def test_the_readme_section_is_written_from_the_report(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n\n{sweep_report.BEGIN}\nold\n{sweep_report.END}\n\nafter\n", encoding="utf-8")
    sweep_report.write_readme(str(readme), results(), "9.9")
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("before\n\n") and text.endswith("\n\nafter\n")
    section = sweep_report.read_section(text)
    assert section == sweep_report.section(results(), "9.9")
    assert "| exact on at least one implementation | 2 |" in section
    assert "| of those that ran, on text only: their media refused (listed below) | 1 |" in section
    assert "| blind | image: pixels (B, C, H, W): ValueError: 5 dims |" in section
    assert "| odd\\|one | text, image | partial: 2 calls \\| off | not offered: no eager |" in section
    assert "| silent | needs a processor |" in section
    assert "(broken do not)" in section
    assert (
        "| broken | config: ValueError |"
        in section[section.index("Not built: a part of another model, or a config that does not build (1)") :]
    )
    empty = sweep_report.section([r for r in results() if r["family"] == "broken"], "9.9")
    assert "| (none) | | | |" in empty and "Not run on any implementation (0), and why" in empty


def test_the_readme_holds_a_section_of_the_reports_format():
    section = sweep_report.read_section((ROOT / "README.md").read_text(encoding="utf-8"))
    assert section is not None, "README.md has no sweep section"
    # Every fixed part of the report (the tables' headers and row labels) is in the README's
    # section, in the same order: the section was written by the report, not by hand.
    lines = sweep_report.lines(results(), "9.9")
    headers = [line for line, below in zip(lines, lines[1:]) if below.startswith("|---")]
    assert len(headers) == 8
    fixed = (
        [headers[0]]
        + [f"| {text} |" for text in sweep_report.STATUS_TEXT.values()]
        + [headers[1]]
        + [f"| {text} |" for text in sweep_report.FAMILY_TEXT.values()]
        + headers[2:]
    )
    at = 0
    for label in fixed:
        found = section.find(label, at)
        assert found >= 0, f"README's sweep section lacks {label!r} where the report puts it"
        at = found


def test_a_family_that_ran_without_its_media_is_said_apart():
    # Exact on text, its image refused: the media's refusal is its reason, never silent. A
    # family whose media ran on one implementation, or whose refused plan was text, is not.
    blind = next(r for r in results() if r["family"] == "blind")
    assert sweep_report.without_media(blind) == "image: pixels (B, C, H, W): ValueError: 5 dims"
    seen = {**blind, "eager": {"status": "exact", "inputs": ["text", "image"]}}
    assert sweep_report.without_media(seen) is None
    codes = {"family": "c", "sdpa": {"status": "exact", "inputs": ["audio codes"], "skipped": "text: ValueError"}}
    assert sweep_report.without_media(codes) is None
    video = {
        "family": "v",
        "sdpa": {"status": "exact", "inputs": ["text"], "skipped": "named inputs (pixel_values_videos): E"},
    }
    assert sweep_report.without_media(video) == "named inputs (pixel_values_videos): E"


def test_a_map_of_the_heads_average_in_every_head_is_read_as_such() -> None:
    """WavLM reports its heads' average in every head: the sweep matches it to the call as the
    model reports it, and still refuses a map that is neither the call nor its average."""
    import torch

    from attnviz.bench.sweep_check import unmatched_maps

    class Call:
        def __init__(self, weights: torch.Tensor) -> None:
            self._weights, self.shape = weights, tuple(weights.shape)

        def weights(self) -> torch.Tensor:
            return self._weights

    weights = torch.rand(2, 3, 4, 4).softmax(-1)
    averaged = weights.mean(dim=1, keepdim=True).expand_as(weights)
    assert unmatched_maps([Call(weights)], [("attentions[0]", averaged)]) == []
    other = torch.rand(2, 3, 4, 4).softmax(-1)
    assert [where for where, _gap in unmatched_maps([Call(weights)], [("attentions[0]", other)])] == ["attentions[0]"]


def test_a_refusal_is_reported_in_one_line():
    # transformers' "requires the PIL library" ImportError begins with a line break: a README
    # table row, and the report's line, would break there.
    from attnviz.bench.capture_sweep import said

    refused = ImportError("\nTimmWrapperModel requires the PIL library but it was not found.\n  pip install pillow")
    assert said(refused, 120) == (
        "ImportError: TimmWrapperModel requires the PIL library but it was not found. pip install pillow"
    )
    assert said(ValueError("x" * 500), 10) == "ValueError: " + "x" * 10


def test_sampling_weights_reported_heads_third_match_the_call_recorded_heads_second() -> None:
    """Deformable attention's sampling weights are recorded (B, H, L_q, points); RT-DETR v2 and
    D-FINE report them (B, L_q, H, points): the same numbers, matched; other numbers are not."""
    import torch

    from attnviz.bench.sweep_check import unmatched_maps

    class Call:
        def __init__(self, weights: torch.Tensor) -> None:
            self._weights, self.shape = weights, tuple(weights.shape)

        def weights(self) -> torch.Tensor:
            return self._weights

    recorded = torch.rand(2, 8, 30, 12).softmax(-1)  # (B, H, L_q, points)
    assert unmatched_maps([Call(recorded)], [("cross_attentions[0]", recorded.transpose(1, 2))]) == []
    other = torch.rand(2, 30, 8, 12).softmax(-1)
    missing = unmatched_maps([Call(recorded)], [("cross_attentions[0]", other)])
    assert [where for where, _gap in missing] == ["cross_attentions[0]"]


def test_a_map_reported_without_the_models_own_prefix_is_its_calls_trailing_block(transformers):
    # CPM-Ant prepends its prompt tokens and reports each map with their rows and keys dropped:
    # (B, H, 8, 8) of a (B, H, 40, 40) call. The map is matched to the call's trailing block; one
    # altered is still not.
    config = transformers.CONFIG_MAPPING["cpmant"]()
    capture_sweep.shrink(config)
    model = capture_sweep._build(config, "eager")
    ids = torch.tensor([[5, 7, 9, 11, 13, 15, 17, 19], [2, 4, 6, 8, 10, 12, 14, 16]])
    with torch.no_grad(), attnviz.capture(model) as cap:
        out = model(ids, output_attentions=True)
    maps = sweep_check.reported_maps(out)
    assert [tuple(m.shape[-2:]) for _, m in maps] == [(8, 8)] * 2
    assert all(call.shape[-1] > 8 for call in cap.calls)
    assert sweep_check.classify(cap, maps)[0] == "exact"
    altered = [maps[0], (maps[1][0], maps[1][1].roll(1, dims=-1))]
    assert sweep_check.classify(cap, altered)[0] == "partial"


def test_a_map_with_batch_and_heads_folded_is_read_from_its_call(transformers):
    # SAM's vision encoder reports each map (B * H, L, L): it was skipped, so its calls were
    # checked against nothing but their recomputation. It is now matched to the call of that
    # batch x heads; one altered is not.
    config = transformers.SamVisionConfig(
        hidden_size=16,
        output_channels=8,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
        window_size=2,
        global_attn_indexes=[1],
        mlp_dim=16,
    )
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = transformers.SamVisionModel(config).eval()
    pixels = torch.randn(2, 3, 32, 32)
    with torch.no_grad(), attnviz.capture(model) as cap:
        out = model(pixel_values=pixels, output_attentions=True)
    maps = sweep_check.reported_maps(out)
    assert [m.dim() for _, m in maps] == [3, 3]
    status, detail = sweep_check.classify(cap, maps)
    assert (status, detail["maps"], detail["unmatched"]) == ("exact", 2, 0)
    moved = maps[1][1].clone()  # a hundredth of one weight moved to the next key (near-uniform maps)
    moved[0, 0, 0] += 0.01
    moved[0, 0, 1] -= 0.01
    status, detail = sweep_check.classify(cap, [maps[0], (maps[1][0], moved)])
    assert status == "partial" and maps[1][0] in detail["why"]
