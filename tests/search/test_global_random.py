"""NumPy's global random state through a search (gradcheck/search/global_random.py):
seeded per example as Hypothesis seeds it, saved and put back once per search rather
than once per example."""

from __future__ import annotations

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


def test_each_example_starts_from_the_seeded_state() -> None:
    first: list[float] = []
    expected = np.random.RandomState(0).random_sample()

    def on_example(arrays, check_seed) -> None:
        first.append(float(np.random.random_sample()))
        np.random.random_sample(5)  # (what an op drawing from it would leave)

    verify(XTanh, shapes=["3"], max_examples=10, seed=0, on_example=on_example)
    assert len(first) >= 10 and set(first) == {expected}


def test_the_state_from_before_the_search_is_back_after_it() -> None:
    np.random.seed(1234)
    np.random.random_sample(3)
    before = np.random.get_state()
    verify(XTanh, shapes=["3"], max_examples=10, seed=0)
    after = np.random.get_state()
    assert before[0] == after[0] and np.array_equal(before[1], after[1])
    assert before[2:] == after[2:]
    assert not global_random.swapped()
    assert _numpy_handle() in entropy.RANDOMS_TO_MANAGE.values()


def test_nested_and_threaded_searches_put_it_back_once() -> None:
    np.random.seed(7)
    before = np.random.get_state()[1].copy()
    with global_random.numpy_seeded_per_example():
        assert global_random.swapped()
        worker = threading.Thread(target=lambda: verify(XTanh, shapes=["3"], max_examples=5))
        worker.start()
        worker.join()
        assert global_random.swapped()  # (the other search's end leaves this one's)
        np.random.seed(99)
    assert not global_random.swapped()
    assert np.array_equal(np.random.get_state()[1], before)
