"""JAX ops that count the runs of their Python body (a trace under jax.jit is one run,
an eager call another), and ops that cannot be traced: Python control flow on a
value, a NumPy array returned (issue 40: the JAX adapter compiles its programs once
per target and shape, and runs op by op what cannot be compiled)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

#: Runs of each op's Python body, by the op's name.
RUNS: dict[str, int] = {}


def _ran(name: str) -> None:
    RUNS[name] = RUNS.get(name, 0) + 1


def xtanh(x):
    _ran("xtanh")
    return x * jnp.tanh(x)


@jax.custom_vjp
def cube(x):
    _ran("cube")
    return x**3


def _cube_fwd(x):
    return cube(x), x


def _cube_bwd(x, g):
    _ran("cube backward")
    return (3 * x**2 * g,)


cube.defvjp(_cube_fwd, _cube_bwd)


def _square(factor: float):
    """x * x whose custom rules read values in Python (``float``, which jax.jit cannot
    trace; run op by op, a custom_vjp's rules get concrete arrays), with a backward
    of ``factor * x * g`` (2: right)."""

    @jax.custom_vjp
    def square(x):
        return x * x

    def fwd(x):
        scale = 1.0 if float(jnp.max(jnp.abs(x))) < 1e9 else 0.0
        return scale * x * x, x

    def bwd(x, g):
        return ((factor if float(jnp.max(x)) < 1e9 else 2.0) * x * g,)

    square.defvjp(fwd, bwd)
    return square


branchy_square = _square(2.0)
#: a gradient off by 10%
branchy_square_wrong = _square(2.2)
