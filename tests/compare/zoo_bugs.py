"""A third zoo of issue 34's seven bug classes, written apart from ``bug_models`` and
``fresh_bugs``: transformers architectures from small random configs (no hub) driven as
hand-written code drives them (Phi-3 and GPT-J generation loops, Llama and Qwen3 attention
kernels registered with transformers, Llama given 4-D masks built by hand, BART, T5, RoBERTa,
OPT, DistilBERT) and ``nn.Transformer`` / ``nn.TransformerDecoderLayer``; eager and SDPA paths.

Each factory returns ``(model, inputs)`` for ``attnviz check``; its twin is the same model with
the same weights and the mistake corrected. ``CASES`` maps each case to (class, bug, twin);
``captured`` makes the capture the doctor reads.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

VOCAB = 48
PAD = 1  # RoBERTa's padding_idx; every model here pads with it


def _t() -> Any:
    import transformers

    return transformers


def batch(lengths: tuple[int, ...], side: str, seed: int = 11) -> dict[str, Any]:
    """Token ids in 2..VOCAB-1, padded with ``PAD`` on ``side``."""
    g = torch.Generator().manual_seed(seed)
    n = max(lengths)
    ids = torch.full((len(lengths), n), PAD, dtype=torch.long)
    mask = torch.zeros(len(lengths), n, dtype=torch.long)
    for row, real in enumerate(lengths):
        cols = slice(0, real) if side == "right" else slice(n - real, n)
        ids[row, cols] = torch.randint(2, VOCAB, (real,), generator=g)
        mask[row, cols] = 1
    return {"input_ids": ids, "attention_mask": mask}


def tokens(ids: torch.Tensor, mask: torch.Tensor) -> list[list[str]]:
    return [[f"z{int(i)}" if m else "<pad>" for i, m in zip(row, keep)] for row, keep in zip(ids, mask)]


def _small(**sizes: Any) -> dict[str, Any]:
    return {"vocab_size": VOCAB, "pad_token_id": PAD, "bos_token_id": 2, "eos_token_id": 3, **sizes}


class Wrapped(nn.Module):
    """A transformers model behind a forward of our own, the implementation switch passed on."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner
        self.config = inner.config

    def set_attn_implementation(self, name: str) -> None:
        self.inner.set_attn_implementation(name)


# ----------------------------------------------------------------------------- (a) positions


def phi3() -> Any:
    t = _t()
    torch.manual_seed(21)
    config = t.Phi3Config(
        **_small(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4),
        num_key_value_heads=4,
        max_position_embeddings=64,
        partial_rotary_factor=0.5,
        attn_implementation="eager",
    )
    return t.Phi3Model(config).eval()


class Phi3Loop(Wrapped):
    """A generation loop computing position_ids from the attention mask, as generate() does for a
    left-padded batch. ``bug``: the cumulative sum is taken over the step's columns of the mask
    only, so a cached step's positions restart at 0 (right: over the whole mask, then sliced)."""

    def __init__(self, bug: bool) -> None:
        super().__init__(phi3())
        self.bug = bug

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        past_key_values: Any = None,
        use_cache: bool = False,
    ) -> Any:
        n = input_ids.shape[1]
        if self.bug:
            positions = attention_mask[:, -n:].cumsum(-1) - 1
        else:
            positions = (attention_mask.cumsum(-1) - 1)[:, -n:]
        return self.inner(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=positions.clamp(min=0),
            past_key_values=past_key_values,
            use_cache=use_cache,
        )


def phi3_step_mask() -> tuple[Any, dict[str, Any]]:
    return Phi3Loop(True), batch((7, 5), "left")


def phi3_step_mask_twin() -> tuple[Any, dict[str, Any]]:
    return Phi3Loop(False), batch((7, 5), "left")


