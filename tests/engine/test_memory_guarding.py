"""Memory guarding (gradcheck._utils.lock_management): while a graph needs an array,
the array is read-only; it is writeable again once the graph is cleared or collected."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import gradcheck as mg
from gradcheck._utils import graph_tracking
from gradcheck._utils import lock_management as lm


def writeable(x: mg.Tensor | np.ndarray) -> bool:
    array = x.data if isinstance(x, mg.Tensor) else x
    return bool(array.flags.writeable)


@pytest.fixture(autouse=True)
def no_lock_left_behind():
    assert lm.MEM_GUARD is True
    yield
    gc.collect()
    assert lm.MEM_GUARD is True
    assert not lm._array_counter and not lm._array_tracker
    assert not lm._views_waiting_for_unlock


@pytest.mark.parametrize("constant", [False, True])
def test_a_leaf_read_before_the_op_is_read_only_until_backward(constant: bool) -> None:
    x = mg.Tensor([1.0, 2.0], constant=constant)
    data = x.data
    assert writeable(data)
    y = x * 2
    with pytest.raises(ValueError, match="read-only"):
        data[0] = 5.0
    y.backward()
    data[0] = 5.0
    assert writeable(x)


def test_the_output_of_an_op_is_read_only_when_read_and_writeable_after_backward() -> None:
    x = mg.Tensor([1.0, 2.0])
    y = mg.exp(x)
    out = y.data
    assert not writeable(out)
    assert not writeable(x)  # read now, while y's graph needs it
    y.backward()
    assert writeable(out) and writeable(x)
    np.testing.assert_allclose(x.grad, np.exp([1.0, 2.0]))


def test_a_write_that_guarding_blocks_would_have_corrupted_the_gradient() -> None:
    x = np.arange(3.0)
    w = mg.Tensor(np.ones(3))
    z = x * w
    with pytest.raises(ValueError):
        x[:] = 0
    z.backward()
    np.testing.assert_array_equal(w.grad, [0.0, 1.0, 2.0])


def test_clear_graph_releases_the_locks() -> None:
    x = mg.Tensor([1.0, 2.0])
    data = x.data
    y = x * x
    z = y + 1
    assert not writeable(data) and not writeable(y)
    z.clear_graph()
    assert writeable(data) and writeable(y) and writeable(z)


def test_dropping_the_graph_releases_the_locks() -> None:
    x = mg.arange(3.0)
    data = x.data
    y = x * 2
    assert not writeable(data)
    del y
    assert writeable(data)


def test_an_array_stays_locked_until_its_last_graph_goes() -> None:
    x = mg.arange(4.0)
    a = np.arange(4.0)
    w = a * x
    z = x * a
    del w
    assert not writeable(a) and not writeable(x)
    del z
    assert writeable(a) and writeable(x)


def test_an_op_nobody_keeps_locks_nothing() -> None:
    a = np.arange(3.0)
    a * mg.arange(3.0)
    assert writeable(a)


def test_a_read_only_array_stays_read_only() -> None:
    a = np.arange(3.0)
    a.flags.writeable = False
    x = mg.Tensor([1.0, 2.0, 3.0])
    y = a * x
    y.backward()
    assert not writeable(a)


def test_a_view_of_a_locked_array_gets_its_writeability_back_with_the_base() -> None:
    base = np.arange(3.0)
    x = mg.Tensor(np.ones(3))
    w = base * x  # locks base
    view = base[...]  # read-only, as a view of a read-only array
    z = view * x
    assert not writeable(view)
    del z  # its lock goes, but the base is still locked
    assert not writeable(view)
    del w
    assert writeable(base) and writeable(view)


def test_an_op_that_raises_leaves_its_inputs_writeable() -> None:
    a, b = np.ones((2, 3)), np.ones((4, 4))
    with pytest.raises(ValueError):
        mg.add(a, b)
    assert writeable(a) and writeable(b)


def test_no_autodiff_locks_nothing() -> None:
    a = np.arange(3.0)
    with mg.no_autodiff:
        y = a * mg.arange(3.0)
    assert writeable(a) and writeable(y)


def test_mem_guard_off_as_a_block_and_a_decorator() -> None:
    x = mg.arange(3.0)
    a = np.ones(3)
    y = 2 * x
    with mg.mem_guard_off:
        assert mg.mem_guard_active() is False
        z = a * y
    assert mg.mem_guard_active() is True
    assert writeable(a) and writeable(z), "made without guarding: never locked"
    assert not writeable(y)
    w = a * z  # guarded again
    assert not writeable(a) and not writeable(z) and not writeable(w)
    w.backward()
    assert all(writeable(t) for t in (x, y, a, z, w))

    @mg.mem_guard_off
    def unguarded(a: np.ndarray) -> mg.Tensor:
        assert lm.MEM_GUARD is False
        return a * x

    kept = unguarded(a)
    assert writeable(a) and lm.MEM_GUARD is True
    del kept


def test_the_contexts_nest_and_restore() -> None:
    with mg.mem_guard_off:
        with mg.mem_guard_on:
            assert lm.MEM_GUARD is True
            with mg.mem_guard_off:
                assert lm.MEM_GUARD is False
            assert lm.MEM_GUARD is True
        assert lm.MEM_GUARD is False
    assert lm.MEM_GUARD is True


def test_turning_guarding_off_and_on() -> None:
    mg.turn_memory_guarding_off()
    try:
        assert mg.mem_guard_active() is False
        a = np.ones(2)
        y = a * mg.Tensor([1.0, 2.0])
        assert writeable(a) and writeable(y)
    finally:
        mg.turn_memory_guarding_on()
    assert mg.mem_guard_active() is True


def test_setitem_on_a_tensor_in_a_graph_still_works() -> None:
    w = mg.Tensor([1.0, 2.0, 3.0])
    x = w * 1
    assert not writeable(x)
    x[1:] = mg.Tensor(5.0)
    (x * x).sum().backward()
    np.testing.assert_array_equal(w.grad, [2.0, 0.0, 0.0])
    assert writeable(w) and writeable(x)


def test_track_graph_reads_the_switch() -> None:
    assert graph_tracking.TRACK_GRAPH is True
    with mg.no_autodiff:
        assert graph_tracking.TRACK_GRAPH is False
    assert graph_tracking.TRACK_GRAPH is True


def test_an_op_made_with_guarding_on_is_locked_when_read_with_it_off() -> None:
    x = mg.Tensor([1.0])
    with mg.mem_guard_off:
        y = +x
    with mg.mem_guard_on:
        z = +x
    mg.turn_memory_guarding_off()
    try:
        assert writeable(y), "made without guarding"
        assert not writeable(z), "made with guarding"
        z.backward()
        assert writeable(z) and writeable(x)
    finally:
        mg.turn_memory_guarding_on()


def test_a_view_made_of_a_locked_tensor_is_writeable_after_the_graph() -> None:
    x = mg.Tensor([0.0, 0.0], constant=True)
    data = x.data  # exposed: locked by the first op
    v1 = x[...]
    v2 = x[...]  # a view of x's array while it is locked: read-only
    z = v1 * v2 * mg.Tensor([1.0, 1.0])
    assert not writeable(v2) and not writeable(data)
    z.backward()
    assert writeable(data) and writeable(v1) and writeable(v2)
