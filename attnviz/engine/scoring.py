"""Scoring functions a(q, k), selectable by name.

Each one is a small class registered with ``@register``. To add one, write a class with a
``name``, a ``formula`` and a ``scores`` method (and ``init_params`` if it learns anything),
and decorate it: the engine, the app and the tests pick it up from ``SCORINGS``.

``scores(queries, keys, params)`` receives a block of query rows (B, r, d_q) and all keys
(B, m, d_k) and returns the raw scores (B, r, m). ``scale(d)`` returns the factor the raw scores
are divided by (None: no scaling stage). ``work_per_row`` tells the engine how many temporary
elements one query row costs, so it can bound memory by working in blocks of rows.
"""

from __future__ import annotations

import math
from typing import ClassVar

import torch

from attnviz.state import catalog
from attnviz.text.tr import QT_TRANSLATE_NOOP

from .errors import choose, input_error

Params = dict[str, torch.Tensor]


class ScoringFunction:
    name: ClassVar[str]
    #: The label and LaTeX of a(q, k) shown in the app: a built-in's come from
    #: ``attnviz.state.catalog`` (set by ``register``), a new one sets its own.
    label: ClassVar[str]
    formula: ClassVar[str]
    #: Queries and keys must have the same length d.
    same_dim: ClassVar[bool] = True
    #: A dot product q.k, which SDPA's ``scale`` multiplies (learnable or kernel scorings have none).
    takes_scale: ClassVar[bool] = False

    def param_shapes(self, d_q: int, d_k: int, num_hiddens: int) -> dict[str, tuple[int, ...]]:
        return {}

    def init_params(self, d_q: int, d_k: int, num_hiddens: int, generator: torch.Generator) -> Params:
        return {}

    def scale(self, d: int) -> float | None:
        return None

    def scores(self, queries: torch.Tensor, keys: torch.Tensor, params: Params) -> torch.Tensor:
        raise NotImplementedError

    def work_per_row(self, batch: int, n_keys: int, d_q: int, d_k: int, num_hiddens: int) -> int:
        return batch * n_keys


SCORINGS: dict[str, ScoringFunction] = {}


def register(cls: type[ScoringFunction]) -> type[ScoringFunction]:
    """Make ``cls`` selectable by its ``name`` here and in the app (``attnviz.state.catalog``).

    A built-in takes its label and formula from the catalogue; a new one brings its own
    (``label``, ``formula`` class attributes) and is added to the catalogue, so every view that
    lists scoring functions shows it.
    """
    fn = cls()
    known = catalog.SCORINGS.get(cls.name)
    if known is not None and "label" not in vars(cls):
        cls.label, cls.formula = known.label, known.formula
    else:
        shapes = fn.param_shapes(2, 3, 4)
        catalog.SCORINGS.register(
            catalog.ScoringInfo(
                cls.name,
                getattr(cls, "label", cls.name),
                getattr(cls, "formula", ""),
                same_dim=cls.same_dim,
                params=tuple(shapes),
                uses_hidden=shapes != fn.param_shapes(2, 3, 5),
                scaled=fn.scale(4) is not None,
            )
        )
    SCORINGS[cls.name] = fn
    return cls


#: The error for a name that is not in ``SCORINGS``.
_UNKNOWN = QT_TRANSLATE_NOOP("Errors", "unknown scoring function {value}: expected one of {choices}")


def get_scoring(name: str) -> ScoringFunction:
    return choose(SCORINGS, name, _UNKNOWN, "scoring")


def _uniform(shape: tuple[int, ...], fan_in: int, generator: torch.Generator) -> torch.Tensor:
    # nn.Linear's default initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), but from our own
    # generator so that a seed reproduces the parameters exactly.
    bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
    return (torch.rand(shape, generator=generator, dtype=torch.float32) * 2 - 1) * bound


@register
class DotProduct(ScoringFunction):
    name = "dot"
    takes_scale = True

    def scores(self, queries: torch.Tensor, keys: torch.Tensor, params: Params) -> torch.Tensor:
        return torch.bmm(queries, keys.transpose(1, 2))


@register
class ScaledDotProduct(DotProduct):
    name = "scaled_dot"

    def scale(self, d: int) -> float | None:
        return math.sqrt(d)


