"""The autodiff engine: tensors, operations, the graph and backprop, the ops, with
MyGrad's API (docs/architecture.md, "engine").

Its modules are read at MyGrad's paths too: ``gradcheck.tensor_base`` is
``gradcheck.engine.tensor_base``, ``gradcheck.ops.shape`` is
``gradcheck.engine.ops.shape`` (the very module objects; ``gradcheck.ENGINE_MODULES``
and the alias finder in ``gradcheck/__init__.py``). This package imports nothing, so
that importing one module of the engine imports that module's needs alone.
"""
