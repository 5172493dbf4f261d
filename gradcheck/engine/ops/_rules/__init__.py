"""The derivative rules of the engine's ops, one module per family of
:mod:`gradcheck.ops`: :class:`~gradcheck.operation.Operation` subclasses, arrays in and
arrays out, which know nothing of the functions that apply them.

They sit below :mod:`gradcheck.tensor_base` (whose operators and methods apply them)
and import nothing above :mod:`gradcheck.operation`; the documented functions of each
family (``gradcheck.ops.arithmetic.add``...) sit above it, and re-export the family's
rules (``gradcheck.ops.arithmetic.Add``, MyGrad's path). To change a derivative, edit
its rule here; to add an op, add a rule here and its function in the family module.
"""
