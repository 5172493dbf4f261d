"""``python -m gradcheck``: the ``gradcheck`` command."""

from gradcheck.cli import main

main()
