"""Progress of a long run on stderr: a one-line display on a terminal, or one JSON object per
line for pipelines (`--progress json`), or nothing (not a terminal, `--quiet`).

Phases, as the library reports them (phase, done, total):
- `read`: bytes read from disk of the corpus (total: their size; 0 when unknown, as for
  standard input), counted as they stream: shown with the rate and an ETA;
- `finish`: the counts being merged and sorted (and, beyond the memory budget, the runs
  spilled to disk);
- `merge`: merges done / merges to do (BPE, WordPiece), with the rate and an ETA;
- `tokenize` (`tokreg tokenize`): bytes read from disk, like `read`, with `documents` and
  `tokens` written so far (in the JSON line too) and their rate;
- `prepare`, `seed`, `lattice`: Unigram's preparation; `em`: done = EM round, total = the
  vocabulary size after it; `prune`: step of 3 within a round.

A JSON line: {"phase", "done", "total", "elapsed" (s), "rate" (per s, or null), "eta" (s, or
null)}; lines come at most ten times a second per phase, and always at a phase's end.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Optional, TextIO

_LABELS = {
    "read": "reading and counting",
    "tokenize": "tokenizing",
    "finish": "finishing the counts",
    "merge": "merging",
    "prepare": "preparing",
    "seed": "seeding",
    "lattice": "building lattices",
    "em": "EM",
    "prune": "pruning",
    "done": "done",
}


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    def __init__(self, stream: Optional[TextIO] = None, *, enabled: Optional[bool] = None, mode: str = "bar"):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.mode = mode
        self._t0 = time.monotonic()
        self._last = 0.0
        self._phase = ""
        self._phase_t0 = self._t0
        self._phase_done0 = 0

    @classmethod
    def for_mode(cls, mode: str, stream: Optional[TextIO] = None) -> Progress:
        """`auto` (a bar when stderr is a terminal), `bar`, `json` or `none`."""
        if mode == "json":
            return cls(stream, enabled=True, mode="json")
        if mode == "none":
            return cls(stream, enabled=False)
        return cls(stream, enabled=True if mode == "bar" else None)

    def __call__(self, phase: str, done: int, total: int, **detail: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if phase != self._phase:
            self._phase, self._phase_t0, self._phase_done0 = phase, now, done
        elif now - self._last < 0.1 and not (total and done >= total):
            return
        self._last = now
        spent = now - self._phase_t0
        rate = (done - self._phase_done0) / spent if spent > 0.05 and phase in ("read", "merge", "tokenize") else None
        eta = (total - done) / rate if rate and total and done <= total else None
        if self.mode == "json":
            line = {
                "phase": phase,
                "done": done,
                "total": total,
                "elapsed": round(now - self._t0, 3),
                "rate": None if rate is None else round(rate, 1),
                "eta": None if eta is None else round(eta, 1),
                **detail,
            }
            self.stream.write(json.dumps(line) + "\n")
            self.stream.flush()
            return
        text = self._text(phase, done, total, rate, eta, now)
        if detail:
            tokens = detail.get("tokens", 0)
            tps = f" ({tokens / (now - self._phase_t0) / 1e6:,.1f} M/s)" if now - self._phase_t0 > 0.05 else ""
            text += f"  {detail.get('documents', 0):,} docs, {tokens:,} tokens{tps}"
        self.stream.write("\r\x1b[K" + text)
        self.stream.flush()

    def _text(self, phase: str, done: int, total: int, rate: Optional[float], eta: Optional[float], now: float) -> str:
        label = _LABELS.get(phase, phase)
        if phase in ("read", "tokenize"):
            size = f"{done / 1e6:,.1f}/{total / 1e6:,.1f} MB" if total else f"{done / 1e6:,.1f} MB"
            text = f"{label} {size}"
            if rate:
                text += f"  {rate / 1e6:,.1f} MB/s"
        elif phase == "merge":
            text = f"{label} {done:,}/{total:,}"
            if rate:
                text += f"  {rate:,.0f}/s"
        elif phase == "em":
            text = f"{label} round {done + 1}, {total:,} pieces"
        elif phase == "prune":
            text = f"{label} (step {done}/{total})"
        elif phase in ("finish", "done"):
            text = label
        else:
            text = f"{label} {done:,}/{total:,}" if total else label
        if total and phase in ("read", "merge", "tokenize"):
            text += f"  {100 * done // total}%"
        if eta is not None:
            text += f"  ETA {_clock(eta)}"
        return text + f"  [{_clock(now - self._t0)}]"

    def clear(self) -> None:
        if self.enabled and self.mode != "json" and self._phase:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
