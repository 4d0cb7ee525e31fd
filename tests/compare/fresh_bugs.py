"""Fresh constructions of issue 34's seven bug classes, written apart from ``bug_models``: other
architectures (a hand-written decoder with its own rotary module and cache, transformers Qwen2,
GPT-NeoX, BERT, GPT-2 and Mistral on small random configs, nn.TransformerEncoderLayer,
nn.MultiheadAttention), left and right padding, batches of 2 and 3. Each factory returns
``(model, inputs)`` for ``attnviz check``; ``*_twin`` is the correct model with the same weights.

``CASES`` maps each case to (class, bug factory, twin factory).
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

VOCAB = 40
WIDTH = 24


def batch(lengths: tuple[int, ...], side: str = "right", seed: int = 5, length: int | None = None) -> dict[str, Any]:
    g = torch.Generator().manual_seed(seed)
    n = length or max(lengths)
    ids = torch.zeros(len(lengths), n, dtype=torch.long)
    mask = torch.zeros(len(lengths), n, dtype=torch.long)
    for row, real in enumerate(lengths):
        cols = slice(0, real) if side == "right" else slice(n - real, n)
        ids[row, cols] = torch.randint(2, VOCAB, (real,), generator=g)
        mask[row, cols] = 1
    return {"input_ids": ids, "attention_mask": mask}


def tokens(ids: torch.Tensor, mask: torch.Tensor) -> list[list[str]]:
    return [[f"t{int(i)}" if m else "<pad>" for i, m in zip(row, keep)] for row, keep in zip(ids, mask)]


def _t() -> Any:
    import transformers

    return transformers


# ----------------------------------------------------------------------------- (a) positions restart


class Rope(nn.Module):
    """A rotary embedding of its own: rotate-half layout, called with the first position
    (``start``) and the length; returns the cos and sin tables."""

    def __init__(self, dim: int, base: float = 500.0) -> None:
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / base ** (torch.arange(0, dim, 2).float() / dim), persistent=False)

    def forward(self, length: int, start: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        t = torch.arange(start, start + length, dtype=torch.float32)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat([freqs, freqs], -1)
        return emb.cos(), emb.sin()


def _rot(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    turned = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * cos + turned * sin


class HandBlock(nn.Module):
    def __init__(self, heads: int = 3) -> None:
        super().__init__()
        self.h = heads
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH, bias=False)
        self.out = nn.Linear(WIDTH, WIDTH, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, keep: torch.Tensor, cache: Any) -> Any:
        b, n, _ = x.shape
        q, k, v = (t.view(b, n, self.h, -1).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
        q, k = _rot(q, cos, sin), _rot(k, cos, sin)
        if cache is not None:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        out = scores.softmax(-1) @ v
        return x + self.out(out.transpose(1, 2).reshape(b, n, -1)), (k, v)


class HandDecoder(nn.Module):
    """A causal decoder with a rotary module, an eager softmax and a cache of its own: a dict
    ``{"layers": [(k, v), ...], "seen": n}``. ``bug``: a cached step's rotary starts at 0."""

    def __init__(self, bug: bool = False) -> None:
        super().__init__()
        torch.manual_seed(11)
        self.bug = bug
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.rope = Rope(WIDTH // 3)
        self.blocks = nn.ModuleList(HandBlock() for _ in range(2))
        self.config = SimpleNamespace(pad_token_id=0)
        self.eval()

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, kv_cache: Any = None, **_: Any
    ) -> dict[str, Any]:
        b, n = input_ids.shape
        seen = 0 if kv_cache is None else kv_cache["seen"]
        cos, sin = self.rope(n, 0 if self.bug else seen)
        total = seen + n
        real = torch.ones(b, total, dtype=torch.bool) if attention_mask is None else attention_mask.bool()
        keep = real[:, None, None, :] & torch.ones(n, total, dtype=torch.bool).tril(seen)
        x = self.embed(input_ids)
        layers = []
        for i, block in enumerate(self.blocks):
            x, kv = block(x, cos, sin, keep, None if kv_cache is None else kv_cache["layers"][i])
            layers.append(kv)
        return {"last_hidden_state": x, "kv_cache": {"layers": layers, "seen": total}}


