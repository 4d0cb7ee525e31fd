"""Suspicious masks, found without guessing what a mask means.

A mask's meaning is what its argument declares (``mask_spec``); the values are never reread. What
is reported here are facts about the declared masks that no correct use produces:

- a float mask of only 0s and 1s passed where masks are added to the scores (``attn_mask``,
  ``key_padding_mask``): as declared it adds 1 to some scores and masks nothing;
- finite additive values that become -inf in the compute dtype (float32's finfo.min is -inf in
  float16 and in bfloat16), or whose sum with another additive mask does;
- a padding form (a mask that hides the same keys for every query and head of a batch element:
  ``key_padding_mask``, a 2-D ``attention_mask``, an ``attn_mask`` shaped (B, 1, 1, L_k)) that
  hides every key of some batch element. Padding never covers a whole sequence: each has at least
  one token, and a batch padded to its longest sequence has one element with no padding at all,
  which an inverted padding mask hides entirely. So this is reported as a probable inverted
  polarity, naming the convention of the argument;
- two padding declarations (1-D valid lengths and padding forms) that are exact opposites for
  some batch element, each keeping some key: they cannot both be right.

A padding mask inverted on a batch that is padded to a fixed length (where every element has some
padding) hides no whole sequence and agrees with no second declaration: it cannot be told apart
from left padding without knowing which tokens are padding, and is not reported (the UI can add
that check from the token labels, with ``inverted_padding``).
"""

from __future__ import annotations

import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP, message, plural

from .devices import dtype_name
from .mask_bound import CallMask
from .result import MaskFinding

#: How each mask argument reads its values, for the polarity sentences (the doctor's too).
ARGUMENT_CONVENTIONS = {
    "attn_mask": QT_TRANSLATE_NOOP("Diagnostics", "attn_mask reads True as attend"),
    "key_padding_mask": QT_TRANSLATE_NOOP("Diagnostics", "key_padding_mask reads True as ignore"),
    "attention_mask": QT_TRANSLATE_NOOP("Diagnostics", "attention_mask reads 1 as attend"),
}
_IGNORE = QT_TRANSLATE_NOOP("Diagnostics", "ignore")
_ATTEND = QT_TRANSLATE_NOOP("Diagnostics", "attend")


def _elements(flags: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(i) for i in flags.nonzero().flatten().tolist())


def inverted_padding(keys_allowed: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
    """(B,) bool: batch elements whose allowed keys are exactly the padding, each set non-empty.

    ``keys_allowed`` (B, L_k): what a mask lets each batch element attend; ``padding`` (B, L_k):
    which keys are padding, known from elsewhere (valid lengths, a second mask, pad tokens).
    """
    real = ~padding
    return (keys_allowed == padding).all(-1) & keys_allowed.any(-1) & real.any(-1)


def mask_findings(spec: CallMask, dtype: torch.dtype) -> list[MaskFinding]:
    findings: list[MaskFinding] = []
    for source in spec.bias:
        if source.zero_one:
            findings.append(
                MaskFinding(
                    "float01_additive",
                    source.name,
                    message(
                        QT_TRANSLATE_NOOP(
                            "Diagnostics",
                            "{name} is a float mask of 0s and 1s, which is added to the scores: it masks nothing. "
                            "A keep/drop mask must be boolean (True = {meaning}) or go through attention_mask=",
                        ),
                        name=source.name,
                        meaning=_IGNORE if source.name == "key_padding_mask" else _ATTEND,
                    ),
                )
            )
        if source.overflowed:
            findings.append(
                MaskFinding(
                    "additive_overflow",
                    source.name,
                    plural(
                        source.overflowed,
                        QT_TRANSLATE_NOOP(
                            "Diagnostics",
                            "{n} finite value of {name} is beyond {dtype}'s range and became -inf: build the mask "
                            "with torch.finfo(torch.{dtype}).min",
                        ),
                        QT_TRANSLATE_NOOP(
                            "Diagnostics",
                            "{n} finite values of {name} are beyond {dtype}'s range and became -inf: build the mask "
                            "with torch.finfo(torch.{dtype}).min",
                        ),
                        name=source.name,
                        dtype=dtype_name(dtype),
                    ),
                    count=source.overflowed,
                )
            )
    if len(spec.bias) > 1:
        lowest = [s.data[torch.isfinite(s.data)].min() for s in spec.bias if bool(torch.isfinite(s.data).any())]
        if len(lowest) > 1 and bool(torch.isinf(torch.stack(lowest).sum())):
            names = " and ".join(s.name for s in spec.bias)
            findings.append(
                MaskFinding(
                    "additive_sum_overflow",
                    names,
                    message(
                        QT_TRANSLATE_NOOP(
                            "Diagnostics",
                            "{names} are added together, and where both hold their most negative values the sum "
                            "overflows to -inf in {dtype}",
                        ),
                        names=names,
                        dtype=dtype_name(dtype),
                    ),
                )
            )
    padding = [
        (s.name, s.keys_by_batch.expand(spec.batch, spec.n_keys))
        for s in (*spec.allowed, *spec.bias)
        if s.keys_by_batch is not None
    ]
    for name, keys in padding:
        hidden = ~keys.any(-1)
        if bool(hidden.any()):
            elements = _elements(hidden)
            findings.append(
                MaskFinding(
                    "hides_whole_sequence",
                    name,
                    message(
                        QT_TRANSLATE_NOOP(
                            "Diagnostics",
                            "{name} hides every key of batch element(s) {elements}; padding never covers a whole "
                            "sequence, so its polarity is probably inverted ({convention})",
                        ),
                        name=name,
                        elements=", ".join(map(str, elements)),
                        convention=ARGUMENT_CONVENTIONS[name],
                    ),
                    elements,
                    len(elements),
                )
            )
    declared = list(padding)
    if padding and spec.valid_lens is not None and spec.valid_lens.dim() == 1:
        keys = torch.arange(spec.n_keys, device=spec.valid_lens.device)
        declared.insert(0, ("valid_lens", keys[None, :] < spec.valid_lens[:, None]))
    for i, (name_a, keys_a) in enumerate(declared):
        for name_b, keys_b in declared[i + 1 :]:
            opposite = inverted_padding(keys_a, ~keys_b.to(keys_a.device))
            if bool(opposite.any()):
                elements = _elements(opposite)
                names = f"{name_a} and {name_b}"
                findings.append(
                    MaskFinding(
                        "padding_inverted",
                        names,
                        message(
                            QT_TRANSLATE_NOOP(
                                "Diagnostics",
                                "{a} and {b} keep opposite keys of batch element(s) {elements}: one of them has "
                                "the wrong polarity",
                            ),
                            a=name_a,
                            b=name_b,
                            elements=", ".join(map(str, elements)),
                        ),
                        elements,
                        len(elements),
                    )
                )
    return findings
