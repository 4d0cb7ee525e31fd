"""The inputs snippets are checked on: every preset and lesson, and one case per setting beyond.

``CASES`` maps a name to a ``Case``: how to build its state, the head it is written for (a model
run's head on show; the book's input has one), and whether it stays within what the book's code
covers (additive or scaled dot-product scoring, the -1e6 fill over 1-D or 2-D valid
lengths, float32, no dropout in training). The suite runs the PyTorch snippet on all of them,
``python -m attnviz.bench snippets`` every framework. Plain numpy: no torch, no Qt (it lives with
the benchmarks, which may import the lessons).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from attnviz.state.document import CALL_SETTINGS, TENSOR_ROLES, SetSettings, Settings, State, make_state
from attnviz.state.run import AttentionCall, Focus, MaskArguments, ModelRun
from attnviz.teaching.lessons import LESSONS
from attnviz.teaching.presets import PRESETS

__all__ = ["CASES", "Case", "book_state", "with_settings"]


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], State]
    #: Within what the book's code covers.
    book: bool
    #: The head the snippet is written for.
    focus: Focus = Focus()


def with_settings(state: State, **changes: object) -> State:
    """``state`` with other settings; ``causal`` and ``scale`` go into its call (the book's one)."""
    of_call = {name: changes.pop(name) for name in CALL_SETTINGS if name in changes}
    new = state.copy()
    new.settings = replace(state.settings, **changes)  # type: ignore[arg-type]
    return SetSettings(of_call).apply(new)[0] if of_call else new


def _random(state: State, seed: int) -> State:
    """The book's input with seeded standard normal queries, keys and values (drawn in that order)."""
    rng = np.random.default_rng(seed)
    view = state.head_view()
    for role in TENSOR_ROLES:
        state = state.with_head(Focus(), role, rng.standard_normal(getattr(view, role).shape))
    return state


def book_state(
    seed: int,
    *,
    scoring: str,
    lens_mode: str,
    batch: int,
    n_queries: int,
    n_keys: int,
    d: int,
    d_k: int | None = None,
    d_v: int = 3,
    num_hiddens: int = 8,
) -> State:
    """A random input within the book's code: its two scorings, the -1e6 fill, float32, eval."""
    rng = np.random.default_rng(seed)
    state = make_state(
        batch=batch,
        n_queries=n_queries,
        n_keys=n_keys,
        d_q=d,
        d_k=d if d_k is None else d_k,
        d_v=d_v,
        settings=Settings(scoring=scoring, lens_mode=lens_mode, num_hiddens=num_hiddens, param_seed=seed),  # type: ignore[arg-type]
    )
    state = _random(state, seed)
    state.lens_1d = rng.integers(0, n_keys + 2, size=batch)
    state.lens_2d = rng.integers(0, n_keys + 2, size=(batch, n_queries))
    return state


def _causal_2d() -> State:
    state = _random(
        with_settings(
            make_state(2, 4, 6, 3, 3, 2, Settings(scoring="scaled_dot", lens_mode="2d")), causal="bottom_right"
        ),
        1,
    )
    state.lens_2d = np.array([[6, 5, 0, 2], [1, 2, 3, 9]])
    return state


def _causal_strict() -> State:
    state = _random(
        with_settings(make_state(2, 5, 5, 4, 4, 2, Settings(scoring="dot", mask_mode="strict")), causal="top_left"), 2
    )
    state.lens_1d = np.array([0, 3])
    return state


def _model_masks() -> State:
    """A model's masks as its code passed them: an additive attn_mask and a boolean padding mask."""
    view = _random(make_state(2, 4, 4, 4, 4, 3), 3).head_view()
    bias = np.zeros((4, 4), np.float32)
    bias[np.triu_indices(4, 1)] = np.finfo(np.float32).min  # a causal mask, as models build it
    padding = np.array([[False, False, False, True], [False, False, True, True]])
    return State.from_tensors(
        view.queries,
        view.keys,
        view.values,
        settings=Settings(scoring="scaled_dot", lens_mode="none", mask_mode="sdpa"),
        masks=MaskArguments(attn_mask=bias, key_padding_mask=padding),
    )


def _model_run_head() -> State:
    """Head 3 of a model's call: grouped-query keys, a padding attention_mask, causal, its own scale."""
    rng = np.random.default_rng(6)
    pad = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    call = AttentionCall(
        "decoder.layers.0.self_attn",
        rng.standard_normal((2, 4, 5, 4)),
        rng.standard_normal((2, 2, 5, 4)),
        rng.standard_normal((2, 2, 5, 3)),
        masks=MaskArguments(attention_mask=pad, is_causal=True),
        scale=0.4,
    )
    return State.from_run(ModelRun((call,)))


def _window() -> State:
    state = _random(
        with_settings(make_state(1, 6, 6, 4, 4, 2, Settings(scoring="scaled_dot", window=2)), causal="top_left"), 4
    )
    state.lens_1d = np.array([5])
    return state


def _gaussian_sdpa() -> State:
    state = _random(make_state(2, 3, 5, 2, 2, 2, Settings(scoring="gaussian", mask_mode="sdpa")), 5)
    state.lens_1d = np.array([0, 4])
    return state


def _book_random(seed: int) -> Callable[[], State]:
    """A random input within the book's code whose shapes and settings follow from ``seed``."""

    def build() -> State:
        return book_state(
            seed,
            scoring=("additive", "scaled_dot")[seed % 2],
            lens_mode=("1d", "2d", "none")[seed % 3],
            batch=1 + seed % 3,
            n_queries=1 + seed,
            n_keys=2 + 2 * seed,
            d=2 + seed,
            d_k=None if seed % 2 else 3,
        )

    return build


CASES: dict[str, Case] = {
    case.name: case
    for case in (
        *(Case(name, preset.build, True) for name, preset in PRESETS.items()),
        *(
            Case(
                name,
                lesson.preset.build,
                name in ("pitfall-zero-length", "pitfall-query-padding", "exercise-1-keys", "exercise-2-bilinear"),
            )
            for name, lesson in LESSONS.items()
        ),
        Case(
            "additive-seeded-2d",
            lambda: with_settings(PRESETS["additive-toy"].build(), param_seed=7, num_hiddens=5, lens_mode="2d"),
            True,
        ),
        Case("dot-toy-no-lengths", lambda: with_settings(PRESETS["dot-toy"].build(), lens_mode="none"), True),
        Case("causal-bottom-right-2d", _causal_2d, False),
        Case("causal-top-left-strict", _causal_strict, False),
        Case(
            "dropout-in-training",
            lambda: with_settings(PRESETS["dot-toy"].build(), train=True, dropout=0.5, dropout_seed=3),
            False,
        ),
        Case("dropout-all", lambda: with_settings(PRESETS["additive-toy"].build(), train=True, dropout=1.0), False),
        Case(
            "bilinear-float64",
            lambda: with_settings(LESSONS["exercise-2-bilinear"].preset.build(), scoring="bilinear", dtype="float64"),
            False,
        ),
        Case("additive-float64", lambda: with_settings(PRESETS["additive-toy"].build(), dtype="float64"), False),
        Case(
            "additive-bfloat16",
            lambda: with_settings(LESSONS["exercise-1-keys"].preset.build(), dtype="bfloat16"),
            False,
        ),
        Case("gaussian-sdpa", _gaussian_sdpa, False),
        Case(
            "neg-inf-zero-length",
            lambda: with_settings(LESSONS["pitfall-zero-length"].preset.build(), mask_mode="neg_inf"),
            False,
        ),
        Case(
            "strict-nan-values",
            lambda: with_settings(LESSONS["pitfall-nan-padding"].preset.build(), mask_mode="strict"),
            False,
        ),
        Case("scaled-by-0.3", lambda: with_settings(PRESETS["dot-toy"].build(), scale=0.3), False),
        Case("sliding-window", _window, False),
        Case("model-masks", _model_masks, False),
        Case("model-run-head", _model_run_head, False, Focus(0, 3)),
        *(Case(f"book-random-{seed}", _book_random(seed), True) for seed in range(5)),
        # Queries and keys of more numbers than a script prints: embedded as .npy bytes.
        Case(
            "book-embedded",
            lambda: book_state(9, scoring="scaled_dot", lens_mode="2d", batch=1, n_queries=70, n_keys=70, d=32),
            True,
        ),
    )
}
