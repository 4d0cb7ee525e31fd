"""Lessons: masking pitfalls and the chapter's exercises, as presets with a question and an answer.

Each ``Lesson`` pairs a ``Preset`` (inputs and settings that show one thing) with the question
the user is asked and the explanation that answers it. ``PITFALL_PRESETS`` and
``EXERCISE_PRESETS`` hold the presets by name, ``LESSONS`` the lessons by the same names. The
numbers quoted in the explanations are what the presets produce: the tests check them.

Plain numpy and Python, no Qt, no torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from attnviz.state.document import Settings, State
from attnviz.teaching.presets import PRESETS, Preset
from attnviz.text.tr import QT_TRANSLATE_NOOP

LessonKind = Literal["pitfall", "exercise"]


@dataclass(frozen=True)
class Lesson:
    """A preset with the question it sets (``question``) and the answer (``explanation``).

    ``side_by_side``: the comparison its text asks for, as (setting, A, B) (``"scoring",
    "bilinear", "dot"``): loading the lesson opens side by side on it. None: the lesson is
    read in the main view (and, for a pitfall, the masking lab a click away).
    """

    preset: Preset
    question: str
    explanation: str
    kind: LessonKind
    side_by_side: tuple[str, str, str] | None = None

    @property
    def name(self) -> str:
        return self.preset.name

    @property
    def asks(self) -> tuple[str, ...]:
        """The settings its question asks to switch (``attnviz.state.settings`` names): a slide
        offers them beside the question, where presentation mode hides the settings panel."""
        return ASKS.get(self.name, ())

    @property
    def title(self) -> str:
        return self.preset.title


def _state(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    lens_1d: list[int] | np.ndarray,
    settings: Settings,
    lens_2d: list[list[int]] | np.ndarray | None = None,
) -> State:
    """A State; without ``lens_2d`` the 2-D lengths repeat the 1-D ones for every query."""
    b, n = q.shape[0], q.shape[1]
    l1 = np.asarray(lens_1d, dtype=np.int64)
    l2 = np.repeat(l1[:, None], n, axis=1) if lens_2d is None else np.asarray(lens_2d, dtype=np.int64)
    assert l1.shape == (b,) and l2.shape == (b, n)
    return State.from_tensors(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), l1, l2, settings)


def _rounded(shape: tuple[int, ...], seed: int) -> np.ndarray:
    # Two decimals: the tables stay readable and every number survives a round trip as text.
    return np.round(np.random.default_rng(seed).standard_normal(shape), 2)


def _arange_values(batch: int, n_keys: int, d_v: int) -> np.ndarray:
    """The book's style of values, arange per batch element: outputs are easy to read off."""
    one = np.arange(n_keys * d_v, dtype=np.float64).reshape(n_keys, d_v)
    return np.repeat(one[None], batch, axis=0)


# ---------------------------------------------------------------------------------- pitfalls


def zero_length() -> State:
    return _state(
        _rounded((2, 2, 2), 10),
        _rounded((2, 4, 2), 11),
        _arange_values(2, 4, 2),
        [0, 3],
        Settings(scoring="scaled_dot", mask_mode="d2l"),
    )


def wrong_polarity() -> State:
    return _state(
        _rounded((2, 2, 2), 20),
        _rounded((2, 4, 2), 21),
        _arange_values(2, 4, 2),
        [2, 4],
        Settings(scoring="scaled_dot", mask_mode="inverted"),
    )


def float_mask() -> State:
    return _state(
        _rounded((2, 2, 2), 30),
        _rounded((2, 4, 2), 31),
        _arange_values(2, 4, 2),
        [1, 3],
        Settings(scoring="scaled_dot", mask_mode="float01"),
    )


def half_overflow() -> State:
    return _state(
        _rounded((2, 2, 2), 40),
        _rounded((2, 4, 2), 41),
        _arange_values(2, 4, 2),
        [0, 2],
        Settings(scoring="scaled_dot", mask_mode="d2l", dtype="float16"),
    )


def fill_too_small() -> State:
    # Unscaled dot products of features in the thousands: the real scores are -2e6 and below.
    q = np.array([[[1000.0, 1000.0], [500.0, 1000.0]]])
    k = np.array([[[-1000.0, -1000.0], [-900.0, -1000.0], [1.0, 2.0], [3.0, 4.0]]])
    return _state(q, k, _arange_values(1, 4, 2), [2], Settings(scoring="dot", mask_mode="d2l"))


