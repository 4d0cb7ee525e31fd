"""A small synthetic "model" whose heads do what real heads are known to do, on a padded batch
of two sentences, shown with ``attnviz.show``:

    python resources/examples/demo_heads.py            # opens the window
    python resources/examples/demo_heads.py out.npz    # writes a Hugging Face style file instead

Heads (in every layer, in a different order per layer): attend to the same token, to the
previous token, to the first token ([CLS], an attention sink), to the tokens of the same word
class, and a broad "uniform" head. Queries and keys are built from one-hot position and class
codes, so the patterns are exact; the padding is masked with a Hugging Face attention_mask.
Nothing here is learned: it is a picture to learn the views with, not a model.
"""

from __future__ import annotations

import sys

import numpy as np

SENTENCES = [
    ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"],
    ["[CLS]", "dogs", "bark", ".", "[SEP]", "[PAD]", "[PAD]", "[PAD]", "[PAD]"],
]
CLASSES = {"the": 1, "a": 1, "cat": 2, "mat": 2, "dogs": 2, "sat": 3, "bark": 3, "on": 4, ".": 5}
D = 32
SHARP = 6.0  # how peaked a head is: the score of its favourite key over the others


def _codes(tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
    n = len(tokens)
    position = np.eye(n, D // 2)
    kind = np.zeros((n, D // 2))
    for i, token in enumerate(tokens):
        kind[i, CLASSES.get(token, 0)] = 1.0
    return position, kind


def head_qk(pattern: str, tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Queries and keys (n, D) whose scaled dot products favour ``pattern``."""
    position, kind = _codes(tokens)
    n = len(tokens)
    zeros = np.zeros((n, D // 2))
    gain = SHARP * np.sqrt(D)
    if pattern == "same":
        return gain * np.hstack([position, zeros]), np.hstack([position, zeros])
    if pattern == "previous":
        return gain * np.hstack([np.roll(position, -1, axis=1), zeros]), np.hstack([position, zeros])
    if pattern == "first":
        first = np.zeros((n, D // 2))
        first[:, 0] = 1.0
        return gain * np.hstack([first, zeros]), np.hstack([position, zeros])
    if pattern == "class":
        return gain / 2 * np.hstack([zeros, kind]), np.hstack([zeros, kind])
    return np.zeros((n, D)), np.zeros((n, D))  # uniform


def build(layers: int = 4) -> dict[str, np.ndarray]:
    patterns = ["same", "previous", "first", "class", "uniform", "first"]
    rng = np.random.default_rng(0)
    q = np.zeros((layers, len(SENTENCES), len(patterns), len(SENTENCES[0]), D), np.float32)
    k = np.zeros_like(q)
    for layer in range(layers):
        order = np.roll(patterns, layer)
        for b, tokens in enumerate(SENTENCES):
            for h, pattern in enumerate(order):
                qi, ki = head_qk(str(pattern), tokens)
                q[layer, b, h], k[layer, b, h] = qi, ki
    v = rng.standard_normal(q.shape).astype(np.float32)
    mask = np.array([[0 if t == "[PAD]" else 1 for t in s] for s in SENTENCES])
    return {"q": q, "k": k, "v": v, "attention_mask": mask, "tokens": np.array(SENTENCES)}


def main() -> None:
    arrays = build()
    if len(sys.argv) > 1:
        np.savez(sys.argv[1], **arrays)
        return
    import attnviz

    attnviz.show(
        arrays["q"],
        arrays["k"],
        arrays["v"],
        attention_mask=arrays["attention_mask"],
        tokens=arrays["tokens"].tolist(),
        names=[f"encoder.layer.{i}" for i in range(len(arrays["q"]))],
    )


if __name__ == "__main__":
    main()
