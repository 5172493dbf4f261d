"""The search layer: is an op's gradient right on every input Hypothesis can find?

:func:`~gradcheck.search.verifier.verify` draws inputs (:mod:`gradcheck.strategies`) as an
op's description says (:mod:`~gradcheck.search.description`, what
:func:`gradcheck.describe` attaches), checks each with the checking layer, and shrinks a
failure to a minimal example.

It imports the checking layer and the engine, never the front ends; see
docs/architecture.md.
"""