def query_padding() -> State:
    # Self-attention over two sequences padded to 4 tokens: the first has 2 real tokens. Padded
    # positions are zero vectors in queries, keys and values alike.
    x = _rounded((2, 4, 2), 60)
    x[0, 2:] = 0.0
    v = _arange_values(2, 4, 2) + 1.0
    v[0, 2:] = 0.0
    return _state(
        x,
        x.copy(),
        v,
        [2, 4],
        Settings(scoring="scaled_dot", mask_mode="d2l", lens_mode="1d"),
        lens_2d=[[2, 2, 0, 0], [4, 4, 4, 4]],
    )


def nan_padding() -> State:
    v = _arange_values(2, 4, 2)
    v[0, 2:] = np.nan
    v[1, 3] = np.nan
    return _state(
        _rounded((2, 2, 2), 70),
        _rounded((2, 4, 2), 71),
        v,
        [2, 3],
        Settings(scoring="scaled_dot", mask_mode="d2l", allow_nonfinite=True),
    )


# --------------------------------------------------------------------------------- exercises


def exercise_keys() -> State:
    # The book's toy with distinct keys and d_q = d_k = 2, so both scorings apply.
    return _state(
        _rounded((2, 1, 2), 80),
        _rounded((2, 10, 2), 81),
        _arange_values(2, 10, 4),
        [2, 6],
        Settings(scoring="additive", mask_mode="d2l", num_hiddens=8),
    )


def exercise_bilinear() -> State:
    # Opens on additive attention, which copes with the lengths through its tanh network: the
    # answer (bilinear, matrix products only) is for the student to choose.
    return _state(
        _rounded((2, 2, 3), 90),
        _rounded((2, 5, 5), 91),
        _arange_values(2, 5, 2),
        [5, 5],
        Settings(scoring="additive", mask_mode="d2l", lens_mode="none"),
    )


def exercise_summation() -> State:
    return _state(
        _rounded((1, 3, 4), 100),
        _rounded((1, 5, 4), 101),
        _arange_values(1, 5, 2),
        [5],
        Settings(scoring="summation", mask_mode="d2l", lens_mode="none"),
    )


# ----------------------------------------------------------------------------------- lessons

#: The settings each lesson's question asks to switch, by lesson (``Lesson.asks``).
ASKS: dict[str, tuple[str, ...]] = {
    "pitfall-zero-length": ("mask_mode",),
    "pitfall-float16": ("dtype",),
    "pitfall-query-padding": ("lens_mode",),
}

