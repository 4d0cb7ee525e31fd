"""The scaling lab's data: variance curves, softmax statistics, the current point, tanh saturation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnviz.engine import AttentionInputError, attend
from attnviz.engine.scaling import (
    DEFAULT_DIMS,
    current_point,
    scaling_curves,
    softmax_jacobian_norm,
    tanh_saturation,
)


@pytest.fixture(scope="module")
def curves() -> dict[str, np.ndarray]:
    return scaling_curves()


def test_curve_shapes_and_keys(curves):
    assert curves["dims"].tolist() == list(DEFAULT_DIMS) == [2**i for i in range(11)]
    for name in ("var", "entropy", "max_weight", "jacobian_norm"):
        for kind in ("unscaled", "scaled"):
            arr = curves[f"{name}_{kind}"]
            assert arr.shape == (11,) and arr.dtype == np.float64 and np.isfinite(arr).all()
    assert float(curves["max_entropy"]) == pytest.approx(math.log(64))


def test_variance_grows_with_d_unless_scaled(curves):
    d = curves["dims"].astype(float)
    np.testing.assert_allclose(curves["var_unscaled"], d, rtol=0.06)
    np.testing.assert_allclose(curves["var_scaled"], 1.0, atol=0.06)


def test_unscaled_softmax_saturates_and_its_gradient_vanishes(curves):
    ent, ent_s = curves["entropy_unscaled"], curves["entropy_scaled"]
    assert (np.diff(ent) < 0).all() and ent[-1] < 0.2
    assert np.ptp(ent_s) < 0.1 and ent_s.min() > 3.5  # log 64 = 4.16 is uniform
    assert curves["max_weight_unscaled"][-1] > 0.9
    assert np.ptp(curves["max_weight_scaled"]) < 0.02
    jac, jac_s = curves["jacobian_norm_unscaled"], curves["jacobian_norm_scaled"]
    assert jac[-1] < 0.5 * jac_s[-1]
    assert np.ptp(jac_s) < 0.02
    # At d = 1 scaling changes nothing.
    for name in ("var", "entropy", "max_weight", "jacobian_norm"):
        assert curves[f"{name}_unscaled"][0] == curves[f"{name}_scaled"][0]


def test_curves_are_seeded():
    a = scaling_curves((4, 16), n_keys=8, samples=256, seed=3)
    b = scaling_curves((4, 16), n_keys=8, samples=256, seed=3)
    c = scaling_curves((4, 16), n_keys=8, samples=256, seed=4)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["entropy_unscaled"], c["entropy_unscaled"])


def test_sampling_shortcut_matches_real_dot_products():
    # The curves draw ||q|| z instead of q.k; real random q and k must give the same statistics.
    d, n_keys, samples = 16, 64, 4000
    g = torch.Generator().manual_seed(11)
    q = torch.randn(samples, 1, d, generator=g, dtype=torch.float64)
    k = torch.randn(samples, n_keys, d, generator=g, dtype=torch.float64)
    logits = torch.bmm(q, k.transpose(1, 2)).squeeze(1)
    w = torch.softmax(logits, -1)
    entropy = float(-(w * torch.log(w)).sum(-1).mean())
    c = scaling_curves((d,), n_keys=n_keys, samples=samples)
    assert c["var_unscaled"][0] == pytest.approx(float(logits.var()), rel=0.06)
    assert c["entropy_unscaled"][0] == pytest.approx(entropy, abs=0.05)
    assert c["max_weight_unscaled"][0] == pytest.approx(float(w.amax(-1).mean()), abs=0.02)
    assert c["jacobian_norm_unscaled"][0] == pytest.approx(float(softmax_jacobian_norm(w).mean()), abs=0.01)


def test_closed_form_jacobian_norm_equals_autograd():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5, 7, generator=g, dtype=torch.float64) * 3
    for row in x:
        jac = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, -1), row)
        expected = torch.linalg.matrix_norm(jac)
        assert float(softmax_jacobian_norm(torch.softmax(row, -1))) == pytest.approx(float(expected), rel=1e-12)
    # One-hot weights: the softmax is flat, no gradient at all.
    assert float(softmax_jacobian_norm(torch.tensor([0.0, 1.0, 0.0]))) == 0.0


def test_current_point_by_hand():
    q = np.array([[[1.0, 0.0]]])
    k = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    p = current_point(q, k)
    assert p["d"] == 2 and p["rows"] == 1 and p["n_keys"] == 2
    assert p["var_unscaled"] == pytest.approx(0.25)  # scores 1 and 0
    assert p["var_scaled"] == pytest.approx(0.125)
    w = 1 / (1 + math.exp(-1))
    assert p["max_weight_unscaled"] == pytest.approx(w)
    assert p["entropy_unscaled"] == pytest.approx(-(w * math.log(w) + (1 - w) * math.log(1 - w)))
    assert p["jacobian_norm_unscaled"] == pytest.approx(2 * w * (1 - w))  # 2x2 entries of size w(1-w)
    assert p["q_mean_square"] == 0.5 and p["k_mean_square"] == 0.5


def test_current_point_of_random_inputs_lies_on_the_curves(curves):
    g = torch.Generator().manual_seed(5)
    p = current_point(torch.randn(8, 64, 64, generator=g), torch.randn(8, 64, 64, generator=g))
    i = list(DEFAULT_DIMS).index(64)
    assert p["var_unscaled"] == pytest.approx(curves["var_unscaled"][i], rel=0.1)
    for name in ("entropy", "max_weight", "jacobian_norm"):
        for kind in ("scaled", "unscaled"):
            assert p[f"{name}_{kind}"] == pytest.approx(curves[f"{name}_{kind}"][i], rel=0.1, abs=0.02)


def test_current_point_respects_valid_lengths():
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(2, 3, 4, generator=g), torch.randn(2, 5, 4, generator=g)
    p = current_point(q, k, torch.tensor([0, 2]))
    assert p["rows"] == 3 and p["n_keys"] == 2
    scores = (q[1] @ k[1, :2].T).double()
    assert p["var_unscaled"] == pytest.approx(float(scores.var(correction=0)))
    none = current_point(q, k, torch.tensor([0, 0]))
    assert none["rows"] == 0 and math.isnan(none["entropy_scaled"]) and math.isnan(none["var_scaled"])


def test_current_point_refuses_bad_input():
    with pytest.raises(AttentionInputError, match="d_q = 3, d_k = 4") as info:
        current_point(np.zeros((1, 2, 3)), np.zeros((1, 2, 4)))
    assert info.value.field == "shape"
    with pytest.raises(AttentionInputError, match="queries contains NaN"):
        current_point(np.full((1, 2, 3), np.nan), np.zeros((1, 2, 3)))
    with pytest.raises(AttentionInputError, match="must be 3-D"):
        current_point(np.zeros((2, 3)), np.zeros((1, 2, 3)))
    with pytest.raises(AttentionInputError, match="dims must be"):
        scaling_curves(dims=(0, 4))


def test_tanh_saturation_uses_attends_seeded_parameters():
    g = torch.Generator().manual_seed(2)
    q, k = torch.randn(2, 3, 5, generator=g), torch.randn(2, 4, 6, generator=g)
    sat = tanh_saturation(q, k, num_hiddens=7, seed=9)
    params = attend(q, k, torch.zeros(2, 4, 1), scoring="additive", num_hiddens=7, seed=9).params
    h = (q @ params["W_q"].T).unsqueeze(2) + (k @ params["W_k"].T).unsqueeze(1)
    t = torch.tanh(h.double().abs())
    assert sat.n_pairs == 24 and sat.n_values == 24 * 7 and not sat.sampled
    assert sat.pre_counts.sum() == sat.tanh_counts.sum() == 168
    assert sat.saturated_fraction == pytest.approx(float((t > 0.99).double().mean()))
    assert sat.saturated_per_unit.shape == (7,)
    assert sat.pre_threshold == pytest.approx(math.atanh(0.99))


def test_tanh_saturation_with_given_parameters():
    q = np.array([[[1.0, 0.0], [0.1, 0.0]]])
    k = np.array([[[0.0, 1.0], [0.0, -0.1]]])
    params = {
        "W_q": np.array([[10.0, 0.0], [0.0, 0.0]]),
        "W_k": np.array([[0.0, 0.0], [0.0, 0.5]]),
        "w_v": np.ones((1, 2)),
    }
    sat = tanh_saturation(q, k, params, num_hiddens=2)
    # Unit 0 sees 10 * q0: |h| = 10 for query 0 (saturated), 1 for query 1; unit 1 sees |0.5 k1| <= 0.5.
    assert sat.saturated_per_unit.tolist() == [0.5, 0.0]
    assert sat.saturated_fraction == 0.25
    assert sat.pre_edges[0] == 0 and sat.pre_edges[-1] == pytest.approx(10.0)
    only_first = tanh_saturation(q, k, params, num_hiddens=2, valid_lens=np.array([[1, 0]]))
    assert only_first.n_pairs == 1 and only_first.saturated_per_unit.tolist() == [1.0, 0.0]


def test_tanh_saturation_samples_large_inputs():
    g = torch.Generator().manual_seed(3)
    q, k = torch.randn(1, 40, 3, generator=g), torch.randn(1, 50, 3, generator=g)
    sat = tanh_saturation(q, k, max_pairs=500)
    assert sat.sampled and sat.n_pairs == 500 and sat.n_values == 500 * 8
    full = tanh_saturation(q, k)
    assert not full.sampled and full.n_pairs == 2000
    assert sat.saturated_fraction == pytest.approx(full.saturated_fraction, abs=0.05)
