"""A framework is one row of FRAMEWORKS and one adapter module: a made-up framework
registered that way is recognised, run and checked like torch or MyGrad."""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from gradcheck.checking import adapters
from gradcheck.checking.adapters import EXTRAS, FRAMEWORKS, Framework, framework, framework_of
from gradcheck.checking.adapters.bridge import bridge_target
from gradcheck.checking.checker import check
from gradcheck.checking.signature import op_signature
from gradcheck.checking.target import user_frame


def _fake_framework() -> tuple[types.ModuleType, types.ModuleType]:
    """``fakefw``: ops are subclasses of ``fakefw.Op`` with ``forward(x)`` and
    ``backward(x, grad)`` on arrays; and its adapter module."""
    package = types.ModuleType("fakefw")

    class Op:
        pass

    Op.__module__ = "fakefw"
    package.Op = Op

    adapter = types.ModuleType("fakefw_adapter")

    def forward_of(cls: type) -> tuple[Any, int]:
        return cls.forward, 1

    def target(obj: Any) -> Any:
        def run(
            arrays: Sequence[np.ndarray], constants: Sequence[bool], params: Mapping[str, Any]
        ) -> Any:
            op = obj()
            out = np.asarray(op.forward(*arrays, **params), dtype=float)
            return out, lambda grad: [np.array(op.backward(*arrays, grad))]

        def evaluate(arrays: Sequence[np.ndarray], params: Mapping[str, Any]) -> np.ndarray:
            return np.asarray(obj().forward(*arrays, **params))

        return bridge_target(obj, run, evaluate)

    adapter.forward_of, adapter.target = forward_of, target
    return package, adapter


@pytest.fixture
def fake(monkeypatch):
    package, adapter = _fake_framework()
    monkeypatch.setitem(sys.modules, "fakefw", package)
    monkeypatch.setitem(sys.modules, "fakefw_adapter", adapter)
    row = Framework(
        name="fake",
        label="FakeFW",
        extra="fake",
        packages=("fakefw",),
        op_bases=("fakefw:Op",),
        adapter="fakefw_adapter",
    )
    monkeypatch.setattr(adapters, "FRAMEWORKS", (*FRAMEWORKS, row))
    return package


def test_one_row_and_one_module_make_a_framework(fake):
    class Square(fake.Op):
        def forward(self, x):
            return x * x

        def backward(self, x, grad):
            return 2 * x * grad

    class WrongSquare(Square):
        def backward(self, x, grad):
            return x * grad

    assert framework_of(Square) == "fake"
    assert op_signature(Square).input_names == ("x",)
    x = np.array([0.5, -1.5, 2.0])
    assert check(Square, x).verdict == "passed"
    assert check(WrongSquare, x).failure.kind == "mismatch"
    assert framework("fake")(lambda x: x).__gradcheck_framework__ == "fake"


def test_every_row_names_a_bridge_and_an_extra():
    for fw in FRAMEWORKS:
        bridge = fw.bridge()
        assert callable(bridge.target) and callable(bridge.forward_of)
        for package in fw.packages:
            assert EXTRAS[package] == (fw.extra, fw.label)


def test_frames_of_every_imported_framework_are_not_the_users(fake, tmp_path):
    fake.__file__ = str(tmp_path / "fakefw" / "__init__.py")
    (tmp_path / "fakefw").mkdir()
    inner = tmp_path / "fakefw" / "core.py"
    inner.write_text("def boom():\n    raise ValueError('inside the framework')\n")
    code = compile(inner.read_text(), str(inner), "exec")
    namespace: dict[str, Any] = {}
    exec(code, namespace)

    def users_op():
        namespace["boom"]()

    try:
        users_op()
    except ValueError as exc:
        frame = user_frame(exc.__traceback__)
    assert frame is not None and "users_op" in frame and "core.py" not in frame
