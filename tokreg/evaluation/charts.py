"""Training curves: a small line chart drawn with characters for the terminal, or a PNG via
matplotlib (an optional dependency: `pip install matplotlib`)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..errors import InputError


def text_chart(ys: Sequence[float], *, title: str, width: int = 60, height: int = 10) -> list[str]:
    """A line chart of `ys` (one point per x, left to right), as lines of text."""
    if not ys:
        return [f"{title}: no data"]
    lo, hi = min(ys), max(ys)
    span = (hi - lo) or 1.0
    cols = min(width, max(len(ys), 2))
    grid = [[" "] * cols for _ in range(height)]
    for c in range(cols):
        # the point nearest to this column
        y = ys[round(c * (len(ys) - 1) / (cols - 1))] if len(ys) > 1 else ys[0]
        r = height - 1 - round((y - lo) / span * (height - 1))
        grid[r][c] = "•"
    label_w = max(len(f"{hi:,.4g}"), len(f"{lo:,.4g}"))
    lines = [title]
    for r, row in enumerate(grid):
        label = f"{hi:,.4g}" if r == 0 else f"{lo:,.4g}" if r == height - 1 else ""
        lines.append(f"{label:>{label_w}} │{''.join(row)}")
    lines.append(" " * label_w + " └" + "─" * cols)
    lines.append(" " * label_w + f"  {len(ys)} rounds, first to last")
    return lines


def png_chart(rounds: Sequence[dict[str, float]], path: str | os.PathLike[str], *, title: str) -> None:
    """Log-likelihood and vocab size per round, as a PNG."""
    try:  # matplotlib is optional and heavy: imported only when a PNG is asked for
        import matplotlib

        matplotlib.use("Agg")  # no display: draw to files
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot needs matplotlib (pip install matplotlib); the terminal chart needs nothing") from None
    xs = [r["round"] for r in rounds]
    fig, ax1 = plt.subplots(figsize=(7, 4), dpi=120)
    ax1.plot(xs, [r["log_likelihood"] for r in rounds], marker="o", color="tab:blue")
    ax1.set_xlabel("round")
    ax1.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax1.set_ylabel("log-likelihood", color="tab:blue")
    ax2 = ax1.twinx()
    ax2.plot(xs, [r["vocab_size"] for r in rounds], marker="s", color="tab:orange")
    ax2.set_ylabel("vocab size", color="tab:orange")
    ax1.set_title(title)
    fig.tight_layout()
    try:
        fig.savefig(path)
    except OSError as e:
        raise InputError(f"cannot write {os.fspath(path)!r}: {e.strerror}") from None
    finally:
        plt.close(fig)
