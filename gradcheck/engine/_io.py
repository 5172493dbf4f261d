"""``save`` and ``load``: a tensor's data and gradient in a ``.npz`` file (MyGrad's
``mygrad.save``/``mygrad.load``, at MyGrad's path)."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import numpy as np

from gradcheck.engine.tensor_base import Tensor

__all__ = ["load", "save"]


def save(file: str | Path | BinaryIO, tensor: Tensor) -> None:
    """Save ``tensor``'s data, and its gradient when it has one, to ``file`` (a path or
    a binary file object) in NumPy's ``.npz`` format: ``numpy.savez(file,
    data=tensor.data, grad=tensor.grad)``, without ``grad`` when it is None. A path
    without the ``.npz`` suffix gets it, as :func:`numpy.savez` does.

    Raises
    ------
    TypeError
        ``tensor`` is not a :class:`~gradcheck.Tensor`.

    Examples
    --------
    >>> import io
    >>> import gradcheck as mg
    >>> x = mg.arange(3.0)
    >>> (x * x).backward()
    >>> f = io.BytesIO()
    >>> mg.save(f, x)
    >>> _ = f.seek(0)
    >>> y = mg.load(f)
    >>> y, y.grad
    (Tensor([0., 1., 2.]), array([0., 2., 4.]))
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"save needs a Tensor; got an object of type {type(tensor)}")
    arrays = {"data": tensor._data}
    if tensor.grad is not None:
        arrays["grad"] = tensor.grad
    np.savez(file, **arrays)  # type: ignore[arg-type]


def load(file: str | Path | BinaryIO) -> Tensor:
    """The tensor that :func:`save` wrote to ``file``, with its gradient when one was
    saved. It is a new leaf tensor (no graph), constant as its dtype makes it (see
    :class:`~gradcheck.Tensor`).

    Examples
    --------
    >>> import io
    >>> import gradcheck as mg
    >>> f = io.BytesIO()
    >>> mg.save(f, mg.Tensor([1.0, 2.0]))
    >>> _ = f.seek(0)
    >>> mg.load(f).grad is None
    True
    """
    with np.load(file) as saved:
        tensor = Tensor(saved["data"])
        if "grad" in saved.files and not tensor.constant:
            tensor.grad = np.asarray(saved["grad"], dtype=tensor.dtype)
    return tensor
