"""Linear algebra: matmul, multi_matmul, einsum, dot, tensordot, trace; and
gradcheck.linalg: norm, inv, det, slogdet, solve."""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from gradcheck import linalg
from tests.support.gradients import check_gradients
from tests.support.op_inputs import floats_array, generic_array, small_shapes


@given(
    st.data(),
    hnp.mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=2, max_side=3),
)
def test_matmul_all_broadcasting_and_1d_cases(data, shapes):
    a = data.draw(floats_array(shapes.input_shapes[0]))
    b = data.draw(floats_array(shapes.input_shapes[1]))
    np.testing.assert_allclose(mg.matmul(a, b).data, np.matmul(a, b))
    check_gradients(mg.matmul, a, b)
    check_gradients(lambda x, y: x @ y, a, b)


@given(st.data(), st.lists(st.integers(1, 3), min_size=3, max_size=5), st.booleans(), st.booleans())
def test_multi_matmul(data, dims, first_1d, last_1d):
    shapes = [(dims[i], dims[i + 1]) for i in range(len(dims) - 1)]
    if first_1d:
        shapes[0] = shapes[0][1:]
    if last_1d:
        shapes[-1] = shapes[-1][:1]
    arrays = [data.draw(floats_array(s)) for s in shapes]
    np.testing.assert_allclose(mg.multi_matmul(arrays).data, np.linalg.multi_dot(arrays))
    check_gradients(lambda *ts: mg.multi_matmul(ts), *arrays)