def hand_restart() -> tuple[Any, dict[str, Any]]:
    return HandDecoder(True), batch((7, 5, 7))


def hand_restart_twin() -> tuple[Any, dict[str, Any]]:
    return HandDecoder(False), batch((7, 5, 7))


class TableDecoder(HandDecoder):
    """HandDecoder with Meta's Llama rotary: a table ``freqs_cis`` (complex ``exp(i p theta)``)
    computed once, its rows sliced by the start position at each call (no rotary module)."""

    def __init__(self, bug: bool = False) -> None:
        super().__init__(bug)
        inv = self.rope.inv_freq
        del self.rope
        angles = torch.outer(torch.arange(64, dtype=torch.float32), inv)
        self.register_buffer("freqs_cis", torch.polar(torch.ones_like(angles), angles), persistent=False)
        self.rope = self._rows  # type: ignore[assignment]

    def _rows(self, length: int, start: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.freqs_cis[start : start + length]
        return torch.cat([z.real, z.real], -1), torch.cat([z.imag, z.imag], -1)


def table_restart() -> tuple[Any, dict[str, Any]]:
    return TableDecoder(True), batch((5, 6), side="left")


def table_restart_twin() -> tuple[Any, dict[str, Any]]:
    return TableDecoder(False), batch((5, 6), side="left")


def qwen2(scaled: bool = True) -> Any:
    t = _t()
    torch.manual_seed(3)
    config = t.Qwen2Config(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        attn_implementation="sdpa",
    )
    if scaled:  # linear-scaled RoPE: positions divided by 4
        config.rope_parameters = {"rope_type": "linear", "factor": 4.0, "rope_theta": 10000.0}
    return t.Qwen2Model(config).eval()


class Generating(nn.Module):
    """A transformers decoder driven as a hand-written generation loop drives it: ``bug``: the
    loop passes ``position_ids = arange(L)`` for every call, cached steps included."""

    def __init__(self, inner: nn.Module, bug: bool) -> None:
        super().__init__()
        self.inner, self.bug = inner, bug
        self.config = inner.config

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        past_key_values: Any = None,
        use_cache: bool = False,
    ) -> Any:
        positions = torch.arange(input_ids.shape[1]).expand_as(input_ids) if self.bug else None
        return self.inner(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=positions,
            past_key_values=past_key_values,
            use_cache=use_cache,
        )


def qwen2_restart() -> tuple[Any, dict[str, Any]]:
    return Generating(qwen2(), True), batch((6, 6))


def qwen2_restart_twin() -> tuple[Any, dict[str, Any]]:
    return Generating(qwen2(), False), batch((6, 6))


# ----------------------------------------------------------------------------- (b) dropout on


def bert(dropout: float = 0.0, implementation: str = "eager") -> Any:
    t = _t()
    torch.manual_seed(4)
    config = t.BertConfig(
        vocab_size=VOCAB,
        hidden_size=24,
        num_hidden_layers=2,
        num_attention_heads=3,
        intermediate_size=48,
        max_position_embeddings=32,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=dropout,
        attn_implementation=implementation,
    )
    return t.BertModel(config)


def bert_training() -> tuple[Any, dict[str, Any]]:
    return bert(0.25).train(), batch((6, 4, 5))


def bert_training_twin() -> tuple[Any, dict[str, Any]]:
    return bert(0.25).eval(), batch((6, 4, 5))


