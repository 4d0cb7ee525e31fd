"""Mask sources: validated, kept at their own (broadcast) size, combined a block of rows at a time.

Each argument declares what its values mean; nothing is ever guessed from the values:

  valid_lens        (B,) or (B, L_q) whole numbers: key k is valid if k < length (the book's). B is
                    the first leading dimension (the batch): every head of a batch element shares it.
                    Lengths above L_k mean "all keys valid", as in the book (huge float lengths too).
  causal            None, True / "top_left" (PyTorch's is_causal: query i sees keys 0..i) or
                    "bottom_right" (the last query lines up with the last key: a KV-cache step)
  attn_mask         broadcastable to (..., L_q, L_k), as torch SDPA reads it: bool True = attend;
                    float = added to the scores (0 / -inf, 0 / finfo.min, any bias)
  key_padding_mask  (B, L_k), as nn.MultiheadAttention reads it: bool True = ignore; float = added
  attention_mask    Hugging Face's: (B, L_k) 0/1 (int, bool or float), 1 = attend; or an expanded
                    form broadcastable to (..., L_q, L_k) with the same meaning

Boolean sources are combined into one ``allowed`` mask (a key is attended only if every source
allows it), which the mask mode applies (``masking.MASK_MODES``). Float sources are summed into an
additive ``bias`` that is added to the scores as given, in every mode (see ``masking``).

A source is never expanded to the full (..., L_q, L_k) size: it keeps its own shape, flattened to
(M, L_q or 1, L_k or 1) over the flattened leading dimensions, with an index from each of the N
flattened batch elements to its row. A block of rows takes only what it needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..tr import QT_TRANSLATE_NOOP, message
from .errors import AttentionInputError

CAUSAL_ALIGNMENTS = ("top_left", "bottom_right")

#: An additive mask value at or below this counts as masking its key, for the ``mask`` stage and
#: the diagnostics only (the computation adds every value as given). exp(-1e4) underflows to 0 in
#: every float dtype, so such a key gets no weight unless the scores themselves span 1e4. Every
#: masking convention in use is below it: -inf, finfo(float16/bfloat16/float32).min, -1e9, and the
#: -10000 of older BERT code; position biases (ALiBi, T5) stay far above it.
ADDITIVE_MASKED_AT = -1e4

#: What huge float valid lengths are clamped to before becoming int64: still "all keys valid".
_MAX_LENGTH = 2**62

#: Whole-number dtypes, signed and unsigned.
INT_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.uint16, torch.uint32, torch.uint64)


def causal_problem(causal: object) -> str:
    """The error for a ``causal`` argument that is none of the accepted values."""
    return message(
        QT_TRANSLATE_NOOP("Errors", "causal must be None, True, 'top_left' or 'bottom_right'; got {value}"),
        value=repr(causal),
    )


def check_causal(causal: object) -> str | None:
    """None, "top_left" or "bottom_right" from what ``attend`` accepts (True = PyTorch's is_causal)."""
    if causal is True:
        return "top_left"
    if causal is None or causal is False:
        return None
    if isinstance(causal, str) and causal in CAUSAL_ALIGNMENTS:
        return causal
    raise AttentionInputError(causal_problem(causal), "mask")


def _as_tensor(value: object, name: str, field: str) -> torch.Tensor:
    try:
        t = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} must be a numeric tensor or array; got {type}"),
                name=name,
                type=type(value).__name__,
            ),
            field,
        ) from exc
    if t.device.type == "meta":
        raise AttentionInputError(
            message(QT_TRANSLATE_NOOP("Errors", "{name} is on the 'meta' device, which holds no values"), name=name),
            field,
        )
    return t.detach()


