"""Copy as code in each framework: the PyTorch snippet runs here and equals the app, stage by stage;
every framework's snippet maps each stage to the lines that compute it; what a snippet cannot
do, it says. (TensorFlow, JAX and MXNet run in their own environments: python -m attnviz.bench
snippets.)"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnviz.bench.snippet_cases import CASES, book_state, with_settings
from attnviz.compute import run_state
from attnviz.snippets import (
    FRAMEWORKS,
    RETURN_VALUE,
    Snippet,
    SnippetError,
    SnippetInput,
    generate,
    make_snippet,
    snippet_input,
    snippet_stages,
)
from attnviz.snippets.harness import run_traced, to_numpy
from attnviz.snippets.parity import TOLERANCE, differences, reference_stages, spans_json
from attnviz.state.document import State
from attnviz.state.run import Focus
from attnviz.teaching.presets import PRESETS

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORK_CODE = ("pytorch", "tensorflow", "mxnet", "jax")


def traced(
    state: State, framework: str = "pytorch", focus: Focus = Focus(), **kwargs: object
) -> tuple[Snippet, dict, dict, dict]:
    """Run the snippet of ``state``'s head ``focus`` under the tracer: the snippet, its namespace,
    the stages it computed and the app's stages."""
    outcome = run_state(state, 0, focus)
    assert outcome.view is not None, outcome.error
    inp = snippet_input(state, outcome, focus=focus)
    snippet = generate(inp, framework, **kwargs)  # type: ignore[arg-type]
    with contextlib.redirect_stdout(io.StringIO()):
        namespace, captured = run_traced(snippet.code, spans_json(snippet))
    return snippet, namespace, captured, reference_stages(inp, outcome.view)


# ----------------------------------------------------------------------- parity, in PyTorch


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_pytorch_snippet_computes_every_stage_as_the_app_does(case):
    state, focus = CASES[case].build(), CASES[case].focus
    snippet, namespace, captured, reference = traced(state, focus=focus)
    tolerance = TOLERANCE[state.settings.dtype]
    view = state.head_view(focus)
    diffs = differences(captured, reference)
    # Every stage the app shows was found where the snippet says it is computed ...
    for stage in ("raw_scores", "scores", "weights", "applied_weights", "output"):
        assert stage in diffs, f"{stage} was never recorded"
    if state.valid_lens(view) is not None or view.causal is not None:
        assert "mask" in diffs and "masked_scores" in diffs
    if state.settings.scoring == "additive":
        assert diffs["hidden_features"] <= max(tolerance, 1e-6)
    # ... and equals it (float32: <= 1e-6), as do the weights and output the script leaves.
    worst = {k: v for k, v in diffs.items() if k != "hidden_features" and v > tolerance}
    assert not worst, worst
    final = differences(
        {"weights": to_numpy(namespace["weights"]), "output": to_numpy(namespace["output"])},
        {"weights": reference["weights"], "output": reference["output"]},
    )
    assert final["weights"] <= tolerance and final["output"] <= tolerance, final


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**16),
    scoring=st.sampled_from(["additive", "scaled_dot"]),
    lens_mode=st.sampled_from(["none", "1d", "2d"]),
    batch=st.integers(1, 3),
    n_queries=st.integers(1, 5),
    n_keys=st.integers(1, 7),
    d=st.integers(1, 6),
    d_k=st.integers(1, 6),
    num_hiddens=st.integers(1, 9),
)
def test_random_inputs_within_the_books_code_give_the_apps_weights(
    seed, scoring, lens_mode, batch, n_queries, n_keys, d, d_k, num_hiddens
):
    state = book_state(
        seed,
        scoring=scoring,
        lens_mode=lens_mode,
        batch=batch,
        n_queries=n_queries,
        n_keys=n_keys,
        d=d,
        d_k=d_k if scoring == "additive" else None,
        num_hiddens=num_hiddens,
    )
    _snippet, namespace, captured, reference = traced(state)
    got = namespace["weights"].numpy()
    assert got.dtype == np.float32
    assert differences({"weights": got}, reference)["weights"] <= 1e-6
    assert differences({"output": namespace["output"].numpy()}, reference)["output"] <= 1e-6
    assert max(v for k, v in differences(captured, reference).items() if k != "hidden_features") <= 1e-6


