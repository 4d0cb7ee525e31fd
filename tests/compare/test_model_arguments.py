"""attnviz.capture.model_arguments: a forward's KV cache, positions and mask found by meaning."""

from __future__ import annotations

from typing import Any, Optional

import torch

from attnviz.capture.model_arguments import model_arguments

from .models import gpt2, llama, transformers


class Cache:
    """A stand-in cache type: only its name is read."""


def test_each_spelling_of_the_cache_is_found() -> None:
    def hf_523(input_ids: Any = None, past_key_values: Any = None, position_ids: Any = None, **kw: Any) -> None: ...

    def hf_524(input_ids: Any = None, cache: Any = None, attention_mask: Any = None) -> None: ...

    def own(tokens: Any, kv_state: Optional[Cache] = None, mask: Any = None) -> None: ...  # noqa: UP045

    def own_pep604(tokens: Any, state: Cache | None = None) -> None: ...

    def none(input_ids: Any, cache_position: Any = None) -> None: ...

    assert model_arguments(hf_523).cache == "past_key_values"
    assert model_arguments(hf_523).positions == "position_ids" and model_arguments(hf_523).takes_kwargs
    assert model_arguments(hf_524).cache == "cache" and model_arguments(hf_524).attention_mask == "attention_mask"
    assert model_arguments(own).cache == "kv_state" and model_arguments(own).attention_mask == "mask"
    assert model_arguments(own_pep604).cache == "state"
    found = model_arguments(none)
    assert found.cache is None and found.cache_position == "cache_position" and not found.takes_kwargs


def test_the_installed_transformers_models_cache_is_found_and_read_back() -> None:
    t = transformers()
    for model in (gpt2(), llama()):
        args = model_arguments(model)
        # Whatever the installed version calls it (5.23: past_key_values, 5.24: cache).
        assert args.cache is not None and args.cache in {"past_key_values", "cache"}, t.__version__
        with torch.no_grad():
            out = model(input_ids=torch.tensor([[1, 2, 3]]), use_cache=True)
            cache = args.returned_cache(out)
            assert cache is not None
            step = model(input_ids=torch.tensor([[4]]), use_cache=True, **{args.cache: cache})
            full = model(input_ids=torch.tensor([[1, 2, 3, 4]]), use_cache=False)
        # The step used the cache: its one row is the full forward's last row (float32 kernels: 1e-5).
        assert torch.allclose(step.logits[:, -1], full.logits[:, -1], atol=1e-5)


def test_a_plain_tuple_output_gives_its_second_element() -> None:
    args = model_arguments(lambda x, past=None: None)
    assert args.cache == "past" and args.returned_cache((1, "cache")) == "cache"
    assert args.returned_cache(torch.zeros(1)) is None
