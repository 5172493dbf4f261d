"""What a framework's op is checked as, beyond first-order reverse mode (issue 20).

A :class:`Variant` says which derivative of a framework's op is checked and where it
runs: the gradient of its backward (``order=2``, torch's ``gradgradcheck``), its
forward mode (``forward``: the gradient computed from the op's ``jvp``), a device
(``"cuda"``), bfloat16 inputs, complex inputs. Each is a *target* of its own, built by
the framework's adapter (``target(obj, variant)``), so that the checker, its numerics
and its reports work on it unchanged:

* order 2: the target ``(x..., v) -> backward(x, v)``, whose gradient is the
  framework's double backward, compared with finite differences of the backward
  itself, with respect to the inputs and to the upstream gradient ``v``;
* forward mode: the op, whose gradient ``v·J`` is assembled from ``J·e_j`` (the
  ``jvp`` with each unit tangent), so that a wrong element of the ``jvp`` is a
  mismatch at that element;
* complex: :func:`real_view`: each complex input is two real inputs (its real and
  imaginary parts), each complex output two real outputs, and the gradient mapped as
  the framework documents it (below): the finite differences stay real;
* bfloat16 (which NumPy lacks): the checker's arrays are float32 holding bfloat16
  values, the op runs in bfloat16, the float64 reference runs the op in float64.

**Complex gradients.** For a real function ``L`` of ``z = x + iy``, torch's gradient
of ``z`` is ``dL/dx + i dL/dy`` (twice the conjugate Wirtinger derivative
``dL/d(conj z)``), and the upstream gradient of a complex output ``w = u + iv`` is
``dL/du + i dL/dv``. JAX's ``vjp`` is the transpose of its ``jvp`` for the bilinear
pairing ``Re(a b)``: its cotangent is ``dL/du - i dL/dv`` and its gradient of ``z``
``dL/dx - i dL/dy`` (``conjugate``). With ``L = sum_k <a_k, u_k> + <b_k, v_k>`` (the
checker's real upstream gradients ``a``, ``b`` of the parts), both are real gradients
of real parts, checked like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Variant", "forward_mode", "real_view", "split_complex"]


@dataclass(frozen=True)
class Variant:
    """Which derivative of an op is checked, and how it runs.

    Attributes
    ----------
    order : int
        1: the gradient; 2: the gradient of the backward (with respect to the inputs
        and the upstream gradient, which is the target's last input).
    forward : bool
        The gradient is computed by forward mode (the op's ``jvp``).
    device : str or None
        Where the op runs (torch: ``"cuda"``, ``"cuda:1"``); None: the CPU.
    bfloat16 : bool
        The op runs in bfloat16 (the checker's arrays are float32).
    complex_inputs : tuple of bool
        Per input, whether it is complex (given as two real inputs).
    differentiated : tuple of int
        Order 2 and above: the op's inputs whose gradients are the outputs (those
        that are not constants at first order).
    trees : tuple of Tree or None
        Per input of the op, its :class:`~gradcheck.checking.trees.Tree` when it is a
        tree of arrays (a dict of parameters), given to the checker as its leaves.
    compiled : str or None
        The op runs compiled: torch's ``torch.compile`` with this backend
        (``"eager"``, ``"aot_eager"``, ``"inductor"``), JAX's ``jax.jit``; None: eager.
    """

    order: int = 1
    forward: bool = False
    device: str | None = None
    bfloat16: bool = False
    complex_inputs: tuple[bool, ...] = field(default=())
    differentiated: tuple[int, ...] = field(default=())
    trees: tuple[Any, ...] = field(default=())
    compiled: str | None = None

    @property
    def plain(self) -> bool:
        """True for the first-order reverse-mode gradient on the CPU."""
        plain = (self.order, self.forward, self.device, self.bfloat16, self.compiled)
        return (
            plain == (1, False, None, False, None)
            and not any(self.complex_inputs)
            and not any(t is not None for t in self.trees)
        )

    def describe(self) -> str:
        """``"order 2"``, ``"forward mode"``, ``"bfloat16 on cuda"``..."""
        parts = []
        if self.order != 1:
            parts.append(f"order {self.order}")
        if self.forward:
            parts.append("forward mode")
        if self.bfloat16:
            parts.append("bfloat16")
        if any(self.complex_inputs):
            parts.append("complex")
        if any(t is not None for t in self.trees):
            parts.append("inputs that are trees of arrays")
        if self.device:
            parts.append(f"on {self.device}")
        if self.compiled:
            parts.append(f"compiled ({self.compiled})")
        return " ".join(parts) or "first order"


def split_complex(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The real and imaginary parts of a complex array, as real arrays of their own."""
    return np.array(x.real), np.array(x.imag)


def _joined(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    dtype = np.complex64 if np.result_type(re, im) in (np.float32, np.float16) else np.complex128
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), dtype=dtype)
    out.real, out.imag = re, im
    return out


def _is_complex(value: Any) -> bool:
    dtype = getattr(value, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind == "c"


#: ``run`` and ``evaluate`` as :mod:`gradcheck.checking.adapters` defines them.
Run = Callable[..., Any]
Evaluate = Callable[..., Any]


def real_view(
    run: Run, evaluate: Evaluate, complex_inputs: Sequence[bool], *, conjugate: bool
) -> tuple[Run, Evaluate]:
    """``run`` and ``evaluate`` of an op on complex arrays as the same op on real ones.

    Input ``k`` with ``complex_inputs[k]`` is given as two real arrays (real part,
    imaginary part) and gets two real gradients; every complex output becomes two real
    outputs (a single complex output a pair). ``conjugate``: the framework's
    convention is JAX's, not torch's (see the module's docstring).
    """
    view = _RealView(run, evaluate, complex_inputs, conjugate)
    return view.run, view.evaluate


class _RealView:
    """:func:`real_view`'s ``run`` and ``evaluate``, and the mappings between the op's
    complex arrays and the checker's real ones."""

    def __init__(
        self, run: Run, evaluate: Evaluate, complex_inputs: Sequence[bool], conjugate: bool
    ) -> None:
        self.inner_run, self.inner_evaluate = run, evaluate
        self.mask = tuple(bool(c) for c in complex_inputs)
        self.sign = -1.0 if conjugate else 1.0

    def joined(self, arrays: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[int]]:
        """The op's arrays, and for each the position of its (first) real array."""
        mask = self.mask
        out, starts, k = [], [], 0
        for position in range(len(arrays) - sum(mask)):
            starts.append(k)
            if position < len(mask) and mask[position]:
                out.append(_joined(arrays[k], arrays[k + 1]))
                k += 2
            else:
                out.append(arrays[k])
                k += 1
        return out, starts

    @staticmethod
    def parts(value: Any) -> tuple[Any, list[bool] | None]:
        """The op's output with every complex array as two real ones; which of the
        outputs were complex (None when none was: the output is as it was)."""
        several = isinstance(value, (tuple, list))
        values = list(value) if several else [value]
        was = [_is_complex(v) for v in values]
        if not any(was):
            return value, None
        out: list[Any] = []
        for v, c in zip(values, was):
            out.extend(split_complex(np.asarray(v)) if c else [v])
        return tuple(out), was

    def upstream(self, pieces: Sequence[Any], was: Sequence[bool]) -> list[Any]:
        """The op's upstream gradients from the checker's real ones: a complex output's
        two parts joined (with the framework's sign of the imaginary part)."""
        upstream: list[Any] = []
        k = 0
        for c in was:
            if c:
                re, im = pieces[k], pieces[k + 1]
                if re is None and im is None:
                    upstream.append(None)
                else:
                    re = np.zeros_like(im) if re is None else re
                    im = np.zeros_like(re) if im is None else im
                    upstream.append(_joined(re, self.sign * im))
                k += 2
            else:
                upstream.append(pieces[k])
                k += 1
        return upstream

    def gradients(
        self,
        grads: Sequence[Any],
        starts: Sequence[int],
        complex_at: Sequence[bool],
        constants: Sequence[bool],
    ) -> list[np.ndarray | None]:
        """The checker's real gradients from the op's: a complex input's gradient as
        the gradients of its two parts."""
        out: list[np.ndarray | None] = []
        for g, position in zip(grads, range(len(starts))):
            if complex_at[position]:
                s = starts[position]
                if g is None:
                    out.extend([None, None])
                else:
                    g = np.asarray(g)
                    re, im = np.array(g.real), np.array(self.sign * g.imag)
                    out.extend([None if constants[s] else re, None if constants[s + 1] else im])
            else:
                # a complex gradient for a real input: its real part is the
                # gradient (as torch takes it)
                out.append(np.array(np.asarray(g).real) if _is_complex(g) else g)
        return out

    def run(
        self, arrays: Sequence[np.ndarray], constants: Sequence[bool], params: Mapping[str, Any]
    ) -> Any:
        mask = self.mask
        ops_arrays, starts = self.joined(arrays)
        # A complex input needs a gradient when one of its parts does.
        complex_at = [p < len(mask) and mask[p] for p in range(len(starts))]
        op_constants = [
            constants[s] and (not c or constants[s + 1]) for s, c in zip(starts, complex_at)
        ]
        value, backprop = self.inner_run(ops_arrays, op_constants, params)
        several = isinstance(value, (tuple, list))
        split, was = self.parts(value)
        if was is None:
            was = [False] * (len(value) if several else 1)

        def backward(grad: Any) -> list[np.ndarray | None]:
            pieces = list(grad) if isinstance(grad, (tuple, list)) else [grad]
            upstream = self.upstream(pieces, was)
            grads = backprop(upstream if several else upstream[0])
            return self.gradients(grads, starts, complex_at, constants)

        inner = getattr(backprop, "differentiable", None)
        if inner is not None:
            flags: list[bool] = []
            for d, c in zip(inner, was):
                flags.extend([d, d] if c else [d])
            backward.differentiable = flags  # type: ignore[attr-defined]
        if any(was):  # (the op's own outputs, for the labels of their parts)
            backward.complex_outputs = list(was)  # type: ignore[attr-defined]
        backward.repeatable = getattr(backprop, "repeatable", False)  # type: ignore[attr-defined]
        # (a None piece stays None: an undefined gradient reaches the op as one)
        backward.undefined = getattr(backprop, "undefined", False)  # type: ignore[attr-defined]
        return split, backward

    def evaluate(self, arrays: Sequence[np.ndarray], params: Mapping[str, Any]) -> Any:
        ops_arrays, _ = self.joined(arrays)
        return self.parts(self.inner_evaluate(ops_arrays, params))[0]


#: ``jvp(arrays, params, i, tangent) -> [output tangent per output]`` (arrays, None
#: for an output with none): the op's forward mode along ``tangent`` on input ``i``.
Jvp = Callable[[Sequence[np.ndarray], Mapping[str, Any], int, np.ndarray], list[Any]]


def forward_mode(run: Run, jvp: Jvp) -> Run:
    """``run`` whose backward computes ``v·J`` in forward mode: element ``j`` of input
    ``i``'s gradient is ``<v, J·e_j>``, the ``jvp`` with the unit tangent ``e_j`` of that
    input, so that each element is the ``jvp``'s own (one forward per element)."""

    def forward_run(
        arrays: Sequence[np.ndarray], constants: Sequence[bool], params: Mapping[str, Any]
    ) -> tuple[Any, Callable[[Any], list[np.ndarray | None]]]:
        value, reverse = run(arrays, constants, params)
        several = isinstance(value, tuple)

        def backward(grad: Any) -> list[np.ndarray | None]:
            upstream = list(grad) if several else [grad]
            grads: list[np.ndarray | None] = [None] * len(arrays)
            for i, (a, constant) in enumerate(zip(arrays, constants)):
                if constant or a.dtype.kind != "f":
                    continue
                g = np.zeros(a.shape)
                for j in range(a.size):
                    tangent = np.zeros(a.shape, dtype=a.dtype)
                    tangent.flat[j] = 1
                    g.flat[j] = sum(
                        float(np.sum(np.asarray(t, np.float64) * u))
                        for t, u in zip(jvp(arrays, params, i, tangent), upstream)
                        if t is not None and u is not None
                    )
                grads[i] = g.astype(a.dtype)
            return grads

        for attribute in ("differentiable", "repeatable"):
            if hasattr(reverse, attribute):
                setattr(backward, attribute, getattr(reverse, attribute))
        return value, backward

    return forward_run
