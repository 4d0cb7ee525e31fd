"""The implementations check: transformers' attention implementations (eager, SDPA, ...) of one
model must agree; SDPA is the reference where it runs."""

from __future__ import annotations

import torch

from attnviz.capture.doctor import Finding, number_ranges
from attnviz.compare.checks.base import (
    Aligned,
    InvarianceCheck,
    Run,
    first_gap,
    gap_finding,
    output_gap,
    real_rows,
    run_captured,
)
from attnviz.compare.invariance_causes import computation_difference, recorded_allowed, same_keep
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["ImplementationsCheck"]


class ImplementationsCheck(InvarianceCheck):
    name = "implementations"

    def run(self) -> tuple[list[Finding], str | None]:
        implementations = self.names
        model, config = self.model, self.config
        current = getattr(config, "_attn_implementation", None) if config is not None else None
        if not callable(getattr(model, "set_attn_implementation", None)) or current is None:
            return [], QT_TRANSLATE_NOOP(
                "Invariance", "implementations: not checked (not a transformers model with attention implementations)"
            )
        runs: dict[str, Run] = {}
        try:
            for name in implementations:
                try:
                    model.set_attn_implementation(name)  # type: ignore[operator]
                except Exception:  # noqa: BLE001 - an implementation the model does not offer
                    continue
                runs[name] = run_captured(model, self.inputs)
        finally:
            model.set_attn_implementation(current)  # type: ignore[operator]
        if len(runs) < 2:
            return [], message(
                QT_TRANSLATE_NOOP("Invariance", "implementations: not checked (of {asked}, the model runs {ran} only)")
                if runs
                else QT_TRANSLATE_NOOP("Invariance", "implementations: not checked (the model runs none of {asked})"),
                asked=", ".join(implementations),
                ran=", ".join(runs),
            )
        # SDPA is the reference where it ran (the default path of most models), else the first.
        reference_name = "sdpa" if "sdpa" in runs else next(iter(runs))
        reference = runs[reference_name]
        findings: list[Finding] = []
        for name, run in runs.items():
            if name != reference_name:
                finding = self._implementation_gap(name, run, reference_name, reference)
                if finding is not None:
                    findings.append(finding)
        return findings, None

    def _implementation_gap(self, name: str, run: Run, reference_name: str, reference: Run) -> Finding | None:
        real = self.mask

        def align(ref: torch.Tensor, test: torch.Tensor, what: str) -> list[Aligned]:
            if ref.shape != test.shape:
                return []
            pieces = []
            for b in range(test.shape[0]):
                rows = real_rows(real, b, test.shape[-2])
                if rows:
                    pieces.append(Aligned(b, ref[b][:, rows], test[b][:, rows], rows))
            return pieces

        gap = first_gap(reference, run, align, self.tol)
        if gap is None:
            gap = output_gap(reference.output, run.output, real, self.tol)
        if gap is None:
            return None
        template = QT_TRANSLATE_NOOP(
            "Invariance",
            "the {path} and {reference} implementations disagree here: each path builds its own mask; compare "
            "this call's mask in both (attnviz.compare)",
        )
        if gap.index >= 0:
            seen = recorded_allowed(run.calls[gap.index])
            other = next((c for c in reference.calls if c.name == run.calls[gap.index].name), None)
            rows = real if real is not None and real.shape == (seen.shape[0], seen.shape[2]) else None
            if other is not None and same_keep(run.calls[gap.index], other, rows):
                # The path that computes otherwise than its own inputs say is the odd one, either side.
                what, odd = computation_difference(run.calls[gap.index], other, gap.heads), name
                if what is None:
                    what, odd = computation_difference(other, run.calls[gap.index], gap.heads), reference_name
                return gap_finding(
                    "implementations",
                    gap,
                    message(
                        QT_TRANSLATE_NOOP(
                            "Invariance",
                            "the {path} and {reference} paths compute different attention for the same mask (the "
                            "mask was ruled out: both let the same keys through on every real row), in heads "
                            "{heads}; what differs, in the {odd} path: {what}",
                        ),
                        odd=odd if what is not None else name,
                        path=name,
                        reference=reference_name,
                        heads=number_ranges(gap.heads) if gap.heads else "?",
                        what=what
                        or QT_TRANSLATE_NOOP(
                            "Invariance", "not told apart (the paths' queries, keys or values already differ)"
                        ),
                    ),
                )
            if other is not None and recorded_allowed(other).shape == seen.shape:
                extra = seen & ~recorded_allowed(other)
                n_q, n_k = seen.shape[-2:]
                later = torch.ones(n_q, n_k, dtype=torch.bool).triu(1 + n_k - n_q)
                if bool((extra & later).any()):
                    template = QT_TRANSLATE_NOOP(
                        "Invariance",
                        "the {path} path lets queries see later keys that {reference} hides: its causal mask is "
                        "missing (build the causal mask for every implementation, also when weights are asked for)",
                    )
                elif bool(extra.any()):
                    template = QT_TRANSLATE_NOOP(
                        "Invariance",
                        "the {path} path lets queries see keys that {reference} hides (padding or a window): its "
                        "mask lost a part",
                    )
        return gap_finding("implementations", gap, message(template, path=name, reference=reference_name))
