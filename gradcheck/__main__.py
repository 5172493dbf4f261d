"""``python -m gradcheck`` and the ``gradcheck`` script: the ``gradcheck`` command."""


def run() -> None:
    """The command, on this process's own command line. ``verify``'s zygote starts
    first, and imports beside the command's own imports (gradcheck.frontend.early)."""
    from gradcheck.frontend.early import start

    start()
    from gradcheck.cli import main

    main()


# Guarded: a worker process of `--jobs N` (started with spawn) imports the main module.
if __name__ == "__main__":
    run()