class MhaModel(nn.Module):
    """nn.MultiheadAttention with attention dropout; a key padding mask."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(6)
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.attn = nn.MultiheadAttention(WIDTH, 4, dropout=0.3, batch_first=True)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        x = self.embed(input_ids)
        out, _ = self.attn(x, x, x, key_padding_mask=attention_mask == 0, need_weights=False)
        return x + out


def mha_training() -> tuple[Any, dict[str, Any]]:
    return MhaModel().train(), batch((5, 3), side="left")


def mha_training_twin() -> tuple[Any, dict[str, Any]]:
    return MhaModel().eval(), batch((5, 3), side="left")


# ----------------------------------------------------------------------------- (c) head grouping


class GroupedAttention(nn.Module):
    def __init__(self, owner: GroupedModel) -> None:
        super().__init__()
        self.owner = owner.config
        self.q = nn.Linear(WIDTH, WIDTH, bias=False)
        self.kv = nn.Linear(WIDTH, 16, bias=False)  # 6 query heads of 4, 2 KV heads of 4

    def forward(self, x: torch.Tensor, keep: torch.Tensor, bug: bool) -> torch.Tensor:
        b, n, _ = x.shape
        q = self.q(x).view(b, n, 6, 4).transpose(1, 2)
        k, v = (t.reshape(b, n, 2, 4).transpose(1, 2) for t in self.kv(x).chunk(2, -1))
        if self.owner._attn_implementation == "sdpa":
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, enable_gqa=True)
        else:
            # Eager: KV heads expanded to the query heads. The bug tiles them (head h reads KV
            # head h % 2); SDPA's grouping gives head h KV head h // 3.
            if bug:
                k, v = k.repeat(1, 3, 1, 1), v.repeat(1, 3, 1, 1)
            else:
                k, v = k.repeat_interleave(3, 1), v.repeat_interleave(3, 1)
            scores = (q @ k.transpose(-1, -2)) * 0.5
            out = scores.masked_fill(~keep, torch.finfo(scores.dtype).min).softmax(-1) @ v
        return x + out.transpose(1, 2).reshape(b, n, WIDTH)


class GroupedModel(nn.Module):
    """Grouped-query attention with an eager and an SDPA path chosen like transformers' models
    (``config._attn_implementation``, ``set_attn_implementation``)."""

    def __init__(self, bug: bool = False) -> None:
        super().__init__()
        torch.manual_seed(8)
        self.bug = bug
        self.config = SimpleNamespace(_attn_implementation="eager", pad_token_id=0)
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.layers = nn.ModuleList(GroupedAttention(self) for _ in range(2))
        self.eval()

    def set_attn_implementation(self, name: str) -> None:
        if name not in ("eager", "sdpa"):
            raise ValueError(f"unknown attention implementation {name!r}")
        self.config._attn_implementation = name

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        n = input_ids.shape[1]
        keep = attention_mask.bool()[:, None, None, :] & torch.ones(n, n, dtype=torch.bool).tril()
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x, keep, self.bug)
        return x


def grouped() -> tuple[Any, dict[str, Any]]:
    return GroupedModel(True), batch((6, 4))


def grouped_twin() -> tuple[Any, dict[str, Any]]:
    return GroupedModel(False), batch((6, 4))


def tiled_repeat_kv(hidden: torch.Tensor, n_rep: int) -> torch.Tensor:
    """transformers' ``repeat_kv`` as an edited modeling file might write it: the KV heads tiled
    (head h reads KV head h % H_kv) instead of each repeated n_rep times in place."""
    return hidden.repeat(1, n_rep, 1, 1)


class EditedMistral(nn.Module):
    """A Mistral whose eager path groups KV heads with ``tiled_repeat_kv`` (``bug``) while its SDPA
    path groups them as SDPA does; transformers' implementation switch is passed through."""

    def __init__(self, bug: bool = False) -> None:
        super().__init__()
        t = _t()
        torch.manual_seed(16)
        config = t.MistralConfig(
            vocab_size=VOCAB,
            hidden_size=32,
            intermediate_size=48,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=64,
            sliding_window=None,
            attn_implementation="eager",
        )
        self.inner = t.MistralModel(config).eval()
        self.config = self.inner.config
        self.bug = bug

    def set_attn_implementation(self, name: str) -> None:
        self.inner.set_attn_implementation(name)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        from transformers.models.mistral import modeling_mistral

        original = modeling_mistral.repeat_kv
        if self.bug:
            modeling_mistral.repeat_kv = tiled_repeat_kv
        try:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        finally:
            modeling_mistral.repeat_kv = original


