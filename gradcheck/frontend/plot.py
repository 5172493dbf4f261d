"""Draw a :class:`~gradcheck.checking.diagnostics.Diagnosis` with matplotlib (``gradcheck plot``).

Imported only by the ``plot`` command; matplotlib is the optional extra ``plot``. The
figure is built without pyplot (no global state, no display needed).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from gradcheck.checking.adapters import require
from gradcheck.checking.diagnostics import Diagnosis

__all__ = ["save_figure"]


def _reference(ax: Any, h: np.ndarray, anchor_h: float, anchor_r: float, power: int, **kw: Any):
    """A line of slope ``power`` through ``(anchor_h, anchor_r)``."""
    ax.loglog(h, anchor_r * (h / anchor_h) ** power, **kw)


def _step_panel(ax: Any, d: Diagnosis) -> None:
    ok = d.errors > 0
    ax.loglog(
        d.steps[ok], d.errors[ok], "o-", ms=3, color="C0", label="|central difference - ⟨g, d⟩|"
    )
    ax.axvline(
        d.chosen_step, color="C3", ls="--", lw=1, label=f"checker's step {d.chosen_step:.1e}"
    )
    h, e = d.steps[ok], d.errors[ok]
    if e.size >= 6:
        # Reference slopes through points near the ends, where each error dominates.
        _reference(
            ax,
            d.steps,
            float(h[-3]),
            float(e[-3]),
            2,
            color="0.6",
            ls=":",
            lw=1,
            label="slope 2 (truncation)",
        )
        _reference(
            ax,
            d.steps,
            float(h[2]),
            float(e[2]),
            -1,
            color="0.3",
            ls=":",
            lw=1,
            label="slope -1 (round-off)",
        )
    finite = d.errors[ok]
    if finite.size:
        ax.set_ylim(max(finite.min() / 10, 1e-18), finite.max() * 10)
    ax.set_xlabel("step h")
    ax.set_ylabel("error of the derivative along d")
    ax.set_title("Finite-difference error against step size")
    ax.legend(fontsize=7, loc="upper center")
    ax.grid(True, which="major", alpha=0.3)


def _taylor_panel(ax: Any, d: Diagnosis) -> None:
    ok = d.remainders > 0
    h, r = d.taylor_steps[ok], d.remainders[ok]
    ax.loglog(h, r, "o-", ms=3, color="C0", label="|s(x+hd) - s(x) - h⟨g, d⟩|")
    if r.size:
        top_h, top_r = float(h[-1]), float(r[-1])
        _reference(
            ax, h, top_h, top_r, 2, color="C2", ls="--", lw=1, label="slope 2: gradient right"
        )
        _reference(
            ax, h, top_h, top_r, 1, color="C3", ls="--", lw=1, label="slope 1: gradient wrong"
        )
        ax.set_ylim(max(r.min() / 10, 1e-20), r.max() * 10)
    ax.axhline(100 * d.noise, color="0.5", lw=0.8, ls=":", label="rounding level x 100")
    if math.isnan(d.slope):
        verdict = "slope undecided (linear along d?)"
    else:
        verdict = f"fitted slope {d.slope:.2f}: gradient {'right' if d.gradient_right else 'WRONG'}"
    ax.set_title(f"Taylor test — {verdict}")
    ax.set_xlabel("step h")
    ax.set_ylabel("remainder")
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, which="major", alpha=0.3)


def save_figure(d: Diagnosis, path: str | Path, *, seed: int | None = None) -> Path:
    """Draw both panels of ``d`` side by side and save them to ``path`` (the format
    from its suffix, e.g. ``.png``); returns the path."""
    require("matplotlib", needed_for="gradcheck plot")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.2), dpi=100, layout="constrained")
    step_ax, taylor_ax = fig.subplots(1, 2)
    _step_panel(step_ax, d)
    _taylor_panel(taylor_ax, d)
    shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in d.inputs)
    fig.suptitle(
        f"{d.target} at inputs {shapes}" + ("" if seed is None else f" (seed {seed})"),
        fontsize=10,
    )
    out = Path(path)
    fig.savefig(out)
    return out