def check_valid_lens(valid_lens: object, batch: int, n_queries: int, device: torch.device) -> torch.Tensor | None:
    """Validate valid lengths: shape (batch,) or (batch, queries), whole numbers >= 0.

    Returns an int64 tensor on ``device``. Lengths above the number of keys are kept (clamped to
    2^62, so that float lengths beyond int64 do not wrap around): the book's code treats them as
    "all keys valid", and the diagnostics report them.
    """
    if valid_lens is None:
        return None
    try:
        vl = torch.as_tensor(valid_lens)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        # Python ints beyond int64 (2**63, 2**64) overflow: as float64 they are clamped like huge floats.
        try:
            vl = torch.as_tensor(valid_lens, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError, OverflowError):
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP("Errors", "valid_lens must hold whole numbers; got {type}"),
                    type=type(valid_lens).__name__,
                ),
                "valid_lens",
            ) from None
    if vl.device.type == "meta":
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} is on the 'meta' device, which holds no values"), name="valid_lens"
            ),
            "valid_lens",
        )
    if vl.dtype == torch.bool or vl.is_complex() or not (vl.is_floating_point() or vl.dtype in INT_DTYPES):
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "valid_lens must hold whole numbers, got dtype {dtype}"),
                dtype=str(vl.dtype),
            ),
            "valid_lens",
        )
    if vl.shape not in ((batch,), (batch, n_queries)):
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "valid_lens must have shape ({batch},) or ({batch}, {n_q}) for a batch of {batch} with {n_q} "
                    "queries; got shape {shape}",
                ),
                batch=batch,
                n_q=n_queries,
                shape=tuple(vl.shape),
            ),
            "valid_lens",
        )
    if vl.dtype in (torch.uint16, torch.uint32, torch.uint64):
        vl = vl.to(torch.float64)  # few operations exist for these; every value is >= 0 anyway
    if vl.is_floating_point():
        if torch.isnan(vl).any():
            raise AttentionInputError(QT_TRANSLATE_NOOP("Errors", "valid_lens contains NaN"), "valid_lens")
        if torch.isinf(vl).any():
            raise AttentionInputError(
                QT_TRANSLATE_NOOP("Errors", "valid_lens contains an infinite value"), "valid_lens"
            )
        fractional = vl != torch.floor(vl)
        if fractional.any():
            bad = vl[fractional][0].item()
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP("Errors", "valid lengths must be whole numbers; got {value}"), value=f"{bad:g}"
                ),
                "valid_lens",
            )
    if (vl < 0).any():
        bad = vl[vl < 0][0].item()
        raise AttentionInputError(
            message(QT_TRANSLATE_NOOP("Errors", "valid lengths must be >= 0; got {value}"), value=f"{bad:g}"),
            "valid_lens",
        )
    if vl.is_floating_point():
        vl = vl.clamp(max=_MAX_LENGTH)
    return vl.to(device=device, dtype=torch.int64)


@dataclass(frozen=True)
class Source:
    """One mask source at its own size: ``data`` (M, L_q or 1, ...) over N flattened batch elements.

    ``index`` (N,) is the row of ``data`` for each flattened batch element; None when ``data`` has
    a row per element (M = N) or one row for all (M = 1). ``keys_by_batch`` (B or 1, L_k) bool is
    what the source allows per batch element when it is a padding form (the same keys for every
    query and head), else None: the diagnostics compare padding declarations through it.
    """

    name: str
    data: torch.Tensor
    index: torch.Tensor | None = None
    keys_by_batch: torch.Tensor | None = None
    #: Float sources: finite values that became -inf in the compute dtype.
    overflowed: int = 0
    #: Float sources holding only 0 and 1 with some 1: an additive mask that masks nothing.
    zero_one: bool = False

    def take(self, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor:
        """The part for flattened batch elements n0:n1 and query rows r0:r1 (broadcastable)."""
        d = self.data if self.data.shape[1] == 1 else self.data[:, r0:r1]
        if self.index is None:
            return d if d.shape[0] == 1 else d[n0:n1]
        rows = self.index[n0:n1]
        first = int(rows[0])
        if bool((rows == first).all()):
            return d[first : first + 1]
        if torch.equal(rows, torch.arange(first, first + n1 - n0)):
            return d[first : first + n1 - n0]
        return d.index_select(0, rows.to(d.device))


def _index(shape: tuple[int, ...], lead: tuple[int, ...]) -> torch.Tensor | None:
    """Row of a source with leading shape ``shape`` (each 1 or equal to ``lead``) per element of ``lead``."""
    if all(s == 1 for s in shape) or shape == lead:
        return None
    return torch.arange(math.prod(shape)).reshape(shape).expand(lead).reshape(-1)


def _examples(lead: tuple[int, ...], n_q: int, n_k: int) -> str:
    shapes = [
        (n_q, n_k),
        (lead[0], *(1,) * (len(lead) - 1), 1, n_k),
        (lead[0], *(1,) * (len(lead) - 1), n_q, n_k),
        (*lead, n_q, n_k),
    ]
    unique = [s for i, s in enumerate(shapes) if s not in shapes[:i]]
    return ", ".join(str(s) for s in unique)


def _broadcast_source(
    mask: torch.Tensor, name: str, lead: tuple[int, ...], n_q: int, n_k: int
) -> tuple[torch.Tensor, tuple[int, ...]]:
    """``mask`` as (M, L_q or 1, L_k or 1) and its leading shape, right-aligned to (*lead, L_q, L_k)."""
    target = (*lead, n_q, n_k)
    if (
        mask.dim() < 2
        or mask.dim() > len(target)
        or any(s not in (1, t) for s, t in zip(reversed(mask.shape), reversed(target)))
    ):
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "{name} of shape {shape} does not broadcast to {target} (..., queries, keys); expected a shape "
                    "such as {examples}",
                ),
                name=name,
                shape=tuple(mask.shape),
                target=target,
                examples=_examples(lead, n_q, n_k),
            ),
            "mask",
        )
    full = (1,) * (len(target) - mask.dim()) + tuple(mask.shape)
    return mask.reshape(math.prod(full[:-2]), full[-2], full[-1]), full[:-2]