def test_the_check_can_fail_a_snippet_that_computes_something_else():
    state = PRESETS["masked-softmax-1d"].build()
    inp = snippet_input(state)
    snippet = generate(inp, "pytorch")
    wrong = replace(snippet, code=snippet.code.replace("X, -1e6)", "X, -1e3)"))
    assert wrong.code != snippet.code
    with contextlib.redirect_stdout(io.StringIO()):
        _namespace, captured = run_traced(wrong.code, spans_json(wrong))
    diffs = differences(captured, reference_stages(inp, run_state(state).view))
    # -1e3 is a fill exp() does not zero in every row: the masked scores and weights show it.
    assert diffs["masked_scores"] > 0


# ----------------------------------------------------------------------- stage lines


STAGE_WORDS = {
    "hidden_features": ("features", "W_q", "W_k"),
    "raw_scores": ("scores =",),
    "scores": ("scores",),
    "mask": ("mask", "valid_lens", "n_keys"),
    "masked_scores": ("X =", "X + ", "bias", "valid_lens is None"),
    "weights": ("softmax", "attention_weights", "weights"),
    "applied_weights": ("dropout", "keep"),
    "output": ("bmm", "matmul", "batch_dot", "@", "pool", "attention(", "finite"),
}


@pytest.mark.parametrize("framework", FRAMEWORK_CODE)
@pytest.mark.parametrize(
    "case",
    [
        "additive-toy",
        "dot-toy-no-lengths",
        "causal-bottom-right-2d",
        "model-masks",
        "dropout-in-training",
        "strict-nan-values",
        "exercise-3-summation",
    ],
)
def test_every_stage_maps_to_lines_of_its_function_that_compute_it(framework, case):
    state = CASES[case].build()
    snippet = make_snippet(state, framework, focus=CASES[case].focus)
    lines = snippet.code.splitlines()
    expected = [
        s
        for s in snippet_stages()
        if (s != "hidden_features" or state.settings.scoring == "additive") and s != "modified_scores"
    ]
    assert list(snippet.stages) == expected
    assert set(snippet.stage_lines) == set(expected)
    compile(snippet.code, "snippet.py", "exec")
    for stage, spans in snippet.stage_spans.items():
        assert spans, stage
        for span in spans:
            first, last = span.function_lines
            assert 1 <= first <= span.first <= span.last <= last <= len(lines), (stage, span)
            text = "\n".join(snippet.lines(span.first, span.last))
            assert any(word in text for word in STAGE_WORDS[stage]), (stage, text)
            assert all(line.strip() for line in snippet.lines(span.first, span.last)), (stage, text)
            if span.function != "<module>":
                opening = lines[first - 1].strip()
                name = span.function.split(".")[-1]
                assert opening.startswith((f"def {name}(", f"class {name}(")), (span.function, opening)
            if span.variable not in (None, RETURN_VALUE):
                assert span.variable in lines[span.last - 1], (stage, span)


def test_the_pipeline_can_ask_for_the_lines_of_a_stage():
    snippet = make_snippet(PRESETS["additive-toy"].build(), "pytorch")
    (masked,) = snippet.stage_lines["masked_scores"]
    assert snippet.lines(*masked) == ["    X = torch.where(mask, X, -1e6)  # exp(-1e6) underflows to 0: no weight"]
    span = snippet.stage_spans["masked_scores"][0]
    assert span.function == "masked_softmax"
    assert snippet.lines(*span.function_lines)[0] == "def masked_softmax(X, valid_lens):"
    assert [s.function for s in snippet.stage_spans["hidden_features"]] == ["AdditiveAttention.forward"]
    assert snippet.functions["AdditiveAttention"][0] < snippet.functions["AdditiveAttention.forward"][0]


# ----------------------------------------------------------------------- what each setting becomes


def test_the_books_case_reads_as_the_chapter_teaches_it_in_every_framework():
    state = PRESETS["additive-toy"].build()
    expected = {
        "pytorch": ("class AdditiveAttention(nn.Module):", "torch.bmm(", "nn.Linear(", "attention.eval()"),
        "tensorflow": ("class AdditiveAttention(tf.keras.layers.Layer):", "tf.matmul(", "training=False"),
        "mxnet": ("class AdditiveAttention(nn.Block):", "npx.batch_dot(", "flatten=False", "npx.set_np()"),
        "jax": ("def additive_attention(params, queries", "jax.nn.softmax(", "@ values"),
    }
    for framework, needles in expected.items():
        snippet = make_snippet(state, framework)
        assert "def masked_softmax(X, valid_lens):" in snippet.code
        assert "-1e6" in snippet.code and "attnviz" not in snippet.code.split("import", 1)[1].split("# ----")[0]
        for needle in needles:
            assert needle in snippet.code, (framework, needle)
        assert not snippet.leaves_out
        assert "import attnviz" not in snippet.code and "from attnviz" not in snippet.code


