"""Loss functions: focal_loss, softmax_focal_loss, margin_ranking_loss,
multiclass_hinge, negative_log_likelihood, softmax_crossentropy.

Scores are ``(N, C)`` (N samples, C classes) and targets ``(N,)`` integer labels, as in
MyGrad. Losses with a fused, numerically delicate form (softmax cross-entropy, the
multiclass hinge) are ops of their own; the rest are compositions of engine ops, so
their gradients come from the ops' rules.
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np

from gradcheck.engine.nnet.activations import logsoftmax
from gradcheck.engine.operation import Operation
from gradcheck.engine.ops.exp_log import exp, log
from gradcheck.engine.ops.indexing import get_item
from gradcheck.engine.ops.reductions import mean
from gradcheck.engine.tensor_base import Tensor, execute_op

__all__ = [
    "focal_loss",
    "margin_ranking_loss",
    "multiclass_hinge",
    "negative_log_likelihood",
    "softmax_crossentropy",
    "softmax_focal_loss",
]


def _labels(y_true: Any, n: int) -> np.ndarray:
    """The class labels as an integer array of shape ``(n,)``: labels of another
    dtype raise TypeError, of another shape ValueError (as in MyGrad)."""
    y = np.asarray(y_true._data if isinstance(y_true, Tensor) else y_true)
    if y.dtype.kind not in "iu":
        raise TypeError(f"targets must be integer class labels; got an array of dtype {y.dtype}")
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"targets must be {n} class labels, one per sample; got shape {y.shape}")
    return y


def _rows(x: Any) -> int:
    shape = np.shape(x._data if isinstance(x, Tensor) else x)
    if len(shape) != 2:
        raise ValueError(f"scores must have shape (N, C); got shape {shape}")
    return shape[0]


class SoftmaxCrossEntropy(Operation):
    def __call__(self, x: Tensor, *, y_true: np.ndarray) -> np.ndarray:
        self.variables = (x,)
        self.y = y_true
        # (array methods, not np.max/np.sum/np.mean: those add a Python-level
        # dispatch per call, a visible share of a small training step)
        z = x._data - x._data.max(axis=1, keepdims=True)
        log_probs = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        self.probs = np.exp(log_probs)
        return -log_probs[np.arange(len(y_true)), y_true].mean()

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        d = self.probs.copy()
        d[np.arange(len(self.y)), self.y] -= 1
        # grad * d / N, in place (d is this call's own array)
        np.multiply(grad, d, out=d)
        np.divide(d, len(self.y), out=d)
        return d


def softmax_crossentropy(x: Any, y_true: Any, *, constant: bool | None = None) -> Tensor:
    """Mean over the samples of ``-log(softmax(x)[i, y_true[i]])``, computed stably
    (log-softmax by shifting each row by its maximum). The gradient with respect to
    ``x`` is ``(softmax(x) - onehot(y_true)) / N``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.losses import softmax_crossentropy
    >>> softmax_crossentropy(mg.Tensor([[0.0, 0.0]]), [1])
    Tensor(0.69314718)
    """
    y = _labels(y_true, _rows(x))
    return execute_op(SoftmaxCrossEntropy, x, op_kwargs={"y_true": y}, constant=constant)


def negative_log_likelihood(
    x: Any, y_true: Any, *, weights: Any = None, constant: bool | None = None
) -> Tensor:
    """``-mean(weights[y_true[i]] * x[i, y_true[i]])`` for log-probabilities ``x``
    (e.g. from :func:`~gradcheck.nnet.activations.logsoftmax`); ``weights`` are
    per-class (default 1), and the mean is over the N samples, as in MyGrad.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.losses import negative_log_likelihood
    >>> negative_log_likelihood(mg.Tensor([[-1.0, -2.0], [-3.0, -0.5]]), [0, 1])
    Tensor(0.75)
    """
    y = _labels(y_true, _rows(x))
    picked = get_item(x, (np.arange(len(y)), y))
    if weights is not None:
        w = np.asarray(weights._data if isinstance(weights, Tensor) else weights)
        n_classes = np.shape(x._data if isinstance(x, Tensor) else x)[1]
        if w.shape != (n_classes,):
            raise ValueError(f"weights must have shape ({n_classes},), got {w.shape}")
        picked = picked * w[y]
    return -mean(picked, constant=constant)


class MulticlassHinge(Operation):
    def __call__(self, x: Tensor, *, y_true: np.ndarray, hinge: float = 1.0) -> np.ndarray:
        self.variables = (x,)
        rows = np.arange(len(y_true))
        self.y = y_true
        margins = x._data - x._data[rows, y_true][:, None] + hinge
        margins[rows, y_true] = 0
        self.active = margins > 0  # NOTE: a margin of exactly 0 is inactive (kink policy)
        return np.sum(np.maximum(margins, 0)) / len(y_true)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        d = self.active.astype(self.variables[0].dtype)
        d[np.arange(len(self.y)), self.y] = -d.sum(axis=1)
        return grad * d / len(self.y)


def multiclass_hinge(
    x: Any, y_true: Any, hinge: float = 1.0, *, constant: bool | None = None
) -> Tensor:
    """The multiclass SVM loss: mean over samples of
    ``sum_{j != y} max(0, x[j] - x[y] + hinge)``. Kink policy: a margin of exactly 0
    contributes no gradient.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.losses import multiclass_hinge
    >>> multiclass_hinge(mg.Tensor([[2.0, 1.5, 0.0]]), [0])
    Tensor(0.5)
    """
    y = _labels(y_true, _rows(x))
    return execute_op(
        MulticlassHinge, x, op_kwargs={"y_true": y, "hinge": hinge}, constant=constant
    )


class MarginRanking(Operation):
    def __call__(self, x1: Tensor, x2: Tensor, *, y: np.ndarray, margin: float) -> np.ndarray:
        self.variables = (x1, x2)
        self.y = y
        m = margin - y * (x1._data - x2._data)
        self.active = m > 0  # NOTE: a margin of exactly 0 is inactive (kink policy)
        self.size = m.size
        return np.asarray(np.mean(np.where(self.active, m, 0)))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[index]._data
        sign = -self.y if index == 0 else self.y
        d = np.where(self.active, sign, 0).astype(x.dtype, copy=False)
        return grad * d / self.size


def margin_ranking_loss(
    x1: Any, x2: Any, y: Any, margin: float, *, constant: bool | None = None
) -> Tensor:
    """``mean(max(0, margin - y * (x1 - x2)))``, for ``y`` in {-1, 1} saying which of
    ``x1``, ``x2`` should rank higher. Kink policy: at a margin of exactly 0 the
    gradient is 0 (that of :func:`~gradcheck.nnet.activations.relu`).

    ``x1`` and ``x2`` are floats of one shape, ``(N,)`` or ``(N, D)``; ``y`` is a
    scalar or shape ``(N,)`` (one label per row), ``margin`` a non-negative number
    (as in MyGrad). Otherwise ValueError (TypeError for non-float ``x1``, ``x2``).

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.losses import margin_ranking_loss
    >>> margin_ranking_loss(mg.Tensor([1.0, 2.0]), mg.Tensor([2.0, 1.0]), [1, -1], 0.5)
    Tensor(1.5)
    """
    a = np.asarray(x1._data if isinstance(x1, Tensor) else x1)
    b = np.asarray(x2._data if isinstance(x2, Tensor) else x2)
    if not 0 < a.ndim < 3:
        raise ValueError(f"x1 must have shape (N,) or (N, D); got shape {a.shape}")
    if a.shape != b.shape:
        raise ValueError(f"x1 and x2 must have the same shape; got {a.shape} and {b.shape}")
    if a.dtype.kind != "f" or b.dtype.kind != "f":
        raise TypeError(f"x1 and x2 must hold floats; got {a.dtype} and {b.dtype}")
    if not isinstance(margin, Real) or margin < 0:
        raise ValueError(f"margin must be a non-negative number; got {margin!r}")
    labels = np.asarray(y._data if isinstance(y, Tensor) else y)
    if labels.size == 1:
        labels = labels.reshape(())
    if labels.ndim and not (labels.ndim == 1 and len(labels) == len(a)):
        raise ValueError(f"y must be a scalar or have shape ({len(a)},); got {labels.shape}")
    if labels.ndim and a.ndim == 2:
        labels = labels[:, None]  # one label per row
    return execute_op(
        MarginRanking,
        x1,
        x2,
        op_kwargs={"y": labels, "margin": float(margin)},
        constant=constant,
    )


class FocalLoss(Operation):
    """``-alpha * clip(1 - p, 0, 1)**gamma * log_p`` elementwise, with ``p`` and its
    log as two inputs (so that a caller can supply an accurate log-probability)."""

    def __call__(self, p: Tensor, log_p: Tensor, *, alpha: float, gamma: float) -> np.ndarray:
        self.variables = (p, log_p)
        self.alpha, self.gamma = alpha, gamma
        self.c = np.clip(1 - p._data, 0, 1)
        self.cg = self.c**gamma  # (0**0 is 1: gamma = 0 is the cross-entropy)
        return -alpha * self.cg * log_p._data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        if index == 1:
            return grad * (-self.alpha * self.cg)
        # d/dp: -alpha * gamma * c**(gamma - 1) * dc/dp * log_p, with dc/dp = -1 where
        # the clip is inactive (0 < c < 1) and 0 where it holds c at 0 or 1. At c = 0
        # (p = 1) the limit is taken: c**(gamma - 1) * log(p) ~ -c**gamma -> 0 for
        # gamma > 0, and gamma = 0 makes the term 0 anyway.
        c = self.c
        inside = (c > 0) & (c < 1)
        c_pow = np.divide(self.cg, c, out=np.zeros_like(c), where=inside)  # c**(gamma-1)
        log_p = self.variables[1]._data
        return grad * (self.alpha * self.gamma * c_pow * log_p)


def _focal(p: Any, log_p: Any, alpha: float, gamma: Any, constant: bool | None) -> Tensor:
    if not isinstance(gamma, Real) or gamma < 0:
        raise ValueError(f"gamma must be a non-negative number; got {gamma!r}")
    return execute_op(
        FocalLoss,
        p,
        log_p,
        op_kwargs={"alpha": float(alpha), "gamma": float(gamma)},
        constant=constant,
    )


def focal_loss(
    class_probs: Any,
    targets: Any,
    *,
    alpha: float = 1,
    gamma: float = 0,
    constant: bool | None = None,
) -> Tensor:
    """Focal loss (Lin et al., 2017) per sample: ``-alpha * (1 - p)**gamma * log(p)``
    with ``p = class_probs[i, targets[i]]``; shape ``(N,)``. ``gamma = 0`` gives the
    cross-entropy of each sample; ``gamma`` must be a non-negative number
    (ValueError otherwise).

    The probabilities are expected in ``(0, 1]``; as in MyGrad, ``1 - p`` is clipped
    to ``[0, 1]``, so that a ``p`` above 1 gives a loss of 0 for ``gamma > 0`` (and a
    gradient of 0 there). At ``p = 1`` the gradient is the limit, 0 for ``gamma > 0``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.losses import focal_loss
    >>> focal_loss(mg.Tensor([[0.5, 0.5]]), [0], gamma=1)
    Tensor([0.34657359])
    """
    y = _labels(targets, _rows(class_probs))
    p = get_item(class_probs, (np.arange(len(y)), y))
    return _focal(p, log(p), alpha, gamma, constant)


def softmax_focal_loss(
    scores: Any,
    targets: Any,
    *,
    alpha: float = 1,
    gamma: float = 0,
    constant: bool | None = None,
) -> Tensor:
    """:func:`focal_loss` of ``softmax(scores)`` over the classes; shape ``(N,)``.

    ``log(p)`` is taken from :func:`~gradcheck.nnet.activations.logsoftmax`, not as
    the log of a softmax: where a class's probability underflows the dtype (float16
    at a score gap of ~10), ``log`` of it would have an infinite gradient, ``1 / p``,
    for a loss whose gradient is bounded.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.losses import softmax_focal_loss
    >>> softmax_focal_loss(mg.Tensor([[0.0, 0.0]]), [1])
    Tensor([0.69314718])
    """
    y = _labels(targets, _rows(scores))
    log_p = get_item(logsoftmax(scores, axis=1), (np.arange(len(y)), y))
    return _focal(exp(log_p), log_p, alpha, gamma, constant)
