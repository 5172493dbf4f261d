"""The framework ops modules (``*_ops.py``: torch, JAX, MyGrad) are imported by the
tests that skip without the framework; --doctest-modules must not import them on its
own (on a fresh machine, without the frameworks, that import is an error)."""

collect_ignore_glob = ["*_ops.py"]