def mistral_regrouped() -> tuple[Any, dict[str, Any]]:
    return EditedMistral(True), batch((6, 6, 6))


def mistral_regrouped_twin() -> tuple[Any, dict[str, Any]]:
    return EditedMistral(False), batch((6, 6, 6))


# ----------------------------------------------------------------------------- (d) (B*H) mask order


class LayerEncoder(nn.Module):
    """nn.TransformerEncoderLayer given a per-sequence additive mask expanded to (B*H, L, L):
    the bug lays it out heads first (``transpose(0, 1)`` before the reshape)."""

    def __init__(self, bug: bool = False) -> None:
        super().__init__()
        torch.manual_seed(9)
        self.bug = bug
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.layer = nn.TransformerEncoderLayer(WIDTH, 3, 48, dropout=0.0, batch_first=True)
        self.eval()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        b, n = input_ids.shape
        h = self.layer.self_attn.num_heads
        add = torch.zeros(b, n, dtype=torch.float32).masked_fill(attention_mask == 0, float("-inf"))
        full = add[:, None, None, :].expand(b, h, n, n)
        if self.bug:
            full = full.transpose(0, 1)
        return self.layer(self.embed(input_ids), src_mask=full.reshape(b * h, n, n))


def layer_order() -> tuple[Any, dict[str, Any]]:
    return LayerEncoder(True), batch((6, 3, 5), side="left")


def layer_order_twin() -> tuple[Any, dict[str, Any]]:
    return LayerEncoder(False), batch((6, 3, 5), side="left")


class CatMha(nn.Module):
    """nn.MultiheadAttention with a boolean (B*H, L, L) mask made with ``torch.cat([m] * H)``."""

    def __init__(self, bug: bool = False) -> None:
        super().__init__()
        torch.manual_seed(10)
        self.bug = bug
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.attn = nn.MultiheadAttention(WIDTH, 2, batch_first=True)
        self.eval()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        b, n = input_ids.shape
        hide = (attention_mask == 0)[:, None, :].expand(b, n, n)
        per = torch.cat([hide] * 2) if self.bug else torch.stack([hide] * 2, 1).reshape(b * 2, n, n)
        x = self.embed(input_ids)
        return x + self.attn(x, x, x, attn_mask=per, need_weights=False)[0]


def cat_order() -> tuple[Any, dict[str, Any]]:
    return CatMha(True), batch((5, 2))


def cat_order_twin() -> tuple[Any, dict[str, Any]]:
    return CatMha(False), batch((5, 2))


# ----------------------------------------------------------------------------- (e) shifted by one


def neox() -> Any:
    t = _t()
    torch.manual_seed(12)
    config = t.GPTNeoXConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=64,
        rotary_pct=0.5,
        attn_implementation="eager",
    )
    return t.GPTNeoXModel(config).eval()


class Shifted(nn.Module):
    """A transformers model whose attention mask is moved one place (``shift`` 1: right, the
    first column filled with 1, as when a BOS is prepended to the mask but not to the ids;
    -1: left, the last column filled with 0)."""

    def __init__(self, inner: nn.Module, shift: int) -> None:
        super().__init__()
        self.inner, self.shift = inner, shift
        self.config = inner.config

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        mask = attention_mask
        if self.shift > 0:
            mask = torch.cat([torch.ones_like(mask[:, :1]), mask[:, :-1]], 1)
        elif self.shift < 0:
            mask = torch.cat([mask[:, 1:], torch.zeros_like(mask[:, :1])], 1)
        return self.inner(input_ids=input_ids, attention_mask=mask).last_hidden_state


