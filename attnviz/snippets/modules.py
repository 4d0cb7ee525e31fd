"""The scoring function as a class, as the chapter's PyTorch, TensorFlow and MXNet tabs write it.

``ModuleGenerator`` writes the class (its constructor with the linear layers, the learnable
matrix or the scale it needs and a dropout, and a forward computing ``ChapterCode.scores``, the
masked softmax, dropout and the batched product), the ``RecordedDropout`` that applies
attnviz's draw, and the run: build the attention, give it attnviz's parameters, call it. A
framework gives its ``Ops`` and its ``ModuleStyle``: how a module (a layer, a block) is declared,
built and called, and writes only how its parameters are loaded (``load_params``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ClassVar

from .base import FrameworkGenerator
from .ops import spell
from .writer import RETURN_VALUE

__all__ = ["ModuleGenerator", "ModuleStyle"]


@dataclass(frozen=True)
class ModuleStyle:
    """How one framework declares, builds and calls a module (a Keras layer, a Gluon block)."""

    base: str  # the class a module subclasses
    super_init: str  # its constructor's first line
    forward: str  # the method computing the output
    linear: str  # a linear layer without bias, from {n_in} features (if it asks) to {n_out}
    linear_comment: str  # what to know about the linear layers' weights
    param: str  # declares the learnable matrix {name} of shape {shape}
    dropout: str  # the dropout layer of rate {p}
    dropout_base: str  # the class RecordedDropout subclasses
    dropout_super_init: str  # RecordedDropout's constructor's first line
    #: The line saying dropout is off (the app shows the weights outside training).
    eval: str
    #: What the code's dropout rate is called (nn.Dropout's p, Keras's and Gluon's rate).
    rate: str = "rate"
    #: The constructors take **kwargs (Keras's dtype, Gluon's prefix) and pass them on.
    kwargs: bool = False
    #: The forward's training flag (Keras: "training"), passed down to the dropout.
    training: str | None = None
    #: More arguments of the constructors: the attention's and RecordedDropout's.
    build_args: str = ""
    #: The lines building the attention ``{ctor}``.
    build: tuple[str, ...] = ("attention = {ctor}",)
    #: The line after RecordedDropout is put in (None: nothing to switch on).
    train: str | None = None
    #: What the call of the attention runs under (None: nothing).
    context: str | None = None


class ModuleGenerator(FrameworkGenerator):
    """A snippet whose scoring function is a class (PyTorch, TensorFlow, MXNet)."""

    style: ClassVar[ModuleStyle]

    # ------------------------------------------------------------------ the scoring module

    def define_attention(self) -> None:
        w = self.w
        s = self.style
        w.blank(2)
        name = self.class_name()
        with w.define(f"class {name}({s.base}):", [self.class_doc()], name=name):
            w.blank()
            with self._constructor([n for n, _value in self.init_args()] + ["dropout"], s.super_init):
                self._layers()
                w.line(f"self.dropout = {spell(s.dropout, p='dropout')}")
            w.blank()
            params = self.forward_params() + self._training("None")
            with w.define(f"def {s.forward}(self, queries, keys, values, {params}):", name=f"{name}.{s.forward}"):
                self.scores()
                w.line(f"self.attention_weights = {self.softmax_call()}", "weights")
                dropped = f"self.dropout(self.attention_weights{self._training(s.training)})"
                w.line(f"weights = {dropped}", "applied_weights", "weights")
                pooled = "pool(weights, values)" if self.clean_pool else spell(self.ops.bmm, a="weights", b="values")
                w.line(f"return {pooled}", "output", RETURN_VALUE)

    def init_args(self) -> list[tuple[str, object]]:
        """The scoring module's constructor arguments and the values attnviz used."""
        inp = self.inp
        sizes = [("query_size", inp.queries.shape[-1]), ("key_size", inp.keys.shape[-1])]
        if inp.scoring == "additive":
            # A layer that infers its input size (Keras's Dense) needs none of the sizes.
            return [*(sizes if "{n_in}" in self.style.linear else []), ("num_hiddens", inp.num_hiddens)]
        if inp.scoring == "bilinear":
            return sizes
        return [("scale", inp.scale)] if self.scaled_by_setting else []

    @contextmanager
    def _constructor(self, params: list[str], super_init: str) -> Iterator[None]:
        """``__init__`` taking ``params`` (and the framework's ``**kwargs``), opened by ``super_init``."""
        kwargs = ["**kwargs"] if self.style.kwargs else []
        with self.w.define(f"def __init__(self, {', '.join([*params, *kwargs])}):"):
            self.w.line(super_init)
            yield

    def _training(self, value: object) -> str:
        """``, training=value`` where the framework's forward takes a training flag, else nothing."""
        return f", {self.style.training}={value}" if self.style.training else ""

    def _layers(self) -> None:
        w = self.w
        s = self.style
        if self.inp.scoring == "additive":
            w.line(s.linear_comment)
            for name, n_in, n_out in (("W_q", "query_size", "num_hiddens"), ("W_k", "key_size", "num_hiddens")):
                w.line(f"self.{name} = {spell(s.linear, n_in=n_in, n_out=n_out)}")
            w.line(f"self.w_v = {spell(s.linear, n_in='num_hiddens', n_out=1)}")
        elif self.inp.scoring == "bilinear":
            w.line(f"self.W = {spell(s.param, name='W', shape='(query_size, key_size)')}")
        elif self.scaled_by_setting:
            w.line("self.scale = scale")

    def dropout_helper(self) -> None:
        """``RecordedDropout``: dropout with attnviz's draw, put in the attention's place of its own."""
        if not self.inp.dropping:
            return
        w = self.w
        s = self.style
        rate = s.rate
        w.blank(2)
        doc = (
            f"Dropout with a given draw: zeroes where `keep` is False and scales the rest by 1 / (1 - {rate}),",
            f"as {s.dropout.split('(')[0]} does in training, so the run drops the same weights as attnviz did.",
        )
        with w.define(f"class RecordedDropout({s.dropout_base}):", doc, name="RecordedDropout"):
            w.blank()
            with self._constructor(["keep", rate], s.dropout_super_init):
                w.line(f"self.keep, self.{rate} = keep, {rate}")
            w.blank()
            with w.define(f"def {s.forward}(self, X{self._training('None')}):"):
                if self.inp.dropout >= 1.0:
                    zeros = spell(self.ops.zeros_like, x="X")
                    w.line(f"return {zeros}  # {rate} = 1 drops everything", "applied_weights", RETURN_VALUE)
                else:
                    kept = spell(self.ops.masked_by, x="X", m="self.keep")
                    w.line(f"return {kept} / (1 - self.{rate})", "applied_weights", RETURN_VALUE)

    # ------------------------------------------------------------------ the run

    def run(self) -> None:
        w = self.w
        s = self.style
        inp = self.inp
        args = ", ".join([*(f"{n}={v!r}" for n, v in self.init_args()), f"dropout={inp.dropout!r}"])
        ctor = f"{self.class_name()}({args}{s.build_args})"
        w.lines(line.format(ctor=ctor) for line in s.build)
        if inp.params:
            self.load_params()
        if inp.dropping:
            p = inp.dropout
            keep = "dropout_keep" if p < 1.0 else "None"
            recorded = f"RecordedDropout({keep}, {s.rate}={p!r}{s.build_args})"
            w.line(f"attention.dropout = {recorded}  # attnviz's draw, not a new one")
            if s.train:
                w.line(s.train)
        else:
            w.line(s.eval)
        call = f"output = attention(queries, keys, values, {self.call_args()}{self._training(inp.dropping)})"
        if s.context:
            w.line(s.context)
            with w.block():
                w.line(call, "output", "output")
        else:
            w.line(call, "output", "output")
        w.line("weights = attention.attention_weights", "weights", "weights")

    def load_params(self) -> None:
        """Give the attention attnviz's learnable parameters (``W_q``, ``W_k``, ``w_v`` or ``W``, each
        stored (out_features, in_features) as ``nn.Linear`` stores its weight)."""
        raise NotImplementedError
