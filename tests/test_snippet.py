"""Copy as code: the snippet's weights are the app's weights, bit for bit."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
import torch

from attnviz.compute.attention import run_state
from attnviz.snippets import save_snippet_data, snippet_data, snippet_for_state
from attnviz.state.document import Settings, State
from attnviz.teaching.lessons import LESSONS
from attnviz.teaching.presets import PRESETS

ROOT = pathlib.Path(__file__).resolve().parents[1]


def with_settings(state: State, **changes: object) -> State:
    new = state.copy()
    new.settings = replace(state.settings, **changes)
    return new


def exec_snippet(code: str, cwd: pathlib.Path | None = None) -> dict[str, object]:
    namespace: dict[str, object] = {"__name__": "__snippet__"}
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        exec(compile(code, "<snippet>", "exec"), namespace)
    finally:
        os.chdir(old)
    return namespace


def snippet_weights(code: str, cwd: pathlib.Path | None = None) -> np.ndarray:
    weights = exec_snippet(code, cwd)["weights"].cpu()  # type: ignore[attr-defined]
    # As compute.run_state hands them to the view: half precision widened to float32.
    return (weights.float() if weights.dtype in (torch.float16, torch.bfloat16) else weights).numpy()


def app_weights(state: State, focus: tuple[int, int] = (0, 0)) -> np.ndarray:
    outcome = run_state(state, 0, focus)
    assert outcome.view is not None, outcome.error
    return outcome.view.weights


def seeded_additive() -> State:
    state = PRESETS["additive-toy"].build()
    return with_settings(state, param_seed=7, num_hiddens=5)


def additive_with_params() -> State:
    state = PRESETS["additive-toy"].build()
    rng = np.random.default_rng(4)
    state.params = {
        "W_q": rng.standard_normal((8, 20)).astype(np.float32),
        "W_k": rng.standard_normal((8, 2)).astype(np.float32),
        "w_v": rng.standard_normal((1, 8)).astype(np.float32),
    }
    return state


def causal_2d() -> State:
    rng = np.random.default_rng(1)
    return State.from_tensors(
        rng.standard_normal((2, 4, 3)),
        rng.standard_normal((2, 6, 3)),
        rng.standard_normal((2, 6, 2)),
        lens_2d=np.array([[6, 5, 0, 2], [1, 2, 3, 9]]),
        settings=Settings(scoring="scaled_dot", lens_mode="2d"),
        causal="bottom_right",
    )


CASES = {
    **{name: preset.build for name, preset in PRESETS.items()},
    "additive-seeded": seeded_additive,
    "additive-params": additive_with_params,
    "additive-2d-lens": lambda: with_settings(seeded_additive(), lens_mode="2d"),
    "causal-2d-lens": causal_2d,
    "dropout-train": lambda: with_settings(PRESETS["dot-toy"].build(), train=True, dropout=0.5, dropout_seed=3),
    "bilinear-float64": lambda: with_settings(LESSONS["exercise-2-bilinear"].preset.build(), dtype="float64"),
    **{name: lesson.preset.build for name, lesson in LESSONS.items() if name != "pitfall-nan-padding"},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_snippet_reproduces_the_app_weights_exactly(case):
    state = CASES[case]()
    code = snippet_for_state(state)
    got = snippet_weights(code)
    expected = app_weights(state)
    assert got.dtype == expected.dtype == (np.float64 if state.settings.dtype == "float64" else np.float32)
    # Bit for bit: the attnviz script calls attend on the head the app computed (its values written
    # as exact decimals), the same kernels on the same shapes as run_state, on any machine.
    assert np.array_equal(got, expected, equal_nan=True)


def test_snippet_names_the_settings_and_parameters():
    code = snippet_for_state(seeded_additive())
    assert "scoring='additive'" in code and "num_hiddens=5" in code and "seed=7" in code
    assert "params" not in code.split("result = attend")[1].split(")")[0]
    code = snippet_for_state(additive_with_params())
    assert "params=params" in code and "params_W_q = torch.tensor(" in code and "dtype=torch.float32" in code
    assert "seed=" not in code
    code = snippet_for_state(causal_2d())
    assert "causal='bottom_right'" in code and "dtype=torch.int64)  # shape (2, 4)" in code
    code = snippet_for_state(with_settings(PRESETS["dot-toy"].build(), lens_mode="none"))
    assert "result = attend(queries, keys, values, scoring=" in code


def test_nonfinite_results_are_written_as_nan():
    state = LESSONS["pitfall-float16"].preset.build()
    code = snippet_for_state(state)
    assert 'nan, inf = float("nan"), float("inf")' in code and "[nan, nan, nan, nan]" in code
    assert np.isnan(snippet_weights(code)).any()


def test_nan_inputs_behave_as_in_the_app():
    state = LESSONS["pitfall-nan-padding"].preset.build()
    code = snippet_for_state(state)
    assert "[nan, nan]" in code
    assert run_state(state).error is None
    assert "allow_nonfinite=True" in code
    assert np.array_equal(snippet_weights(code), app_weights(state), equal_nan=True)


def big_state(n: int) -> State:
    rng = np.random.default_rng(9)
    return State.from_tensors(
        rng.standard_normal((1, n, 40)),
        rng.standard_normal((1, n, 40)) * 1e-3,
        rng.standard_normal((1, n, 3)),
        np.array([n - 5]),
        settings=Settings(scoring="scaled_dot"),
    )


def test_big_tensors_are_embedded_exactly_and_say_so():
    state = big_state(60)  # 2400 numbers in queries and keys: over the inline limit
    code = snippet_for_state(state)
    assert "# queries: 2400 numbers, shape (1, 60, 40): too many to print" in code
    assert "# keys: 2400 numbers" in code and "values = torch.tensor(" in code
    assert "# expected: 3600 numbers" in code  # the weights: embedded too, still checked
    assert len(code) < 120_000
    assert snippet_data(state) == {}
    assert np.array_equal(snippet_weights(code), app_weights(state), equal_nan=True)


def test_huge_tensors_go_to_a_data_file(tmp_path):
    state = big_state(60)
    code = snippet_for_state(state, max_embedded=1000, data_file="inputs.npz")
    assert 'data = np.load("inputs.npz")' in code
    assert 'queries = torch.from_numpy(data["queries"])  # 2400 numbers, shape (1, 60, 40): from the data file' in code
    assert "too many to embed a check" in code
    assert save_snippet_data(state, tmp_path / "inputs.npz", max_embedded=1000) == ["keys", "queries"]
    assert np.array_equal(snippet_weights(code, cwd=tmp_path), app_weights(state), equal_nan=True)
    assert save_snippet_data(PRESETS["dot-toy"].build(), tmp_path / "none.npz") == []
    assert not (tmp_path / "none.npz").exists()


def test_snippet_runs_as_a_script(tmp_path):
    script = tmp_path / "snippet.py"
    script.write_text(snippet_for_state(seeded_additive()))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("weights (2, 1, 10)")


def test_snippet_check_fails_when_the_weights_do_not_match():
    code = snippet_for_state(PRESETS["masked-softmax-1d"].build())
    tampered = code.replace("result = attend(queries", "queries = queries * 2\nresult = attend(queries")
    with pytest.raises(AssertionError, match="the weights differ from what attnviz showed"):
        exec_snippet(tampered)


@pytest.mark.parametrize("case", ["model-masks", "model-run-head", "sliding-window", "scaled-by-0.3"])
def test_the_attnviz_script_passes_the_models_masks_and_scale(case):
    from attnviz.bench.snippet_cases import CASES as MORE

    state, focus = MORE[case].build(), MORE[case].focus
    code = snippet_for_state(state, focus=focus)
    assert np.array_equal(snippet_weights(code), app_weights(state, focus), equal_nan=True)


def test_the_snippet_is_of_the_head_on_show():
    from attnviz.state.run import AttentionCall, Focus, ModelRun

    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 3, 4, 5)).astype(np.float32) for _ in range(3))
    state = State.from_run(ModelRun((AttentionCall("layer.0", q, k, v),)))
    state.settings = replace(state.settings, mask_mode="d2l")
    code = snippet_for_state(state, focus=Focus(0, 2))
    expected = run_state(state, 0, (0, 2)).view.weights
    assert np.array_equal(snippet_weights(code), expected)
    assert not np.array_equal(expected, run_state(state, 0, (0, 1)).view.weights)


def _termed_state(*terms: object, sinks: bool = False) -> State:
    """A captured run of one call whose scores go through ``terms`` (``CallTerm``), on head 1."""
    from attnviz.state.run import AttentionCall, MaskArguments, ModelRun

    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((2, 2, 5, 4)).astype(np.float32) * 3 for _ in range(3))
    call = AttentionCall(
        "layers.0.attn",
        q,
        k,
        v,
        MaskArguments(is_causal=True),
        terms=tuple(terms),  # type: ignore[arg-type]
        sinks=np.array([0.5, -1.0], dtype=np.float32) if sinks else None,
    )
    return State.from_run(ModelRun((call,), source="capture"))


def _bias_term(name: str = "position_bias"):  # noqa: ANN202
    from attnviz.state.run import CallTerm

    values = np.random.default_rng(5).standard_normal((1, 2, 5, 5)).astype(np.float32)
    return CallTerm("bias", name, values=values)


@pytest.mark.parametrize("framework", ["attnviz", "pytorch"])
def test_a_calls_score_biases_are_in_the_code_and_its_weights_are_the_apps(framework):
    from attnviz.snippets import make_snippet

    state = _termed_state(_bias_term(), _bias_term("ALiBi"))
    snippet = make_snippet(state, framework, focus=(0, 1))
    weights = exec_snippet(snippet.code)["weights"].cpu().numpy()  # type: ignore[attr-defined]
    if framework == "attnviz":
        assert np.array_equal(weights, app_weights(state, (0, 1)))
    else:
        # The chapter's code adds the biases summed into one (float addition in another order):
        # equal to the last digits float32 keeps, as the snippet's own check asserts.
        np.testing.assert_allclose(weights, app_weights(state, (0, 1)), rtol=1e-5, atol=1e-6)
    # Without the biases the weights differ: the check is not vacuous.
    assert not np.allclose(app_weights(_termed_state(), (0, 1)), weights)
    if framework == "pytorch":
        assert "position_bias" in snippet.code and "ALiBi" in snippet.code  # named where the bias is written


def test_soft_capping_and_sinks_are_the_attnviz_scripts_and_refused_by_the_chapters_code():
    from attnviz.snippets import SnippetError, make_snippet
    from attnviz.state.run import CallTerm

    state = _termed_state(_bias_term(), CallTerm("softcap", "softcap", cap=1.5), sinks=True)
    snippet = make_snippet(state, "attnviz", focus=(0, 1))
    assert "score_terms=[ScoreBias(" in snippet.code and "SoftCap(1.5)" in snippet.code and "Sinks(" in snippet.code
    assert snippet.stage_lines["modified_scores"]
    weights = exec_snippet(snippet.code)["weights"].cpu().numpy()  # type: ignore[attr-defined]
    assert np.array_equal(weights, app_weights(state, (0, 1)))
    with pytest.raises(SnippetError, match="the model's softcap, sinks, which the chapter's PyTorch code"):
        make_snippet(state, "pytorch", focus=(0, 1))


def test_a_score_mod_function_cannot_be_written_and_says_so():
    from attnviz.snippets import SnippetError, make_snippet
    from attnviz.state.run import CallTerm

    state = _termed_state(CallTerm("score_mod", "score_mod", fn=lambda s, b, h, q, k: s + (q - k)))
    for framework in ("attnviz", "pytorch"):
        with pytest.raises(SnippetError, match="a function of its own that cannot be written as code"):
            make_snippet(state, framework, focus=(0, 1))


@pytest.mark.parametrize("framework", ["attnviz", "pytorch"])
def test_an_alibi_term_is_written_as_the_bias_it_adds(framework):
    # A capture file keeps a recognised ALiBi score_mod as its slopes (issue 33); copied as code
    # it is the bias slope x (key - query) of the head on show.
    from attnviz.snippets import make_snippet
    from attnviz.state.run import CallTerm

    state = _termed_state(CallTerm("alibi", "ALiBi", values=np.array([0.25, 0.5])))
    snippet = make_snippet(state, framework, focus=(0, 1))
    weights = exec_snippet(snippet.code)["weights"].cpu().numpy()  # type: ignore[attr-defined]
    expected = app_weights(state, (0, 1))
    # float32 products of the slope and distance, summed in another order: the last digits only.
    np.testing.assert_allclose(weights, expected, rtol=1e-5, atol=1e-6)
    assert not np.allclose(app_weights(_termed_state(), (0, 1)), expected)  # the term changes them