# (subscripts, operand shapes): every form numpy.einsum accepts, including traces,
# diagonals, implicit output, ellipsis broadcasting and size-1 label broadcasting.
EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 2)]),
    ("ij,jk", [(2, 3), (3, 2)]),
    ("ba,ac", [(2, 3), (3, 2)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij", [(2, 3)]),
    ("ji", [(2, 3)]),
    ("i,i", [(3,), (3,)]),
    ("i,i", [(1,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("i,j->", [(2,), (3,)]),
    ("iij->j", [(2, 2, 3)]),
    ("iji->j", [(2, 3, 2)]),
    ("iii->i", [(2, 2, 2)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("...ij,...jk->...ik", [(1, 2, 3), (4, 3, 2)]),
    ("...ij,...jk", [(2, 2, 3), (3, 2)]),
    ("ij...,jk...->ik...", [(2, 3, 2), (3, 2, 2)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("...", [(2, 3)]),
    ("i...->...", [(2, 3)]),
    ("ijk,kl,lm->ijm", [(2, 2, 3), (3, 2), (2, 2)]),
    ("ij,jk,kl", [(2, 3), (3, 2), (2, 2)]),
    ("i,", [(3,), ()]),
    (",", [(), ()]),
]


@pytest.mark.parametrize(
    "subscripts, shapes", EINSUM_CASES, ids=[c[0] or "," for c in EINSUM_CASES]
)
@given(data=st.data())
def test_einsum_forms(subscripts, shapes, data):
    arrays = [data.draw(floats_array(s)) for s in shapes]
    np.testing.assert_allclose(mg.einsum(subscripts, *arrays).data, np.einsum(subscripts, *arrays))
    check_gradients(lambda *ts: mg.einsum(subscripts, *ts), *arrays)


@given(floats_array((3, 3)))
def test_einsum_repeated_operand_accumulates(a):
    np.testing.assert_allclose(mg.einsum("ij,jk", a, a).data, a @ a)
    # The same tensor twice: its gradient is the sum of both operands' gradients.
    check_gradients(lambda t: mg.einsum("ij,jk->ik", t, t), a)
    check_gradients(lambda t: mg.einsum("ii,ij,j", t, t, t[0]), a)


@given(floats_array((2, 3)), floats_array((3, 2)))
def test_einsum_interleaved_form(a, b):
    expected = np.einsum(a, [0, 1], b, [1, 2], [0, 2])
    np.testing.assert_allclose(mg.einsum(a, [0, 1], b, [1, 2], [0, 2]).data, expected)
    np.testing.assert_allclose(
        mg.einsum(a, [0, 1], b, [1, 2]).data, np.einsum(a, [0, 1], b, [1, 2])
    )
    np.testing.assert_allclose(mg.einsum(a, [Ellipsis, 1]).data, np.einsum(a, [Ellipsis, 1]))
    check_gradients(lambda x, y: mg.einsum(x, [0, 1], y, [1, 2], [0, 2]), a, b)


def test_einsum_rejects_what_numpy_rejects():
    with pytest.raises(ValueError):
        mg.einsum("...i->i", np.ones((2, 3)))
    with pytest.raises(ValueError):
        mg.einsum("ij,jk", np.ones((2, 3)))
    with pytest.raises(ValueError):
        mg.einsum("ijk", np.ones((2, 3)))


@given(st.data(), small_shapes(0, 3), small_shapes(0, 3))
def test_dot(data, sa, sb):
    if sa and sb:  # the contracted axes must agree
        sb = (*sb[:-2], sa[-1], *sb[-1:]) if len(sb) >= 2 else (sa[-1],)
    a, b = data.draw(floats_array(sa)), data.draw(floats_array(sb))
    np.testing.assert_allclose(mg.dot(a, b).data, np.dot(a, b))
    check_gradients(mg.dot, a, b)


@given(st.data(), small_shapes(1, 3), st.integers(0, 2))
def test_tensordot(data, shape, n):
    n = min(n, len(shape))
    a = data.draw(floats_array(shape))
    b = data.draw(floats_array((*shape[len(shape) - n :], 2)))
    np.testing.assert_allclose(mg.tensordot(a, b, n).data, np.tensordot(a, b, n))
    check_gradients(lambda x, y: mg.tensordot(x, y, n), a, b)
    c = data.draw(floats_array((shape[0], 2)))
    axes = ([0], [0])
    np.testing.assert_allclose(mg.tensordot(a, c, axes).data, np.tensordot(a, c, axes))
    check_gradients(lambda x, y: mg.tensordot(x, y, axes), a, c)


@given(st.data(), small_shapes(2, 4, min_side=1), st.integers(-2, 2))
def test_trace_and_diagonal(data, shape, offset):
    a = data.draw(floats_array(shape))
    axis1, axis2 = data.draw(st.permutations(range(len(shape))))[:2]
    np.testing.assert_allclose(
        mg.trace(a, offset, axis1, axis2).data, np.trace(a, offset, axis1, axis2)
    )
    np.testing.assert_allclose(
        mg.diagonal(a, offset, axis1, axis2).data, np.diagonal(a, offset, axis1, axis2)
    )
    check_gradients(lambda t: mg.trace(t, offset, axis1, axis2), a)
    check_gradients(lambda t: mg.diagonal(t, offset, axis1, axis2), a)


# -- gradcheck.linalg ----------------------------------------------------------------

VECTOR_ORDS = [None, 1, 2, 3, 0.5, -1, np.inf, -np.inf]
MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("order", VECTOR_ORDS, ids=str)
@given(data=st.data(), shape=small_shapes(1, 3, min_side=2), keepdims=st.booleans())
def test_vector_norms(order, data, shape, keepdims):
    x = data.draw(generic_array(shape))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    out = linalg.norm(x, order, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(out.data, np.linalg.norm(x, order, axis, keepdims))
    check_gradients(lambda t: linalg.norm(t, order, axis=axis, keepdims=keepdims), x)


@pytest.mark.parametrize("order", MATRIX_ORDS, ids=str)
@given(data=st.data(), shape=small_shapes(2, 3, min_side=2), keepdims=st.booleans())
def test_matrix_norms(order, data, shape, keepdims):
    x = data.draw(generic_array(shape))
    axis = tuple(data.draw(st.permutations(range(len(shape))))[:2])
    out = linalg.norm(x, order, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(out.data, np.linalg.norm(x, order, axis, keepdims))
    check_gradients(lambda t: linalg.norm(t, order, axis=axis, keepdims=keepdims), x, rtol=1e-4)


@given(data=st.data(), shape=small_shapes(1, 3))
def test_norm_default_axis_is_all_elements(data, shape):
    x = data.draw(generic_array(shape))
    np.testing.assert_allclose(linalg.norm(x).data, np.linalg.norm(x))
    check_gradients(linalg.norm, x)


def test_norm_policy_at_zero_is_a_zero_gradient():
    for order in (None, 1, 2, 0.5, np.inf):
        x = mg.Tensor(np.zeros(3))
        linalg.norm(x, order).backward()
        np.testing.assert_array_equal(x.grad, np.zeros(3))
    x = mg.Tensor([0.0, 2.0])
    linalg.norm(x, 0.5).backward()  # p < 1: infinite derivative at the zero element
    assert np.all(np.isfinite(x.grad)) and x.grad[0] == 0
    x = mg.Tensor([0.0, 0.0])
    linalg.norm(x, nan_to_num=False).backward()
    assert np.all(np.isnan(x.grad))


def test_norm_ties_share_the_gradient():
    x = mg.Tensor([-2.0, 2.0, 1.0])
    linalg.norm(x, np.inf).backward()
    np.testing.assert_allclose(x.grad, [-0.5, 0.5, 0.0])


def _well_conditioned(draw, shape):
    n = shape[-1]
    return draw(generic_array(shape, scale=0.3)) + np.eye(n) * (1 + n)


@given(data=st.data(), batch=small_shapes(0, 2), n=st.integers(1, 3))
def test_inv_det_slogdet(data, batch, n):
    a = _well_conditioned(data.draw, (*batch, n, n))
    if data.draw(st.booleans()):
        a = -a  # negative determinants for odd n
    np.testing.assert_allclose(linalg.inv(a).data, np.linalg.inv(a))
    np.testing.assert_allclose(linalg.det(a).data, np.linalg.det(a))
    sign, logdet = linalg.slogdet(a)
    expected_sign, expected_logdet = np.linalg.slogdet(a)
    np.testing.assert_array_equal(sign.data, expected_sign)
    assert sign.constant
    np.testing.assert_allclose(logdet.data, expected_logdet)
    check_gradients(linalg.inv, a)
    check_gradients(linalg.det, a)
    check_gradients(lambda t: linalg.slogdet(t)[1], a)


@given(data=st.data(), batch=small_shapes(0, 2), n=st.integers(1, 3), k=st.integers(0, 2))
def test_solve(data, batch, n, k):
    a = _well_conditioned(data.draw, (*batch, n, n))
    if k == 0:  # a vector right-hand side
        b = data.draw(floats_array((n,)))
    else:  # broadcast the batch of b against a's
        b = data.draw(floats_array((*batch[len(batch) // 2 :], n, k)))
    np.testing.assert_allclose(linalg.solve(a, b).data, np.linalg.solve(a, b))
    check_gradients(linalg.solve, a, b)


@st.composite
def einsum_expressions(draw):
    """A random einsum: 1-3 operands, each 0-3 labels from "abcd" (repeats allowed,
    so diagonals and traces), label sizes 1-3, explicit or implicit output."""
    sizes = {c: draw(st.integers(1, 3)) for c in "abcd"}
    specs = [
        "".join(draw(st.lists(st.sampled_from("abcd"), max_size=3)))
        for _ in range(draw(st.integers(1, 3)))
    ]
    used = sorted(set("".join(specs)))
    if draw(st.booleans()):
        out = "".join(draw(st.permutations(used))[: draw(st.integers(0, len(used)))])
        subscripts = ",".join(specs) + "->" + out
    else:
        subscripts = ",".join(specs)
    shapes = [tuple(sizes[c] for c in s) for s in specs]
    return subscripts, shapes


@given(st.data(), einsum_expressions())
def test_einsum_random_expressions(data, expression):
    subscripts, shapes = expression
    arrays = [data.draw(floats_array(s)) for s in shapes]
    np.testing.assert_allclose(
        mg.einsum(subscripts, *arrays).data, np.einsum(subscripts, *arrays), atol=1e-12
    )
    check_gradients(lambda *ts: mg.einsum(subscripts, *ts), *arrays)


@pytest.mark.parametrize(
    "order, shape",
    [(1, (3,)), (np.inf, (3,)), (3, (3,)), ("fro", (2, 3)), ("nuc", (2, 3)), (1, (2, 3))],
)
@given(data=st.data())
def test_norm_with_ord_and_default_axis(order, shape, data):
    x = data.draw(generic_array(shape))
    np.testing.assert_allclose(linalg.norm(x, order).data, np.linalg.norm(x, order))
    check_gradients(lambda t: linalg.norm(t, order), x)
