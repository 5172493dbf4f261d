"""NumPy interoperability: NumPy functions called on tensors build graph ops.

``Tensor.__array_ufunc__`` and ``Tensor.__array_function__`` hand over to
:func:`array_ufunc` and :func:`array_function`, so that ``np.sin(t)``,
``np.add(t, u)``, ``ndarray + t``, ``np.sum(t, axis=0)`` or ``np.mean(t)`` run
``gradcheck.sin``, ``gradcheck.add``... and return tensors with a graph.

The dispatch tables live in :mod:`gradcheck._utils.overrides`, below the tensor module,
and the op families fill them: a NumPy function and a gradcheck op of the same name
are the same operation (MyGrad's names and arguments are NumPy's), so a new op of a
family is dispatched without further registration. :func:`register` (or the decorator
:func:`implements_numpy_override`) adds a pair whose names differ
(``numpy.linalg.norm``, say). This module is their public path.

What is not differentiable is said so, never silently dropped from the graph (how,
in :mod:`gradcheck._utils.overrides`).

Examples
--------
>>> import numpy as np
>>> import gradcheck as mg
>>> x = mg.Tensor([0.0, 1.0])
>>> y = np.sum(np.exp(x) * np.array([2.0, 3.0]))
>>> y.backward()
>>> x.grad
array([2.        , 8.15484549])
>>> np.less(x, 0.5)
array([ True, False])
"""

from __future__ import annotations

from gradcheck.engine._utils.overrides import UFUNCS as UFUNCS  # (read at this path too)
from gradcheck.engine._utils.overrides import array_function, array_ufunc, register
from gradcheck.engine._utils.overrides import implements_numpy_override as implements_numpy_override
from gradcheck.engine._utils.overrides import registries as registries

__all__ = ["array_function", "array_ufunc", "register"]
