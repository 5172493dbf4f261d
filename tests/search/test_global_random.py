"""The global random states through a search (gradcheck/search/global_random.py):
seeded per example as Hypothesis seeds them, saved and put back once per search rather
than once per example."""

from __future__ import annotations

import random
import threading
import warnings

import numpy as np
import pytest
from hypothesis.internal import entropy

from gradcheck.search import global_random
from gradcheck.search.verifier import verify
from tests.support.helpers import load_example

XTanh = load_example("xtanh").XTanh


def _numpy_handle():
    entropy.get_seeder_and_restorer(0)  # (made where not yet made)
    return next(
        h for h in entropy.RANDOMS_TO_MANAGE.values() if isinstance(h, entropy.NumpyRandomWrapper)
    )


def test_numpys_state_is_not_saved_per_example(monkeypatch) -> None:
    handle = _numpy_handle()
    saved = []
    real = handle.getstate
    monkeypatch.setattr(handle, "getstate", lambda: saved.append(1) or real())
    result = verify(XTanh, shapes=["3"], max_examples=20, seed=0)
    assert result.examples == 20
    assert len(saved) <= 1  # (Hypothesis alone: one per example)


def test_random_and_numpys_states_are_not_saved_per_example(monkeypatch) -> None:
    saved = []
    real = random.getstate
    monkeypatch.setattr(random, "getstate", lambda: saved.append(1) or real())
    import hypothesis.control

    monkeypatch.setattr(hypothesis.control, "random", _Unwatched())  # (its own getstate)
    result = verify(XTanh, shapes=["3"], max_examples=20, seed=0)
    assert result.examples == 20
    assert len(saved) <= 1  # (Hypothesis alone: one per example)


class _Unwatched:
    """``random`` as Hypothesis's strategy-drawing code reads it, not counted."""

    def __getattr__(self, name):
        return getattr(random, name)

    def getstate(self):
        return random.Random(0).getstate()


def test_each_example_starts_from_the_seeded_states() -> None:
    first: list[tuple[float, float]] = []
    expected = (np.random.RandomState(0).random_sample(), random.Random(0).random())

    def on_example(arrays, check_seed) -> None:
        first.append((float(np.random.random_sample()), random.random()))
        np.random.random_sample(5)  # (what an op drawing from them would leave)
        random.random()

    verify(XTanh, shapes=["3"], max_examples=10, seed=0, on_example=on_example)
    assert len(first) >= 10 and set(first) == {expected}


def test_the_state_from_before_the_search_is_back_after_it() -> None:
    np.random.seed(1234)
    np.random.random_sample(3)
    random.seed(4321)
    before, before_py = np.random.get_state(), random.getstate()
    verify(XTanh, shapes=["3"], max_examples=10, seed=0)
    after = np.random.get_state()
    assert before[0] == after[0] and np.array_equal(before[1], after[1])
    assert before[2:] == after[2:]
    assert random.getstate() == before_py
    assert not global_random.swapped()
    assert _numpy_handle() in entropy.RANDOMS_TO_MANAGE.values()


def test_nested_and_threaded_searches_put_it_back_once() -> None:
    np.random.seed(7)
    random.seed(8)
    before = np.random.get_state()[1].copy()
    before_py = random.getstate()
    with global_random.seeded_per_example():
        assert global_random.swapped()
        worker = threading.Thread(target=lambda: verify(XTanh, shapes=["3"], max_examples=5))
        worker.start()
        worker.join()
        assert global_random.swapped()  # (the other search's end leaves this one's)
        np.random.seed(99)
        random.seed(99)
    assert not global_random.swapped()
    assert np.array_equal(np.random.get_state()[1], before)
    assert random.getstate() == before_py


def _own_generator() -> random.Random:
    """Hypothesis's own generator of this thread (made by a first search)."""
    from hypothesis.core import threadlocal

    if threadlocal._hypothesis_global_random is None:
        verify(XTanh, shapes=["3"], max_examples=2, seed=0)
    return threadlocal._hypothesis_global_random


def test_hypothesiss_own_generator_is_not_saved_per_example(monkeypatch) -> None:
    own = _own_generator()
    saved = []
    real = own.getstate
    monkeypatch.setattr(own, "getstate", lambda: saved.append(1) or real())
    result = verify(XTanh, shapes=["3"], max_examples=20, seed=0)
    assert result.examples == 20
    assert len(saved) <= 1  # (Hypothesis alone: one per example)


def test_hypothesiss_own_generator_is_seeded_per_example_and_put_back() -> None:
    own = _own_generator()
    own.seed(4321)
    own.random()
    before = own.getstate()
    seen: list[float] = []

    def on_example(arrays, check_seed) -> None:
        seen.append(own.random())  # (from the seeded state: the same at every example)

    verify(XTanh, shapes=["3"], max_examples=10, seed=0, on_example=on_example)
    assert len(seen) >= 10 and set(seen) == {random.Random(0).random()}
    assert own.getstate() == before


class _Counted:
    """``random`` as ``hypothesis.control`` reads it, its ``getstate`` calls counted."""

    def __init__(self) -> None:
        self.reads = 0

    def __getattr__(self, name):
        return getattr(random, name)

    def getstate(self):
        self.reads += 1
        return random.getstate()


def test_the_state_of_random_is_not_read_around_each_draw(monkeypatch) -> None:
    import hypothesis.control

    counted = _Counted()
    monkeypatch.setattr(hypothesis.control, "random", counted)
    result = verify(XTanh, shapes=["3"], max_examples=20, seed=0)
    assert result.examples == 20
    assert counted.reads == 0  # (Hypothesis alone: three per example)
    assert hypothesis.control.random is counted  # (put back after the search)


@pytest.mark.parametrize("every", range(6))
def test_the_searchs_strategies_never_draw_from_random(every: int) -> None:
    """What lets a search skip Hypothesis's reads of ``random``'s state around each
    draw: its strategies (built-in targets' settings, orders 1 and 2) leave it as it
    was, so Hypothesis, reading it, never warns (its warnings made errors here)."""
    from hypothesis.errors import HypothesisDeprecationWarning

    from gradcheck.frontend.plan import plan_run
    from gradcheck.search.verifier import draw_example

    items = plan_run([])[every::24]
    for item in items:
        with warnings.catch_warnings():
            warnings.simplefilter("error", HypothesisDeprecationWarning)
            before = random.getstate()
            options = {k: v for k, v in item.settings.items() if k != "max_examples"}
            draw_example(item.target, seed=every, **options)
            assert random.getstate() == before, item.target.name


def test_a_threads_first_search_walks_no_objects(monkeypatch) -> None:
    """Hypothesis's own generator of a thread is made by the first search there
    without ``register_random``'s full collection and walk of every object (0.1 s
    with torch loaded); it is then seeded per example and put back as above."""
    import gc

    from hypothesis.core import threadlocal

    walks: list[int] = []
    real = gc.get_referrers
    monkeypatch.setattr(gc, "get_referrers", lambda *a: walks.append(1) or real(*a))
    seen: dict[str, object] = {}

    def search() -> None:
        seen["before"] = threadlocal._hypothesis_global_random
        seen["result"] = verify(XTanh, shapes=["3"], max_examples=5, seed=0)
        seen["own"] = threadlocal._hypothesis_global_random

    thread = threading.Thread(target=search)
    thread.start()
    thread.join()
    assert seen["before"] is None and seen["result"].examples == 5
    assert walks == []
    assert type(seen["own"]) is random.Random
    assert any(h is seen["own"] for h in entropy.RANDOMS_TO_MANAGE.values())