class GptjLoop(nn.Module):
    """GPT-J (partial, interleaved rotary from a sin/cos table, its own softmax) driven by a loop
    that offsets a step's positions by ``len(past_key_values)``. ``bug``: that is the cache's
    number of layers, not its length (right: ``get_seq_length()``)."""

    def __init__(self, bug: bool) -> None:
        super().__init__()
        t = _t()
        torch.manual_seed(22)
        config = t.GPTJConfig(
            **_small(n_embd=32, n_layer=2, n_head=4, n_positions=64), rotary_dim=4, attn_implementation="eager"
        )
        self.inner = t.GPTJModel(config).eval()
        self.config = self.inner.config
        self.bug = bug

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        past_key_values: Any = None,
        use_cache: bool = False,
    ) -> Any:
        start = 0
        if past_key_values is not None:
            start = len(past_key_values) if self.bug else past_key_values.get_seq_length()
        positions = torch.arange(start, start + input_ids.shape[1]).expand_as(input_ids)
        return self.inner(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=positions,
            past_key_values=past_key_values,
            use_cache=use_cache,
        )


def gptj_layer_count() -> tuple[Any, dict[str, Any]]:
    return GptjLoop(True), batch((7, 7), "right")


def gptj_layer_count_twin() -> tuple[Any, dict[str, Any]]:
    return GptjLoop(False), batch((7, 7), "right")


# ----------------------------------------------------------------------------- (b) dropout on


def llama(implementation: str = "sdpa", seed: int = 23, attention_dropout: float = 0.0) -> Any:
    t = _t()
    torch.manual_seed(seed)
    config = t.LlamaConfig(
        **_small(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4),
        num_key_value_heads=2,
        max_position_embeddings=64,
        attention_dropout=attention_dropout,
        attn_implementation=implementation,
    )
    return t.LlamaModel(config)


class Hidden(Wrapped):
    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        return self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def llama_train() -> tuple[Any, dict[str, Any]]:
    """Llama has no dropout but its attention's: a model left in training mode (never .eval())."""
    return Hidden(llama(attention_dropout=0.2).train()), batch((6, 4), "left")


def llama_train_twin() -> tuple[Any, dict[str, Any]]:
    return Hidden(llama(attention_dropout=0.2).eval()), batch((6, 4), "left")


def distilbert(train: bool) -> Any:
    t = _t()
    torch.manual_seed(24)
    config = t.DistilBertConfig(
        **_small(dim=32, hidden_dim=48, n_layers=2, n_heads=4, max_position_embeddings=64),
        dropout=0.0,
        attention_dropout=0.35,
        attn_implementation="eager",
    )
    model = t.DistilBertModel(config)
    return model.train(train)


def distilbert_train() -> tuple[Any, dict[str, Any]]:
    """Only attention dropout is set; the training mode comes from a fine-tuning loop's model."""
    return Hidden(distilbert(True)), batch((5, 7, 3), "right")


def distilbert_train_twin() -> tuple[Any, dict[str, Any]]:
    return Hidden(distilbert(False)), batch((5, 7, 3), "right")


# ----------------------------------------------------------------------------- (c) KV-head grouping


