"""The engine's whole op library, described for ``gradcheck verify`` with no target.

``gradcheck verify`` with no argument checks every target here, so that the first
command a new user runs shows the tool working, and so that the library's own gradients
are checked on generated inputs in CI. Every public differentiable function of
``gradcheck`` (``gradcheck.ops.__all__``), ``gradcheck.linalg`` and ``gradcheck.nnet``
has at least one target; ``tests/search/test_builtin_targets.py`` fails when one has none.

The targets are one table, :data:`TABLE`, read like a table of derivatives: one
``row(name, op, call, **settings)`` per target, where

``name``
    is the target's name (``gradcheck verify gradcheck.builtin_targets:name`` replays
    it): the op's name, with a suffix for a variant (``sum_axes``, ``norm_fro``);
``op``
    is the public function it checks;
``call``
    (optional) says how the op is applied to the drawn tensors, as a function that
    receives the op first, for ops that take more than tensors (an index, einsum
    subscripts, class labels, a shape) or whose input must be moved into their domain
    (a well-conditioned matrix); without it, ``op(*tensors, **kwargs)``;
``settings``
    are :func:`gradcheck.describe`'s keywords: a domain where the op is
    differentiable, shapes that fit it, its parameters (``kwargs``), the points
    where it has a kink (``avoid``), distinct values where ties are kinks (``unique``).

Each row becomes a module-level function (so ``gradcheck list`` shows it and a replay
command can name it) with the op's signature, marked with :func:`gradcheck.describe`.

Not here, because they are not differentiable: the creation functions (``arange``,
``empty``, ``eye``, ``full``, ``identity``, ``linspace``, ``logspace``, ``geomspace``,
``ones``, ``zeros`` and the ``_like`` forms: their outputs are leaves of the graph, see
:data:`NOT_DIFFERENTIABLE`), ``gradcheck.random`` (samplers) and
``gradcheck.nnet.initializers`` (they fill new arrays).

**Cost.** Each target checks :data:`EXAMPLES` (40) examples, not ``verify``'s 100, and
the convolutions, pooling and batch normalisation fewer: with ~190 targets, 100 each
took about 125 s of CPU (Hypothesis's own work per example, drawing and steering the
search, costs more than most checks), 40 about a minute. ``gradcheck verify
--max-examples 100`` runs them all at 100; ``tests/search/test_builtin_targets.py`` does so
with ``--runslow``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

import gradcheck.engine.ops as ops
from gradcheck.engine import linalg, nnet
from gradcheck.engine.tensor_base import Tensor
from gradcheck.engine.ufuncs._ufunc_creators import MyGradUfunc
from gradcheck.search.description import describe

__all__ = ["EXAMPLES", "NOT_DIFFERENTIABLE", "TABLE", "Row", "row"]

#: Public names of ``gradcheck`` that are not differentiable targets, and why.
NOT_DIFFERENTIABLE: dict[str, str] = {
    **{
        name: "creation: returns a new leaf tensor, its arguments are not differentiated"
        for name in ops.creation.__all__
    },
}


# --- helpers the rows use: inputs moved where an op is defined -----------------------


def _well_conditioned(a: Tensor) -> Tensor:
    """``a + (n + 1) I`` for ``a`` of shape (..., n, n) with entries in [-1, 1]:
    strictly diagonally dominant, so invertible with a moderate condition number (an
    inverse, determinant or solve near a singular matrix is ill-conditioned, and so
    are its finite differences)."""
    n = a.shape[-1]
    return a + (n + 1) * np.eye(n)


def _labels(scores: Tensor) -> np.ndarray:
    """Fixed class labels for scores of shape (N, C): sample i is of class i mod C."""
    n, c = scores.shape
    return np.arange(n) % c


def _signs(x: Tensor) -> np.ndarray:
    """Fixed ranking targets in {-1, 1}, alternating."""
    return np.where(np.arange(x.size).reshape(x.shape) % 2 == 0, 1.0, -1.0)


def _ramped(x: Tensor) -> Tensor:
    """``x`` plus a fixed ramp of distinct steps (1, 2, 3... times 0.01·sqrt 2), so
    that the equal values Hypothesis likes to draw (arrays filled with one value, zeros)
    are not ties of a maximum nor a zero spread."""
    return x + 0.01 * np.sqrt(2.0) * np.arange(1, x.size + 1).reshape(x.shape)


def _distinct(op: Callable[..., Any], x: Tensor, *others: Tensor, **kwargs: Any) -> Tensor:
    """``op`` on ``x`` moved off ties by :func:`_ramped` (and on the other inputs as
    drawn).

    ``unique=True`` draws distinct values too, but by rejecting draws with two values
    closer than its margin: for more than a few values, and once Hypothesis steers
    towards the largest errors (which are near ties), most draws are rejected and a
    run takes ten times longer. A ramp costs nothing; an exact tie it leaves is a kink
    the checker skips."""
    return op(_ramped(x), *others, **kwargs)


def _checkerboard(x: Tensor) -> np.ndarray:
    """A fixed boolean mask of ``x``'s shape, True at even flat positions."""
    return np.arange(x.size).reshape(x.shape) % 2 == 0


