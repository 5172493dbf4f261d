"""The framework ops modules are imported by the tests that skip without the
framework; --doctest-modules must not import them on its own."""

collect_ignore = [
    "torch_ops.py",
    "torch_beyond_ops.py",
    "mygrad_ops.py",
    "jax_order_ops.py",
    "torch_order_ops.py",
    "jax_tree_ops.py",
]
