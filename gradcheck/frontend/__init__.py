"""The front ends: what a user runs, and the files and text they read.

The ``gradcheck`` command (:mod:`~gradcheck.cli`, with target loading in
:mod:`~gradcheck.frontend.loading`, settings from ``pyproject.toml`` in
:mod:`~gradcheck.frontend.config`, parallel jobs in :mod:`~gradcheck.frontend.runner`),
the pytest plugin (:mod:`~gradcheck.pytest_plugin`), and the outputs: tables and
JSON (:mod:`~gradcheck.frontend.render`, :mod:`~gradcheck.frontend.report`), baselines
(:mod:`~gradcheck.frontend.baseline`), JUnit XML and GitHub annotations
(:mod:`~gradcheck.frontend.ci_report`), figures (:mod:`~gradcheck.frontend.plot`).

Nothing below imports these modules; see docs/architecture.md.
"""
