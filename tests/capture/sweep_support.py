"""What the sweep's family tests share: a family's small config, made as the sweep makes it."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from attnviz.bench import capture_sweep


def small_config(
    transformers: Any, family: str, repairs: tuple[Any, ...] | None = None, owner: ModuleType | None = None
) -> Any:
    """``family``'s default config shrunk by the sweep; with ``repairs``, ``owner.REPAIRS`` (a
    sweep module's own list of repairs) replaced by them for the shrink, to show what one repair
    does."""
    config = transformers.CONFIG_MAPPING[family]()
    if repairs is None or owner is None:
        capture_sweep.shrink(config)
        return config
    saved = owner.REPAIRS
    owner.REPAIRS = repairs
    try:
        capture_sweep.shrink(config)
    finally:
        owner.REPAIRS = saved
    return config


def captured_family(transformers: Any, family: str, implementation: str = "eager") -> tuple[Any, Any]:
    """``family``'s shrunk config built on ``implementation`` and run under capture on the inputs
    the sweep makes for it: (the capture, the sweep's ``Built``)."""
    import torch

    import attnviz
    from attnviz.bench import sweep_inputs

    config = small_config(transformers, family)
    torch.manual_seed(0)
    model = capture_sweep._build(config, implementation)
    built = sweep_inputs.build(model, config)
    assert not isinstance(built, str), built
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(**built.inputs)
    return cap, built
