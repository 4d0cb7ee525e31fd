"""What a snippet is written from: ``SnippetInput``, made from the document's state by ONE function.

The generators never read a ``State``: ``snippet_input(state, outcome, focus=...)`` collects what
they need for one head, the one on show (its tensors through ``State.head_view(focus)``, valid
lengths, the learnable parameters the app really used, the settings with the call's causal flag
and scale, the model's and long-context masks reduced to one boolean mask and one additive bias,
the dropout the app drew) and every generator works from that. When the state changes shape,
this is the one place to follow it.

No Qt. Torch is imported only here, to combine masks exactly as the engine reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from attnviz.state.run import Focus, HeadView
from attnviz.text.safe import python_literal
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

if TYPE_CHECKING:
    from attnviz.state.document import State

    from ..compute import Outcome

__all__ = ["MASK_MODES", "SCORINGS", "SnippetError", "SnippetInput", "WrittenTerm", "snippet_input"]

#: The scoring functions and mask modes the framework generators write out.
SCORINGS: tuple[str, ...] = ("additive", "scaled_dot", "dot", "bilinear", "gaussian", "summation")
MASK_MODES: tuple[str, ...] = ("d2l", "strict", "neg_inf", "sdpa", "float01", "inverted")


class SnippetError(ValueError):
    """These inputs cannot be written as code (the message is one line, translatable)."""


@dataclass(frozen=True)
class WrittenTerm:
    """A score term of the head on show as a snippet writes it (``engine.score_terms``): "bias"
    (``values`` added to the scaled scores, broadcastable to (B, Q, K)), "softcap" (``cap``),
    "sinks" (``values``: the head's sink logit). ``name`` says what it is ("ALiBi")."""

    kind: str
    name: str
    values: np.ndarray | None = None
    cap: float | None = None


@dataclass(frozen=True)
class SnippetInput:
    """Everything a snippet needs, as plain numpy and Python.

    ``queries`` (B, Q, d_q), ``keys`` (B, K, d_k), ``values`` (B, K, d_v) of the head on show,
    as the document holds them; ``valid_lens`` (B,) or (B, Q) whole numbers, or None; ``params`` the learnable
    parameters the app computed with (nn.Linear layout: W_q (h, d_q), W_k (h, d_k), w_v (1, h);
    bilinear W (d_q, d_k)).

    ``mask`` (B, Q, K) bool, True = may attend, is every boolean mask besides the valid lengths
    and the causal setting: a model's masks as its code passed them and the long-context masks;
    ``bias`` (B, Q, K) is what a model's float masks add to the scores (in the compute dtype,
    exactly representable in this array's dtype). ``mask_sources`` names what they were made of.

    ``score_terms``: a captured call's own additions to the scaled scores, in the order the model
    applied them (:class:`WrittenTerm`); the biases among them are in ``bias`` too, for the
    chapter's code (which writes no other kind: a framework's generator refuses the others).

    ``dropout_keep`` (B, Q, K) bool is the dropout the app drew (True = kept) when it trains
    with a rate above 0: a framework's own dropout would draw another one.
    """

    queries: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    valid_lens: np.ndarray | None
    params: dict[str, np.ndarray]
    scoring: str = "scaled_dot"
    mask_mode: str = "d2l"
    causal: str | None = None
    #: Dot-product scorings: the factor the dot products are multiplied by (SDPA's ``scale``);
    #: None: the scoring's own (1/sqrt(d) for scaled_dot, none for dot).
    scale: float | None = None
    mask: np.ndarray | None = None
    bias: np.ndarray | None = None
    mask_sources: tuple[str, ...] = ()
    score_terms: tuple[WrittenTerm, ...] = ()
    dropout: float = 0.0
    train: bool = False
    dropout_keep: np.ndarray | None = None
    dtype: str = "float32"
    device: str = "cpu"
    num_hiddens: int = 8
    allow_nonfinite: bool = False
    #: For the attnviz script, which calls attnviz itself: the parameters came from the user
    #: (else from ``param_seed``), the dropout seed, the masks as the app passes them to
    #: ``attend`` (torch's dtypes kept as numpy ones), and the weights the app showed.
    params_given: bool = False
    param_seed: int = 0
    dropout_seed: int = 0
    model_masks: dict[str, np.ndarray] = field(default_factory=dict)
    #: The settings' long-context masks as ``engine.make_mask`` keywords (window, sinks, prefix,
    #: chunk: ints; documents: an array), which the attnviz script passes as ``mask=make_mask(...)``.
    context: dict[str, Any] = field(default_factory=dict)
    app_weights: np.ndarray | None = None
    #: A model run's head on show ("head 3 of call 1, encoder.layer.1.attention.self"), or None.
    focus: str | None = None

    @property
    def shape(self) -> tuple[int, int, int]:
        """(batch, queries, keys)."""
        return int(self.queries.shape[0]), int(self.queries.shape[1]), int(self.keys.shape[1])

    @property
    def lens_ndim(self) -> int:
        """0 without valid lengths, else 1 or 2."""
        return 0 if self.valid_lens is None else int(self.valid_lens.ndim)

    @property
    def dropping(self) -> bool:
        """Dropout changes the weights: training with a rate above 0."""
        return self.train and self.dropout > 0.0


def snippet_input(state: State, outcome: Outcome | None = None, *, focus: tuple[int, int] = Focus()) -> SnippetInput:
    """What the generators need to write head ``focus`` of ``state`` as code (the window passes
    the head on show, ``session.selection.focus``; the book's input has only head (0, 0)).

    ``outcome`` is the app's result for exactly this state and head (the window has it from its
    compute thread); without it, it is computed here. An input the app refuses, or a call that
    recorded its weights only, raises ``SnippetError`` with the reason; a head the run lacks, or
    an outcome computed for another head, raises ``ValueError``.
    """
    focus = Focus(*focus)
    try:
        head = state.head_view(focus)
    except IndexError as exc:
        raise ValueError(str(exc)) from exc
    if outcome is not None and outcome.focus != focus:
        # Its weights would be another head's: the snippet's check would assert the wrong ones.
        raise ValueError(f"the result given is of head {tuple(outcome.focus)}, not of head {tuple(focus)}")
    if head.weights_only:
        raise SnippetError(
            QT_TRANSLATE_NOOP(
                "Snippet",
                "this call recorded its attention weights only: there are no queries and keys to write as code",
            )
        )
    if outcome is None:
        from ..compute import run_state

        outcome = run_state(state, 0, focus)
    if outcome.view is None:
        raise SnippetError(
            message(
                QT_TRANSLATE_NOOP("Snippet", "attnviz cannot compute these inputs: {error}"),
                error=outcome.error or "?",
            )
        )
    view = outcome.view
    # Every writer spells a parameter's name as a variable (``W_q``, ``params_W_q``): only the
    # scoring functions' own names reach here (the engine keeps no other name a session file
    # holds), and a name that is no plain identifier, which could be code, is refused, not written.
    for name in view.params:
        if not (name.isidentifier() and name.isascii()):
            raise SnippetError(
                message(
                    QT_TRANSLATE_NOOP("Snippet", "a learnable parameter named {name} cannot be written as code"),
                    name=python_literal(name),
                )
            )
    s = state.settings
    from ..compute.engine_args import scale_kwargs

    model_masks = _model_masks(head)
    context = _context(state, head)
    b, q, k = head.batch, head.n_queries, head.n_keys
    mask_mod = None if head.masks is None else head.masks.mask_mod
    mask, bias = _combined_masks(state, head, bool(model_masks or context or mask_mod), (b, q, k), s.dtype)
    score_terms = _score_terms(head)
    bias = _with_score_biases(bias, score_terms, (b, q, k), s.dtype)
    keep = None
    if s.train and s.dropout > 0.0:
        if s.dropout >= 1.0:
            keep = np.zeros(view.weights.shape, dtype=bool)
        else:
            # Where a weight is 0 (or NaN) the draw does not show, and does not matter either.
            w, applied = view.weights, view.applied_weights
            keep = (applied != 0) | (w == 0) | np.isnan(w)
    # A model's head is named; the book's input (a run of one call and one head) has no choice.
    named = None if state.run.source == "book" else f"head {head.head} of call {head.layer} ({head.call.name})"
    lens = state.valid_lens(head)
    return SnippetInput(
        queries=np.asarray(head.queries),
        keys=np.asarray(head.keys),
        values=np.asarray(head.values),
        valid_lens=None if lens is None else np.asarray(lens),
        params={name: np.asarray(value) for name, value in view.params.items()},
        scoring=s.scoring,
        mask_mode=s.mask_mode,
        causal=head.causal,
        scale=scale_kwargs(state, head.scale).get("scale"),
        mask=mask,
        bias=bias,
        mask_sources=(*_sources(state, head), *(f"the model's {t.name}" for t in score_terms if t.kind == "bias")),
        score_terms=score_terms,
        dropout=float(s.dropout),
        train=bool(s.train),
        dropout_keep=keep,
        dtype=s.dtype,
        device=outcome.device,
        num_hiddens=int(s.num_hiddens),
        allow_nonfinite=bool(s.allow_nonfinite),
        params_given=bool(state.params),
        param_seed=int(s.param_seed),
        dropout_seed=int(s.dropout_seed),
        model_masks={name: _numpy(value) for name, value in model_masks.items()},
        context={name: value if name != "documents" else _numpy(value) for name, value in context.items()},
        app_weights=view.weights,
        focus=named,
    )


def _score_terms(head: HeadView) -> tuple[WrittenTerm, ...]:
    """The head's score terms as the app computes with them (``compute.engine_args.call_score_terms``),
    as arrays and numbers; a FlexAttention ``score_mod`` function (Python code the program ran)
    cannot be written down: refused."""
    from ..compute.engine_args import call_score_terms
    from ..engine import Alibi, ScoreBias, Sinks, SoftCap

    written = []
    n_q, n_k = head.call.shape[2:]
    for term in call_score_terms(head.call, head.head):
        if isinstance(term, ScoreBias):
            written.append(WrittenTerm("bias", term.name, values=_numpy(term.values)))
        elif isinstance(term, Alibi):  # written as the bias it adds to this head's scores
            slope = float(np.asarray(term.slopes).reshape(-1)[0])
            distance = np.arange(n_k)[None, :] - np.arange(n_q)[:, None]
            written.append(WrittenTerm("bias", term.name, values=(slope * distance)[None].astype(np.float64)))
        elif isinstance(term, SoftCap):
            written.append(WrittenTerm("softcap", "softcap", cap=term.cap))
        elif isinstance(term, Sinks):
            written.append(WrittenTerm("sinks", term.name, values=np.asarray(term.values, dtype=np.float64)))
        else:
            raise SnippetError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Snippet",
                        "this call's scores go through the model's {name}, a function of its own that cannot be "
                        "written as code: copied, the code would not give the weights on show",
                    ),
                    name=getattr(term, "name", "score_mod"),
                )
            )
    return tuple(written)


