"""One long-line encode in its own process, for a clean time and peak-memory figure:
`python -m benchmarks.long_child WHO DB REF MODEL PROSE MB`, WHO one of tokreg, sentencepiece
(the model file MODEL) or same (both at MB, and whether their ids agree). The line is the
prose file repeated to MB megabytes, made before the baseline is taken."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import baseline_mb, peak_mb, report


def line(prose: str, mb: int) -> str:
    text = Path(prose).read_text(encoding="utf-8")
    size = mb * 1_000_000
    out = (text * (size // len(text) + 1))[:size]
    # Cut back to a whole character (the prose is ASCII nearly everywhere, but not quite).
    return out.encode("utf-8")[:size].decode("utf-8", errors="ignore")


def fresh_peak() -> float:
    """Resets this process's peak memory to what it holds now (Linux: writing 5 to
    /proc/self/clear_refs resets VmHWM) and returns it, in MB: making the line needed
    temporary copies, and their peak must not hide the encoder's."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    return baseline_mb()


def main() -> None:
    who, db, ref, model, prose, mb = sys.argv[1:7]
    text = line(prose, int(mb))
    n = len(text.encode("utf-8"))
    encode: Any
    if who in ("tokreg", "same"):
        import tokreg

        tok = tokreg.Registry(db).load(ref, lock=False)
        encode = tok.encode_ordinary
    if who == "same":
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=model)
        report(same=encode(text) == sp.encode(text))
        return
    if who == "sentencepiece":
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=model)
        encode = sp.encode
    encode("warm up")
    base = fresh_peak()
    t = time.perf_counter()
    ids = encode(text)
    seconds = time.perf_counter() - t
    report(seconds=seconds, ns_per_byte=seconds / n * 1e9, ids=len(ids), above_mb=peak_mb() - base)


if __name__ == "__main__":
    main()