def _kernel(expand: Any) -> Any:
    """An attention function of one's own for transformers' AttentionInterface: eager softmax
    attention whose KV heads are brought to the query heads by ``expand(kv, n_rep)``."""

    def attention(
        module: nn.Module,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        attention_mask: torch.Tensor | None,
        scaling: float,
        dropout: float = 0.0,
        **_: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        n_rep = query.shape[1] // key.shape[1]
        key, value = expand(key, n_rep), expand(value, n_rep)
        scores = query @ key.transpose(-1, -2) * scaling
        if attention_mask is not None:
            scores = scores + attention_mask
        weights = scores.softmax(-1)
        return (weights @ value).transpose(1, 2).contiguous(), weights

    return attention


def _cat_tiles(kv: torch.Tensor, n_rep: int) -> torch.Tensor:
    return torch.cat([kv] * n_rep, dim=1)  # head h reads KV head h % kv: tiled


def _in_place(kv: torch.Tensor, n_rep: int) -> torch.Tensor:
    return kv.repeat_interleave(n_rep, dim=1)  # head h reads KV head h // n_rep


def _first_only(kv: torch.Tensor, n_rep: int) -> torch.Tensor:
    # multi-query read into a grouped model: every query head reads the first KV head
    return kv[:, :1].expand(-1, kv.shape[1] * n_rep, -1, -1)


def _register(name: str, expand: Any) -> str:
    """The kernel registered under ``name``, with transformers' eager (additive) masks."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(name, _kernel(expand))
    AttentionMaskInterface.register(name, eager_mask)
    return name


class OwnKernel(Wrapped):
    """A model whose eager path is an attention function registered under a name of one's own
    (``kernel``), its SDPA path transformers'; ``set_attn_implementation("eager")`` picks it."""

    def __init__(self, inner: nn.Module, kernel: str) -> None:
        super().__init__(inner)
        # The wrapper's own config says "eager" (what the check reads back and restores) while
        # the model's says the kernel's name.
        self.config = copy.copy(inner.config)
        self.kernel = kernel
        self.set_attn_implementation("eager")

    def set_attn_implementation(self, name: str) -> None:
        self.inner.set_attn_implementation(self.kernel if name == "eager" else name)
        self.config._attn_implementation = name

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        return self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def qwen3() -> Any:
    t = _t()
    torch.manual_seed(25)
    config = t.Qwen3Config(
        **_small(hidden_size=48, intermediate_size=48, num_hidden_layers=2, num_attention_heads=6),
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=64,
        attn_implementation="sdpa",
    )
    return t.Qwen3Model(config).eval()


def qwen3_cat() -> tuple[Any, dict[str, Any]]:
    return OwnKernel(qwen3(), _register("zoo_cat_tiles", _cat_tiles)), batch((6, 6), "right")


def qwen3_cat_twin() -> tuple[Any, dict[str, Any]]:
    return OwnKernel(qwen3(), _register("zoo_in_place", _in_place)), batch((6, 6), "right")


def llama_first_kv() -> tuple[Any, dict[str, Any]]:
    return OwnKernel(llama(seed=26).eval(), _register("zoo_first_kv", _first_only)), batch((5, 5, 5), "right")


def llama_first_kv_twin() -> tuple[Any, dict[str, Any]]:
    return OwnKernel(llama(seed=26).eval(), _register("zoo_in_place", _in_place)), batch((5, 5, 5), "right")


# ----------------------------------------------------------------------------- (d) (B*H) mask order


class HeadMaskLlama(Wrapped):
    """Llama given a per-head 4-D mask (B, H, L, L) built by hand from the padding and causal
    masks: the per-sequence masks stacked to (B*H, L, L) and viewed as (B, H, L, L). ``bug``:
    stacked with ``repeat`` (heads outermost), so the view puts other sequences' masks in a
    sequence's heads (right: ``repeat_interleave``)."""

    def __init__(self, bug: bool) -> None:
        super().__init__(llama(seed=27).eval())
        self.bug = bug

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        b, n = input_ids.shape
        h = self.config.num_attention_heads
        keep = attention_mask.bool()[:, None, :] & torch.ones(n, n, dtype=torch.bool).tril()
        stacked = keep.repeat(h, 1, 1) if self.bug else keep.repeat_interleave(h, 0)
        additive = torch.zeros(b * h, n, n).masked_fill(~stacked, torch.finfo(torch.float32).min)
        return self.inner(input_ids=input_ids, attention_mask=additive.view(b, h, n, n)).last_hidden_state


def llama_head_mask() -> tuple[Any, dict[str, Any]]:
    return HeadMaskLlama(True), batch((6, 3), "left")


def llama_head_mask_twin() -> tuple[Any, dict[str, Any]]:
    return HeadMaskLlama(False), batch((6, 3), "left")


class MhaDecoder(nn.Module):
    """nn.TransformerDecoderLayer (self- and cross-attention over a memory of the same tokens)
    given a causal + padding ``tgt_mask`` of shape (B*H, L, L). ``bug``: expanded heads-first with
    ``expand(H, B, ...)`` then reshaped (right: ``expand(B, H, ...)``)."""

    def __init__(self, bug: bool, heads: int = 4) -> None:
        super().__init__()
        torch.manual_seed(28)
        self.bug, self.heads = bug, heads
        self.embed = nn.Embedding(VOCAB, 32)
        self.layer = nn.TransformerDecoderLayer(32, heads, 48, dropout=0.0, batch_first=True)
        self.eval()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        b, n = input_ids.shape
        hide = ~(attention_mask.bool()[:, None, :] & torch.ones(n, n, dtype=torch.bool).tril())
        if self.bug:
            per_head = hide[None].expand(self.heads, b, n, n).reshape(b * self.heads, n, n)
        else:
            per_head = hide[:, None].expand(b, self.heads, n, n).reshape(b * self.heads, n, n)
        x = self.embed(input_ids)
        return self.layer(x, x, tgt_mask=per_head, memory_key_padding_mask=~attention_mask.bool())


def decoder_layer_order() -> tuple[Any, dict[str, Any]]:
    return MhaDecoder(True), batch((4, 6, 5), "right")


def decoder_layer_order_twin() -> tuple[Any, dict[str, Any]]:
    return MhaDecoder(False), batch((4, 6, 5), "right")


# ----------------------------------------------------------------------------- (e) shifted by one


class HandMaskLlama(Wrapped):
    """Llama (eager) given a 4-D additive mask built by hand from where each sequence's real
    tokens start (``first``, the mask's first 1) and how many there are, whichever side pads.
    ``bug``: ``first`` one place off (``argmax - 1``), so the window of keys is one place early:
    a left-padded sequence attends to its last pad and every sequence loses its last token."""

    def __init__(self, bug: bool) -> None:
        super().__init__(llama("eager", seed=29).eval())
        self.bug = bug

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        b, n = input_ids.shape
        first = attention_mask.argmax(-1, keepdim=True) - (1 if self.bug else 0)
        cols = torch.arange(n)[None, :]
        real = (cols >= first) & (cols < first + attention_mask.sum(-1, keepdim=True))
        keep = real[:, None, :] & torch.ones(n, n, dtype=torch.bool).tril()
        additive = torch.zeros(b, 1, n, n).masked_fill(~keep[:, None], torch.finfo(torch.float32).min)
        return self.inner(input_ids=input_ids, attention_mask=additive).last_hidden_state


def llama_hand_shift() -> tuple[Any, dict[str, Any]]:
    return HandMaskLlama(True), batch((7, 4, 2), "left")


def llama_hand_shift_twin() -> tuple[Any, dict[str, Any]]:
    return HandMaskLlama(False), batch((7, 4, 2), "left")


def roberta(implementation: str = "sdpa") -> Any:
    t = _t()
    torch.manual_seed(30)
    config = t.RobertaConfig(
        **_small(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4),
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        attn_implementation=implementation,
    )
    return t.RobertaModel(config, add_pooling_layer=False).eval()


class LengthMaskRoberta(Wrapped):
    """RoBERTa given a mask made from where each sequence's tokens start and how many there are
    (whichever side pads). ``bug``: ``offset <= lengths`` (right: ``<``), so a right-padded
    sequence attends to its first pad."""

    def __init__(self, bug: bool) -> None:
        super().__init__(roberta())
        self.bug = bug

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        lengths = attention_mask.sum(-1, keepdim=True)
        offset = torch.arange(input_ids.shape[1])[None, :] - attention_mask.argmax(-1, keepdim=True)
        mask = (offset >= 0) & ((offset <= lengths) if self.bug else (offset < lengths))
        return self.inner(input_ids=input_ids, attention_mask=mask.long()).last_hidden_state


def roberta_lengths() -> tuple[Any, dict[str, Any]]:
    return LengthMaskRoberta(True), batch((6, 3), "right")


def roberta_lengths_twin() -> tuple[Any, dict[str, Any]]:
    return LengthMaskRoberta(False), batch((6, 3), "right")


# ----------------------------------------------------------------------------- (f) wrong source


class Seq2SeqParts(Wrapped):
    """An encoder-decoder run by hand: the encoder, then the decoder over its states. ``bug``: the
    cross-attention is given the decoder's padding mask (``encoder_attention_mask=decoder mask``);
    the batch's encoder and decoder lengths are equal, so nothing fails."""

    def __init__(self, inner: nn.Module, bug: bool) -> None:
        super().__init__(inner)
        self.bug = bug

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        decoder_input_ids: torch.Tensor,
        decoder_attention_mask: torch.Tensor,
    ) -> Any:
        encoder, decoder = self.inner.get_encoder(), self.inner.get_decoder()
        states = encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return decoder(
            input_ids=decoder_input_ids,
            attention_mask=decoder_attention_mask,
            encoder_hidden_states=states,
            encoder_attention_mask=decoder_attention_mask if self.bug else attention_mask,
        ).last_hidden_state