def _with_score_biases(
    bias: np.ndarray | None, terms: tuple[WrittenTerm, ...], shape: tuple[int, int, int], dtype: str
) -> np.ndarray | None:
    """``bias`` with the score terms that are biases added (ALiBi, T5's position bias: added to
    the scaled scores, as the masks' bias is), in the masks' bias's array type."""
    added = [t.values for t in terms if t.kind == "bias" and t.values is not None]
    if not added:
        return bias
    total = np.zeros(shape) if bias is None else bias.astype(np.float64)
    for values in added:
        total = total + np.broadcast_to(values.astype(np.float64), shape)
    return total.astype(np.float64 if dtype == "float64" else np.float32)


def _sources(state: State, head: HeadView) -> list[str]:
    """What the combined mask and bias of ``head`` are made of, in words for the snippet's comments."""
    from attnviz.state.run import MASK_ARGUMENTS

    s = state.settings
    named = []
    if head.masks is not None:
        named = [f"the model's {name}" for name in MASK_ARGUMENTS if getattr(head.masks, name) is not None]
    long = [
        text
        for on, text in (
            (s.window, f"a sliding window of {s.window} keys"),
            (s.sinks, f"{s.sinks} attention sinks"),
            (s.prefix, f"a prefix-LM prefix of {s.prefix}"),
            (s.chunk, f"chunks of {s.chunk}"),
            (state.documents_for(head) is not None, "packed documents"),
        )
        if on
    ]
    if long:
        named.append(("causal " if head.causal else "") + "long-context masks: " + ", ".join(long))
    return named