def neox_shift() -> tuple[Any, dict[str, Any]]:
    return Shifted(neox(), 1), batch((6, 4, 3), side="left")


def neox_shift_twin() -> tuple[Any, dict[str, Any]]:
    return Shifted(neox(), 0), batch((6, 4, 3), side="left")


def bert_shift() -> tuple[Any, dict[str, Any]]:
    return Shifted(bert(implementation="sdpa").eval(), -1), batch((6, 4))


def bert_shift_twin() -> tuple[Any, dict[str, Any]]:
    return Shifted(bert(implementation="sdpa").eval(), 0), batch((6, 4))


# ----------------------------------------------------------------------------- (f) wrong source


class MhaSeq2Seq(nn.Module):
    """An encoder-decoder of nn.MultiheadAttention; ``bug``: the cross-attention's key padding
    mask is the decoder's (the batch's lengths are equal, so nothing fails)."""

    def __init__(self, bug: bool = False) -> None:
        super().__init__()
        torch.manual_seed(13)
        self.bug = bug
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.encoder = nn.MultiheadAttention(WIDTH, 2, batch_first=True)
        self.self_attn = nn.MultiheadAttention(WIDTH, 2, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(WIDTH, 2, batch_first=True)
        self.eval()

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        decoder_input_ids: torch.Tensor,
        decoder_attention_mask: torch.Tensor,
    ) -> torch.Tensor:
        src_pad, tgt_pad = attention_mask == 0, decoder_attention_mask == 0
        x = self.embed(input_ids)
        memory = x + self.encoder(x, x, x, key_padding_mask=src_pad, need_weights=False)[0]
        y = self.embed(decoder_input_ids)
        n = y.shape[1]
        future = torch.ones(n, n, dtype=torch.bool).triu(1)
        y = y + self.self_attn(y, y, y, attn_mask=future, key_padding_mask=tgt_pad, need_weights=False)[0]
        cross_pad = tgt_pad if self.bug else src_pad
        return y + self.cross_attn(y, memory, memory, key_padding_mask=cross_pad, need_weights=False)[0]


def seq2seq_inputs() -> dict[str, Any]:
    enc = batch((6, 3), seed=7)
    dec = batch((4, 6), seed=8)
    return {**enc, "decoder_input_ids": dec["input_ids"], "decoder_attention_mask": dec["attention_mask"]}


def mha_source() -> tuple[Any, dict[str, Any]]:
    return MhaSeq2Seq(True), seq2seq_inputs()


def mha_source_twin() -> tuple[Any, dict[str, Any]]:
    return MhaSeq2Seq(False), seq2seq_inputs()


# ----------------------------------------------------------------------------- (g) position_ids over pads


def gpt2() -> Any:
    t = _t()
    torch.manual_seed(14)
    config = t.GPT2Config(vocab_size=VOCAB, n_embd=24, n_layer=2, n_head=3, n_positions=32, attn_implementation="eager")
    return t.GPT2Model(config).eval()


def gpt2_arange() -> tuple[Any, dict[str, Any]]:
    inputs = batch((6, 3, 4), side="left")
    return gpt2(), {**inputs, "position_ids": torch.arange(6).expand(3, 6)}


def gpt2_arange_twin() -> tuple[Any, dict[str, Any]]:
    inputs = batch((6, 3, 4), side="left")
    own = (inputs["attention_mask"].cumsum(-1) - 1).clamp(min=0)
    return gpt2(), {**inputs, "position_ids": own}