@pytest.mark.parametrize("framework", FRAMEWORK_CODE)
def test_settings_beyond_the_book_are_written_out_not_left_out(framework):
    """Every mask mode, scoring, causal alignment, dtype (but MXNet's bfloat16), model and
    long-context masks, dropout in training: implemented, so nothing is left out."""
    for case in (
        "causal-top-left-strict",
        "sliding-window",
        "model-masks",
        "model-run-head",
        "dropout-in-training",
        "gaussian-sdpa",
        "bilinear-float64",
        "pitfall-float16",
        "pitfall-wrong-polarity",
        "pitfall-float-mask",
        "neg-inf-zero-length",
        "scaled-by-0.3",
    ):
        snippet = make_snippet(CASES[case].build(), framework, focus=CASES[case].focus)
        assert not snippet.leaves_out, (case, snippet.leaves_out)
    code = make_snippet(CASES["causal-bottom-right-2d"].build(), framework).code
    assert "causal_mask(4, 6, bottom_right=True)" in code
    code = make_snippet(CASES["sliding-window"].build(), framework).code
    assert "a sliding window of 2 keys" in code and "extra_mask = " in code
    code = make_snippet(CASES["model-masks"].build(), framework).code
    assert "the model's attn_mask; the model's key_padding_mask" in code and "bias = " in code
    code = make_snippet(CASES["dropout-in-training"].build(), framework).code
    assert "dropout_keep = " in code and "RecordedDropout" in code or "dropout(weights, dropout_keep" in code


def test_mxnet_has_no_bfloat16_and_says_so_at_the_top():
    state = CASES["additive-bfloat16"].build()
    snippet = make_snippet(state, "mxnet")
    assert len(snippet.leaves_out) == 1 and "bfloat16" in snippet.leaves_out[0]
    header = snippet.code.split("\n\n")[0]
    assert "# Left out: MXNet has no bfloat16 here: this script computes in float32" in header
    assert 'dtype = "float32"' in snippet.code and "bfloat16" not in snippet.code.split("\n\n", 1)[1]
    for framework in ("pytorch", "tensorflow", "jax"):
        other = make_snippet(state, framework)
        assert not other.leaves_out and "bfloat16" in other.code.split("\n\n", 1)[1]
    assert "float16" in make_snippet(CASES["pitfall-float16"].build(), "mxnet").code
    assert "MXNET_SAFE_ACCUMULATION" in make_snippet(CASES["pitfall-float16"].build(), "mxnet").code


def test_what_has_no_code_is_refused_with_the_reason():
    inp = snippet_input(PRESETS["dot-toy"].build())
    for framework in FRAMEWORK_CODE:
        with pytest.raises(SnippetError, match="scoring function 'mine' has no"):
            generate(replace(inp, scoring="mine"), framework)
        with pytest.raises(SnippetError, match="mask mode 'other' has no"):
            generate(replace(inp, mask_mode="other"), framework)
    with pytest.raises(SnippetError, match="unknown framework 'keras'"):
        generate(inp, "keras")
    bad = PRESETS["dot-toy"].build()
    bad.lens_1d = np.array([-1, 2])
    with pytest.raises(SnippetError, match="cannot compute these inputs: valid lengths must be >= 0"):
        make_snippet(bad, "pytorch")


def test_a_call_that_recorded_weights_only_cannot_be_written_as_code():
    from attnviz.capture import from_output_attentions

    weights = np.full((1, 2, 3, 3), 1 / 3)
    state = State.from_run(from_output_attentions([weights]))
    with pytest.raises(SnippetError, match="recorded its attention weights only"):
        make_snippet(state, "jax")


def test_the_header_says_what_is_computed():
    code = make_snippet(CASES["causal-bottom-right-2d"].build(), "tensorflow").code
    header = code.split("\n\n")[0]
    assert "Valid lengths: (2, 4), one per query." in header
    assert "Causal mask: aligned bottom-right" in header
    assert "Computed in float32." in header and "Needs tensorflow and numpy." in header
    code = make_snippet(PRESETS["dot-toy"].build(), "pytorch").code
    assert "# Dropout 0.5, inactive: attnviz shows the weights outside training." in code
    inp = replace(snippet_input(PRESETS["dot-toy"].build()), device="cuda:0")
    assert "attnviz computed on cuda:0; this script runs on the CPU" in generate(inp, "jax").code


