"""The sweep's config fill (issue 35): fields a family's default config leaves unset, or lacks,
although its modelling code reads them to build the model, filled by what each field means
(``sweep_config_fill``), one test per rule on one family it serves and one it must leave alone.
The models are transformers' own, built from the sweep's shrunk configs; nothing downloaded."""

from __future__ import annotations

from typing import Any

import pytest

from attnviz.bench import capture_sweep, sweep_config_fill, sweep_inputs


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def _shrunk(transformers: Any, family: str) -> Any:
    config = transformers.CONFIG_MAPPING[family]()
    capture_sweep.shrink(config)
    return config


def _builds(config: Any) -> Any:
    return capture_sweep._build(config, "eager")


def test_experts_left_unset_get_a_few_unless_a_flag_turns_them_off(transformers):
    # Dots1 reads its expert count through an alias (num_local_experts -> n_routed_experts)
    dots = _shrunk(transformers, "dots1")
    assert dots.n_routed_experts == sweep_config_fill.SMALL_EXPERTS
    assert dots.num_experts_per_tok == sweep_config_fill.SMALL_TOP_K and dots.n_shared_experts == 1
    experts = _builds(dots).layers[1].mlp.experts
    assert experts.gate_up_proj.shape[0] == sweep_config_fill.SMALL_EXPERTS
    # Gemma 4's experts are None because its MoE block is off: they stay so
    gemma = _shrunk(transformers, "gemma4_text")
    assert gemma.num_experts is None and gemma.enable_moe_block is False


def test_a_vocabulary_the_model_embeds_is_filled_one_it_does_not_is_left(transformers):
    esm = _shrunk(transformers, "esm")
    assert esm.vocab_size == sweep_config_fill.VOCABULARY
    assert _builds(esm).embeddings.word_embeddings.num_embeddings == sweep_config_fill.VOCABULARY
    assert esm.pad_token_id == 1  # its position ids count from the padding id
    # wav2vec2-BERT's None vocabulary means no CTC head: not a size to fill
    assert _shrunk(transformers, "wav2vec2-bert").vocab_size is None


@pytest.mark.parametrize(("family", "context"), [("time_series_transformer", 4), ("autoformer", 10)])
def test_a_forecaster_gets_a_horizon_and_its_window_with_lags(transformers, family, context):
    config = _shrunk(transformers, family)
    assert config.prediction_length == sweep_config_fill.HORIZON
    assert config.context_length == context  # Autoformer's context holds its label_length
    built = sweep_inputs.build(_builds(config), config)
    assert not isinstance(built, str), built
    assert built.kinds == ["series"]
    past = built.inputs["past_values"].shape[1]
    assert past == context + max(config.lags_sequence)
    assert built.inputs["future_values"].shape[1] == config.prediction_length


def test_layer_types_left_unset_hold_each_kind_the_layers_compare_with(transformers):
    config = _shrunk(transformers, "lfm2_moe")
    assert config.layer_types == ["conv", "full_attention"]
    layers = _builds(config).layers
    assert [layer.is_attention_layer for layer in layers] == [False, True]


def test_rotary_parameters_are_keyed_by_every_layer_type_the_model_reads(transformers):
    config = _shrunk(transformers, "cohere_compass_text")
    assert set(config.rope_parameters) == set(config.layer_types) == {"full_attention"}
    assert config.rope_parameters["full_attention"]["rope_type"] == "default"
    assert hasattr(_builds(config).rotary_emb, "full_attention_inv_freq")
    # a config already keyed by type (LFM3: its convolutions have no rotary) keeps its keys
    lfm3 = _shrunk(transformers, "lfm3")
    assert "conv" not in lfm3.rope_parameters


def test_an_attribute_a_sub_config_lacks_comes_from_the_config_that_holds_it(transformers):
    dbrx = _shrunk(transformers, "dbrx")
    assert dbrx.attn_config.rope_theta == dbrx.rope_parameters["rope_theta"]
    assert dbrx.attn_config.clip_qkv == 8.0  # clamped unconditionally: torch refuses two None bounds
    assert dbrx.ffn_config.hidden_size == dbrx.d_model  # handed down again after the shrinking
    built = sweep_inputs.build(_builds(dbrx), dbrx)
    assert not isinstance(built, str), built
    # a text config built alone: the value its top config hands down by default
    text = _shrunk(transformers, "pix2struct_text_model")
    assert text.initializer_range == transformers.Pix2StructConfig().initializer_range
    _builds(text)
    t5 = _shrunk(transformers, "t5gemma2_encoder")
    assert t5.text_config.dropout_rate == transformers.T5Gemma2Config().dropout_rate
    _builds(t5)
    # a top config whose model reads the field of its sub-configs only is left without it
    assert "initializer_range" not in _shrunk(transformers, "clip").to_dict()


def test_a_vocabulary_map_names_the_image_placeholder_and_every_vq_code(transformers):
    from transformers.models.chameleon.modeling_chameleon import ChameleonImageVocabularyMapping

    config = _shrunk(transformers, "chameleon")
    codes = config.vq_config.num_embeddings
    assert codes == sweep_config_fill.CODEBOOK
    mapping = ChameleonImageVocabularyMapping(config.vocabulary_map)  # the model's own parser
    assert mapping.image_token_id == config.image_token_id
    assert sorted(mapping.bpe2img.values()) == list(range(codes))
    assert max(mapping.bpe2img) < config.image_token_id  # the codes' tokens below the placeholder
    emu3 = _shrunk(transformers, "emu3")
    model = _builds(emu3)
    assert sorted(model.vocabulary_mapping.img2bpe) == list(range(emu3.vq_config.codebook_size))
    assert model.vocabulary_mapping.eol_token_id is not None


def test_a_family_mapped_to_several_classes_picks_the_first(transformers):
    config = _shrunk(transformers, "funnel")
    assert config.architectures == []
    assert type(_builds(config)).__name__ == "FunnelModel"
    assert _shrunk(transformers, "gpt2").architectures is None  # one class: left as it is


@pytest.mark.parametrize("family", ["t5gemma2_decoder", "diffusion_gemma"])
def test_the_doctor_reads_no_restarted_positions_in_steps_that_are_no_cache_step(transformers, family):
    """T5Gemma 2's decoder runs self- and cross-attention as one call (its extra keys are the
    encoder's states, not a cache); DiffusionGemma's decoder runs a 256-token canvas after the
    encoder's cached 8, every canvas row seeing the whole canvas. Both models' positions are
    right: the doctor (which read both as a cached step restarting) finds no error."""
    import attnviz
    from attnviz.capture import diagnose_run

    config = _shrunk(transformers, family)
    model = _builds(config)
    built = sweep_inputs.build(model, config)
    assert not isinstance(built, str), built
    with attnviz.capture(model) as cap, torch_no_grad():
        model(**built.inputs)
    run = cap.to_run()
    assert any(c.shape[2] < c.shape[3] for c in run.calls)  # the step the doctor read wrongly
    errors = [f for f in diagnose_run(run) if f.severity == "error"]
    assert errors == []


def torch_no_grad() -> Any:
    import torch

    return torch.no_grad()
