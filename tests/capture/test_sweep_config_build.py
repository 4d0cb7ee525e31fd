"""The sweep's default configs that do not build as they stand, and the models their configs do
not name (issue 35, ``sweep_config_build``): one test per rule on a family it serves, each
against transformers' own classes (its default config raising, its model run under capture), and
the families the rule must leave alone. Nothing downloaded."""

from __future__ import annotations

from typing import Any

import pytest

from attnviz.bench import capture_sweep, sweep_config_build, sweep_inputs


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def _small(family: str) -> Any:
    config = sweep_config_build.default_config(family)
    capture_sweep.shrink(config)
    return config


def _exact(config: Any) -> dict[str, Any]:
    verdict = capture_sweep.sweep_implementation(config, "eager")
    assert verdict["status"] == "exact", verdict
    assert verdict["calls"] >= verdict["maps"] > 0
    return verdict


def test_a_sub_config_type_spelled_otherwise_than_registered_is_given_the_registered_spelling(transformers):
    # transformers' own default: Nougat's encoder names "donut_swin", registered as "donut-swin"
    with pytest.raises(ValueError, match="donut_swin"):
        transformers.CONFIG_MAPPING["nougat"]()
    config = _small("nougat")
    assert config.encoder.model_type == "donut-swin" and config.decoder.model_type == "mbart"
    # no modelling code of its own: built as its checkpoints are, a vision encoder-decoder
    model = capture_sweep._build(config, "eager")
    assert isinstance(model, transformers.VisionEncoderDecoderModel)
    built = sweep_inputs.build(model, config)
    assert not isinstance(built, str), built
    assert set(built.inputs) >= {"pixel_values", "decoder_input_ids"}
    _exact(config)


def test_a_value_a_validator_demands_of_a_sub_config_is_given_to_it(transformers):
    from huggingface_hub.errors import StrictDataclassClassValidationError

    with pytest.raises(StrictDataclassClassValidationError, match="hidden_size_per_layer_input must be 0"):
        transformers.CONFIG_MAPPING["gemma4_assistant"]()
    text = sweep_config_build.default_config("gemma4_assistant").text_config
    # each field its validator names in turn, with the value it demands; the rest the default's
    assert text.hidden_size_per_layer_input == 0 and text.vocab_size_per_layer_input == 0
    assert text.enable_moe_block is False and text.use_double_wide_mlp is False
    assert text.num_kv_shared_layers == text.num_hidden_layers
    assert text.hidden_size == transformers.CONFIG_MAPPING["gemma4_text"]().hidden_size
    _exact(_small("gemma4_assistant"))


def test_a_config_that_builds_is_left_as_it_is_and_an_error_no_rule_reads_is_raised(transformers):
    for family in ("llama", "gemma4", "vision-encoder-decoder"):
        try:
            plain = transformers.CONFIG_MAPPING[family]()
        except Exception as exc:  # noqa: BLE001 - the same error, raised unchanged
            with pytest.raises(type(exc)):
                sweep_config_build.default_config(family)
            continue
        assert sweep_config_build.default_config(family).to_dict() == plain.to_dict()

    class Refuses:
        sub_configs_defaults: dict[str, Any] = {}

        def __init__(self, **kwargs: Any) -> None:
            raise ValueError("the layers must be even")  # no value demanded: no rule applies

    kwargs: dict[str, Any] = {}
    assert not sweep_config_build._repair(Refuses, ValueError("the layers must be even"), kwargs)
    assert kwargs == {}


@pytest.mark.parametrize("family", ["musicgen", "musicgen_melody"])
def test_a_composite_autoModel_maps_to_its_part_is_built_whole_with_the_decoders_text(transformers, family):
    config = _small(family)
    with pytest.raises(ValueError, match="Multiple valid text configs"):
        config.get_text_config()
    assert sweep_config_build.text_config(config) is config.decoder
    model = capture_sweep._build(config, "eager")
    assert type(model).__name__.endswith("ForConditionalGeneration")  # not the decoder alone
    built = sweep_inputs.build(model, config)
    assert not isinstance(built, str), built
    ids, codes = built.inputs["input_ids"], built.inputs["decoder_input_ids"]
    # the decoder's ids: one row per codebook of each batch item, as its own tests make them
    assert codes.shape[0] == ids.shape[0] * config.decoder.num_codebooks
    assert int(codes.max()) < config.decoder.vocab_size
    _exact(config)


def test_a_config_auto_model_maps_to_its_own_class_keeps_it(transformers):
    for family in ("llama", "t5", "whisper", "llava"):
        config = transformers.CONFIG_MAPPING[family]()
        assert sweep_config_build.part_class(config) is None
        assert sweep_config_build.paired_model(config, "eager") is None
    # a single-config text model is its own text config
    llama = transformers.CONFIG_MAPPING["llama"]()
    assert sweep_config_build.text_config(llama) is llama