# --- the table -------------------------------------------------------------------------


class Row(NamedTuple):
    """One built-in target: its name, the public op it checks, how the op is applied
    (``None``: to the tensors as they are) and its :func:`gradcheck.describe` settings."""

    name: str
    op: Callable[..., Any]
    call: Callable[..., Any] | None
    settings: Mapping[str, Any]


#: Examples per target unless a row says otherwise (see the module docstring).
EXAMPLES = 40


def row(
    name: str, op: Callable[..., Any], call: Callable[..., Any] | None = None, **settings: Any
) -> Row:
    """A :class:`Row`; ``settings`` are :func:`gradcheck.describe`'s keywords
    (``max_examples`` defaults to :data:`EXAMPLES`)."""
    return Row(name, op, call, {"max_examples": EXAMPLES, **settings})


# Settings used by many rows.
BROADCAST: dict[str, Any] = {"broadcast": True}
MATRIX: dict[str, Any] = {"shapes": ["n,k"]}
CUBE: dict[str, Any] = {"shapes": ["n,k,m"]}
# Entries in [-1, 1]: `_well_conditioned` makes the matrix diagonally dominant.
ENTRIES: dict[str, Any] = {"domain": (-1.0, 1.0)}
POSITIVE: dict[str, Any] = {"domain": (0.1, 10.0)}
UNIT: dict[str, Any] = {"domain": (-1.0, 1.0)}  # values keep a margin from finite bounds
# Distinct values (ties are kinks of max, sort...): for a few values; see _distinct.
TIES: dict[str, Any] = {"unique": True}
KINK_AT_0: dict[str, Any] = {"avoid": [0.0]}
SCORES: dict[str, Any] = {"shapes": ["n,c"]}
IMAGES: dict[str, Any] = {"domain": (-2.0, 2.0), "max_examples": 10}

