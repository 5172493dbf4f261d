"""The checking layer: is one op's gradient right at one input?

:func:`~gradcheck.checking.checker.check` resolves a target into arrays in, arrays out
(:mod:`~gradcheck.checking.target`, :mod:`~gradcheck.checking.signature`, and
:mod:`~gradcheck.checking.adapters` for torch and MyGrad), runs the structural checks,
then compares the analytic gradient with finite differences
(:mod:`~gradcheck.checking.numerical`, :mod:`~gradcheck.checking.compare`); the verdict is
data (:mod:`~gradcheck.checking.result`). :mod:`~gradcheck.checking.diagnostics` holds the
numbers behind ``gradcheck plot``.

It imports the engine (and :mod:`gradcheck.errors`), never the search or the front ends;
see docs/architecture.md.
"""