def _key_only(flat: torch.Tensor, lead_shape: tuple[int, ...], n_k: int) -> bool:
    """The source masks the same keys for every query and head of a batch element: a padding form."""
    return flat.shape[1] == 1 and flat.shape[2] == n_k and all(s == 1 for s in lead_shape[1:])


def _bool_source(
    name: str, allowed: torch.Tensor, lead_shape: tuple[int, ...], lead: tuple[int, ...], n_k: int, device: torch.device
) -> Source:
    allowed = allowed.to(device).contiguous()
    keys = allowed[:, 0, :] if _key_only(allowed, lead_shape, n_k) else None
    return Source(name, allowed, _index(lead_shape, lead), keys)


def _float_source(
    name: str,
    values: torch.Tensor,
    lead_shape: tuple[int, ...],
    lead: tuple[int, ...],
    n_k: int,
    device: torch.device,
    dtype: torch.dtype,
) -> Source:
    if bool(torch.isnan(values).any()) or bool(torch.isposinf(values).any()):
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors", "{name} contains NaN or +inf: an additive mask may hold 0, negative numbers and -inf"
                ),
                name=name,
            ),
            "mask",
        )
    converted = values.to(device=device, dtype=dtype).contiguous()
    # A conversion only ever turns finite values into -inf, never the other way.
    overflowed = int(torch.isinf(converted).sum()) - int(torch.isinf(values).sum())
    zero_one = bool(((values == 0) | (values == 1)).all()) and bool((values == 1).any())
    keys = converted[:, 0, :] > ADDITIVE_MASKED_AT if _key_only(converted, lead_shape, n_k) else None
    return Source(name, converted, _index(lead_shape, lead), keys, overflowed, zero_one)


def _padding_shape(mask: torch.Tensor, name: str, batch: int, n_k: int) -> None:
    if tuple(mask.shape) != (batch, n_k):
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} must have shape {shape} (batch, keys); got {got}"),
                name=name,
                shape=(batch, n_k),
                got=tuple(mask.shape),
            ),
            "mask",
        )


def _attn_mask(
    mask: object, lead: tuple[int, ...], n_q: int, n_k: int, device: torch.device, dtype: torch.dtype
) -> Source:
    m = _as_tensor(mask, "attn_mask", "mask")
    if m.dtype != torch.bool and not m.is_floating_point():
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "attn_mask must be a boolean tensor (True = attend) or a float tensor added to the scores, as "
                    "torch SDPA reads it; got dtype {dtype} (a Hugging Face 0/1 mask goes through attention_mask=)",
                ),
                dtype=str(m.dtype),
            ),
            "mask",
        )
    flat, lead_shape = _broadcast_source(m, "attn_mask", lead, n_q, n_k)
    if m.dtype == torch.bool:
        return _bool_source("attn_mask", flat, lead_shape, lead, n_k, device)
    return _float_source("attn_mask", flat, lead_shape, lead, n_k, device, dtype)