def test_dropout_in_training_drops_what_the_app_dropped():
    state = with_settings(PRESETS["additive-toy"].build(), train=True, dropout=0.3, dropout_seed=11)
    _snippet, namespace, captured, reference = traced(state)
    assert not np.array_equal(reference["applied_weights"], reference["weights"])
    # The same entries dropped: exactly the zeros the app has (booleans compare exactly). The
    # values are the snippet's own modules (nn.Linear, bmm) against attnviz's engine: the same
    # arithmetic, not promised to be the same kernels, so within the dtype's tolerance.
    dropped = np.broadcast_to(np.asarray(captured["applied_weights"]), reference["applied_weights"].shape) == 0
    np.testing.assert_array_equal(dropped, reference["applied_weights"] == 0)
    tolerance = TOLERANCE[state.settings.dtype]
    assert differences(captured, reference)["applied_weights"] <= tolerance
    np.testing.assert_allclose(namespace["output"].numpy(), reference["output"], rtol=10 * tolerance, atol=tolerance)


# ----------------------------------------------------------------------- big inputs, scripts


def big_state(n: int) -> State:
    rng = np.random.default_rng(9)
    state = book_state(3, scoring="scaled_dot", lens_mode="1d", batch=1, n_queries=n, n_keys=n, d=40)
    state = state.with_head(Focus(), "keys", rng.standard_normal(state.head_view().keys.shape) * 1e-2)
    state.lens_1d = np.array([n - 5])
    return state


def test_big_inputs_are_embedded_or_go_to_a_data_file(tmp_path):
    state = big_state(60)
    snippet = make_snippet(state, "pytorch")
    assert not snippet.data and "queries = torch.tensor(unpack(" in snippet.code
    snippet = make_snippet(state, "pytorch", max_embedded=1000, data_file="inputs.npz")
    assert sorted(snippet.data) == ["keys", "queries"] and 'data = np.load("inputs.npz")' in snippet.code
    assert snippet.save_data(tmp_path / "inputs.npz") == ["keys", "queries"]
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            namespace, _ = run_traced(snippet.code, {})
    finally:
        os.chdir(here)
    np.testing.assert_allclose(namespace["weights"].numpy(), run_state(state).view.weights, rtol=0, atol=1e-6)


def test_a_snippet_runs_as_a_script_and_saves_its_weights(tmp_path):
    state = PRESETS["masked-softmax-2d"].build()
    script = tmp_path / "snippet.py"
    script.write_text(make_snippet(state, "pytorch").code)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(script), "--save-weights", "w.npy"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("attention weights (2, 2, 4)\ntensor(")
    # Plain PyTorch's products against attnviz's engine: the same arithmetic, not promised to be the
    # same kernels on every CPU, so float32's tolerance for weights in [0, 1].
    weights = run_state(state).view.weights
    np.testing.assert_allclose(np.load(tmp_path / "w.npy"), weights, rtol=0, atol=TOLERANCE["float32"])


def test_every_framework_is_offered():
    assert FRAMEWORKS == ("pytorch", "tensorflow", "mxnet", "jax", "attnviz")
    assert isinstance(snippet_input(PRESETS["dot-toy"].build()), SnippetInput)


def test_a_snippet_is_of_the_head_asked_for_and_never_of_another_heads_result():
    case = CASES["model-run-head"]
    state = case.build()
    inp = snippet_input(state, focus=case.focus)
    view = state.head_view(case.focus)
    assert np.array_equal(inp.queries, view.queries) and inp.scale == 0.4 and inp.causal == "top_left"
    assert inp.focus == "head 3 of call 0 (decoder.layers.0.self_attn)"
    assert not np.array_equal(snippet_input(state).queries, inp.queries)
    # The first head's result would put another head's weights into the script's check.
    with pytest.raises(ValueError, match=r"the result given is of head \(0, 0\), not of head \(0, 3\)"):
        snippet_input(state, run_state(state), focus=case.focus)
    with pytest.raises(ValueError, match="no head 4"):
        snippet_input(state, focus=(0, 4))
