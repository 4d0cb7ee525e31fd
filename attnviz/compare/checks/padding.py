"""The padding check: each sequence alone against its row in the batch as given (each call's mask
read against the attention mask first), then in the batch padded on the right and on the left."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch

from attnviz.capture import CapturedCall
from attnviz.capture.doctor import Finding
from attnviz.capture.doctor_positions import module_word
from attnviz.compare.checks.base import (
    Aligned,
    Gap,
    InvarianceCheck,
    InvarianceFinding,
    Run,
    call_weights,
    find_gap,
    gap_finding,
    run_captured,
)
from attnviz.compare.failure_site import failure_text
from attnviz.compare.invariance_causes import positions_moved, read_call_padding, recorded_allowed
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["PaddingCheck"]


class PaddingCheck(InvarianceCheck):
    name = "padding"
    #: The last cause found was positions not adjusted to left padding (``_padding_cause``).
    _unadjusted = False

    def run(self) -> tuple[list[Finding], str | None]:
        mask = self.mask
        if mask is None or "attention_mask" not in self.parameters:
            return [], QT_TRANSLATE_NOOP(
                "Invariance", "padding: not checked (the model takes no attention_mask, or the inputs no input_ids)"
            )
        real = [torch.nonzero(row).flatten() for row in mask]
        # The batch as given first: each call's mask read against the padding its attention mask
        # shows (both ways), then each sequence alone against its row of it.
        given = run_captured(self.model, self.inputs)  # a model that fails on its own batch is not a finding
        read = self._read_given(given)
        if read is not None:
            return [read], None
        alone: list[Run] = []
        for b, idx in enumerate(real):
            single, failed = self._attempt(
                self._alone(b, idx), message(QT_TRANSLATE_NOOP("Invariance", "batch element {b} alone"), b=b)
            )
            if failed is not None:
                return [failed], None
            assert single is not None
            alone.append(single)
        gap = self._padding_gap(alone, given, real, mask.shape[1])
        if gap is not None:
            return [gap_finding("padding", gap, self._given_cause(real, alone, gap, given))], None
        length = max(len(idx) for idx in real) + 1
        findings: list[Finding] = []
        for side in ("right", "left"):
            batch, positions = self._padded(real, length, side, adjust_positions="position_ids" in self.inputs)
            padded, failed = self._attempt(
                batch, message(QT_TRANSLATE_NOOP("Invariance", "the batch padded on the {side}"), side=side)
            )
            if failed is not None:
                findings.append(failed)
                continue
            assert padded is not None
            gap = self._padding_gap(alone, padded, positions, length)
            if gap is None:
                continue
            self._unadjusted = False
            cause = self._padding_cause(side, real, length, alone, gap, padded, positions)
            finding = gap_finding("padding", gap, cause)
            if self._unadjusted and not _left_padded(real, length) and not _causal(given):
                # An encoder (no call is causal) given a right-padded batch: its position embeddings
                # count from the first column, as its tokenizer pads; left padding is a hazard, not a bug.
                finding = replace(
                    finding,
                    severity="warning",
                    message=message(
                        QT_TRANSLATE_NOOP(
                            "Invariance",
                            "{cause}; this model attends both ways (an encoder) and its batch is padded on the right, "
                            "so only left padding would move it",
                        ),
                        cause=cause,
                    ),
                )
            findings.append(finding)
        return findings, None

    def _attempt(self, inputs: dict[str, Any], what: str) -> tuple[Run | None, Finding | None]:
        """A run under capture, or the error of a model that fails on these inputs."""
        try:
            return run_captured(self.model, inputs), None
        except Exception as exc:  # noqa: BLE001 - a model that fails on a sequence alone is a finding
            return None, InvarianceFinding("padding", "error", -1, "", failure_text(self.model, exc, what, inputs))

    def _sides(self, call: CapturedCall) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
        """(real queries, real keys, key token ids) of ``call`` as the inputs' attention masks
        give them: a cross-attention call's keys are the encoder's, its queries the decoder's."""
        encoder_real, ids = self.mask, self.inputs.get("input_ids")
        if not self.encoder_decoder:
            return encoder_real, encoder_real, ids
        decoder_mask = self.inputs.get("decoder_attention_mask")
        decoder_ids = self.inputs.get("decoder_input_ids")
        decoder_real = decoder_mask.bool() if isinstance(decoder_mask, torch.Tensor) else None
        if call.cross:
            return decoder_real, encoder_real, ids
        if call.encoder:
            return encoder_real, encoder_real, ids
        return decoder_real, decoder_real, decoder_ids

    def _read_given(self, given: Run) -> Finding | None:
        """The first call of the batch as given whose mask does not follow its attention mask."""
        for index, call in enumerate(given.calls):
            real_q, real_k, ids = self._sides(call)
            if real_k is None or bool(real_k.all()):
                continue  # no padding: nothing to read the mask against
            reading = read_call_padding(call, real_q, real_k, ids if isinstance(ids, torch.Tensor) else None)
            if reading is not None:
                return InvarianceFinding(
                    "padding",
                    "error",
                    index,
                    call.name,
                    message(
                        QT_TRANSLATE_NOOP("Invariance", "in the batch as given, against its attention mask: {text}"),
                        text=reading.text,
                    ),
                    reading.heads,
                    reading.batch,
                    reading.rows,
                    reading.count,
                )
        return None

    def _given_cause(self, real: list[torch.Tensor], alone: list[Run], gap: Gap, given: Run) -> str:
        """Why the batch as given differs from its sequences alone, its masks having been read
        right: its positions (tried: the batch again with each sequence's own positions), else
        said as found."""
        length = self.mask.shape[1] if self.mask is not None else 0
        given_positions = self.inputs.get("position_ids")
        if self._accepts("position_ids") and self.mask is not None:
            own = (self.mask.long().cumsum(-1) - 1).clamp(min=0)
            retry, failed = self._attempt({**self.inputs, "position_ids": own}, "")
            if failed is None and retry is not None and self._padding_gap(alone, retry, real, length) is None:
                b = gap.batch[0] if gap.batch else 0
                first = int(real[b][0]) if len(real[b]) else 0
                if isinstance(given_positions, torch.Tensor):
                    at = int(given_positions[b, first]) if given_positions.dim() == 2 else first
                    return message(
                        QT_TRANSLATE_NOOP(
                            "Invariance",
                            "the batch's position_ids are not each sequence's own: batch element {b}'s first real "
                            "token is at position {at} in the batch and at 0 alone (position_ids counted over the "
                            "pads, such as arange over a left-padded batch); with each sequence's own positions "
                            "the batch agrees with every sequence alone, so its masks were ruled out; pass "
                            "position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)",
                        ),
                        b=b,
                        at=at,
                    )
                return message(
                    QT_TRANSLATE_NOOP(
                        "Invariance",
                        "the batch's positions were not adjusted to its padding: batch element {b}'s first real "
                        "token is at position {at} in the batch and at 0 alone; with each sequence's own positions "
                        "the batch agrees with every sequence alone, so its masks were ruled out; pass "
                        "position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0), as generate() does",
                    ),
                    b=b,
                    at=first,
                )
        recorded = _recorded_positions_apart(given, alone, gap, real)
        if recorded is not None:
            return recorded
        return QT_TRANSLATE_NOOP(
            "Invariance",
            "these sequences attend differently in the batch as given than alone, though each call's mask follows "
            "the attention mask: something other than the mask depends on the padding (positions, a pad token's "
            "embedding reaching real tokens); compare this call in both runs (attnviz.compare)",
        )

    def _decoder_side(self, key: str) -> bool:
        """An input of an encoder-decoder's decoder: never re-padded as the encoder's text, even
        when its shape is the encoder's."""
        return self.encoder_decoder and key.startswith("decoder_")

    def _alone(self, b: int, idx: torch.Tensor) -> dict[str, Any]:
        out: dict[str, Any] = {}
        shape = self.mask.shape if self.mask is not None else None
        for key, value in self.inputs.items():
            if (
                isinstance(value, torch.Tensor)
                and value.dim() >= 2
                and shape is not None
                and tuple(value.shape[:2]) == tuple(shape)
                and not self._decoder_side(key)
            ):
                row = value[b : b + 1, idx]
                if key == "position_ids":
                    row = torch.arange(len(idx)).unsqueeze(0)
                out[key] = row
            elif (
                isinstance(value, torch.Tensor)
                and value.dim() >= 1
                and shape is not None
                and value.shape[0] == shape[0]
            ):
                out[key] = value[b : b + 1]
            else:
                out[key] = value
        return out

    def _padded(
        self, real: list[torch.Tensor], length: int, side: str, *, adjust_positions: bool
    ) -> tuple[dict[str, Any], list[torch.Tensor]]:
        """The batch re-padded on ``side`` to ``length``, and each row's real positions in it."""
        shape = self.mask.shape if self.mask is not None else None
        rows = len(real)
        positions = [
            torch.arange(len(idx)) if side == "right" else torch.arange(length - len(idx), length) for idx in real
        ]
        out: dict[str, Any] = {}
        for key, value in self.inputs.items():
            if not (
                isinstance(value, torch.Tensor)
                and value.dim() >= 2
                and shape is not None
                and tuple(value.shape[:2]) == tuple(shape)
                and not self._decoder_side(key)
            ):
                out[key] = value
                continue
            fill = self.pad_id if key == "input_ids" else 0
            new = torch.full((rows, length, *value.shape[2:]), fill, dtype=value.dtype)
            for b, idx in enumerate(real):
                new[b, positions[b]] = value[b, idx]
            out[key] = new
        keep = torch.zeros(rows, length, dtype=torch.long)
        for b in range(rows):
            keep[b, positions[b]] = 1
        out["attention_mask"] = (
            keep.to(self.inputs["attention_mask"].dtype) if "attention_mask" in self.inputs else keep
        )
        if adjust_positions:
            out["position_ids"] = (keep.cumsum(-1) - 1).clamp(min=0)
        return out, positions

    def _padding_gap(self, alone: list[Run], padded: Run, positions: list[torch.Tensor], length: int) -> Gap | None:
        gap: Gap | None = None
        pieces_by_call: dict[str, list[Aligned]] = {}
        order: list[str] = []
        # The padded batch's weights, recomputed once per call (each sequence alone is compared
        # with its row of them).
        padded_weights: dict[int, torch.Tensor | None] = {}
        for b, single in enumerate(alone):
            pos = positions[b]
            n = len(pos)

            def align(
                ref: torch.Tensor, test: torch.Tensor, what: str, b: int = b, pos: torch.Tensor = pos, n: int = n
            ) -> list[Aligned]:
                r = ref[0]
                t = _select(test[b], -2, pos, length, n)
                if what == "weights":
                    t = _select(t, -1, pos, length, n)
                if t.shape != r.shape:
                    return []
                rows = pos.tolist() if test.shape[-2] == length and n != length else list(range(t.shape[-2]))
                return [Aligned(b, r, t, rows)]

            ref_calls = {c.name: c for c in single.calls}
            for call in padded.calls:
                partner = ref_calls.get(call.name)
                if partner is None:
                    continue
                if call.name not in pieces_by_call:
                    order.append(call.name)
                    pieces_by_call[call.name] = []
                if id(call) not in padded_weights:
                    padded_weights[id(call)] = call_weights(call)
                w_test, w_ref = padded_weights[id(call)], call_weights(partner)
                if w_test is not None and w_ref is not None:
                    pieces_by_call[call.name] += align(w_ref, w_test, "weights")
                if call.output is not None and partner.output is not None:
                    pieces_by_call[call.name] += align(partner.output, call.output, "output")
        names = [c.name for c in padded.calls]
        for name in order:
            found = find_gap(names.index(name), name, pieces_by_call[name], self.tol)
            if found is not None:
                return found
        pieces: list[Aligned] = []
        for b, single in enumerate(alone):
            pos = positions[b]
            out = padded.output[b]
            if (
                out.dim() >= 1
                and out.shape[0] == length
                and single.output.shape[1] == len(pos)
                and not self.encoder_decoder
            ):
                out = out[pos]
                rows = pos.tolist()
            else:
                rows = list(range(out.shape[0])) if out.dim() >= 1 else [0]
            ref = single.output[0]
            if out.shape == ref.shape:
                pieces.append(
                    Aligned(
                        b,
                        ref.reshape(ref.shape[0], -1) if ref.dim() > 1 else ref.unsqueeze(-1),
                        out.reshape(out.shape[0], -1) if out.dim() > 1 else out.unsqueeze(-1),
                        rows,
                    )
                )
        gap = find_gap(-1, "", pieces, self.tol)
        return gap

    def _padding_cause(
        self,
        side: str,
        real: list[torch.Tensor],
        length: int,
        alone: list[Run],
        gap: Gap,
        padded: Run,
        positions: list[torch.Tensor],
    ) -> str:
        if side == "left" and "position_ids" not in self.inputs and self._accepts("position_ids"):
            batch, _ = self._padded(real, length, side, adjust_positions=True)
            if self._padding_gap(alone, run_captured(self.model, batch), positions, length) is None:
                self._unadjusted = True
                return message(
                    QT_TRANSLATE_NOOP(
                        "Invariance",
                        "left padding changes these sequences: their positions were not adjusted (a left-padded "
                        "row's first real token is at position {first}, alone at 0); pass position_ids = "
                        "(attention_mask.cumsum(-1) - 1).clamp(min=0), as generate() does",
                    ),
                    first=int(positions[gap.batch[0]][0]) if gap.batch else 1,
                )
        if gap.index >= 0:
            call = padded.calls[gap.index]
            keep = recorded_allowed(call)
            b = gap.batch[0]
            pos = positions[b]
            pads = torch.ones(keep.shape[-1], dtype=torch.bool)
            if keep.shape[-1] == length:
                pads[pos] = False
                rows = pos if keep.shape[-2] == length else torch.arange(keep.shape[-2])
                if bool(keep[b][:, rows][..., pads].any()):
                    return message(
                        QT_TRANSLATE_NOOP(
                            "Invariance",
                            "the padding is not masked here: real tokens attend to the {side} padding; pass the "
                            "attention_mask to this call (a mask lost, inverted or built for the other side)",
                        ),
                        side=side,
                    )
            # Adjusted positions were tried above on the left: a model that still moves ignores them.
            tried = side == "left" and "position_ids" not in self.inputs
            takes = self._accepts("position_ids") and not tried
            moved = positions_moved(call, alone[b].calls, b, pos, self.tol, takes, side)
            if moved is not None:
                self._unadjusted = side == "left"
                return moved
        return message(
            QT_TRANSLATE_NOOP(
                "Invariance",
                "these sequences attend differently when padded on the {side} than alone: the mask or the "
                "positions depend on the padding; compare this call's mask in both runs (attnviz.compare)",
            ),
            side=side,
        )


