"""The determinism check: two identical runs must agree (run first: a model whose runs differ
by themselves would have every other check blame its noise on padding, caches or paths)."""

from __future__ import annotations

import torch

from attnviz.capture.doctor import Finding
from attnviz.compare.checks.base import Aligned, InvarianceCheck, first_gap, gap_finding, output_gap, run_captured
from attnviz.compare.invariance_causes import active_dropout, listed
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["DeterminismCheck"]


class DeterminismCheck(InvarianceCheck):
    name = "determinism"

    def run(self) -> tuple[list[Finding], str | None]:
        """Two identical runs under capture: nothing when they agree, else the error naming why."""
        first, second = run_captured(self.model, self.inputs), run_captured(self.model, self.inputs)

        def align(ref: torch.Tensor, test: torch.Tensor, what: str) -> list[Aligned]:
            if ref.shape != test.shape or ref.dim() < 3:
                return []
            return [Aligned(b, ref[b], test[b], list(range(test.shape[-2]))) for b in range(test.shape[0])]

        gap = first_gap(first, second, align, self.tol) or output_gap(first.output, second.output, None, self.tol)
        if gap is None:
            return [], None
        dropout = active_dropout(self.model, second.calls)
        if dropout:
            text = message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "two identical runs of the model differ (largest difference {largest:.3g}): the model is in "
                    "training mode and dropout is active in {modules}, so its attention is random; call model.eval() "
                    "before inference (the other checks were not run: they would blame this noise on padding, caches "
                    "or paths)",
                ),
                largest=gap.largest,
                modules=listed(dropout),
            )
        else:
            text = message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "two identical runs give different results (largest difference {largest:.3g}) though no dropout "
                    "is active{training}: something random or stateful runs (sampling, a non-deterministic kernel, "
                    "state kept between calls); the other checks were not run",
                ),
                largest=gap.largest,
                training=QT_TRANSLATE_NOOP("Invariance", " (the model is in training mode)")
                if self.model.training
                else "",
            )
        return [gap_finding("determinism", gap, text)], None
