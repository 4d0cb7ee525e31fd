"""``attnviz.save_session(...)``: write an ``.attnviz`` session without the window, from a preset,
tensors, a capture or a run, with settings, for ``attnviz render --load`` and File > Open.

    attnviz.save_session("work.attnviz", preset="dot-toy", mask_mode="strict")
    attnviz.save_session("work.attnviz", q, k, v, attention_mask=mask, tokens=tokens)
    attnviz.save_session("bert.attnviz", cap, layer=1, head=5)

The same from the command line: ``attnviz render --preset dot-toy --save-session work.attnviz``.
No Qt; torch only when a capture or torch tensors are given.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["save_session"]


def save_session(
    path: str | os.PathLike[str],
    *args: Any,
    preset: str | None = None,
    layer: int = 0,
    head: int = 0,
    **kwargs: Any,
) -> Path:
    """Write a session file at ``path`` and return its path.

    What it holds: ``preset=`` (a preset or lesson by name, see ``attnviz --list-presets``), or
    ``q, k, v`` tensors (keyword arguments as ``attnviz.show`` takes them: ``attention_mask``,
    ``is_causal``, ``scale``, ``tokens``...), or one capture or ``ModelRun``. Keyword arguments
    that name a setting (``mask_mode="strict"``, ``window=4``, ``dropout=0.1``, ``train=True``...)
    are applied as the settings panel applies them. ``layer``/``head``: the head on show.

    >>> import tempfile, os, attnviz
    >>> path = attnviz.save_session(os.path.join(tempfile.mkdtemp(), "work.attnviz"), preset="dot-toy")
    >>> path.name
    'work.attnviz'
    """
    from attnviz.io.session_state import save_state_file
    from attnviz.state.document import SetSettings, State
    from attnviz.state.run import Focus, ModelRun
    from attnviz.state.settings import SETTINGS

    settings = {name: kwargs.pop(name) for name in list(kwargs) if name in SETTINGS}
    if preset is not None:
        from attnviz.teaching.lessons import ALL_PRESETS

        if args or kwargs:
            raise TypeError("save_session(path, preset=NAME) takes no tensors besides the preset")
        if preset not in ALL_PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(ALL_PRESETS)}")
        state = ALL_PRESETS[preset].build()
    else:
        if len(args) == 3:
            from attnviz.cli.viewer import tensors_to_run

            run = tensors_to_run(*args, **kwargs)
        elif len(args) == 1 and not kwargs and isinstance(args[0], ModelRun):
            run = args[0]
        elif len(args) == 1 and not kwargs and hasattr(args[0], "to_run"):
            run = args[0].to_run()
        else:
            raise TypeError("save_session takes q, k, v tensors, a capture, a ModelRun or preset=NAME")
        if not run.has_head(layer, head):
            raise ValueError(f"no head {head} in layer {layer}: the run has {run.layers} layer(s)")
        state = State.from_run(run)
    focus = Focus(layer, head)
    if settings:
        state = SetSettings(settings).apply(state, focus)[0]
    target = Path(path)
    save_state_file(target, state, focus)
    return target
