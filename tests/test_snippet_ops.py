"""The pieces every framework's snippet is written from: the spelling tables, the writer's
definitions, the stage names (the engine's)."""

from __future__ import annotations

import ast
from dataclasses import fields

import pytest

from attnviz.bench.snippet_cases import CASES
from attnviz.snippets import make_snippet, snippet_stages
from attnviz.snippets.chapter import WIDTH
from attnviz.snippets.jax_code import JaxGenerator
from attnviz.snippets.mxnet_code import MXNetGenerator
from attnviz.snippets.ops import Ops, atom, spell
from attnviz.snippets.tf_code import TensorFlowGenerator
from attnviz.snippets.torch_code import TorchGenerator
from attnviz.snippets.writer import CodeWriter

TABLES = {
    "pytorch": TorchGenerator.ops,
    "tensorflow": TensorFlowGenerator.ops,
    "mxnet": MXNetGenerator.ops,
    "jax": JaxGenerator.ops,
}
#: Every operand a template may name (each also as p<name>).
OPERANDS = {name: name for name in ("x", "m", "a", "b", "c", "v", "like", "name", "src", "dtype", "axis", "index")}


def test_operands_are_grouped_only_where_an_operator_needs_it():
    assert spell("{px}.sum(-1)", x="keys * keys") == "(keys * keys).sum(-1)"
    assert spell("{px}.sum(-1)", x="keys") == "keys.sum(-1)"
    assert spell("{px}.sum(-1)", x="self.w_v(features)") == "self.w_v(features).sum(-1)"
    assert spell("{pa} @ {pb}", a='params["W"]', b="keys[0]") == 'params["W"] @ keys[0]'
    assert spell("tf.reduce_sum({x}, axis=-1)", x="keys * keys") == "tf.reduce_sum(keys * keys, axis=-1)"
    assert atom('"text"') and not atom("-1e6") and not atom("2") and not atom("~finite") and not atom("a b")


@pytest.mark.parametrize("framework", sorted(TABLES))
def test_every_template_of_a_framework_is_complete_python(framework):
    """{lib} filled in when the table is made; every template, its operands given, parses."""
    ops = TABLES[framework]
    for field in fields(Ops):
        template = getattr(ops, field.name)
        if field.name in ("lib", "int_dtype") or template is None:
            continue
        assert "{lib}" not in template, (framework, field.name)
        operands = {**OPERANDS, "name": "float32" if field.name in ("dtype_name", "compute_dtype") else "W"}
        ast.parse(spell(template, **operands), mode="eval")


def test_the_defaults_are_numpys_style_in_the_frameworks_own_module():
    ops = Ops(lib="tf", softmax="s", key_index="k", bmm_t="b", half_to_numpy="h")
    assert ops.where == "tf.where({m}, {a}, {b})" and ops.tanh == "tf.tanh({x})"
    assert spell(ops.sum_last, x="queries * queries") == "(queries * queries).sum(axis=-1)"


def test_a_definition_has_its_docstring_and_body_inside():
    w = CodeWriter()
    with w.define("def f(x):", ["One line."], name="f"):
        w.line("return x", "output", "x")
    with w.define("class C:", ["First.", "", "Second.", ""]):
        w.line("pass")
    code, spans, functions = w.finish()
    assert code.splitlines() == [
        "def f(x):",
        '    """One line."""',
        "    return x",
        "class C:",
        '    """First.',
        "",
        "    Second.",
        '    """',
        "    pass",
    ]
    assert functions == {"f": (1, 3)} and spans["output"][0].function == "f"


def test_the_snippets_stages_are_the_engines_and_additive_attentions_features():
    from attnviz.engine import STAGES

    # Every engine stage (the score terms' is written only for a captured call that has some).
    assert snippet_stages() == ("hidden_features", *STAGES)


def test_a_shape_comment_that_would_run_past_the_width_is_left_off():
    """Every framework writes the scoring lines; a comment never makes a line wider than WIDTH."""
    for case in ("exercise-3-summation", "bilinear-float64", "gaussian-sdpa", "additive-toy", "dot-toy"):
        for framework in TABLES:
            snippet = make_snippet(CASES[case].build(), framework)
            for spans in (snippet.stage_spans.get("raw_scores", ()), snippet.stage_spans.get("hidden_features", ())):
                for span in spans:
                    for line in snippet.lines(span.first, span.last):
                        if "  # " in line and not line.strip().startswith("#"):
                            assert len(line) <= WIDTH, (case, framework, line)
