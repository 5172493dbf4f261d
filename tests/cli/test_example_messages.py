"""The message a job's process sends before each example (gradcheck.frontend.runner):
its inputs travel pickled apart, and the coordinator opens them only where it reports
them (a process that died or timed out on that example)."""

from __future__ import annotations

import pickle
import select
from multiprocessing import Pipe

import numpy as np

from gradcheck.frontend.runner import Job, _Running, _serve_one
from gradcheck.frontend.unfinished import _worker_died, opened, sealed
from gradcheck.frontend.worker import _readable

OWN = "gradcheck.builtin_targets:"


def _messages(job: Job) -> list[tuple]:
    ours, theirs = Pipe()
    _serve_one(theirs, 0, job, None)
    found = []
    while ours.poll():
        found.append(ours.recv())
    return found


def test_each_examples_inputs_come_pickled_apart() -> None:
    messages = [
        m for m in _messages(Job(OWN + "multiply", {"max_examples": 3})) if m[0] == "example"
    ]
    assert len(messages) >= 3
    for _, index, inputs, check_seed, *_counts in messages:
        assert index == 0 and isinstance(inputs, bytes) and isinstance(check_seed, int)
        arrays, shapes = pickle.loads(inputs)
        assert len(arrays) == 2 and all(isinstance(a, np.ndarray) for a in arrays)
        assert shapes == ", ".join(f"{a.dtype}{list(a.shape)}" for a in arrays)


def test_a_sealed_example_opens_as_the_report_shows_it() -> None:
    x, y = np.arange(6.0).reshape(2, 3)[:, ::2], np.float32(2.5)
    arrays, shapes, seed = opened(sealed([x, y], 17))
    assert shapes == "float64[2, 2], float32[]" and seed == 17
    assert np.array_equal(arrays[0], x) and arrays[1] == y and arrays[1].dtype == np.float32
    big = opened(sealed([np.zeros((100, 100))], 3))
    assert big == (None, "float64[100, 100]", 3)
    assert opened(None) is None


def test_a_died_workers_result_names_the_sealed_example() -> None:
    x = np.array([1.0, -2.0])
    running = _Running(0, 0.0, example=sealed([x], 5), examples_started=4, done=3)
    result = _worker_died(Job(OWN + "exp"), running, -9)
    assert "example 4 drawn" in result.failure.failure.message
    assert np.array_equal(result.failure.inputs[0], x) and result.failure.seed == 5


def test_readable_says_what_poll_says() -> None:
    ours, theirs = Pipe()
    assert not _readable(ours) and not ours.poll()
    theirs.send(1)
    assert _readable(ours) and ours.poll()
    ours.recv()
    assert not _readable(ours)
    theirs.close()
    assert _readable(ours) and ours.poll()  # (the end: recv raises EOFError)
    assert hasattr(select, "poll")
