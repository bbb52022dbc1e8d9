"""Charts of what tokreg measured, for the terminal and for files. `tokreg show --history`: a
Unigram run's rounds as a small line chart drawn with characters, or with `--plot FILE.png` a PNG.
`tokreg eval --plot FILE.png`: an evaluation as a PNG. PNGs are drawn with matplotlib (optional:
`pip install matplotlib`); the web pages draw their own charts (serve/charts.py).

The evaluation chart, left: compression per language (or per text) with one bar per version
side by side, so the languages a vocabulary serves badly stand out; a version that loses a text
(unknown tokens, lines that do not decode back) has its bar hatched and labelled lossy, so its
fewer tokens never pass for better compression. Right, when two or more versions of one name
were measured: tokens per byte against vocabulary size, one line per name and text (hollow
points: lossy), which is where more vocabulary stops paying.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..data import RoundRow
from ..errors import InputError
from .evaluate import Evaluation, Score


def _pyplot(instead: str) -> Any:
    """matplotlib's pyplot, drawing to files; `instead` names what works without it."""
    try:  # matplotlib is optional and heavy: imported only when a PNG is asked for
        import matplotlib

        matplotlib.use("Agg")  # no display: draw to files
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError(f"--plot needs matplotlib (pip install matplotlib); {instead} needs nothing") from None
    return plt


def _save(plt: Any, fig: Any, path: str | os.PathLike[str]) -> None:
    fig.tight_layout()
    try:
        fig.savefig(path)
    except OSError as e:
        raise InputError(f"cannot write {os.fspath(path)!r}: {e.strerror}") from None
    finally:
        plt.close(fig)


# -- A training run's rounds -----------------------------------------------------------------------


def rounds_text(ys: Sequence[float], *, title: str, width: int = 60, height: int = 10) -> list[str]:
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


def rounds_png(rounds: Sequence[RoundRow], path: str | os.PathLike[str], *, title: str) -> None:
    """Log-likelihood and vocab size per round, as a PNG."""
    plt = _pyplot("the terminal chart")
    xs = [r.round for r in rounds]
    fig, ax1 = plt.subplots(figsize=(7, 4), dpi=120)
    ax1.plot(xs, [r.log_likelihood for r in rounds], marker="o", color="tab:blue")
    ax1.set_xlabel("round")
    ax1.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax1.set_ylabel("log-likelihood", color="tab:blue")
    ax2 = ax1.twinx()
    ax2.plot(xs, [r.vocab_size for r in rounds], marker="s", color="tab:orange")
    ax2.set_ylabel("vocab size", color="tab:orange")
    ax1.set_title(title)
    _save(plt, fig, path)


# -- An evaluation ---------------------------------------------------------------------------------


def _labels(scores: Sequence[Score]) -> dict[str, str]:
    """text fingerprint -> how the chart names the text: its language when every text has a
    language of its own, else its file name (with the language, when given)."""
    texts = list({s.text.fingerprint: s.text for s in scores}.values())
    langs = [t.language for t in texts]
    if all(langs) and len(set(langs)) == len(langs):
        return {t.fingerprint: str(t.language) for t in texts}
    return {t.fingerprint: f"{t.name} ({t.language})" if t.language else t.name for t in texts}


def _version_number(ref: str) -> int:
    number = ref.rpartition("@")[2]
    return int(number) if number.isdigit() else 0


def _by_size(scores: Sequence[Score], labels: dict[str, str]) -> dict[tuple[str, str], tuple[list[Score], list[Score]]]:
    """(name, text label) -> (the line: that name's latest version of each vocab size, by size;
    the earlier versions of a size already on the line, drawn as loose points), where a name
    has versions of two or more sizes. One point per size keeps the line a function of the size:
    two versions of one size joined would draw a vertical stroke that means nothing."""
    groups: dict[tuple[str, str], list[Score]] = {}
    for s in scores:
        groups.setdefault((s.name, labels[s.text.fingerprint]), []).append(s)
    out: dict[tuple[str, str], tuple[list[Score], list[Score]]] = {}
    for key, group in groups.items():
        latest: dict[int, Score] = {}
        for s in sorted(group, key=lambda s: _version_number(s.ref)):
            latest[s.vocab_size] = s  # the highest version number of each size wins
        if len(latest) < 2:
            continue
        line = sorted(latest.values(), key=lambda s: s.vocab_size)
        kept = {id(s) for s in line}
        out[key] = (line, [s for s in group if id(s) not in kept])
    return out


