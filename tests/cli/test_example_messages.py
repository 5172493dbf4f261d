"""What a job's process leaves before each example (gradcheck.frontend.runner): its
inputs pickled apart, in an ExampleSlot whose descriptor it passes after its
``("started", ...)`` message, and no message per example; the coordinator opens them
only where it reports them (a process that died or timed out on that example)."""

from __future__ import annotations

import os
import pickle
import select
import time
from multiprocessing import Pipe
from multiprocessing.reduction import recv_handle

import numpy as np

from gradcheck.frontend.runner import Job, _Running, _serve_one
from gradcheck.frontend.unfinished import (
    ExampleSlot,
    _read_slot,
    _worker_died,
    opened,
    sealed,
)
from gradcheck.frontend.worker import _readable

OWN = "gradcheck.builtin_targets:"


def _messages(job: Job) -> tuple[list[tuple], list[int]]:
    """The messages a job's process sends, and the slots' descriptors it passed."""
    ours, theirs = Pipe()
    _serve_one(theirs, 0, job, None)
    found, slots = [], []
    while ours.poll():
        found.append(ours.recv())
        if found[-1][0] == "started":
            slots.append(recv_handle(ours))
    return found, slots


def test_no_message_per_example_the_last_one_left_in_the_slot() -> None:
    messages, slots = _messages(Job(OWN + "multiply", {"max_examples": 3}))
    assert [m[0] for m in messages] == ["started", "result"] and len(slots) == 1
    started, done, total, when, example = ExampleSlot.read(slots[0])
    result = messages[-1][2]
    assert started >= 3 and started == result.examples + result.shrink_steps
    assert done == result.examples - 1 and when <= time.monotonic()
    arrays, shapes = pickle.loads(example[0])
    assert len(arrays) == 2 and all(isinstance(a, np.ndarray) for a in arrays)
    assert shapes == ", ".join(f"{a.dtype}{list(a.shape)}" for a in arrays)
    os.close(slots[0])


def test_the_coordinator_reads_the_slot_where_it_needs_it() -> None:
    slot = ExampleSlot.create()
    running = _Running(0, 0.0, slot=slot.fd)
    shown: list[tuple[int, int]] = []
    running.progress = lambda done, total: shown.append((done, total))
    _read_slot(running)
    assert running.example is None and running.examples_started == 0
    x = np.array([1.0, -2.0])
    slot.write(sealed([x], 5), 0, 40)
    slot.write(sealed([x * 2], 6), 1, 40)
    before = time.monotonic()
    slot.write(sealed([np.zeros((100, 100))], 7), 1, 40)
    _read_slot(running)
    assert running.examples_started == 3 and running.done == 1 and shown == [(1, 40)]
    assert running.beat >= before and opened(running.example) == (None, "float64[100, 100]", 7)
    slot.write(sealed([x], 8), 2, 40)  # a shorter one over a longer one
    _read_slot(running)
    assert np.array_equal(opened(running.example)[0][0], x) and shown[-1] == (2, 40)
    os.close(slot.fd)


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