TABLE: list[Row] = [
    # --- arithmetic (broadcasting) ---------------------------------------------------
    row("add", ops.add, **BROADCAST),
    row("subtract", ops.subtract, **BROADCAST),
    row("multiply", ops.multiply, **BROADCAST),
    # The divisor stays away from 0, where the quotient blows up.
    row("divide", ops.divide, **BROADCAST, domain=[(-10, 10), (0.5, 10)]),
    # A positive base: a**b is not real for a < 0 and b fractional.
    row("power", ops.power, **BROADCAST, domain=[(0.5, 3), (-2, 2)]),
    row("power_integer", ops.power, lambda op, a: op(a, 3)),
    row("negative", ops.negative),
    row("positive", ops.positive),
    row("reciprocal", ops.reciprocal, domain=(-10, 10), **KINK_AT_0),
    row("square", ops.square),
    row("add_sequence", ops.add_sequence, shapes=["n,k", "n,k", "n,k"]),
    row("multiply_sequence", ops.multiply_sequence, shapes=["n,k", "n,k", "n,k"]),
    # --- exponents and logarithms ----------------------------------------------------
    row("exp", ops.exp, domain=(-5, 5)),
    # float32 inputs, against a float64 reference with float32 tolerances.
    row("exp_float32", ops.exp, domain=(-5, 5), dtype="float32"),
    row("exp2", ops.exp2, domain=(-5, 5)),
    row("expm1", ops.expm1, domain=(-5, 5)),
    row("log", ops.log, **POSITIVE),
    row("log2", ops.log2, **POSITIVE),
    row("log10", ops.log10, **POSITIVE),
    row("log1p", ops.log1p, domain=(-0.9, 10)),
    row("logaddexp", ops.logaddexp, **BROADCAST),
    row("logaddexp2", ops.logaddexp2, **BROADCAST),
    # --- trigonometric (domains between the poles and inside the branch cuts) --------
    row("sin", ops.sin),
    row("cos", ops.cos),
    row("tan", ops.tan, domain=(-1.4, 1.4)),
    row("arcsin", ops.arcsin, **UNIT),
    row("arccos", ops.arccos, **UNIT),
    row("arctan", ops.arctan),
    # arctan2 jumps by 2 pi across y = 0 for x < 0: no value at 0.
    row("arctan2", ops.arctan2, **BROADCAST, **KINK_AT_0),
    row("sinc", ops.sinc),
    row("csc", ops.csc, domain=(0.1, 3.0)),
    row("sec", ops.sec, domain=(-1.4, 1.4)),
    row("cot", ops.cot, domain=(0.1, 3.0)),
    row("arccsc", ops.arccsc, domain=(1, 10)),
    row("arccsc_negative", ops.arccsc, domain=(-10, -1)),
    row("arcsec", ops.arcsec, domain=(1, 10)),
    row("arcsec_negative", ops.arcsec, domain=(-10, -1)),
    row("arccot", ops.arccot, avoid=[0.0]),  # arctan(1/x) jumps at 0
    # --- hyperbolic ------------------------------------------------------------------
    row("sinh", ops.sinh, domain=(-5, 5)),
    row("cosh", ops.cosh, domain=(-5, 5)),
    row("tanh", ops.tanh),
    row("arcsinh", ops.arcsinh),
    row("arccosh", ops.arccosh, domain=(1, 10)),
    row("arctanh", ops.arctanh, **UNIT),
    row("csch", ops.csch, domain=(-5, 5), **KINK_AT_0),
    row("sech", ops.sech, domain=(-5, 5)),
    row("coth", ops.coth, domain=(-5, 5), **KINK_AT_0),
    row("arccsch", ops.arccsch, **KINK_AT_0),
    row("arccoth", ops.arccoth, domain=(1, 10)),
    row("arccoth_negative", ops.arccoth, domain=(-10, -1)),
    # --- roots, absolute value, maximum, clip, where ---------------------------------
    row("sqrt", ops.sqrt, **POSITIVE),
    row("cbrt", ops.cbrt, **KINK_AT_0),
    row("absolute", ops.absolute, **KINK_AT_0),
    row("maximum", ops.maximum, **BROADCAST, **TIES),
    row("minimum", ops.minimum, **BROADCAST, **TIES),
    row("clip", ops.clip, lambda op, a: op(a, -1.0, 2.0), avoid=[-1.0, 2.0]),
    row("clip_tensor_bounds", ops.clip, _distinct, shapes=["n,k", "n,k", "k"]),
    row("where", ops.where, lambda op, x, y: op(_checkerboard(x), x, y), **BROADCAST),
    # --- reductions ------------------------------------------------------------------
    row("sum", ops.sum),
    row("sum_axis", ops.sum, **MATRIX, kwargs={"axis": 0, "keepdims": True}),
    row("sum_axes", ops.sum, **CUBE, kwargs={"axis": (0, 2)}),
    row("mean", ops.mean),
    row("mean_axis", ops.mean, **MATRIX, kwargs={"axis": -1}),
    row("mean_axes", ops.mean, **CUBE, kwargs={"axis": (0, 1), "keepdims": True}),
    row("var", ops.var),
    row("var_ddof", ops.var, shapes=["3,k"], kwargs={"axis": 0, "ddof": 1}),
    # std is not differentiable where every value is equal (std = 0): see _distinct.
    row("std", ops.std, _distinct, **MATRIX),
    row(
        "std_ddof",
        ops.std,
        _distinct,
        shapes=["n,3"],
        kwargs={"axis": 1, "ddof": 1, "keepdims": True},
    ),
    row("max", ops.max, **TIES),
    row("max_axis", ops.max, _distinct, **CUBE, kwargs={"axis": 1}),
    row("min", ops.min, **TIES),
    row("min_axes", ops.min, _distinct, **CUBE, kwargs={"axis": (0, 2), "keepdims": True}),
    # Zeros included: the product's gradient must not divide by an element.
    row("prod", ops.prod, domain=(-2, 2)),
    row("prod_axis", ops.prod, **MATRIX, domain=(-2, 2), kwargs={"axis": 1}),
    row("cumsum", ops.cumsum),
    row("cumsum_axis", ops.cumsum, **CUBE, kwargs={"axis": 1}),
    row("cumprod", ops.cumprod, domain=(-2, 2)),
    row("cumprod_axis", ops.cumprod, **MATRIX, domain=(-2, 2), kwargs={"axis": 0}),
    row("logsumexp", ops.logsumexp),
    row("logsumexp_axes", ops.logsumexp, **CUBE, kwargs={"axis": (0, 2), "keepdims": True}),
    # --- products --------------------------------------------------------------------
    row("matmul", ops.matmul, shapes=["n,k", "k,m"]),
    row("matmul_float32", ops.matmul, shapes=["n,k", "k,m"], dtype="float32"),
    row("matmul_batched", ops.matmul, shapes=["b,1,n,k", "c,k,m"]),
    row("vecmat", ops.matmul, shapes=["k", "k,m"]),
    row("matvec", ops.matmul, shapes=["b,n,k", "k"]),
    row("inner", ops.matmul, shapes=["k", "k"]),
    row(
        "multi_matmul",
        ops.multi_matmul,
        lambda op, a, b, c: op([a, b, c]),
        shapes=["n,k", "k,m", "m,p"],
    ),
    row("dot", ops.dot, shapes=["n,k", "k,m"]),
    row("dot_vectors", ops.dot, shapes=["k", "k"]),
    row("tensordot", ops.tensordot, shapes=["n,k,m", "k,m,p"]),
    row("tensordot_axes", ops.tensordot, shapes=["n,k,m", "p,n"], kwargs={"axes": ([0], [1])}),
    row("trace", ops.trace, shapes=["n,n"]),
    row("trace_offset", ops.trace, shapes=["b,n,m"], kwargs={"offset": 1, "axis1": 1, "axis2": 2}),
    row("einsum_matmul", ops.einsum, lambda op, a, b: op("ij,jk->ik", a, b), shapes=["n,k", "k,m"]),
    row(
        "einsum_batched",
        ops.einsum,
        lambda op, a, b: op("...ij,...jk->...ik", a, b),
        shapes=["b,n,k", "b,k,m"],
    ),
    row("einsum_outer", ops.einsum, lambda op, a, b: op("i,j->ij", a, b), shapes=["n", "m"]),
    row("einsum_diagonal", ops.einsum, lambda op, a: op("ii->i", a), shapes=["n,n"]),
    row("einsum_trace", ops.einsum, lambda op, a: op("ii", a), shapes=["n,n"]),
    row("einsum_sum", ops.einsum, lambda op, a: op("ijk->j", a), **CUBE),
    row("einsum_transpose", ops.einsum, lambda op, a: op("ij->ji", a), **MATRIX),
    row(
        "einsum_three",
        ops.einsum,
        lambda op, a, b, c: op("ij,jk,k->i", a, b, c),
        shapes=["n,k", "k,m", "m"],
    ),
    # The same tensor twice: both operands' gradients must accumulate.
    row("einsum_repeated", ops.einsum, lambda op, a: op("ij,ij->", a, a), **MATRIX),
    # --- linalg: inverses and determinants of well-conditioned matrices; norms -------
    row("inv", linalg.inv, lambda op, a: op(_well_conditioned(a)), shapes=["n,n"], **ENTRIES),
    row(
        "inv_batched",
        linalg.inv,
        lambda op, a: op(_well_conditioned(a)),
        **ENTRIES,
        shapes=["b,n,n"],
    ),
    row("det", linalg.det, lambda op, a: op(_well_conditioned(a)), shapes=["n,n"], **ENTRIES),
    row(
        "det_negative",
        linalg.det,
        lambda op, a: op(-_well_conditioned(a)),
        **ENTRIES,
        shapes=["b,3,3"],
    ),
    # slogdet's sign is piecewise constant: the log of |det| carries the gradient.
    row(
        "slogdet",
        linalg.slogdet,
        lambda op, a: op(_well_conditioned(a))[1],
        shapes=["n,n"],
        **ENTRIES,
    ),
    row(
        "slogdet_negative",
        linalg.slogdet,
        lambda op, a: op(-_well_conditioned(a))[1],
        **ENTRIES,
        shapes=["b,3,3"],
    ),
    row(
        "solve",
        linalg.solve,
        lambda op, a, b: op(_well_conditioned(a), b),
        shapes=["n,n", "n,m"],
        domain=(-1, 1),
    ),
    row(
        "solve_vector",
        linalg.solve,
        lambda op, a, b: op(_well_conditioned(a), b),
        shapes=["n,n", "n"],
        domain=(-1, 1),
    ),
    # Not differentiable where a vector is 0 (Hypothesis draws zeros, and steers towards
    # them: the error is largest there): on ramped inputs.
    row("norm", linalg.norm, _distinct),
    row("norm_axis", linalg.norm, _distinct, **CUBE, kwargs={"axis": -1, "keepdims": True}),
    row("norm_ord1", linalg.norm, shapes=["n"], kwargs={"ord": 1}, **KINK_AT_0),
    row("norm_ord3", linalg.norm, _distinct, **MATRIX, kwargs={"ord": 3, "axis": 0}),
    row("norm_ord_inf", linalg.norm, _distinct, shapes=["n"], kwargs={"ord": float("inf")}),
    row("norm_fro", linalg.norm, _distinct, **MATRIX, kwargs={"ord": "fro"}),
    row("norm_matrix_ord1", linalg.norm, _distinct, **MATRIX, kwargs={"ord": 1}),
    # Matrix 2- and nuclear norms assume distinct singular values (and "nuc" full rank,
    # which a ramp alone, of rank 2, is not).
    row("norm_matrix_ord2", linalg.norm, _distinct, **MATRIX, kwargs={"ord": 2}),
    row("norm_nuc", linalg.norm, **MATRIX, kwargs={"ord": "nuc"}, **TIES),
    # --- shape -----------------------------------------------------------------------
    row("reshape", ops.reshape, lambda op, a: op(a, (3, 2)), shapes=["2,3"]),
    row("reshape_flat", ops.reshape, lambda op, a: op(a, -1), **CUBE),
    row("ravel", ops.ravel, **CUBE),
    row("flatten", ops.flatten, **CUBE),
    row("squeeze", ops.squeeze, shapes=["1,n,1"]),
    row("squeeze_axis", ops.squeeze, shapes=["1,n,1"], kwargs={"axis": 2}),
    row("expand_dims", ops.expand_dims, lambda op, a: op(a, (0, 2)), **MATRIX),
    row("broadcast_to", ops.broadcast_to, lambda op, a: op(a, (2, a.shape[0], 3)), shapes=["n,1"]),
    row("atleast_1d", ops.atleast_1d, shapes=[""]),
    row("atleast_2d", ops.atleast_2d, shapes=["n"]),
    row("atleast_3d", ops.atleast_3d, **MATRIX),
    row("transpose", ops.transpose, **CUBE),
    row("transpose_axes", ops.transpose, lambda op, a: op(a, (2, 0, 1)), **CUBE),
    row("moveaxis", ops.moveaxis, lambda op, a: op(a, 0, -1), **CUBE),
    row("swapaxes", ops.swapaxes, lambda op, a: op(a, 0, 2), **CUBE),
    # --- joining and tiling ----------------------------------------------------------
    row("concatenate", ops.concatenate, lambda op, a, b: op([a, b], axis=1), shapes=["n,k", "n,m"]),
    row(
        "concatenate_flat",
        ops.concatenate,
        lambda op, a, b: op([a, b], axis=None),
        shapes=["n,k", "m"],
    ),
    row(
        "stack", ops.stack, lambda op, a, b, c: op([a, b, c], axis=1), shapes=["n,k", "n,k", "n,k"]
    ),
    row("flip", ops.flip, **CUBE),
    row("flip_axis", ops.flip, **CUBE, kwargs={"axis": 1}),
    row("pad", ops.pad, lambda op, a: op(a, ((1, 2), (0, 1))), **MATRIX),
    # edge and reflect copy an element to several places: gradients accumulate.
    row("pad_edge", ops.pad, lambda op, a: op(a, 2, mode="edge"), **MATRIX),
    row(
        "pad_reflect",
        ops.pad,
        lambda op, a: op(a, ((1, 1), (0, 2)), mode="reflect"),
        shapes=["3,4"],
    ),
    row("repeat", ops.repeat, lambda op, a: op(a, 2, axis=1), **MATRIX),
    row("repeat_flat", ops.repeat, lambda op, a: op(a, 3), **MATRIX),
    row("roll", ops.roll, lambda op, a: op(a, 1, axis=0), **MATRIX),
    row("roll_axes", ops.roll, lambda op, a: op(a, (1, -2), axis=(0, 2)), **CUBE),
    row("roll_flat", ops.roll, lambda op, a: op(a, 2), **MATRIX),
    row("tile", ops.tile, lambda op, a: op(a, (2, 1, 3)), **MATRIX),
    # --- indexing ----------------------------------------------------------------------
    row(
        "get_item",
        ops.get_item,
        lambda op, a: op(a, (slice(1, None), slice(None, None, -1))),
        **MATRIX,
    ),
    # Repeated integer indices: their gradients accumulate.
    row("get_item_integers", ops.get_item, lambda op, a: op(a, [0, -1, 0, 0]), **MATRIX),
    row("get_item_mask", ops.get_item, lambda op, a: op(a, _checkerboard(a)), **CUBE),
    row(
        "get_item_mixed",
        ops.get_item,
        lambda op, a: op(a, ([0, -1, 0], Ellipsis, None, slice(1, None))),
        **CUBE,
    ),
    row("set_item", ops.set_item, lambda op, a, b: op(a, (slice(None), 0), b), shapes=["n,k", "n"]),
    row(
        "set_item_broadcast",
        ops.set_item,
        lambda op, a, b: op(a, (Ellipsis, slice(1, None)), b),
        shapes=["n,k", ""],
    ),
    # A repeated position is written twice; only the last write reaches the output.
    row(
        "set_item_integers",
        ops.set_item,
        lambda op, a, b: op(a, [0, -1, 0], b),
        shapes=["n,k", "3,k"],
    ),
    row(
        "set_item_mask",
        ops.set_item,
        lambda op, a, b: op(a, a.data > 0, b),
        shapes=["n,k", ""],
        **KINK_AT_0,
    ),
    row("take", ops.take, lambda op, a: op(a, [0, 2, 0]), shapes=["n,3"]),
    row("take_axis", ops.take, lambda op, a: op(a, [[0, -1], [0, 0]], axis=1), **CUBE),
    row("diagonal", ops.diagonal, **MATRIX),
    row("diagonal_axes", ops.diagonal, **CUBE, kwargs={"offset": -1, "axis1": 2, "axis2": 0}),
    # --- sorting -----------------------------------------------------------------------
    row("sort", ops.sort, **MATRIX, **TIES),
    row("sort_flat", ops.sort, _distinct, **CUBE, kwargs={"axis": None}),
    row("sort_axis", ops.sort, _distinct, **CUBE, kwargs={"axis": 0}),
    # --- nnet: activations (kinks avoided) ---------------------------------------------
    row("relu", nnet.relu, **KINK_AT_0),
    row("leaky_relu", nnet.leaky_relu, lambda op, x: op(x, 0.1), **KINK_AT_0),
    row("elu", nnet.elu, lambda op, x: op(x, 0.5), **KINK_AT_0),
    row("selu", nnet.selu, **KINK_AT_0),
    row("sigmoid", nnet.sigmoid),
    row("soft_sign", nnet.soft_sign),
    row("hard_tanh", nnet.hard_tanh, avoid=[-1.0, 1.0]),
    row(
        "hard_tanh_bounds",
        nnet.hard_tanh,
        kwargs={"lower_bound": -2.0, "upper_bound": 0.5},
        avoid=[-2.0, 0.5],
    ),
    row("softmax", nnet.softmax, **MATRIX),
    row("softmax_float32", nnet.softmax, **MATRIX, dtype="float32"),
    row("softmax_axis", nnet.softmax, **CUBE, kwargs={"axis": (0, 2)}),
    row("logsoftmax", nnet.logsoftmax, **MATRIX),
    row("logsoftmax_axis", nnet.logsoftmax, **CUBE, kwargs={"axis": 1}),
    row("glu", nnet.glu, shapes=["n,4"]),
    row("glu_axis", nnet.glu, shapes=["n,6,k"], kwargs={"axis": 1}),
    # --- nnet: losses (labels fixed from the scores' shape) ----------------------------
    row(
        "softmax_crossentropy", nnet.softmax_crossentropy, lambda op, x: op(x, _labels(x)), **SCORES
    ),
    row(
        "negative_log_likelihood",
        nnet.negative_log_likelihood,
        lambda op, x: op(x, _labels(x)),
        **SCORES,
    ),
    row(
        "negative_log_likelihood_weights",
        nnet.negative_log_likelihood,
        lambda op, x: op(x, _labels(x), weights=np.linspace(0.5, 2.0, x.shape[1])),
        **SCORES,
    ),
    # Kinks where a margin is 0 are skipped.
    row(
        "multiclass_hinge",
        nnet.multiclass_hinge,
        lambda op, x: op(x, _labels(x), hinge=0.5),
        **SCORES,
    ),
    row(
        "margin_ranking_loss",
        nnet.margin_ranking_loss,
        lambda op, a, b: op(a, b, _signs(a), 0.5),
        shapes=["n", "n"],
    ),
    row(
        "focal_loss",
        nnet.focal_loss,
        lambda op, p: op(p, _labels(p), alpha=0.25, gamma=2.0),
        **SCORES,
        domain=(0.0, 1.0),
    ),
    row(
        "softmax_focal_loss",
        nnet.softmax_focal_loss,
        lambda op, x: op(x, _labels(x), alpha=0.5, gamma=1.5),
        **SCORES,
    ),
    # --- nnet: layers --------------------------------------------------------------------
    row("conv_nd", nnet.conv_nd, shapes=["n,c,5,4", "f,c,2,3"], kwargs={"stride": 1}, **IMAGES),
    row(
        "conv_nd_strided",
        nnet.conv_nd,
        **IMAGES,
        shapes=["n,c,5,6", "f,c,2,3"],
        kwargs={"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)},
    ),
    row(
        "conv_nd_1d",
        nnet.conv_nd,
        shapes=["n,c,6", "f,c,3"],
        kwargs={"stride": 2, "padding": 1},
        max_examples=20,
    ),
    # Windows hold up to 64 values: a ramp, not `unique`, keeps them apart.
    row(
        "max_pool",
        nnet.max_pool,
        lambda op, x: op(_ramped(x), (2, 2), 2),
        shapes=["n,c,4,4"],
        max_examples=20,
    ),
    # Overlapping windows: an element that is the maximum of two windows gets both.
    row(
        "max_pool_overlapping",
        nnet.max_pool,
        lambda op, x: op(_ramped(x), (2, 3), 1),
        shapes=["n,3,4"],
        max_examples=20,
    ),
    # eps > 0: differentiable even where a channel is constant (variance 0).
    row(
        "batchnorm",
        nnet.batchnorm,
        lambda op, x, g, b: op(x, gamma=g, beta=b, eps=1e-05),
        shapes=["n,c,k", "c", "c"],
        max_examples=20,
    ),
    row(
        "batchnorm_plain",
        nnet.batchnorm,
        lambda op, x: op(x, eps=0.001),
        shapes=["n,c,2,2"],
        max_examples=20,
    ),
]


# --- from rows to targets ---------------------------------------------------------------


def _op_parameters(op: Callable[..., Any]) -> list[inspect.Parameter]:
    """The op's parameters that a target takes: all but ``constant``, and for a ufunc
    also but NumPy's call conventions (``out``, ``where``, ``dtype``)."""
    skip = {"constant"}
    if isinstance(op, MyGradUfunc):
        skip |= {"out", "where", "dtype"}
    return [p for p in inspect.signature(op).parameters.values() if p.name not in skip]


def _target(name: str, op: Callable[..., Any], call: Any, settings: Mapping[str, Any]) -> Any:
    """A function of tensors applying ``op`` as the row says, named ``name``, with
    the signature ``gradcheck`` reads its inputs and parameters from, described."""
    if call is None:

        def apply(*tensors: Any, **kwargs: Any) -> Any:
            return op(*tensors, **kwargs)

        params = _op_parameters(op)
    else:

        def apply(*tensors: Any, **kwargs: Any) -> Any:
            return call(op, *tensors, **kwargs)

        params = list(inspect.signature(call).parameters.values())[1:]
        if any(p.kind is p.VAR_POSITIONAL or p.kind is p.VAR_KEYWORD for p in params):
            # A generic call (`_distinct`) takes the op's own inputs and parameters.
            params = _op_parameters(op)
    apply.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    apply.__name__ = apply.__qualname__ = name
    ramped = " to a ramped input (no ties)" if call is _distinct else ""
    apply.__doc__ = f"Applies {op.__module__}.{op.__name__}{ramped}."
    apply.op = op  # type: ignore[attr-defined]
    return describe(**settings)(apply)


# Each row is a module attribute: `gradcheck.builtin_targets:sum_axes` names it, and
# `gradcheck.frontend.loading.module_targets` finds it like a function decorated by hand.
globals().update({r.name: _target(*r) for r in TABLE})
