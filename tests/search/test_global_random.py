"""The global random states through a search (gradcheck/search/global_random.py):
seeded per example as Hypothesis seeds them, saved and put back once per search rather
than once per example."""

from __future__ import annotations

import random
import threading

import numpy as np
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
