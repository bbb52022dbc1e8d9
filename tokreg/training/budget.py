"""The memory budget of a training run (`--memory-limit`): parsing it, its default, and how it
is shared between counting and training.

Default: half of the machine's physical memory (a fixed number per machine, so the same
corpus gives the same result run after run; pass --memory-limit to get the same result on
machines of different sizes). The run records the limit it used.

Of the limit, `COUNT_SHARE` is for the counting table (beyond it the table is spilled to
disk, exactly, and merged at the end) and `TRAIN_SHARE` for the pieces given to the trainer:
when their estimated training memory (96 bytes + 24 per byte of piece, measured on the BPE
trainer) exceeds it, the most frequent pieces that fit are kept (count descending, then bytes
ascending) and the rest are dropped; the run records how many and how much of the corpus'
mass. The rest is for the process, the trainer's output and the recording.
"""

from __future__ import annotations

import os
import re
from typing import Optional

from ..errors import InputError

COUNT_SHARE = 0.35
TRAIN_SHARE = 0.45
#: Below this a run cannot do anything useful.
MINIMUM = 64 << 20

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse(text: str) -> int:
    """Bytes from `4G`, `512M`, `1.5G`, `100000000` (K, M, G, T are powers of 1024)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", str(text), re.IGNORECASE)
    if not m:
        raise InputError(f"--memory-limit {text!r} is not a size; write e.g. 4G, 512M or a number of bytes")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def machine_default() -> int:
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return max(MINIMUM, total // 2)


def effective(limit: Optional[int]) -> int:
    value = machine_default() if limit is None else int(limit)
    if value < MINIMUM:
        raise InputError(f"--memory-limit {_size(value)} is below the {MINIMUM >> 20}M tokreg needs to train; raise it")
    return value


def _size(n: int) -> str:
    """A byte count in the largest unit that keeps it whole or readable: 1K, 63.5M, 100."""
    for unit in ("T", "G", "M", "K"):
        if n >= _UNITS[unit]:
            return f"{n / _UNITS[unit]:.3g}{unit}"
    return str(n)


def shares(limit: int) -> tuple[int, int]:
    """(counting table budget, training pieces budget), in bytes."""
    return int(limit * COUNT_SHARE), int(limit * TRAIN_SHARE)
