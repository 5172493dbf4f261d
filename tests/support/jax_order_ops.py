"""JAX ops right at low orders and wrong above (issue 38 item 4), each with its
correct twin: a derivative rule that treats a value as a constant
(``jax.lax.stop_gradient``) gives the right derivative but a wrong derivative of it,
the bug ``jax.test_util.check_grads(order=N)`` exists for."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _cos_rule(stopped: bool):
    @jax.custom_jvp
    def cos(x):
        return jnp.cos(x)

    def rule(primals, tangents):
        (x,), (t,) = primals, tangents
        sin = jnp.sin(x)
        return jnp.cos(x), -(jax.lax.stop_gradient(sin) if stopped else sin) * t

    cos.defjvp(rule)
    return cos


def _sin_with(cos):
    @jax.custom_jvp
    def sin(x):
        return jnp.sin(x)

    sin.defjvp(lambda primals, tangents: (jnp.sin(primals[0]), cos(primals[0]) * tangents[0]))
    return sin


#: sin whose derivative is a cos whose own rule stops the gradient of sin: the first
#: and second derivatives are right, the third is 0 instead of -cos.
sin_third_wrong = _sin_with(_cos_rule(stopped=True))
sin_third_right = _sin_with(_cos_rule(stopped=False))


def _square_rule(stopped: bool):
    @jax.custom_jvp
    def square(z):
        return z * z

    def rule(primals, tangents):
        (z,), (t,) = primals, tangents
        return z * z, 2 * (jax.lax.stop_gradient(z) if stopped else z) * t

    square.defjvp(rule)
    return square


#: z**2 on complex z: the jvp is right, its own derivative (order 2) zero.
complex_square_second_wrong = _square_rule(stopped=True)
complex_square = _square_rule(stopped=False)


@jax.custom_jvp
def complex_square_conjugated_jvp(z):
    return z * z


# torch's formula in a jvp: conj(2z)·t, where the derivative of z**2 is 2z·t
complex_square_conjugated_jvp.defjvp(
    lambda primals, tangents: (primals[0] ** 2, 2 * jnp.conj(primals[0]) * tangents[0])
)
