"""``python -m gradcheck``: the ``gradcheck`` command."""

# Guarded: a worker process of `--jobs N` (started with spawn) imports the main module.
if __name__ == "__main__":
    # `verify`'s zygote starts first, and imports beside the command's own imports
    # (gradcheck.frontend.early).
    from gradcheck.frontend.early import start

    start()

from gradcheck.cli import main

if __name__ == "__main__":
    main()
