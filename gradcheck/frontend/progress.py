"""What ``gradcheck verify`` says while it runs, before its report.

- One line per finished target, as it finishes (in the order targets finish, with
  ``--jobs`` too), with the overall count: ``[2/5] ops:Softplus passed (100 examples,
  1.58 s)``. Off a terminal these plain lines are all there is, so that a CI log shows
  the run going (some CI systems stop a job after minutes without output).
- On a terminal, also a live line at the bottom, rewritten in place: the count and the
  examples of the targets being checked (``[2/5] ops:Matmul 37/100``). Not with
  ``TERM=dumb`` (a terminal that cannot move the cursor): escape codes, none at all.
- Before the first target starts, when the targets import a framework (whose import
  takes seconds): ``loading torch...``, as the live line on a terminal, else as one
  plain line (:mod:`gradcheck.frontend.preload`).

``-q`` turns both off. The lines go to the stream the report goes to, unless the
report is a document (``--format json``): then to stderr. The live line goes to stderr
when that is a terminal. Nothing here imports NumPy or measures anything.
"""

from __future__ import annotations

import os
import shutil
import time
from typing import Any, TextIO

import click

from gradcheck.checking.vocabulary import Verdict

__all__ = ["COLOR_CHOICES", "Progress", "is_tty", "wants_color", "can_redraw"]

#: ``--color``'s values, the default first.
COLOR_CHOICES = ("auto", "always", "never")

#: The live line is rewritten at most this often (seconds).
REDRAW_INTERVAL = 0.1


def is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def can_redraw(stream: Any) -> bool:
    """A terminal on which a line can be rewritten in place (not ``TERM=dumb``)."""
    return is_tty(stream) and os.environ.get("TERM") != "dumb"


def wants_color(choice: str, stream: Any) -> bool:
    """``--color``: ``always``, ``never``, or ``auto``: colour on a terminal that is not
    ``TERM=dumb``, unless ``NO_COLOR`` is set (no-color.org), or anywhere when
    ``FORCE_COLOR`` is (force-color.org); NO_COLOR wins over FORCE_COLOR, as in pytest.
    An empty variable counts as unset."""
    if choice != COLOR_CHOICES[0]:
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return can_redraw(stream)


_STYLE: dict[str, dict[str, Any]] = {
    Verdict.PASSED: {"fg": "green"},
    Verdict.FAILED: {"fg": "red", "bold": True},
    Verdict.TIMED_OUT: {"fg": "red", "bold": True},
    Verdict.INCONCLUSIVE: {"fg": "yellow"},
    Verdict.NOT_RUN: {"fg": "yellow"},
}


class Progress:
    """The lines of one run of ``total`` targets.

    ``lines``: where the line per finished target goes (None: no lines); ``live``:
    the terminal the live line is drawn on (None: no live line).
    """

    def __init__(
        self, total: int, lines: TextIO | None, live: TextIO | None, color: bool = False
    ) -> None:
        self.total, self.lines, self.live, self.color = total, lines, live, color
        self.finished = 0
        self._running: dict[int, tuple[str, int, int]] = {}  # index -> name, done, total
        self._drawn = False
        self._last_draw = 0.0
        #: Whether a line was written (the report is then set off by a blank line).
        self.wrote = False
        #: The live line until the first target starts (``loading torch...``).
        self._loading: str | None = None

    # -- what happens
    def note(self, text: str) -> None:
        """A plain line before the run (the configuration file used)."""
        self._write(text)

    def loading(self, what: str) -> None:
        """What the run is loading before its first target starts (``torch``: a
        framework's import takes seconds): the live line on a terminal, else one
        plain line."""
        text = f"loading {what}..."
        if self.live is not None:
            self._loading = text
            self._draw(force=True)
        else:
            self._write(text)

    def started(self, index: int, name: str) -> None:
        self._loading = None
        self._running[index] = (name, 0, 0)
        self._draw(force=True)

    def examples(self, index: int, done: int, total: int) -> None:
        if index in self._running:
            self._running[index] = (self._running[index][0], done, total)
        self._draw(force=done >= total)

    def finished_target(self, index: int, result: Any) -> None:
        """A target's result (a :class:`~gradcheck.search.verifier.VerifyResult`)."""
        self._running.pop(index, None)
        self.finished += 1
        self._write(self.line(result))
        self._draw(force=True)

    def close(self) -> None:
        self._loading = None
        self._running.clear()
        self._clear()

    # -- the text
    def line(self, result: Any) -> str:
        verdict = result.verdict if result.passed else result.verdict.upper().replace("_", " ")
        if self.color:
            verdict = click.style(verdict, **_STYLE.get(result.verdict, {}))
        found = result.failure.failure if result.failure is not None else None
        kind = f": {found.kind}" if found is not None else ""
        count = f"[{self.finished}/{self.total}]"
        examples = f"{result.examples} example{'' if result.examples == 1 else 's'}"
        return f"{count} {result.target} {verdict}{kind} ({examples}, {result.seconds:.2f} s)"

    def live_text(self) -> str:
        running = ", ".join(
            f"{name} {done}/{total}" if total else name
            for name, done, total in self._running.values()
        )
        text = f"[{self.finished}/{self.total}] {running}".rstrip()
        width = shutil.get_terminal_size((80, 24)).columns - 1
        return text if len(text) <= width else text[: max(0, width - 3)] + "..."

    # -- the streams
    def _write(self, text: str) -> None:
        if self.lines is None:
            return
        self._clear()
        click.echo(text, file=self.lines, color=self.color)
        self.lines.flush()
        self.wrote = True
        if self._loading is not None:
            self._draw(force=True)

    def _draw(self, force: bool = False) -> None:
        if self.live is None or not (self._running or self._loading):
            return
        now = time.monotonic()
        if not force and now - self._last_draw < REDRAW_INTERVAL:
            return
        self._last_draw = now
        text = self.live_text() if self._running else self._loading
        self.live.write(f"\r\x1b[K{text}")
        self.live.flush()
        self._drawn = True

    def _clear(self) -> None:
        if self.live is not None and self._drawn:
            self.live.write("\r\x1b[K")
            self.live.flush()
            self._drawn = False
