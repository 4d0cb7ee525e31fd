"""Captures compose (issue 22, point 1): nested, or overlapping across threads in any order, each
records exactly the calls made inside it, and PyTorch is put back as it was when the last closes.

Before: each capture saved and restored the functions it saw on entry, so two overlapping
captures left wrappers installed for good (MHA's fast path off, every later capture empty), and
an inner capture recorded nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attnviz

from .models import TinySdpa, ids


def encoder(layers: int = 2) -> nn.TransformerEncoder:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False).eval()


def run_encoder(model: nn.Module) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(1)))


def run_tiny(model: TinySdpa) -> None:
    with torch.no_grad():
        model(ids(), [(None, False)] * 3)


def pristine() -> tuple[object, object, bool]:
    return F.scaled_dot_product_attention, nn.MultiheadAttention.__dict__["forward"], True


def assert_restored(original: tuple[object, object, bool]) -> None:
    sdpa, forward, _ = original
    assert F.scaled_dot_product_attention is sdpa
    assert nn.MultiheadAttention.__dict__["forward"] is forward
    assert torch.backends.mha.get_fastpath_enabled()


def in_threads(*bodies: Callable[[], None]) -> None:
    errors: list[BaseException] = []

    def guard(body: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                body()
            except BaseException as exc:  # noqa: BLE001 - reported by the test thread
                errors.append(exc)

        return run

    threads = [threading.Thread(target=guard(body)) for body in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)


def test_overlapping_captures_on_two_threads_record_their_own_calls_and_restore_pytorch() -> None:
    original = pristine()
    model, tiny = encoder(), TinySdpa()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    caps: dict[str, attnviz.capture.Capture] = {}

    def first() -> None:
        with attnviz.capture(model) as cap:
            caps["first"] = cap
            first_in.set()
            assert second_in.wait(30)
            run_encoder(model)
            run_tiny(tiny)
        first_out.set()

    def second() -> None:
        assert first_in.wait(30)
        with attnviz.capture(model) as cap:
            caps["second"] = cap
            second_in.set()
            assert first_out.wait(30)  # the first has left: this one still records
            run_encoder(model)

    in_threads(first, second)
    # The tiny model is not the capture's: its calls are named by their place.
    first_names = ["layers.0.self_attn", "layers.1.self_attn", "call 2", "call 3", "call 4"]
    assert [c.name for c in caps["first"].calls] == first_names
    assert [c.name for c in caps["second"].calls] == ["layers.0.self_attn", "layers.1.self_attn"]
    assert all(c.fidelity is not None and c.fidelity < 1e-5 for c in caps["second"].calls)
    assert_restored(original)
    # And every later capture still sees the calls.
    with attnviz.capture(model) as later:
        run_encoder(model)
    assert len(later.calls) == 2 and not later.warnings
    assert_restored(original)


def test_a_capture_leaving_while_another_thread_records_restores_nothing_until_the_last() -> None:
    original = pristine()
    tiny = TinySdpa()
    entered, left = threading.Event(), threading.Event()
    seen: list[object] = []

    def long_one() -> None:
        with attnviz.capture(tiny) as cap:
            entered.set()
            assert left.wait(30)
            seen.append(F.scaled_dot_product_attention is not original[0])  # still patched
            run_tiny(tiny)
        seen.append(len(cap.calls))

    def short_one() -> None:
        assert entered.wait(30)
        with attnviz.capture(tiny) as cap:
            run_tiny(tiny)
        seen.append(len(cap.calls))
        left.set()

    in_threads(long_one, short_one)
    assert seen == [3, True, 3]
    assert_restored(original)


def test_nested_captures_each_record_what_runs_inside_them() -> None:
    original = pristine()
    model = encoder(6)
    with attnviz.capture(model) as outer:
        run_encoder(model)
        with attnviz.capture(model, modules=["layers.5.self_attn"]) as inner:
            out = run_encoder(model)
        assert F.scaled_dot_product_attention is not original[0]  # the outer one still records
    assert len(outer.calls) == 12
    assert [c.name for c in outer.calls[:2]] == ["layers.0.self_attn", "layers.1.self_attn"]
    assert outer.calls[6].name == "layers.0.self_attn #2"
    assert [c.name for c in inner.calls] == ["layers.5.self_attn"]
    assert inner.calls[0].fidelity is not None and inner.calls[0].fidelity < 1e-5
    assert torch.allclose(out, run_encoder(model), atol=1e-6)
    assert_restored(original)


def test_captures_closed_out_of_order_on_one_thread() -> None:
    original = pristine()
    tiny = TinySdpa()
    a, b = attnviz.capture(tiny), attnviz.capture()
    a.__enter__()
    b.__enter__()
    run_tiny(tiny)
    a.__exit__(None, None, None)
    run_tiny(tiny)
    assert F.scaled_dot_product_attention is not original[0]
    b.__exit__(None, None, None)
    assert (len(a.calls), len(b.calls)) == (3, 6)
    assert_restored(original)


def test_calls_on_another_thread_belong_to_a_capture_only_through_its_model() -> None:
    original = pristine()
    tiny = TinySdpa()
    q = torch.randn(1, 2, 3, 4)
    with attnviz.capture() as bare, attnviz.capture(tiny) as modelled:
        # Another thread, no capture of its own: a plain SDPA call there is nobody's; the model
        # running there (as nn.DataParallel's replicas do) is the modelled capture's.
        in_threads(lambda: F.scaled_dot_product_attention(q, q, q), lambda: run_tiny(tiny))
    assert bare.calls == [] and len(modelled.calls) == 3
    assert_restored(original)


def test_a_function_replaced_by_other_code_meanwhile_is_left_and_said() -> None:
    sdpa = F.scaled_dot_product_attention

    def theirs(*args: object, **kwargs: object) -> torch.Tensor:
        return sdpa(*args, **kwargs)

    try:
        with attnviz.capture() as cap:
            F.scaled_dot_product_attention = theirs
        assert F.scaled_dot_product_attention is theirs
        assert any("replaced by other code" in w and "scaled_dot_product_attention" in w for w in cap.warnings)
        assert torch.backends.mha.get_fastpath_enabled()
    finally:
        F.scaled_dot_product_attention = sdpa


@pytest.mark.parametrize(("budget", "error"), [("10", TypeError), (None, None), (-1, ValueError), (True, ValueError)])
def test_memory_budget_that_is_not_a_number_is_refused_in_words(budget: object, error: type | None) -> None:
    if error is None:
        assert attnviz.capture(memory_budget=float("inf")).memory_budget == float("inf")
        return
    with pytest.raises(error, match=r"memory_budget must be a number of bytes > 0; got "):
        attnviz.capture(memory_budget=budget)  # type: ignore[arg-type]
