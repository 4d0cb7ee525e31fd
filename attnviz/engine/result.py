"""What ``attend`` returns: every stage of the computation, and diagnostics about it."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

import torch

#: Stage names in pipeline order, as attributes of AttentionResult.
STAGES: tuple[str, ...] = (
    "raw_scores",
    "scores",
    "modified_scores",
    "mask",
    "masked_scores",
    "weights",
    "applied_weights",
    "output",
)


@dataclass(frozen=True)
class MaskFinding:
    """One suspicious thing about the masks, stated from what the arguments declare and hold.

    ``kind`` is one of ``MASK_FINDING_KINDS``; ``argument`` the argument concerned ("attn_mask",
    ...; two joined by " and " when two disagree); ``batch_elements`` the batch elements (first
    leading dimension) concerned, empty when it is not per element; ``count`` how many values,
    rows or elements; ``message`` the sentence also found in ``Diagnostics.warnings``.
    """

    kind: str
    argument: str
    message: str
    batch_elements: tuple[int, ...] = ()
    count: int = 0


#: What each ``MaskFinding.kind`` means.
MASK_FINDING_KINDS: dict[str, str] = {
    "float01_additive": "a float mask of only 0s and 1s given where masks are added to the scores: it adds 1 to some "
    "scores and masks nothing",
    "additive_overflow": "finite values of an additive mask became -inf in the compute dtype (float32's finfo.min "
    "in float16 or bfloat16)",
    "additive_sum_overflow": "two additive masks whose most negative values overflow to -inf when added",
    "hides_whole_sequence": "a padding mask hides every key of a batch element: real padding never covers a whole "
    "sequence, so its polarity is probably inverted",
    "padding_inverted": "two padding declarations (valid lengths, padding masks) are exact opposites for some batch "
    "element: one of them has the wrong polarity",
    "fill_only_rows": "rows whose every key is masked by a finite additive fill (finfo.min, -1e9): the softmax "
    "spreads them over the masked keys",
}


@dataclass(frozen=True)
class Diagnostics:
    """Everything that can go quietly wrong, measured.

    Per-row tensors have shape (..., L_q): the queries' leading dimensions and rows.
    """

    #: Rows whose mask leaves no key to attend to.
    empty_rows: torch.Tensor
    #: Rows whose weights contain NaN (e.g. an empty row under a -inf fill, or float16 overflow).
    nan_rows: torch.Tensor
    #: Number of NaN and of +-Inf entries in the scores before masking, and in the weights.
    nan_scores: int
    inf_scores: int
    nan_weights: int
    inf_weights: int
    #: Sum of each row of weights (1 where things are well, 0 for strict empty rows, NaN...).
    row_sums: torch.Tensor
    #: Entropy of each row of weights, in nats (NaN where the row is NaN).
    entropy: torch.Tensor
    #: Largest weight of each row.
    max_weight: torch.Tensor
    #: Variance of the scores the softmax sees over the allowed positions (after scaling), and
    #: of the raw scores; NaN when there are fewer than two allowed positions.
    logit_variance: float
    raw_logit_variance: float
    #: Valid lengths larger than the number of keys (treated as "all keys valid", as the book does).
    valid_lens_over_keys: torch.Tensor | None
    #: One sentence per problem found, for a status bar.
    warnings: tuple[str, ...] = ()
    #: Rows whose every key is masked by a finite additive fill (see ``MASK_FINDING_KINDS``);
    #: None when no additive mask was given.
    fill_only_rows: torch.Tensor | None = None
    #: Suspicious masks, structured (their sentences are in ``warnings`` too).
    findings: tuple[MaskFinding, ...] = ()
    #: Scores that overflowed to +-Inf or NaN although every input was finite (queries of 3e38,
    #: an SDPA ``scale`` of 1e300): their rows' weights are NaN. Said in ``warnings`` too.
    overflowed_scores: int = 0

    def cpu(self) -> Diagnostics:
        return replace(self, **{f.name: _cpu(getattr(self, f.name)) for f in fields(self)})


@dataclass(frozen=True)
class AttentionResult:
    """Every stage of one attention computation.

    Shapes: ... the queries' leading dimensions (B for 3-D inputs, B, H with heads), Q queries,
    K keys, D value dimension.

    - ``raw_scores`` (..., Q, K): a(q, k) before scaling.
    - ``scores`` (..., Q, K): after scaling (the same tensor as raw_scores when there is no scale).
    - ``modified_scores`` (..., Q, K): after the score terms (a position bias, soft-capping, a
      FlexAttention ``score_mod``; see ``score_terms``); the same tensor as ``scores`` without terms.
    - ``mask`` (..., Q, K) bool: True where the query may attend to the key (all True: no mask);
      a key an additive mask sets to -1e4 or less counts as masked.
    - ``masked_scores`` (..., Q, K): what the softmax receives under the mask mode (additive
      masks included).
    - ``weights`` (..., Q, K): the attention weights (softmax, then empty-row handling).
    - ``applied_weights`` (..., Q, K): the weights after dropout, which multiply the values (the
      same tensor as ``weights`` without dropout).
    - ``output`` (..., Q, D): applied_weights @ values.

    A stage not asked for through ``attend(keep=...)`` is None. ``params`` holds the parameters
    of a learnable scoring function (the ones used, so they can be inspected or reused).
    """

    raw_scores: torch.Tensor | None
    scores: torch.Tensor | None
    modified_scores: torch.Tensor | None
    mask: torch.Tensor | None
    masked_scores: torch.Tensor | None
    weights: torch.Tensor
    applied_weights: torch.Tensor | None
    output: torch.Tensor
    diagnostics: Diagnostics
    params: dict[str, torch.Tensor] = field(default_factory=dict)
    scoring: str = "scaled_dot"
    mask_mode: str = "d2l"
    #: What the scores were divided by (sqrt(d) for scaled_dot; 1 / scale for an SDPA-style
    #: ``scale``); None: no scaling stage.
    scale: float | None = None
    device: str = "cpu"
    dtype: str = "float32"
    #: Wall time of the computation in seconds (synchronised on GPUs).
    seconds: float = 0.0

    def stage(self, name: str) -> torch.Tensor:
        if name not in STAGES:
            raise KeyError(f"unknown stage {name!r}: expected one of {', '.join(STAGES)}")
        value = getattr(self, name)
        if value is None:
            raise KeyError(f"stage {name!r} was not kept: pass keep=... to attend()")
        return value

    def cpu(self) -> AttentionResult:
        """A copy with every tensor on the CPU (for handing to a GUI thread)."""
        changes: dict[str, Any] = {name: _cpu(getattr(self, name)) for name in STAGES}
        changes["diagnostics"] = self.diagnostics.cpu()
        changes["params"] = {k: v.detach().cpu() for k, v in self.params.items()}
        return replace(self, **changes)


def _cpu(value: Any) -> Any:
    return value.detach().cpu() if isinstance(value, torch.Tensor) else value
