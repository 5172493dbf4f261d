"""The engine under threads and asyncio tasks: ``no_autodiff`` is a switch of the
thread (and of the asyncio task) that turns it, never of the whole process; graphs
built and backpropagated in several threads at once get their own gradients."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import gradcheck as mg
from gradcheck.graph import is_tracking
from tests.support.checker_ops import Mul

TIMEOUT = 60.0


@contextlib.contextmanager
def _switching_often() -> Iterator[None]:
    """Threads take turns every few microseconds instead of every 5 ms, so that they
    interleave inside every op and every check (one check takes about a millisecond)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _holding_no_autodiff(body: Callable[[], None]) -> list[object]:
    """Run ``body`` in this thread while another thread sits inside ``no_autodiff``;
    returns what the other thread saw of its own switch (is_tracking, a creator)."""
    inside, release = threading.Event(), threading.Event()
    seen: list[object] = []

    def hold() -> None:
        with mg.no_autodiff:
            inside.set()
            release.wait(TIMEOUT)
            seen.append(is_tracking())
            seen.append((mg.Tensor([1.0]) * 2).creator)

    other = threading.Thread(target=hold)
    other.start()
    try:
        assert inside.wait(TIMEOUT)
        body()
    finally:
        release.set()
        other.join(TIMEOUT)
    return seen


def test_no_autodiff_in_one_thread_does_not_stop_backprop_in_another():
    missing: list[int] = []

    def backprop_1000_times() -> None:
        assert is_tracking()
        for i in range(1000):
            x = mg.Tensor([1.0, 2.0, 3.0])
            (x * x).sum().backward()
            if x.grad is None or not np.array_equal(x.grad, [2.0, 4.0, 6.0]):
                missing.append(i)

    seen = _holding_no_autodiff(backprop_1000_times)
    assert missing == [], f"{len(missing)} of 1000 backward calls left no gradient"
    # ...and the thread inside no_autodiff still did not record its own graph.
    assert seen == [False, None]


@pytest.mark.skipif(
    bool(getattr(sys.flags, "thread_inherit_context", 0)),
    reason="this Python starts threads with a copy of their creator's context",
)
def test_a_new_thread_records_the_graph_even_when_its_parent_is_inside_no_autodiff():
    result: list[object] = []

    def child() -> None:
        x = mg.Tensor([3.0])
        y = x * x
        y.backward()
        result.extend([is_tracking(), y.creator is None, x.grad])

    with mg.no_autodiff:
        thread = threading.Thread(target=child)
        thread.start()
        thread.join(TIMEOUT)
        assert not is_tracking()
    assert is_tracking()
    assert result[:2] == [True, True]  # (the creator is dropped by backward)
    np.testing.assert_array_equal(result[2], [6.0])


def test_four_threads_checking_a_correct_op_get_no_false_failures():
    x = np.array([0.3, -1.2, 2.0, 0.7])
    y = np.array([1.5, 0.4, -0.8, 2.2])
    failures: list[str] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def check_200_times() -> None:
        try:
            start.wait(TIMEOUT)
            for _ in range(200):
                result = mg.check(Mul, x, y)
                if not result.passed:
                    failures.append(result.failure.kind if result.failure else result.verdict)
        except BaseException as exc:  # (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=check_200_times) for _ in range(4)]
    with _switching_often():
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT * 4)
    assert not errors, errors
    assert failures == [], f"{len(failures)} false failures in 800 checks: {set(failures)}"


def test_threads_building_and_backpropagating_at_once_get_their_own_gradients():
    # Sequence numbers, the cached scalar constants and the lazily built NumPy
    # dispatch tables are shared by all threads; every thread's result must be right.
    wrong: list[tuple[int, int]] = []
    start = threading.Barrier(4)

    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            start.wait(TIMEOUT)
            for i in range(300):
                x = mg.Tensor(np.full(3, float(k + 1)))
                z = np.sin(x * 2.0 + i) * x  # a Python number per i, a NumPy ufunc
                z.sum().backward()
                a = np.full(3, float(k + 1))
                expected = 2 * np.cos(2 * a + i) * a + np.sin(2 * a + i)
                if x.grad is None or not np.allclose(x.grad, expected, rtol=1e-12):
                    wrong.append((k, i))
        except BaseException as exc:  # (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    with _switching_often():
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
    assert not errors, errors
    assert wrong == []


def test_no_autodiff_in_one_asyncio_task_does_not_reach_another():
    async def main() -> tuple[list[bool], list[bool]]:
        entered, done = asyncio.Event(), asyncio.Event()
        quiet_saw: list[bool] = []
        loud_saw: list[bool] = []

        async def quiet() -> None:
            with mg.no_autodiff:
                entered.set()
                while not done.is_set():  # inside no_autodiff across many awaits
                    quiet_saw.append((mg.Tensor([1.0]) * 2).creator is None)
                    await asyncio.sleep(0)

        async def loud() -> None:
            await entered.wait()
            for _ in range(100):
                x = mg.Tensor([1.0, 2.0])
                (x * x).sum().backward()
                loud_saw.append(x.grad is not None)
                await asyncio.sleep(0)  # let quiet run between backward calls
            done.set()

        await asyncio.gather(quiet(), loud())
        return quiet_saw, loud_saw

    quiet_saw, loud_saw = asyncio.run(main())
    assert loud_saw == [True] * 100
    assert len(quiet_saw) >= 50 and all(quiet_saw)
    assert is_tracking()


def test_a_task_started_inside_no_autodiff_inherits_it_and_cannot_end_it_outside():
    # asyncio copies the context when a task is created (contextvars semantics): the
    # task starts with its creator's switch, and what it changes stays its own.
    async def main() -> list[bool]:
        seen: list[bool] = []

        async def child() -> None:
            seen.append(is_tracking())
            with mg.no_autodiff:
                seen.append(is_tracking())

        with mg.no_autodiff:
            task = asyncio.create_task(child())
        seen.append(is_tracking())  # before the child runs
        await task
        seen.append(is_tracking())
        return seen

    assert asyncio.run(main()) == [True, False, False, True]