def seq2seq_batch() -> dict[str, Any]:
    encoder = batch((6, 3), "right", seed=31)
    decoder = batch((2, 6), "right", seed=32)
    return {**encoder, "decoder_input_ids": decoder["input_ids"], "decoder_attention_mask": decoder["attention_mask"]}


def bart() -> Any:
    t = _t()
    torch.manual_seed(33)
    config = t.BartConfig(
        **_small(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4),
        decoder_attention_heads=4,
        encoder_ffn_dim=48,
        decoder_ffn_dim=48,
        max_position_embeddings=64,
        dropout=0.0,
        attention_dropout=0.0,
        attn_implementation="sdpa",
    )
    return t.BartModel(config).eval()


def bart_cross() -> tuple[Any, dict[str, Any]]:
    return Seq2SeqParts(bart(), True), seq2seq_batch()


def bart_cross_twin() -> tuple[Any, dict[str, Any]]:
    return Seq2SeqParts(bart(), False), seq2seq_batch()


def t5() -> Any:
    t = _t()
    torch.manual_seed(34)
    config = t.T5Config(
        **_small(d_model=32, d_kv=8, d_ff=48, num_layers=1, num_decoder_layers=1, num_heads=4),
        relative_attention_num_buckets=8,
        dropout_rate=0.0,
        decoder_start_token_id=0,
        attn_implementation="eager",
    )
    return t.T5Model(config).eval()