@register
class Additive(ScoringFunction):
    name = "additive"
    same_dim = False

    def param_shapes(self, d_q: int, d_k: int, num_hiddens: int) -> dict[str, tuple[int, ...]]:
        # nn.Linear weight layout (out_features, in_features), so the book's state dict maps 1:1.
        return {"W_q": (num_hiddens, d_q), "W_k": (num_hiddens, d_k), "w_v": (1, num_hiddens)}

    def init_params(self, d_q: int, d_k: int, num_hiddens: int, generator: torch.Generator) -> Params:
        return {
            "W_k": _uniform((num_hiddens, d_k), d_k, generator),
            "W_q": _uniform((num_hiddens, d_q), d_q, generator),
            "w_v": _uniform((1, num_hiddens), num_hiddens, generator),
        }

    def scores(self, queries: torch.Tensor, keys: torch.Tensor, params: Params) -> torch.Tensor:
        q = queries @ params["W_q"].T  # (B, r, h)
        k = keys @ params["W_k"].T  # (B, m, h)
        return additive_scores(q, k, params["w_v"])

    def work_per_row(self, batch: int, n_keys: int, d_q: int, d_k: int, num_hiddens: int) -> int:
        return batch * n_keys * max(num_hiddens, 1)


def additive_features(q_hidden: torch.Tensor, k_hidden: torch.Tensor) -> torch.Tensor:
    """tanh(W_q q + W_k k) for every (query, key) pair: (B, r, m, h). The big tensor."""
    return torch.tanh(q_hidden.unsqueeze(2) + k_hidden.unsqueeze(1))


def additive_scores(q_hidden: torch.Tensor, k_hidden: torch.Tensor, w_v: torch.Tensor) -> torch.Tensor:
    """w_v^T tanh(q_hidden + k_hidden) for projected queries (B, r, h) and keys (B, m, h)."""
    features = q_hidden.unsqueeze(2) + k_hidden.unsqueeze(1)
    features.tanh_()  # in place: the (B, r, m, h) block is the memory peak, don't hold two
    return (features @ w_v.T).squeeze(-1)


@register
class Bilinear(ScoringFunction):
    """The chapter's exercise 2: q^T W k works for any d_q, d_k with matrix products only."""

    name = "bilinear"
    same_dim = False

    def param_shapes(self, d_q: int, d_k: int, num_hiddens: int) -> dict[str, tuple[int, ...]]:
        return {"W": (d_q, d_k)}

    def init_params(self, d_q: int, d_k: int, num_hiddens: int, generator: torch.Generator) -> Params:
        # Variance 1/(d_q d_k) keeps q^T W k at unit variance for unit-variance q and k.
        std = 1.0 / math.sqrt(max(d_q * d_k, 1))
        return {"W": torch.randn((d_q, d_k), generator=generator, dtype=torch.float32) * std}

    def scores(self, queries: torch.Tensor, keys: torch.Tensor, params: Params) -> torch.Tensor:
        return torch.bmm(queries @ params["W"], keys.transpose(1, 2))


@register
class Gaussian(ScoringFunction):
    """The Nadaraya-Watson kernel the chapter starts from: a(q, k) = -||q - k||^2 / 2."""

    name = "gaussian"

    def scores(self, queries: torch.Tensor, keys: torch.Tensor, params: Params) -> torch.Tensor:
        # ||q-k||^2 = ||q||^2 + ||k||^2 - 2 q.k: one matrix product instead of a (r, m, d) tensor.
        # Rounding can make it slightly negative for q == k; a squared distance never is.
        qq = (queries * queries).sum(-1, keepdim=True)
        kk = (keys * keys).sum(-1).unsqueeze(1)
        dist2 = torch.baddbmm(qq + kk, queries, keys.transpose(1, 2), alpha=-2.0)
        return dist2.clamp_min_(0).mul_(-0.5)


@register
class Summation(ScoringFunction):
    """The chapter's exercise 3: a(q, k) = sum(q + k). The query term cancels in the softmax."""

    name = "summation"

    def scores(self, queries: torch.Tensor, keys: torch.Tensor, params: Params) -> torch.Tensor:
        return queries.sum(-1, keepdim=True) + keys.sum(-1).unsqueeze(1)


def check_params(scoring: ScoringFunction, params: Params, d_q: int, d_k: int, num_hiddens: int) -> None:
    """Replaced parameters must have the shapes the scoring function needs."""
    expected = scoring.param_shapes(d_q, d_k, num_hiddens)
    for key, shape in expected.items():
        if key not in params:
            raise input_error(
                QT_TRANSLATE_NOOP("Errors", "{scoring} scoring needs parameter {key} of shape {shape}; it is missing"),
                "params",
                scoring=scoring.name,
                key=repr(key),
                shape=shape,
            )
        got = tuple(params[key].shape)
        if got != shape:
            raise input_error(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "{scoring} parameter {key} must have shape {shape} for d_q={d_q}, d_k={d_k}, "
                    "num_hiddens={num_hiddens}; got {got}",
                ),
                "params",
                scoring=scoring.name,
                key=repr(key),
                shape=shape,
                d_q=d_q,
                d_k=d_k,
                num_hiddens=num_hiddens,
                got=got,
            )
        if not torch.isfinite(params[key]).all():
            raise input_error(
                QT_TRANSLATE_NOOP("Errors", "{scoring} parameter {key} contains NaN or Inf"),
                "params",
                scoring=scoring.name,
                key=repr(key),
            )
