"""The KV-cache check: a full forward against a prefill, a one-token cached step and a
several-token cached step; the steps' rows against the same rows of the full forward."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from attnviz.capture import CapturedCall, capture
from attnviz.capture.doctor import Finding
from attnviz.capture.doctor_positions import module_word
from attnviz.compare.checks.base import (
    Aligned,
    Gap,
    InvarianceCheck,
    Run,
    find_gap,
    first_gap,
    gap_finding,
    recorded_calls,
    run_captured,
    run_user,
)
from attnviz.compare.intervene import main_output, run_model
from attnviz.compare.invariance_causes import readable_keep, recorded_allowed, step_inputs_differ
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["KvCacheCheck"]


class KvCacheCheck(InvarianceCheck):
    name = "kv_cache"

    def run(self) -> tuple[list[Finding], str | None]:
        step_key = "decoder_input_ids" if self.encoder_decoder else "input_ids"
        ids = self.inputs.get(step_key)
        cache_name = self.arguments.cache
        if cache_name is None:
            return [], message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "kv_cache: not checked: {model}.forward takes no KV-cache argument (past_key_values, cache, "
                    "past, ...); check a model that generates with a cache, or leave kv_cache out of the checks",
                ),
                model=type(self.model).__name__,
            )
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2:
            return [], message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "kv_cache: not checked: the inputs hold no {key} (batch, tokens) to step through; pass the "
                    "token ids as {key}",
                ),
                key=step_key,
            )
        length = ids.shape[1]
        if length < 4:
            return [], QT_TRANSLATE_NOOP(
                "Invariance",
                "kv_cache: not checked: fewer than 4 tokens to step through (a prefill and two steps); pass a "
                "longer batch",
            )
        prefill = length - 3
        full = run_captured(self.model, {**self.inputs, "use_cache": False})
        mask_key = "decoder_attention_mask" if self.encoder_decoder else "attention_mask"
        real = self.inputs.get(mask_key)
        real_rows = real.bool() if isinstance(real, torch.Tensor) else torch.ones(ids.shape, dtype=torch.bool)
        findings: list[Finding] = []
        past: Any = None
        with torch.no_grad():
            for start, stop in ((0, prefill), (prefill, prefill + 1), (prefill + 1, length)):
                given = self._step(step_key, mask_key, start, stop, cache_name, past)
                with capture(self.model) as cap:
                    raw = run_user("forward", functools.partial(run_model, self.model, given))
                past = self.arguments.returned_cache(raw)
                if start == 0:
                    if past is None:
                        return [], message(
                            QT_TRANSLATE_NOOP(
                                "Invariance",
                                "kv_cache: not checked: the model returned no cache with use_cache=True (its {name} "
                                "argument had nothing to take); switch its cache on (config.use_cache)",
                            ),
                            name=cache_name,
                        )
                    continue
                step = Run(recorded_calls(cap), main_output(raw), raw)
                gap = first_gap(full, step, self._step_align(start, stop, length, real_rows), self.tol)
                if gap is None:
                    gap = self._step_output_gap(full, step, start, stop, real_rows)
                if gap is not None:
                    cause = self._kv_cause(step, gap, stop - start, full, start, real_rows)
                    findings.append(gap_finding("kv_cache", gap, cause))
                    break
        return findings, None

    def _step(self, step_key: str, mask_key: str, start: int, stop: int, cache_name: str, past: Any) -> dict[str, Any]:
        given = dict(self.inputs)
        given[step_key] = self.inputs[step_key][:, start:stop]
        for key in (mask_key,):
            value = self.inputs.get(key)
            if isinstance(value, torch.Tensor):
                given[key] = value[:, :stop]
        if not self.encoder_decoder:
            for key in ("position_ids", "token_type_ids"):
                value = self.inputs.get(key)
                if isinstance(value, torch.Tensor):
                    given[key] = value[:, start:stop]
        given["use_cache"] = True
        if past is not None:
            given[cache_name] = past
        return given

    @staticmethod
    def _step_align(
        start: int, stop: int, length: int, real: torch.Tensor
    ) -> Callable[[torch.Tensor, torch.Tensor, str], list[Aligned]]:
        def align(ref: torch.Tensor, test: torch.Tensor, what: str) -> list[Aligned]:
            if test.shape[-2] != stop - start or ref.shape[-2] != length:
                return []
            r = ref[..., start:stop, :]
            if what == "weights" and test.shape[-1] == stop and ref.shape[-1] == length:
                r = r[..., :stop]
            if r.shape != test.shape:
                return []
            pieces = []
            for b in range(test.shape[0]):
                rows = [i for i in range(start, stop) if bool(real[b, i])]
                if rows:
                    keep = torch.tensor([i - start for i in rows])
                    pieces.append(Aligned(b, r[b][:, keep], test[b][:, keep], rows))
            return pieces

        return align

    def _step_output_gap(self, full: Run, step: Run, start: int, stop: int, real: torch.Tensor) -> Gap | None:
        ref, test = full.output, step.output
        if ref.dim() < 2 or test.dim() < 2 or test.shape[1] != stop - start:
            return None
        pieces = []
        for b in range(test.shape[0]):
            rows = [i for i in range(start, stop) if bool(real[b, i])]
            if rows:
                r = ref[b, rows].reshape(len(rows), -1)
                t = test[b, [i - start for i in rows]].reshape(len(rows), -1)
                pieces.append(Aligned(b, r.unsqueeze(0), t.unsqueeze(0), rows))
        return find_gap(-1, "", pieces, self.tol)

    def _kv_cause(self, step: Run, gap: Gap, tokens: int, full: Run, start: int, real: torch.Tensor) -> str:
        if gap.index < 0:
            return message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "a cached step of {tokens} token(s) gives another output than the full forward, though every "
                    "attention call agrees: look at the positions (cache_position, position_ids) of the step",
                ),
                tokens=tokens,
            )
        call = step.calls[gap.index]
        partner = next((c for c in full.calls if c.name == call.name), None)
        moved = None if partner is None else step_inputs_differ(call, partner, start, start + tokens, real)
        if moved is not None and max(moved) > self.tol:
            return self._positions_cause(call, partner, moved, tokens, start, real)
        if moved is None and partner is not None:
            # Queries and keys not recorded (a softmax of the model's own): the positions its rotary
            # or position embedding was called with say it, else the masks compared.
            recorded = _recorded_positions_cause(call, partner, tokens, start, real)
            if recorded is not None:
                return recorded
            if _same_step_mask(call, partner, start, tokens, real):
                return message(
                    QT_TRANSLATE_NOOP(
                        "Invariance",
                        "a cached step of {tokens} token(s) attends differently from the full forward though its mask "
                        "lets through the same keys on these rows (the mask was ruled out): its queries or keys "
                        "differ, so its positions were not offset by the {cached} cached token(s) (or something "
                        "else before attention depends on the cache); pass position_ids / cache_position starting "
                        "at the cache's length",
                    ),
                    tokens=tokens,
                    cached=start,
                )
        ruled_out = (
            QT_TRANSLATE_NOOP(
                "Invariance",
                " (positions ruled out: the step's queries and keys equal the full forward's at the same positions)",
            )
            if moved is not None
            else ""
        )
        n_q, n_k = call.shape[2], call.shape[3]
        if call.is_causal and n_q != n_k:
            return message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "a cached step of {tokens} token(s) differs from the full forward: is_causal=True aligns the "
                    "causal mask top-left when the {queries} queries are fewer than the {keys} keys (SDPA), so "
                    "the new tokens cannot see the cached past; pass a mask aligned bottom-right instead{ruled_out}",
                ),
                tokens=tokens,
                queries=n_q,
                keys=n_k,
                ruled_out=ruled_out,
            )
        return message(
            QT_TRANSLATE_NOOP(
                "Invariance",
                "a cached step of {tokens} token(s) attends differently from the full forward: its mask hides "
                "cached keys or shows later ones; build the step's mask over the cache's length, aligned "
                "bottom-right{ruled_out}",
            ),
            tokens=tokens,
            ruled_out=ruled_out,
        )

    def _positions_cause(
        self,
        call: CapturedCall,
        partner: CapturedCall | None,
        moved: tuple[float, float],
        tokens: int,
        start: int,
        real: torch.Tensor,
    ) -> str:
        """The step's queries or keys differ from the full forward's at the same positions: the
        positions are at fault; whether its mask was also right is said (ruled out, or not)."""
        rows = real[:, start : start + tokens]
        mask_same = None
        if partner is not None:
            try:
                keep_step, keep_full = recorded_allowed(call), recorded_allowed(partner)[..., start : start + tokens, :]
                if keep_step.shape[-1] <= keep_full.shape[-1]:
                    keep_full = keep_full[..., : keep_step.shape[-1]]
                    # A step's mask is read bottom-right even when it came as is_causal (top-left).
                    if call.is_causal and keep_step.shape[-2] < keep_step.shape[-1]:
                        mask_same = None
                    elif keep_step.shape == keep_full.shape:
                        pick = rows[:, None, :, None]
                        mask_same = bool(((keep_step == keep_full) | ~pick).all())
            except Exception:  # noqa: BLE001 - a mask attnviz cannot read says nothing here
                mask_same = None
        which = (
            QT_TRANSLATE_NOOP("Invariance", "queries and keys")
            if min(moved) > self.tol
            else (
                QT_TRANSLATE_NOOP("Invariance", "queries")
                if moved[0] > self.tol
                else QT_TRANSLATE_NOOP("Invariance", "keys")
            )
        )
        mask_text = {
            True: QT_TRANSLATE_NOOP(
                "Invariance",
                "the mask was ruled out: the step's mask lets through the same keys as the full forward's on these "
                "rows",
            ),
            False: QT_TRANSLATE_NOOP("Invariance", "the step's mask differs from the full forward's too"),
            None: QT_TRANSLATE_NOOP("Invariance", "with other queries and keys, its weights differ whatever the mask"),
        }[mask_same]
        return message(
            QT_TRANSLATE_NOOP(
                "Invariance",
                "a cached step of {tokens} token(s) has other {which} than the full forward at the same positions "
                "(largest relative difference {largest:.3g}) from the same tokens: the positions of the step are "
                "wrong, not its mask; rotary or position embeddings were not offset by the {cached} cached "
                "token(s) (positions restarted at 0, or counted from another origin); pass position_ids / "
                "cache_position starting at the cache's length; {mask}",
            ),
            tokens=tokens,
            which=which,
            largest=max(moved),
            cached=start,
            mask=mask_text,
        )


def _recorded_positions_cause(
    call: CapturedCall, partner: CapturedCall, tokens: int, start: int, real: torch.Tensor
) -> str | None:
    """The step's recorded positions against the full forward's at the same rows: a sentence
    naming both when they differ on a real row; None when they agree or were not recorded."""
    mine, theirs = call.positions, partner.positions
    if mine is None or theirs is None or mine.shape[-1] != tokens or theirs.shape[-1] < start + tokens:
        return None
    b = real.shape[0]
    if mine.shape[0] not in (1, b) or theirs.shape[0] not in (1, b):
        return None
    ours = np.broadcast_to(mine, (b, tokens))
    full = np.broadcast_to(theirs[:, start : start + tokens], (b, tokens))
    rows = real[:, start : start + tokens].cpu().numpy().astype(bool)
    wrong = np.abs(ours - full) > 1e-6
    wrong &= rows
    if not wrong.any():
        return None
    e = int(np.flatnonzero(wrong.any(1))[0])
    mask = _same_step_mask(call, partner, start, tokens, real)
    return message(
        QT_TRANSLATE_NOOP(
            "Invariance",
            "a cached step of {tokens} token(s) was given other positions than the full forward gives the same "
            "tokens: its {module} embedding was called with {given} where the full forward has {expected} (batch "
            "element {e}, after {cached} cached token(s)): the positions of the step are wrong, not its mask "
            "(positions restarted at 0, or counted from another origin); pass position_ids / cache_position "
            "starting at the cache's length; {mask}",
        ),
        tokens=tokens,
        module=module_word(call.positions_from),
        given=_listed(ours[e]),
        expected=_listed(full[e]),
        e=e,
        cached=start,
        mask=QT_TRANSLATE_NOOP(
            "Invariance",
            "the mask was ruled out: the step's mask lets through the same keys as the full forward's on these rows",
        )
        if mask
        else QT_TRANSLATE_NOOP("Invariance", "with other queries and keys, its weights differ whatever the mask"),
    )


def _listed(values: np.ndarray) -> str:
    shown = [str(int(v)) if float(v).is_integer() else f"{v:.3g}" for v in values[:4]]
    return " ".join(shown) + (" ..." if len(values) > 4 else "")


def _same_step_mask(call: CapturedCall, partner: CapturedCall, start: int, tokens: int, real: torch.Tensor) -> bool:
    """The step's call lets through the same keys as the full forward's on the step's real rows."""
    step_keep, full_keep = readable_keep(call), readable_keep(partner)
    if step_keep is None or full_keep is None:
        return False
    full_keep = full_keep[..., start : start + tokens, :]
    n = min(step_keep.shape[-1], full_keep.shape[-1])
    if step_keep.shape[:-1] != full_keep.shape[:-1] or bool(step_keep[..., n:].any()) or bool(full_keep[..., n:].any()):
        return False
    pick = real[:, start : start + tokens].to(step_keep.device)[:, None, :, None]
    return bool(((step_keep[..., :n] == full_keep[..., :n]) | ~pick).all())