def t5_cross() -> tuple[Any, dict[str, Any]]:
    return Seq2SeqParts(t5(), True), seq2seq_batch()


def t5_cross_twin() -> tuple[Any, dict[str, Any]]:
    return Seq2SeqParts(t5(), False), seq2seq_batch()


class TorchSeq2Seq(nn.Module):
    """nn.Transformer over embeddings. ``bug``: ``memory_key_padding_mask`` given the target's
    padding mask (``tgt_key_padding_mask``) instead of the source's."""

    def __init__(self, bug: bool) -> None:
        super().__init__()
        torch.manual_seed(35)
        self.bug = bug
        self.embed = nn.Embedding(VOCAB, 32)
        self.net = nn.Transformer(32, 4, 1, 1, 48, dropout=0.0, batch_first=True)
        self.eval()

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        decoder_input_ids: torch.Tensor,
        decoder_attention_mask: torch.Tensor,
    ) -> torch.Tensor:
        source_pads, target_pads = ~attention_mask.bool(), ~decoder_attention_mask.bool()
        n = decoder_input_ids.shape[1]
        return self.net(
            self.embed(input_ids),
            self.embed(decoder_input_ids),
            tgt_mask=nn.Transformer.generate_square_subsequent_mask(n),
            src_key_padding_mask=source_pads,
            tgt_key_padding_mask=target_pads,
            memory_key_padding_mask=target_pads if self.bug else source_pads,
        )


def torch_seq2seq() -> tuple[Any, dict[str, Any]]:
    return TorchSeq2Seq(True), seq2seq_batch()


def torch_seq2seq_twin() -> tuple[Any, dict[str, Any]]:
    return TorchSeq2Seq(False), seq2seq_batch()


# ----------------------------------------------------------------------------- (g) position_ids


class ArangeRoberta(Wrapped):
    """RoBERTa counts positions from ``padding_idx + 1`` over the non-pad tokens. ``bug``: a
    pipeline passes ``position_ids = arange(L) + padding_idx + 1`` for a left-padded batch (right:
    let RoBERTa make them from the ids)."""

    def __init__(self, bug: bool) -> None:
        super().__init__(roberta("eager"))
        self.bug = bug

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        positions = None
        if self.bug:
            positions = (torch.arange(input_ids.shape[1]) + PAD + 1).expand_as(input_ids)
        return self.inner(input_ids=input_ids, attention_mask=attention_mask, position_ids=positions).last_hidden_state


def roberta_arange() -> tuple[Any, dict[str, Any]]:
    return ArangeRoberta(True), batch((6, 3), "left")


def roberta_arange_twin() -> tuple[Any, dict[str, Any]]:
    return ArangeRoberta(False), batch((6, 3), "left")


def opt() -> Any:
    t = _t()
    torch.manual_seed(36)
    config = t.OPTConfig(
        **_small(hidden_size=32, ffn_dim=48, num_hidden_layers=2, num_attention_heads=4),
        word_embed_proj_dim=32,
        max_position_embeddings=64,
        dropout=0.0,
        attention_dropout=0.0,
        attn_implementation="sdpa",
    )
    return t.OPTModel(config).eval()


