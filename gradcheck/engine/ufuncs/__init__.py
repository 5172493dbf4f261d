"""The ufunc types of gradcheck's elementwise ops, at MyGrad's path ``mygrad.ufuncs``.

``gradcheck.add``, ``gradcheck.exp`` and the other elementwise ops are ufuncs: classes
made by :class:`ufunc_creator`, called with NumPy's conventions (``out=``, ``where=``,
``dtype=``, plus ``constant=``) and carrying the attributes of a :class:`numpy.ufunc`.
See :mod:`gradcheck.ufuncs._ufunc_creators`.
"""

from gradcheck.engine.ufuncs._ufunc_creators import (
    MyGradBinaryUfunc,
    MyGradUnaryUfunc,
    ufunc,
    ufunc_creator,
)

__all__ = ["ufunc_creator", "MyGradUnaryUfunc", "MyGradBinaryUfunc", "ufunc"]
