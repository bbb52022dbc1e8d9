"""Charts drawn in the page as inline SVG: this module computes the geometry (scaled points,
axis ticks), `templates/chart.html` draws it. No script and no chart library: the page is
complete as served, prints, and reads the same in the JSON twin (which carries the numbers).

    >>> c = line_chart([1, 2, 3], {"log-likelihood": [-9.0, -7.5, -7.1]})
    >>> c["series"][0]["points"]          # "x,y x,y ..." in SVG user units
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Optional

WIDTH, HEIGHT = 560, 220
LEFT, RIGHT, TOP, BOTTOM = 64, 64, 16, 36
COLOURS = ("#2563eb", "#ea580c", "#16a34a", "#9333ea")


def _ticks(lo: float, hi: float, n: int = 4, *, whole: bool = False) -> list[float]:
    if hi <= lo:
        return [lo]
    step = 10 ** math.floor(math.log10((hi - lo) / n))
    if whole:
        step = max(step, 1)
    for m in (1, 2, 5, 10):
        if (hi - lo) / (step * m) <= n:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [first + k * step for k in range(int((hi - first) / step + 1e-9) + 1)]


def _label(v: float) -> str:
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e4:
        return f"{v / 1e3:.3g}k"
    return f"{v:.4g}"


def line_chart(
    xs: Sequence[float], series: Mapping[str, Sequence[Optional[float]]], *, x_label: str = ""
) -> dict[str, Any]:
    """Up to two series over `xs`: the first on the left axis, the second on the right one."""
    xs = list(xs)
    x_lo, x_hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    x_span = (x_hi - x_lo) or 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(x: float) -> float:
        return LEFT + (x - x_lo) / x_span * plot_w

    out: list[dict[str, Any]] = []
    for k, (name, ys) in enumerate(list(series.items())[:2]):
        vals = [y for y in ys if y is not None and math.isfinite(y)]
        if not vals:
            continue
        lo, hi = min(vals), max(vals)
        if hi == lo:
            lo, hi = lo - 1, hi + 1
        pad = (hi - lo) * 0.05
        lo, hi = lo - pad, hi + pad

        def sy(y: float, lo: float = lo, hi: float = hi) -> float:
            return TOP + (hi - y) / (hi - lo) * plot_h

        pts = [(sx(x), sy(y)) for x, y in zip(xs, ys) if y is not None and math.isfinite(y)]
        out.append(
            {
                "name": name,
                "colour": COLOURS[k],
                "side": "left" if k == 0 else "right",
                "points": " ".join(f"{x:.1f},{y:.1f}" for x, y in pts),
                "dots": [{"x": round(x, 1), "y": round(y, 1)} for x, y in pts] if len(pts) <= 60 else [],
                "ticks": [{"y": round(sy(t), 1), "label": _label(t)} for t in _ticks(lo, hi)],
            }
        )
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "top": TOP,
        "bottom": HEIGHT - BOTTOM,
        "x_label": x_label,
        "x_ticks": [
            {"x": round(sx(t), 1), "label": _label(t)}
            for t in _ticks(x_lo, x_hi, 6, whole=all(float(x).is_integer() for x in xs))
        ]
        if xs
        else [],
        "series": out,
    }


def bars(values: Mapping[str, float]) -> list[dict[str, Any]]:
    """Horizontal bars: each value with its share of the largest, in percent."""
    top = max(values.values(), default=0) or 1
    return [{"label": k, "value": v, "pct": round(100 * v / top, 1)} for k, v in values.items()]
