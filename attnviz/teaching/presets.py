"""Ready-made inputs: the chapter's examples. Plain numpy, no Qt, no torch.

The book's random inputs were unseeded; ours are seeded so a preset always shows the same
picture. What the book's printed outputs pin down (which keys are masked, the uniform weights
of the toy examples, their outputs) is reproduced exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attnviz.state.document import Settings, State
from attnviz.text.tr import QT_TRANSLATE_NOOP


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    description: str
    build: Callable[[], State]


def _state(q: np.ndarray, k: np.ndarray, v: np.ndarray, lens: np.ndarray, settings: Settings) -> State:
    b, n = q.shape[0], q.shape[1]
    m = k.shape[1]
    lens = np.asarray(lens, dtype=np.int64)
    lens_1d = lens if lens.ndim == 1 else np.full((b,), m, dtype=np.int64)
    lens_2d = lens if lens.ndim == 2 else np.repeat(lens[:, None], n, axis=1)
    return State.from_tensors(
        q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), lens_1d, lens_2d, settings
    )


def _toy_keys_values() -> tuple[np.ndarray, np.ndarray]:
    keys = np.ones((2, 10, 2))
    values = np.repeat(np.arange(40, dtype=np.float64).reshape(1, 10, 4), 2, axis=0)
    return keys, values


def additive_toy() -> State:
    keys, values = _toy_keys_values()
    queries = np.random.default_rng(0).standard_normal((2, 1, 20))
    return _state(
        queries, keys, values, np.array([2, 6]), Settings(scoring="additive", num_hiddens=8, dropout=0.1, train=False)
    )


def dot_toy() -> State:
    keys, values = _toy_keys_values()
    queries = np.random.default_rng(1).standard_normal((2, 1, 2))
    return _state(queries, keys, values, np.array([2, 6]), Settings(scoring="scaled_dot", dropout=0.5, train=False))


def _masked_softmax(lens: np.ndarray, lens_mode: str, seed: int) -> State:
    # The app computes softmax(a(q, k)); with unscaled dot scoring, keys = I and values = I the
    # scores are exactly X = queries and the output is exactly the weights.
    x = np.random.default_rng(seed).uniform(size=(2, 2, 4))
    eye = np.broadcast_to(np.eye(4), (2, 4, 4)).copy()
    return _state(x, eye, eye, lens, Settings(scoring="dot", lens_mode=lens_mode))  # type: ignore[arg-type]


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "additive-toy",
            QT_TRANSLATE_NOOP("Presets", "Book: additive attention toy"),
            QT_TRANSLATE_NOOP(
                "Presets",
                "Queries (2, 1, 20), identical keys (2, 10, 2), values arange(40), valid "
                "lengths 2 and 6: identical keys give uniform weights over the valid "
                "ones, and the output is the mean of the valid values, [[2, 3, 4, 5]] "
                "and [[10, 11, 12, 13]].",
            ),
            additive_toy,
        ),
        Preset(
            "dot-toy",
            QT_TRANSLATE_NOOP("Presets", "Book: scaled dot-product toy"),
            QT_TRANSLATE_NOOP(
                "Presets",
                "The same keys, values and valid lengths with queries (2, 1, 2) and "
                "scaled dot-product scoring: again uniform weights, output [[2, 3, 4, "
                "5]] and [[10, 11, 12, 13]].",
            ),
            dot_toy,
        ),
        Preset(
            "masked-softmax-1d",
            QT_TRANSLATE_NOOP("Presets", "Book: masked softmax, 1-D valid lengths"),
            QT_TRANSLATE_NOOP(
                "Presets",
                "Random scores of shape (2, 2, 4) with valid lengths 2 and 3: keys past "
                "the valid length get weight 0. (Unscaled dot scoring with identity keys "
                "and values makes the scores the queries and the output the weights.)",
            ),
            lambda: _masked_softmax(np.array([2, 3]), "1d", 2),
        ),
        Preset(
            "masked-softmax-2d",
            QT_TRANSLATE_NOOP("Presets", "Book: masked softmax, 2-D valid lengths"),
            QT_TRANSLATE_NOOP(
                "Presets",
                "The same with one valid length per query, [[1, 3], [2, 4]]: a valid "
                "length of 1 gives weight 1 to the first key.",
            ),
            lambda: _masked_softmax(np.array([[1, 3], [2, 4]]), "2d", 3),
        ),
    )
}

DEFAULT_PRESET = "additive-toy"
