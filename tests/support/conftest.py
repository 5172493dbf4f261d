"""tests/support holds no tests: the helpers and op modules here are imported by the
tests that use them (those that need torch, JAX or MyGrad skip without it);
--doctest-modules must not import them on its own (on a fresh machine, without the
frameworks, importing a framework's ops module is an error)."""

collect_ignore_glob = ["*.py"]