def _recorded_positions_apart(given: Run, alone: list[Run], gap: Gap, real: list[torch.Tensor]) -> str | None:
    """The positions the model's position (or rotary) embedding was called with for the call
    where the batch and a sequence alone part, read at capture: a sentence when a real token's
    position in the batch is not its position alone; None when they agree or were not read."""
    if gap.index < 0 or not gap.batch:
        return None
    call = given.calls[gap.index]
    for b in gap.batch:
        partner = next((c for c in alone[b].calls if c.name == call.name), None)
        mine = call.positions
        if partner is None or mine is None or partner.positions is None or len(real[b]) == 0:
            continue
        theirs = partner.positions
        if mine.shape[0] not in (1, len(alone)) or theirs.shape != (1, len(real[b])):
            continue
        if int(real[b].max()) >= mine.shape[1]:
            continue
        ours = mine[min(b, mine.shape[0] - 1), real[b].numpy()]
        if bool((abs(ours - theirs[0]) <= 1e-6).all()):
            continue
        first = int(real[b][0])
        return message(
            QT_TRANSLATE_NOOP(
                "Invariance",
                "positions, not the mask: the model's {module} embedding gave batch element {b}'s first real token "
                "(row {row}) position {given} in the batch and {alone} alone: its positions count the pads (arange "
                "over a left-padded batch, computed by the model or given to it), so its real tokens get other "
                "queries and keys; each call's mask follows the attention mask, so the masks were ruled out; "
                "compute positions from the attention mask, (attention_mask.cumsum(-1) - 1).clamp(min=0)",
            ),
            module=module_word(call.positions_from),
            b=b,
            row=first,
            given=_whole(float(ours[0])),
            alone=_whole(float(theirs[0, 0])),
        )
    return None


def _whole(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:.3g}"


def _left_padded(real: list[torch.Tensor], length: int) -> bool:
    """Some sequence of the batch as given starts after pads."""
    return any(len(idx) and int(idx[0]) > 0 for idx in real)


def _causal(run: Run) -> bool:
    """Some self-attention call of ``run`` is causal (a decoder, which generation pads on the left)."""
    for call in run.calls:
        if call.cross:
            continue
        try:
            keep = recorded_allowed(call)
        except Exception:  # noqa: BLE001 - a mask attnviz cannot read says nothing here
            continue
        n_q, n_k = keep.shape[-2:]
        if n_q == n_k and n_q > 1:
            later = torch.ones(n_q, n_k, dtype=torch.bool).triu(1)
            return not bool((keep & later).any())
    return True


def _select(t: torch.Tensor, axis: int, pos: torch.Tensor, length: int, n: int) -> torch.Tensor:
    """``t`` along ``axis`` at the real positions ``pos`` when that axis is the padded sequence."""
    size = t.shape[axis]
    if size == length and n != length:
        return t.index_select(axis % t.dim(), pos)
    return t
