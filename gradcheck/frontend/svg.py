"""Small line and scatter charts as inline SVG, for the HTML report: no matplotlib, no
script, no network. One function, :func:`chart`, draws series of points on linear or
logarithmic axes with ticks, labels, a legend and optional vertical markers.

Points that cannot be placed (not finite, or not positive on a log axis) are left out
and a series' line breaks there; a chart with no point left says so in its middle.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

__all__ = ["Series", "chart"]

#: The chart's margins (pixels) around the plotting area: left, right, top, bottom.
#: The title and the legend (one row) are in the top margin, above the data.
_MARGIN = (64, 16, 44, 44)


@dataclass
class Series:
    """One series: ``x`` and ``y`` of the same length; ``style`` is ``"line"``,
    ``"markers"`` or ``"both"``; ``dash`` an SVG stroke-dasharray ("" for solid)."""

    label: str
    x: Sequence[float] | np.ndarray
    y: Sequence[float] | np.ndarray
    color: str
    style: str = "both"
    dash: str = ""


def _usable(values: np.ndarray, log: bool) -> np.ndarray:
    ok = np.isfinite(values)
    return ok & (values > 0) if log else ok


def _ticks(low: float, high: float, log: bool) -> list[float]:
    """Tick values in data units: whole decades on a log axis (at most 8), round
    numbers on a linear one (about 5)."""
    if log:
        first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
        every = max(1, math.ceil((last - first + 1) / 8))
        return [10.0**e for e in range(first, last + 1, every) if low <= 10.0**e <= high]
    raw = (high - low) / 5
    power = 10.0 ** math.floor(math.log10(raw))
    step = min((m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw), default=raw)
    start = math.ceil(low / step) * step
    return [start + k * step for k in range(int((high - start) / step + 1e-9) + 1)]


def _label(value: float, log: bool) -> str:
    if log:
        return f"1e{round(math.log10(value))}"
    return f"{value:.3g}" if value != 0 else "0"


def _bounds(values: np.ndarray, log: bool) -> tuple[float, float]:
    low, high = float(values.min()), float(values.max())
    if log:
        if high / low < 10:
            low, high = low / 3, high * 3
        return low, high
    if high == low:
        pad = abs(low) * 0.1 or 1.0
        return low - pad, high + pad
    pad = (high - low) * 0.05
    return low - pad, high + pad


def chart(
    series: Sequence[Series],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    log_x: bool = False,
    log_y: bool = False,
    vlines: Sequence[tuple[float, str, str]] = (),
    width: int = 520,
    height: int = 320,
) -> str:
    """An ``<svg>`` element drawing ``series``; ``vlines`` are ``(x, label, color)``
    vertical markers (drawn where they fall inside the x range)."""
    left, right, top, bottom = _MARGIN
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [np.asarray(s.x, dtype=np.float64) for s in series]
    ys = [np.asarray(s.y, dtype=np.float64) for s in series]
    keep = [_usable(x, log_x) & _usable(y, log_y) for x, y in zip(xs, ys)]
    all_x = np.concatenate([x[k] for x, k in zip(xs, keep)] or [np.empty(0)])
    all_y = np.concatenate([y[k] for y, k in zip(ys, keep)] or [np.empty(0)])
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13" '
        f'font-weight="bold">{escape(title)}</text>',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#888"/>',
    ]
    if all_x.size == 0:
        parts.append(
            f'<text x="{left + plot_w / 2}" y="{top + plot_h / 2}" text-anchor="middle" '
            'fill="#a00">no point to draw (every value is zero or not finite)</text></svg>'
        )
        return "".join(parts)
    (x0, x1), (y0, y1) = _bounds(all_x, log_x), _bounds(all_y, log_y)

    def place(values: np.ndarray, lo: float, hi: float, log: bool) -> np.ndarray:
        if log:
            values, lo, hi = np.log10(values), math.log10(lo), math.log10(hi)
        return (values - lo) / (hi - lo)

    def px(x: np.ndarray) -> np.ndarray:
        return left + place(x, x0, x1, log_x) * plot_w

    def py(y: np.ndarray) -> np.ndarray:
        return top + (1 - place(y, y0, y1, log_y)) * plot_h

    box = (left, top, plot_w, plot_h)
    parts.extend(_gridlines(px, _ticks(x0, x1, log_x), log_x, box, vertical=True))
    parts.extend(_gridlines(py, _ticks(y0, y1, log_y), log_y, box, vertical=False))
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 8}" text-anchor="middle">'
        f"{escape(xlabel)}</text>"
        f'<text x="14" y="{top + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + plot_h / 2})">{escape(ylabel)}</text>'
    )
    for value, label, color in vlines:
        if x0 <= value <= x1 and (value > 0 or not log_x):
            at = float(px(np.array([value]))[0])
            parts.append(
                f'<line x1="{at:.1f}" y1="{top}" x2="{at:.1f}" y2="{top + plot_h}" '
                f'stroke="{color}" stroke-dasharray="5 3"><title>{escape(label)}</title></line>'
            )
    for s, x, y, k in zip(series, xs, ys, keep):
        parts.append(_draw(s, px(np.where(k, x, 1.0)), py(np.where(k, y, 1.0)), k))
    parts.append(_legend(series, left, 26))
    parts.append("</svg>")
    return "".join(parts)


def _gridlines(
    place: Callable[[np.ndarray], np.ndarray],
    ticks: Sequence[float],
    log: bool,
    box: tuple[float, float, float, float],
    *,
    vertical: bool,
) -> list[str]:
    """A grid line and its label at each tick of one axis (``vertical``: the x axis's,
    labelled below the plot; else the y axis's, labelled on its left)."""
    left, top, plot_w, plot_h = box
    out = []
    for value in ticks:
        at = float(place(np.array([value]))[0])
        if vertical:
            out.append(
                f'<line x1="{at:.1f}" y1="{top}" x2="{at:.1f}" y2="{top + plot_h}" stroke="#eee"/>'
                f'<text x="{at:.1f}" y="{top + plot_h + 14}" text-anchor="middle">'
                f"{_label(value, log)}</text>"
            )
        else:
            out.append(
                f'<line x1="{left}" y1="{at:.1f}" x2="{left + plot_w}" y2="{at:.1f}" '
                'stroke="#eee"/>'
                f'<text x="{left - 4}" y="{at + 4:.1f}" text-anchor="end">'
                f"{_label(value, log)}</text>"
            )
    return out


def _draw(s: Series, px: np.ndarray, py: np.ndarray, keep: np.ndarray) -> str:
    out = [f'<g class="series" data-label="{escape(s.label)}">']
    if s.style in ("line", "both"):
        run: list[str] = []
        for x, y, ok in [*zip(px, py, keep), (0.0, 0.0, False)]:
            if ok:
                run.append(f"{x:.1f},{y:.1f}")
            elif run:  # a line breaks where a point is left out
                dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
                out.append(
                    f'<polyline points="{" ".join(run)}" fill="none" stroke="{s.color}" '
                    f'stroke-width="1.5"{dash}/>'
                )
                run = []
    if s.style in ("markers", "both"):
        for x, y, ok in zip(px, py, keep):
            if ok:
                out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{s.color}"/>')
    out.append("</g>")
    return "".join(out)


def _legend(series: Sequence[Series], left: float, top: float) -> str:
    # One row in the top margin, so that it never hides a point.
    out, x = [], left
    for s in series:
        dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
        out.append(
            f'<line x1="{x:.1f}" y1="{top + 6}" x2="{x + 18:.1f}" y2="{top + 6}" '
            f'stroke="{s.color}" stroke-width="2"{dash}/>'
            f'<text x="{x + 22:.1f}" y="{top + 10}">{escape(s.label)}</text>'
        )
        x += 22 + 6.2 * len(s.label) + 16
    return "".join(out)