class PositionedOpt(Wrapped):
    """OPT (learned positions, offset 2) given explicit position_ids. ``bug``: ``arange(L)`` for a
    left-padded batch (right: the mask's cumulative sum, as OPT computes them itself)."""

    def __init__(self, bug: bool) -> None:
        super().__init__(opt())
        self.bug = bug

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        if self.bug:
            positions = torch.arange(input_ids.shape[1]).expand_as(input_ids)
        else:
            positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
        return self.inner(input_ids=input_ids, attention_mask=attention_mask, position_ids=positions).last_hidden_state


def opt_arange() -> tuple[Any, dict[str, Any]]:
    return PositionedOpt(True), batch((7, 5, 2), "left")


def opt_arange_twin() -> tuple[Any, dict[str, Any]]:
    return PositionedOpt(False), batch((7, 5, 2), "left")


#: case: (class, bug factory, twin factory)
CASES: dict[str, tuple[str, str, str]] = {
    "Phi-3 loop, positions from the step's mask": ("positions", "phi3_step_mask", "phi3_step_mask_twin"),
    "GPT-J loop, offset by len(cache)": ("positions", "gptj_layer_count", "gptj_layer_count_twin"),
    "Llama SDPA left in training mode": ("dropout", "llama_train", "llama_train_twin"),
    "DistilBERT, attention dropout only, training": ("dropout", "distilbert_train", "distilbert_train_twin"),
    "Qwen3, own eager kernel tiles KV heads (cat)": ("grouping", "qwen3_cat", "qwen3_cat_twin"),
    "Llama, own eager kernel reads KV head 0": ("grouping", "llama_first_kv", "llama_first_kv_twin"),
    "Llama, 4-D (B, H) mask stacked with repeat": ("mask order", "llama_head_mask", "llama_head_mask_twin"),
    "TransformerDecoderLayer, tgt_mask heads-first": ("mask order", "decoder_layer_order", "decoder_layer_order_twin"),
    "Llama eager, hand-made 4-D mask one pad short": ("shift", "llama_hand_shift", "llama_hand_shift_twin"),
    "RoBERTa, arange(n) <= lengths": ("shift", "roberta_lengths", "roberta_lengths_twin"),
    "BART SDPA, decoder mask on cross keys": ("wrong source", "bart_cross", "bart_cross_twin"),
    "T5 relative bias, decoder mask on cross keys": ("wrong source", "t5_cross", "t5_cross_twin"),
    "nn.Transformer, memory_key_padding_mask = tgt's": ("wrong source", "torch_seq2seq", "torch_seq2seq_twin"),
    "RoBERTa left padded, arange + padding_idx + 1": ("position_ids", "roberta_arange", "roberta_arange_twin"),
    "OPT left padded, arange position_ids": ("position_ids", "opt_arange", "opt_arange_twin"),
}


def captured(factory_name: str) -> Any:
    """The capture the doctor reads for a case, with the tokens of every axis: a cached step
    (every token but the last as a prefill, then the last one, captured alone) for the positions
    classes, else the forward of the case's inputs."""
    import attnviz
    from attnviz.capture.model_arguments import model_arguments

    model, inputs = globals()[factory_name]()
    ids = inputs["input_ids"]
    mask = inputs.get("attention_mask", torch.ones_like(ids))
    kind = next(kind for kind, bug, twin in CASES.values() if factory_name in (bug, twin))
    with torch.no_grad():
        if kind == "positions":
            arguments = model_arguments(model)
            assert arguments.cache is not None
            past = arguments.returned_cache(model(input_ids=ids[:, :-1], attention_mask=mask[:, :-1], use_cache=True))
            step = {"input_ids": ids[:, -1:], "attention_mask": mask}
            with attnviz.capture(model) as cap:
                model(**step, use_cache=True, **{arguments.cache: past})
            return cap
        if "decoder_input_ids" in inputs:
            decoder = tokens(inputs["decoder_input_ids"], inputs["decoder_attention_mask"])
            cap = attnviz.capture(model, tokens=decoder, encoder_tokens=tokens(ids, mask))
        else:
            cap = attnviz.capture(model, tokens=tokens(ids, mask))
        with cap:
            model(**inputs)
        return cap
