"""The sweep on families its first inputs and small configs did not run (issue 35): a config
``AutoModel`` does not map built with the class that runs it, a hybrid's small config keeping an
attention layer, latent attention shrunk as one, a vision tower fed grid patches as hidden states,
inputs a forward takes by name (LXMERT's regions, InstructBLIP's Q-Former prompt, a Q-Former's
own states), a config whose sizes the small one breaks retried with its layers cut only; and the
report: a family no implementation builds is "not offered" with its reason, parts of a sweep
joined with a rerun's results replacing the first run's. Tiny configs, nothing downloaded; the
verdicts come from transformers' own models and their ``output_attentions``."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from attnviz.bench import capture_sweep, sweep_configs, sweep_report

#: family: the kind of input the sweep must have made for it (what the plain sweep lacked).
FAMILIES = {
    "deepseek_v3": "text",  # latent attention: its ranks and head sizes shrunk together
    "granitemoehybrid": "text",  # a hybrid whose default holds no attention layer
    "jamba": "text",  # attention every 8th layer from the 4th: one of the two left
    "glm4v_vision": "image",  # a tower of its own: patches as hidden_states, grid_thw
    "blip_2_qformer": "states",  # a Q-Former of its own: query states and the encoder's
    "lxmert": "text",  # region features and boxes by name
    "instructblip": "image",  # the Q-Former's own prompt by name
    "audio-spectrogram-transformer": "audio",  # a spectrogram as input_values
    "decision_transformer": "trajectory",  # states, actions, returns to go per step
}


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_families_the_plain_sweep_did_not_run_are_exact(transformers, family):
    config = transformers.CONFIG_MAPPING[family]()
    capture_sweep.shrink(config)
    verdict = capture_sweep.sweep_implementation(config, "eager")
    assert verdict["status"] == "exact", verdict
    assert FAMILIES[family] in verdict["inputs"], verdict
    assert verdict["unverified"] == 0 and verdict["calls"] >= 1


def test_a_config_the_small_sizes_break_is_run_with_its_layers_cut_only(transformers):
    # BROS's box projection is sized from the default width: the small config breaks it
    result = capture_sweep.sweep_one("bros")
    assert result["eager"]["status"] == "exact", result
    assert result["config"].startswith("layers cut only")


def test_a_hybrid_keeps_one_layer_of_each_kind_and_the_lists_that_go_with_them():
    kinds = ["linear_attention"] * 5 + ["full_attention"] + ["linear_attention"] * 6
    mlp = ["dense", "dense"] + ["sparse"] * 10
    config = SimpleNamespace(num_hidden_layers=2, layer_types=kinds, mlp_layer_types=mlp, attn_layer_offset=4)
    sweep_configs.keep_layer_kinds(config, 12)
    assert config.layer_types == ["linear_attention", "full_attention"]
    assert config.mlp_layer_types == ["dense", "sparse"]  # layers 0 and 5, as picked
    assert config.num_hidden_layers == 2 and config.attn_layer_offset == 1
    # a config whose layers were not cut is left as it is
    same = SimpleNamespace(num_hidden_layers=2, layer_types=["a", "b"])
    sweep_configs.keep_layer_kinds(same, 2)
    assert same.layer_types == ["a", "b"]


def test_latent_attention_sizes_shrink_together(transformers):
    config = transformers.CONFIG_MAPPING["deepseek_v3"]()
    capture_sweep.shrink(config)
    assert config.head_dim == config.qk_rope_head_dim
    assert config.qk_head_dim == config.qk_nope_head_dim + config.qk_rope_head_dim
    assert config.num_key_value_heads == config.num_attention_heads


def test_the_class_that_runs_a_config_has_a_forward(transformers):
    # ColPali's AutoModel is its base class without a forward; its retrieval model has one
    assert sweep_configs.model_class(transformers.CONFIG_MAPPING["colpali"]()).__name__ == "ColPaliForRetrieval"
    # a sub-model's config AutoModel does not map (BLT's local encoder)
    assert sweep_configs.model_class(transformers.CONFIG_MAPPING["blt_local_encoder"]()).__name__ == "BltLocalEncoder"
    # Bark generates with sub-models; nothing runs its config whole
    assert sweep_configs.model_class(transformers.CONFIG_MAPPING["bark"]()) is None


def test_a_missing_library_is_told_from_a_config_the_small_sizes_break():
    assert sweep_configs.missing_library("ImportError: \nTimmBackbone requires the timm library but it was not")
    assert sweep_configs.missing_library("ModuleNotFoundError: No module named 'scipy'")
    assert not sweep_configs.missing_library("ValueError: The `prediction_length` config needs to be specified.")
    assert not sweep_configs.missing_library("RuntimeError: mat1 and mat2 shapes cannot be multiplied")


def _part(path: Any, version: str, results: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps({"transformers": version, "results": results}), encoding="utf-8")
    return str(path)


def test_parts_of_a_sweep_join_and_a_rerun_replaces_the_first_result(tmp_path):
    first = _part(
        tmp_path / "a.json",
        "9.9",
        [
            {"family": "zeta", "built": "yes", "eager": {"status": "exact"}},
            {"family": "alpha", "built": "yes", "eager": {"status": "not run", "why": "old"}},
        ],
    )
    rerun = _part(tmp_path / "b.json", "9.9", [{"family": "alpha", "built": "yes", "eager": {"status": "exact"}}])
    joined, version = sweep_report.join([first, rerun])
    assert version == "9.9"
    assert [r["family"] for r in joined] == ["alpha", "zeta"]
    assert joined[0]["eager"]["status"] == "exact"
    other = _part(tmp_path / "c.json", "1.0", [])
    with pytest.raises(SystemExit, match="different transformers versions: 1.0, 9.9"):
        sweep_report.join([first, other])
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(SystemExit, match="bad.json: not a sweep's --json file"):
        sweep_report.join([str(tmp_path / "bad.json")])


def test_the_joined_report_is_written_by_the_command(tmp_path, capsys):
    first = _part(tmp_path / "a.json", "9.9", [{"family": "gpt2", "built": "yes", "eager": {"status": "exact"}}])
    out = tmp_path / "joined.json"
    assert capture_sweep.main(["--from-json", first, "--json", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["results"][0]["family"] == "gpt2"
    assert "| exact on at least one implementation | 1 |" in capsys.readouterr().out


def test_a_family_no_implementation_builds_is_not_offered_with_its_reason():
    timm = "ImportError: DetrModel requires the timm library"
    results = [
        {
            "family": "detr",
            "built": "yes",
            "sdpa": {"status": "not offered", "why": timm},
            "eager": {"status": "not offered", "why": timm},
        },
        {
            "family": "odd",
            "built": "yes",
            "sdpa": {"status": "not offered", "why": "no sdpa"},
            "eager": {"status": "not run", "why": "text: bad"},
        },
    ]
    # the config's own failure, not the lack of an SDPA path, is the family's reason
    no_sdpa = "ValueError: InformerModel does not support an attention implementation through sdpa"
    informer = {"status": "not offered", "why": "ValueError: The `prediction_length` config needs to be specified."}
    results.append(
        {"family": "informer", "built": "yes", "sdpa": {"status": "not offered", "why": no_sdpa}, "eager": informer}
    )
    assert sweep_report.reason(results[2]) == informer["why"]
    assert sweep_report.family_verdict(results[0]) == "not offered"
    assert sweep_report.family_verdict(results[1]) == "not run"
    text = "\n".join(sweep_report.lines(results, "9.9"))
    assert "| not offered: no implementation builds (a library missing, the config incomplete) | 2 |" in text
    offered = text[text.index("Not offered (2)") :]
    assert f"| detr | {timm} |" in offered
    assert "| odd | text: bad |" in text[text.index("Not run on any implementation (1)") : text.index("Not offered")]


def test_maps_are_asked_for_only_where_the_forward_takes_the_argument():
    import torch

    from attnviz.bench import sweep_inputs

    class Codec(torch.nn.Module):  # EnCodec's and DAC's forward: no output_attentions, no **kwargs
        def forward(self, input_values: torch.Tensor, return_dict: bool = True) -> torch.Tensor:
            return input_values

    class Model(torch.nn.Module):
        def forward(self, input_ids: torch.Tensor, **kwargs: Any) -> torch.Tensor:
            return input_ids

    assert sweep_inputs.ask_for_maps(Codec()) == {}
    assert sweep_inputs.ask_for_maps(Model()) == {"output_attentions": True}


def test_a_backbone_cut_to_fewer_stages_names_only_the_stages_it_has() -> None:
    # OneFormer reads its Swin backbone's stages by name: cutting Swin's per-stage tuples (as a
    # ConvNeXt model's own must be) without its stage names built a neck over stages that were
    # gone; cutting both left the neck fewer feature maps than it reads. A backbone under a neck
    # keeps its stages; a staged model of its own has them cut, its names with them.
    transformers = pytest.importorskip("transformers")
    config = transformers.CONFIG_MAPPING["oneformer"]()
    capture_sweep.shrink(config)
    backbone = config.backbone_config
    assert len(backbone.stage_names) == len(backbone.depths) + 1
    assert backbone.out_features and set(backbone.out_features) <= set(backbone.stage_names)
    capture_sweep._build(config, "eager")  # raised IndexError in the backbone's channels


def test_a_staged_model_of_its_own_has_its_stages_and_their_names_cut() -> None:
    transformers = pytest.importorskip("transformers")
    config = transformers.CONFIG_MAPPING["swin"]()
    capture_sweep.shrink(config)
    assert len(config.depths) == config.num_layers < 4
    assert len(config.stage_names) == len(config.depths) + 1
    assert set(config.out_features) <= set(config.stage_names)