def _numpy(value: Any) -> np.ndarray:
    import torch

    t = value.detach().cpu()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.numpy()


def _model_masks(head: HeadView) -> dict[str, Any]:
    """The call's masks as ``attend``'s keyword arguments (torch tensors), as the model passed them."""
    from attnviz.state.run import MASK_ARGUMENTS

    from ..compute.convert import tensor_view

    if head.masks is None:
        return {}
    return {name: tensor_view(m) for name in MASK_ARGUMENTS if (m := getattr(head.masks, name)) is not None}


def _context(state: State, head: HeadView) -> dict[str, Any]:
    """The settings' long-context masks of ``head``'s call, as ``engine.make_mask`` keywords."""
    from ..compute.convert import tensor_view

    s = state.settings
    names = ("window", "sinks", "prefix", "chunk")
    context: dict[str, Any] = {name: int(value) for name in names if (value := getattr(s, name))}
    documents = state.documents_for(head)
    if documents is not None:
        context["documents"] = tensor_view(documents)
    return context


def _combined_masks(
    state: State, head: HeadView, any_mask: bool, shape: tuple[int, int, int], dtype: str
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The call's model masks (a mask_mod too) and the long-context masks as one (B, Q, K) boolean
    "may attend" and one additive bias: the app's own description of the call's mask
    (``compute.engine_args.state_mask``) without the valid lengths and the causal flag, which are
    the snippet's own code, bound as ``attend`` binds it: ``attn_mask`` bool True = attend, float
    added; ``key_padding_mask`` (B, K) bool True = ignore, float added; ``attention_mask`` 1 =
    attend; float masks converted to the compute dtype and summed there (a float32 finfo.min
    becomes -inf in float16); the window aligned as the causal mask is. ``any_mask`` False: none.
    """
    if not any_mask:
        return None, None
    import torch

    from ..compute.engine_args import state_mask
    from ..engine import resolve_dtype

    dt = resolve_dtype(dtype)
    b, q, k = shape
    description = state_mask(state, head, causal=False, lengths=False)
    allowed, bias = description.bind_call((b,), q, k, dtype=dt).block(0, b, 0, q)
    mask = None if allowed is None else torch.broadcast_to(allowed, (b, q, k)).contiguous().numpy()
    # float16 and bfloat16 values are exactly float32 ones; numpy has no bfloat16.
    array_dtype = torch.float64 if dt == torch.float64 else torch.float32
    return mask, None if bias is None else torch.broadcast_to(bias, (b, q, k)).to(array_dtype).numpy()