_PITFALLS: tuple[Lesson, ...] = (
    Lesson(
        Preset(
            "pitfall-zero-length",
            QT_TRANSLATE_NOOP("Teaching", "Pitfall: a valid length of 0"),
            QT_TRANSLATE_NOOP("Teaching", "Batch element 0 has valid length 0: no key is valid for its queries."),
            zero_length,
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "Batch element 0 has a valid length of 0. What weights and output do its "
            "queries get with the book's -1e6 fill? Switch the mask mode to the -inf fill "
            "and to PyTorch SDPA: what changes?",
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "With the book's fill every score of the row becomes -1e6, all equal, so the "
            "softmax gives uniform weights, 1/4 on each of the 4 keys, padding included, "
            "and the output is the mean of all value vectors, [3, 4]: a confident-looking "
            "answer built from padding. A plain -inf fill makes every score -inf and the "
            "softmax computes 0/0: the row is NaN, and the NaN spreads into everything "
            "computed from it. PyTorch's scaled_dot_product_attention (2.5 and later) and "
            "the strict mode give the row zero weights and a zero output. None of the "
            "three is 'right'; a row with nothing to attend to has to be handled on "
            "purpose.",
        ),
        "pitfall",
    ),
    Lesson(
        Preset(
            "pitfall-wrong-polarity",
            QT_TRANSLATE_NOOP("Teaching", "Pitfall: boolean mask of the wrong polarity"),
            QT_TRANSLATE_NOOP("Teaching", "A True = attend mask read by an API where True = ignore."),
            wrong_polarity,
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "The mask says 'True = this key may be attended' and is handed to an API that "
            "reads True as 'ignore this key' (nn.MultiheadAttention's key_padding_mask "
            "does). Which keys get the weight now? What happens to batch element 1, whose "
            "4 keys are all valid?",
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "Reading the mask upside down swaps the roles: batch element 0 (valid length "
            "2) puts all its weight on the two padded keys and none on the two real ones. "
            "Batch element 1 has no padding, so the inverted mask hides every key: each "
            "score is -inf and its rows are NaN. A model trained this way can look fine on "
            "full-length sequences in one direction and break in the other, so check the "
            "convention of every mask argument you pass.",
        ),
        "pitfall",
    ),
    Lesson(
        Preset(
            "pitfall-float-mask",
            QT_TRANSLATE_NOOP("Teaching", "Pitfall: a 1/0 mask passed as a float mask"),
            QT_TRANSLATE_NOOP("Teaching", "A keep = 1 / drop = 0 mask given where an additive float mask is expected."),
            float_mask,
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "The mask is the float tensor 1.0 = keep, 0.0 = drop, passed to an API that "
            "adds a float mask to the scores (SDPA's attn_mask, nn.MultiheadAttention's "
            "attn_mask). Is anything masked?",
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "No. An additive mask is added to the scores: kept keys get +1 and dropped "
            "keys +0, so padded keys keep a share of the weight (about 1/e of what they "
            "would have against a kept key with the same score). Every row that has "
            "padding attends to it. An additive mask must hold 0 for keep and -inf (or a "
            "very negative number) for drop; a boolean mask must be bool.",
        ),
        "pitfall",
    ),
    Lesson(
        Preset(
            "pitfall-float16",
            QT_TRANSLATE_NOOP("Teaching", "Pitfall: the -1e6 fill in float16"),
            QT_TRANSLATE_NOOP("Teaching", "The book's fill in half precision, with a row that has no valid key."),
            half_overflow,
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "The computation runs in float16. The largest float16 is 65504: what does the "
            "book's -1e6 fill become, and what happens to batch element 0 (valid length "
            "0)? Compare with float32.",
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "-1e6 does not fit in float16 and becomes -inf. Rows with some valid key are "
            "unaffected (exp(-inf) = 0 is what the fill is for), but a row with no valid "
            "key is now all -inf and the softmax turns it into NaN, where float32 gives "
            "uniform weights. The same code, a different dtype, a NaN: use a fill from "
            "torch.finfo(dtype).min or handle empty rows explicitly.",
        ),
        "pitfall",
    ),
    Lesson(
        Preset(
            "pitfall-fill-too-small",
            QT_TRANSLATE_NOOP("Teaching", "Pitfall: real scores below the -1e6 fill"),
            QT_TRANSLATE_NOOP("Teaching", "Unscaled dot products of large features: real scores around -2e6."),
            fill_too_small,
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "The features are in the thousands and the scores are not scaled, so the real "
            "scores are around -2e6 and -1.5e6. The two padded keys are filled with -1e6. "
            "Where does the weight go?",
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "To the padding. The fill is only 'very negative' relative to the real scores; "
            "here it is larger than every real score, so the two padded keys, both at "
            "-1e6, share the row's weight half and half and the real keys get exactly 0. "
            "Exact masking gives all the weight to key 1, whose score is the larger. A "
            "fixed fill value silently assumes something about the scale of the scores; "
            "-inf (with empty rows handled) assumes nothing.",
        ),
        "pitfall",
    ),
    Lesson(
        Preset(
            "pitfall-query-padding",
            QT_TRANSLATE_NOOP("Teaching", "Pitfall: padded queries are not masked by key masks"),
            QT_TRANSLATE_NOOP(
                "Teaching", "Self-attention over padded sequences: the padded positions also ask queries."
            ),
            query_padding,
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "Batch element 0 is a sequence of 2 real tokens padded to 4, used as queries, "
            "keys and values. The valid length hides the padded keys. What weights and "
            "outputs do the two padded query rows get? Switch the valid lengths to 2-D, "
            "where the padded queries have length 0: does that help?",
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "A key mask only removes columns; every query row, padded or not, still gets a "
            "full softmax. The padded queries are zero vectors, so they score 0 against "
            "both real keys and get weights 1/2 and 1/2, and an output equal to the mean "
            "of the two real value vectors, [2, 3]: not zero, and indistinguishable from a "
            "real position downstream. With 2-D valid lengths of 0 the book's fill spreads "
            "their weight uniformly over all 4 keys, still a non-zero output; only strict "
            "masking (or SDPA) zeroes them. Padded query positions must be dropped after "
            "attention, for example by masking the loss.",
        ),
        "pitfall",
    ),
    Lesson(
        Preset(
            "pitfall-nan-padding",
            QT_TRANSLATE_NOOP("Teaching", "Pitfall: NaN in a padded value vector"),
            QT_TRANSLATE_NOOP("Teaching", "Padded value vectors hold NaN; the mask hides their keys."),
            nan_padding,
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "The padded value vectors contain NaN, and the valid lengths hide those keys, "
            "so their weights are exactly 0. Is the output finite?",
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "Not with the book's code: the output is weights @ values, and 0 x NaN = NaN, "
            "so a zero weight does not remove a NaN; every output row of both batch "
            "elements is NaN. Masking acts on the scores, not on the values. The plain "
            "-inf fill fails the same way, and so does PyTorch's own "
            "scaled_dot_product_attention. Only a pooling step that skips zero-weight "
            "values (attnviz's strict mode) gives finite outputs; in practice, fill "
            "padding with zeros.",
        ),
        "pitfall",
    ),
)