class LearnedDecoder(nn.Module):
    """A causal decoder with learned absolute positions, computing its positions itself:
    ``bug``: ``arange(L)`` whatever the padding."""

    def __init__(self, bug: bool = False) -> None:
        super().__init__()
        torch.manual_seed(15)
        self.bug = bug
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.where = nn.Embedding(32, WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.eval()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        b, n = input_ids.shape
        if self.bug:
            positions = torch.arange(n).expand(b, n)
        else:
            positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
        x = self.embed(input_ids) + self.where(positions)
        q, k, v = (t.view(b, n, 2, -1).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
        keep = attention_mask.bool()[:, None, None, :] & torch.ones(n, n, dtype=torch.bool).tril()
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        return x + out.transpose(1, 2).reshape(b, n, WIDTH)


def learned_arange() -> tuple[Any, dict[str, Any]]:
    return LearnedDecoder(True), batch((5, 2), side="left")


def learned_arange_twin() -> tuple[Any, dict[str, Any]]:
    return LearnedDecoder(False), batch((5, 2), side="left")


#: case: (class, bug factory, twin factory)
CASES: dict[str, tuple[str, str, str]] = {
    "hand-written rotary decoder, restart": ("positions", "hand_restart", "hand_restart_twin"),
    "Qwen2 linear RoPE, arange positions": ("positions", "qwen2_restart", "qwen2_restart_twin"),
    "Meta-style freqs_cis table sliced at 0": ("positions", "table_restart", "table_restart_twin"),
    "BERT in training mode": ("dropout", "bert_training", "bert_training_twin"),
    "nn.MultiheadAttention in training mode": ("dropout", "mha_training", "mha_training_twin"),
    "hand-written GQA, eager tiles KV heads": ("grouping", "grouped", "grouped_twin"),
    "Mistral, edited repeat_kv tiles KV heads": ("grouping", "mistral_regrouped", "mistral_regrouped_twin"),
    "TransformerEncoderLayer, heads-first (B*H)": ("mask order", "layer_order", "layer_order_twin"),
    "MHA, torch.cat([m] * H)": ("mask order", "cat_order", "cat_order_twin"),
    "GPT-NeoX left padded, mask shifted right": ("shift", "neox_shift", "neox_shift_twin"),
    "BERT right padded, mask shifted left": ("shift", "bert_shift", "bert_shift_twin"),
    "MHA seq2seq, decoder mask on cross keys": ("wrong source", "mha_source", "mha_source_twin"),
    "GPT-2 left padded, arange position_ids": ("position_ids", "gpt2_arange", "gpt2_arange_twin"),
    "learned-position decoder, arange": ("position_ids", "learned_arange", "learned_arange_twin"),
}


def captured(factory_name: str) -> Any:
    """The capture the doctor reads for a case: the forward of its inputs (a cached step's
    classes: a prefill of all tokens but the last, then that token as a cached step, captured
    alone), with the tokens of every axis."""
    import attnviz
    from attnviz.capture.model_arguments import model_arguments

    model, inputs = globals()[factory_name]()
    ids, mask = inputs["input_ids"], inputs["attention_mask"]
    kind = next(kind for kind, bug, twin in CASES.values() if factory_name in (bug, twin))
    with torch.no_grad():
        if "decoder_input_ids" in inputs:
            cap = attnviz.capture(
                model,
                tokens=tokens(inputs["decoder_input_ids"], inputs["decoder_attention_mask"]),
                encoder_tokens=tokens(ids, mask),
            )
            with cap:
                model(**inputs)
            return cap
        if kind == "positions":
            arguments = model_arguments(model)
            assert arguments.cache is not None
            out = model(input_ids=ids[:, :-1], attention_mask=mask[:, :-1], use_cache=True)
            past = arguments.returned_cache(out)
            with attnviz.capture(model) as cap:
                model(input_ids=ids[:, -1:], attention_mask=mask, use_cache=True, **{arguments.cache: past})
            return cap
        with attnviz.capture(model, tokens=tokens(ids, mask)) as cap:
            model(**inputs)
        return cap