def _key_padding_mask(
    mask: object, lead: tuple[int, ...], n_q: int, n_k: int, device: torch.device, dtype: torch.dtype
) -> Source:
    m = _as_tensor(mask, "key_padding_mask", "mask")
    if m.dtype != torch.bool and not m.is_floating_point():
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "key_padding_mask must be a boolean tensor (True = ignore) or a float tensor added to the "
                    "scores, as nn.MultiheadAttention reads it; got dtype {dtype}",
                ),
                dtype=str(m.dtype),
            ),
            "mask",
        )
    _padding_shape(m, "key_padding_mask", lead[0], n_k)
    lead_shape = (lead[0], *(1,) * (len(lead) - 1))
    flat = m.reshape(lead[0], 1, n_k)
    if m.dtype == torch.bool:
        return _bool_source("key_padding_mask", ~flat, lead_shape, lead, n_k, device)
    return _float_source("key_padding_mask", flat, lead_shape, lead, n_k, device, dtype)


def _attention_mask(mask: object, lead: tuple[int, ...], n_q: int, n_k: int, device: torch.device) -> Source:
    m = _as_tensor(mask, "attention_mask", "mask")
    if m.is_complex() or not (m.dtype == torch.bool or m.is_floating_point() or m.dtype in INT_DTYPES):
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "attention_mask must hold 0 and 1 (1 = attend); got dtype {dtype}"),
                dtype=str(m.dtype),
            ),
            "mask",
        )
    if m.dtype != torch.bool:
        odd = (m != 0) & (m != 1)
        if bool(odd.any()):
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Errors",
                        "attention_mask must hold 0 and 1 (1 = attend), as Hugging Face tokenizers return it; got "
                        "{value}. An additive mask (0 and large negative numbers) goes through attn_mask=",
                    ),
                    value=f"{m[odd][0].item():g}",
                ),
                "mask",
            )
        m = m != 0
    if m.dim() == 2:
        _padding_shape(m, "attention_mask", lead[0], n_k)
        return _bool_source(
            "attention_mask", m.reshape(lead[0], 1, n_k), (lead[0], *(1,) * (len(lead) - 1)), lead, n_k, device
        )
    flat, lead_shape = _broadcast_source(m, "attention_mask", lead, n_q, n_k)
    return _bool_source("attention_mask", flat, lead_shape, lead, n_k, device)