_EXERCISES: tuple[Lesson, ...] = (
    Lesson(
        Preset(
            "exercise-1-keys",
            QT_TRANSLATE_NOOP("Teaching", "Exercise 1: change the keys"),
            QT_TRANSLATE_NOOP("Teaching", "The toy example with distinct keys; queries and keys both of length 2."),
            exercise_keys,
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "The book's toy examples use identical keys. Here the keys differ and queries "
            "and keys have the same length, so both additive and scaled dot-product "
            "scoring apply. Switch between them: are the attention weights still the same? "
            "Why, or why not?",
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "They are not. With identical keys every valid key gets the same score, "
            "whatever the scoring function, so any of them gives uniform weights over the "
            "valid keys; that is the only reason the toys agree. With distinct keys the "
            "scores depend on the function: scaled dot product measures how well q and k "
            "align, q.k / sqrt(d), while additive attention passes W_q q + W_k k through "
            "tanh and a learned w_v, whose (here random) parameters decide the ranking. "
            "The masking still agrees: both give zero weight past the valid lengths 2 and "
            "6.",
        ),
        "exercise",
        ("scoring", "additive", "scaled_dot"),
    ),
    Lesson(
        Preset(
            "exercise-2-bilinear",
            QT_TRANSLATE_NOOP("Teaching", "Exercise 2: queries and keys of different lengths"),
            QT_TRANSLATE_NOOP("Teaching", "Queries of length 3, keys of length 5: the dot product is undefined."),
            exercise_bilinear,
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "Queries have length 3 and keys length 5, so q.k is undefined (try the "
            "dot-product scoring). Using matrix multiplications only, design a scoring "
            "function for them.",
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "Put a learnable matrix between them: a(q, k) = q^T W k with W of shape (3, "
            "5), the 'bilinear' or 'general' score. For all pairs at once it is Q W K^T, "
            "two matrix products. It is the same as projecting the queries into key space, "
            "(W^T q).k, and writing W = W_q^T W_k gives the low-rank form used by "
            "multi-head attention, (W_q q).(W_k k). Initialise W with variance 1/(d_q d_k) "
            "to keep the scores at unit variance.",
        ),
        "exercise",
        # The scoring the exercise opens on computes; the dot product cannot (3 against 5
        # features), and says so. Not bilinear: that is the design the student is asked to find.
        ("scoring", "additive", "dot"),
    ),
    Lesson(
        Preset(
            "exercise-3-summation",
            QT_TRANSLATE_NOOP("Teaching", "Exercise 3: vector summation instead of a dot product"),
            QT_TRANSLATE_NOOP("Teaching", "Three different queries scored by a(q, k) = sum(q + k)."),
            exercise_summation,
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "Queries and keys have the same length. Is a(q, k) = 1^T (q + k), the sum of q "
            "+ k, a better scoring function than the dot product? Compare the three query "
            "rows with summation and with dot-product scoring.",
        ),
        QT_TRANSLATE_NOOP(
            "Teaching",
            "No. 1^T(q + k) = 1^T q + 1^T k, and the first term is the same for every key "
            "of a query, so the softmax cancels it: the weights depend on the keys alone. "
            "All three queries get the same weights and the same output (up to rounding), "
            "whatever they are; attention can no longer pick keys per query. The dot "
            "product couples q and k, which is what makes the weights query-dependent.",
        ),
        "exercise",
        ("scoring", "summation", "dot"),
    ),
)

LESSONS: dict[str, Lesson] = {lesson.name: lesson for lesson in (*_PITFALLS, *_EXERCISES)}
PITFALL_PRESETS: dict[str, Preset] = {lesson.name: lesson.preset for lesson in _PITFALLS}
EXERCISE_PRESETS: dict[str, Preset] = {lesson.name: lesson.preset for lesson in _EXERCISES}
#: Every preset by name, the book's then the lessons': what ``--preset`` takes and
#: ``--list-presets`` lists, in the window and on the command line.
ALL_PRESETS: dict[str, Preset] = {**PRESETS, **PITFALL_PRESETS, **EXERCISE_PRESETS}