def evaluation_png(ev: Evaluation, path: str | os.PathLike[str]) -> None:
    """Writes the chart of `ev` to `path` as a PNG."""
    plt = _pyplot("the table")
    refs = list(dict.fromkeys(s.ref for s in ev.scores))
    names = _labels(ev.scores)
    labels = list(dict.fromkeys(names[s.text.fingerprint] for s in ev.scores))
    value = {(s.ref, names[s.text.fingerprint]): s.metrics["bytes_per_token"] for s in ev.scores}
    lossy = {(s.ref, names[s.text.fingerprint]) for s in ev.scores if not s.lossless}
    sizes = {s.ref: s.vocab_size for s in ev.scores}
    lines = _by_size(ev.scores, names)
    panels = 2 if lines else 1
    fig, axes = plt.subplots(1, panels, figsize=(6.5 * panels, 5.0), dpi=120, squeeze=False)
    ax = axes[0][0]
    width = 0.8 / len(refs)
    colors = plt.get_cmap("tab10")
    for n, ref in enumerate(refs):
        xs = [i + (n - (len(refs) - 1) / 2) * width for i in range(len(labels))]
        ys = [value.get((ref, lab), 0.0) for lab in labels]
        bars = ax.bar(xs, ys, width * 0.92, color=colors(n % 10))
        # a version that loses a text wins no compression there: its bar is hatched and says so
        marked = [(ref, lab) in lossy for lab in labels]
        for bar, m in zip(bars, marked):
            if m:
                bar.set_hatch("///")
                bar.set_edgecolor("black")
                bar.set_alpha(0.55)
        texts = [(f"{y:.2f}" + ("\nlossy" if m else "")) if y else "" for y, m in zip(ys, marked)]
        ax.bar_label(bars, labels=texts, fontsize=7, padding=2)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("bytes per token (higher: fewer tokens)")
    by_language = all(s.text.language for s in ev.scores) and len(labels) == len({s.text.language for s in ev.scores})
    ax.set_title("Compression by " + ("language" if by_language else "text"))
    ax.margins(y=0.12)
    # below the axes, one column per version: inside, it would cover the tallest bars. The
    # handles are made here: a bar's own would carry its hatch to the version's entry.
    Patch = plt.matplotlib.patches.Patch
    handles = [Patch(facecolor=colors(n % 10), label=f"{ref} ({sizes[ref]:,})") for n, ref in enumerate(refs)]
    if lossy:
        handles.append(
            Patch(
                facecolor="white",
                edgecolor="black",
                hatch="///",
                label="lossy on that text (unknown tokens, lines lost)",
            )
        )
    ax.legend(
        handles=handles,
        fontsize=8,
        frameon=False,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.09),
        ncol=min(len(handles), 3),
    )
    ax.spines[["top", "right"]].set_visible(False)
    if lines:
        ax2 = axes[0][1]
        loose_label = "an earlier version of a size on the line"
        for n, ((name, label), (group, earlier)) in enumerate(sorted(lines.items())):
            xs = [s.vocab_size for s in group]
            ys = [1.0 / s.metrics["bytes_per_token"] for s in group]
            line = ax2.plot(xs, ys, marker="o", label=f"{name} · {label}", color=colors(n % 10))[0]
            if earlier:
                ax2.plot(
                    [s.vocab_size for s in earlier],
                    [1.0 / s.metrics["bytes_per_token"] for s in earlier],
                    "x",
                    color=line.get_color(),
                    label=loose_label,
                )
                loose_label = "_"  # one legend entry for every name's loose points
            # hollow points: sizes that lose the text (see the bars)
            hollow = [i for i, s in enumerate(group) if not s.lossless]
            if hollow:
                ax2.plot(
                    [xs[i] for i in hollow],
                    [ys[i] for i in hollow],
                    "o",
                    markerfacecolor="white",
                    markeredgecolor=line.get_color(),
                )
        measured = sorted({s.vocab_size for group, _ in lines.values() for s in group})
        ax2.set_xscale("log")
        ax2.set_xticks(measured, [f"{x:,}" for x in measured])  # ticks at the sizes measured, not at powers
        ax2.minorticks_off()
        ax2.set_xlabel("vocabulary size")
        ax2.set_ylabel("tokens per byte (lower: better compression)")
        ax2.set_title("Tokens per byte against vocabulary size")
        ax2.legend(fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
        ax2.grid(alpha=0.3)
        ax2.spines[["top", "right"]].set_visible(False)
    _save(plt, fig, path)