@dataclass(frozen=True)
class MaskSpec:
    """Every mask source, validated; builds the ``allowed`` mask and the additive bias a block at a time.

    ``lead`` is the leading shape of the queries (B, or B, H, ...); N = prod(lead) flattened batch
    elements. ``valid_lens`` is int64 (B,) or (B, L_q); ``allowed`` holds the boolean sources
    (True = attend), ``bias`` the float ones (added to the scores).
    """

    lead: tuple[int, ...]
    n_queries: int
    n_keys: int
    valid_lens: torch.Tensor | None = None
    causal: str | None = None
    allowed: tuple[Source, ...] = ()
    bias: tuple[Source, ...] = ()
    lens: Source | None = None

    @staticmethod
    def build(
        lead: int | tuple[int, ...],
        n_queries: int,
        n_keys: int,
        device: torch.device,
        valid_lens: object = None,
        causal: bool | str | None = None,
        attn_mask: object = None,
        key_padding_mask: object = None,
        attention_mask: object = None,
        dtype: torch.dtype = torch.float32,
    ) -> MaskSpec:
        lead = (lead,) if isinstance(lead, int) else tuple(lead)
        alignment = check_causal(causal)
        allowed: list[Source] = []
        bias: list[Source] = []
        for source in (
            None if attn_mask is None else _attn_mask(attn_mask, lead, n_queries, n_keys, device, dtype),
            None
            if key_padding_mask is None
            else _key_padding_mask(key_padding_mask, lead, n_queries, n_keys, device, dtype),
            None if attention_mask is None else _attention_mask(attention_mask, lead, n_queries, n_keys, device),
        ):
            if source is not None:
                (allowed if source.data.dtype == torch.bool else bias).append(source)
        vl = check_valid_lens(valid_lens, lead[0], n_queries, device)
        lens = None
        if vl is not None:
            lens_2d = vl[:, None] if vl.dim() == 1 else vl
            lens = Source("valid_lens", lens_2d, _index((lead[0], *(1,) * (len(lead) - 1)), lead))
        return MaskSpec(lead, n_queries, n_keys, vl, alignment, tuple(allowed), tuple(bias), lens)

    @property
    def batch(self) -> int:
        return self.lead[0]

    @property
    def n_flat(self) -> int:
        """N: the number of flattened batch elements (the product of the leading dimensions)."""
        return math.prod(self.lead)

    @property
    def is_empty(self) -> bool:
        """No mask source at all: every query sees every key."""
        return self.valid_lens is None and self.causal is None and not self.allowed and not self.bias

    @property
    def has_boolean(self) -> bool:
        """Some boolean source exists (valid lengths, causal, a boolean mask): a mode has a mask to apply."""
        return self.valid_lens is not None or self.causal is not None or bool(self.allowed)

    @property
    def is_prefix(self) -> bool:
        """Only 1-D valid lengths: every row of a batch element keeps the same leading keys."""
        return (
            self.valid_lens is not None
            and self.valid_lens.dim() == 1
            and self.causal is None
            and not self.allowed
            and not self.bias
        )

    def flat_lens(self) -> list[int]:
        """1-D valid lengths per flattened batch element (each head repeats its batch element's)."""
        assert self.valid_lens is not None and self.valid_lens.dim() == 1
        heads = self.n_flat // self.batch
        return (self.valid_lens if heads == 1 else self.valid_lens.repeat_interleave(heads)).tolist()

    def block(
        self, n0: int, n1: int, r0: int, r1: int, device: torch.device
    ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """``allowed`` (bool) and ``bias`` (float) for flattened elements n0:n1 and query rows r0:r1.

        Each is broadcastable to (n1 - n0, r1 - r0, L_k), or None when no source of its kind exists.
        """
        allowed: torch.Tensor | None = None

        def both(m: torch.Tensor) -> torch.Tensor:
            return m if allowed is None else allowed & m

        if self.lens is not None:
            keys = torch.arange(self.n_keys, device=device)
            allowed = both(keys < self.lens.take(n0, n1, r0, r1)[..., None])
        if self.causal is not None:
            q = torch.arange(r0, r1, device=device)[:, None]
            # Bottom-right alignment lines the last query up with the last key, which is what
            # decoding with a KV cache needs when there are more keys than queries.
            offset = self.n_keys - self.n_queries if self.causal == "bottom_right" else 0
            allowed = both((torch.arange(self.n_keys, device=device)[None, :] <= q + offset)[None])
        for source in self.allowed:
            allowed = both(source.take(n0, n1, r0, r1))
        bias: torch.Tensor | None = None
        for source in self.bias:
            part = source.take(n0, n1, r0, r1)
            bias = part if bias is None else bias + part
        return allowed, bias

    def rows(self, start: int, stop: int, device: torch.device, batch: int | None = None) -> torch.Tensor | None:
        """The boolean ``allowed`` mask for queries start:stop of every element (or flattened element
        ``batch``), broadcastable to (N or 1, stop - start, L_k); None if no boolean source exists."""
        n0, n1 = (0, self.n_flat) if batch is None else (batch, batch + 1)
        return self.block(n0, n1, start, stop, device)[0]

    def empty_rows(self, n0: int, n1: int, r0: int, r1: int, device: torch.device) -> torch.Tensor | None:
        """Rows with no allowed key when that follows from valid lengths alone or a causal mask alone
        (no mask to look at), broadcastable to (n1 - n0, r1 - r0); else None."""
        if self.allowed or self.bias:
            return None
        if self.lens is not None and self.causal is None:
            return self.lens.take(n0, n1, r0, r1) == 0
        if self.causal is not None and self.lens is None:
            q = torch.arange(r0, r1, device=device)
            offset = self.n_keys - self.n_queries if self.causal == "bottom_right" else 0
            return (q + offset < 0).unsqueeze(0)
        return None

    def full(self, device: torch.device) -> torch.Tensor:
        """Where each query may attend to each key, shape (*lead, L_q, L_k).

        A key counts as masked by an additive mask when its value is at or below
        ``ADDITIVE_MASKED_AT`` (it is still added as given in the computation).
        """
        allowed, bias = self.block(0, self.n_flat, 0, self.n_queries, device)
        if bias is not None:
            unmasked = bias > ADDITIVE_MASKED_AT
            allowed = unmasked if allowed is None else allowed & unmasked
        shape = (self.n_flat, self.n_queries, self.n_keys)
        if allowed is None:
            return torch.ones(shape, dtype=torch.bool, device=device).reshape(*self.lead, *shape[1:])
        return allowed.expand(shape).reshape(*self.lead, *shape[1:]).contiguous()

    def valid_lens_over_keys(self) -> torch.Tensor | None:
        """Which valid lengths exceed the number of keys (the book then treats all keys as valid)."""
        if self.valid_lens is None:
            return None
        return self.valid_lens > self.n_keys
