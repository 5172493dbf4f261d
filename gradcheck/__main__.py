"""``python -m gradcheck``: the ``gradcheck`` command."""

from gradcheck.cli import main

# Guarded: a worker process of `--jobs N` (started with spawn) imports the main module.
if __name__ == "__main__":
    main()
