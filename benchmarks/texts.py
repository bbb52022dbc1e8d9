r"""The inputs of the peer benchmark (`versus`): natural texts by language, code, adversarial
runs, and the stream of distinct documents.

Natural texts come from the shared data and the kernel corpus built by
`shared/tools/big-corpus.sh` (`/work/corpus`, or `TOKREG_BENCH_CORPUS`); an input whose file is
absent is left out with a note. There is no German text in either, so the European-language
input is Italian (the kernel's Italian documentation), which has what German would add over
English: accented letters and longer words. Classical Chinese is the Tang and Song poems of
Debian's fortunes-zh (110 KB), made once with
`apt-get download fortunes-zh && dpkg-deb -x fortunes-zh_*.deb x && cat x/usr/share/games/fortunes/{tang300,song100}
| sed 's/\x1b\[[0-9;]*m//g' | grep -v '^%$' > $CORPUS/classical-zh.txt`.
"""

from __future__ import annotations

import os
import random
import sys
from functools import cache
from pathlib import Path

from benchmarks.common import DATA, stdlib_source

CORPUS = Path(os.environ.get("TOKREG_BENCH_CORPUS", "/work/corpus"))
#: Size of each adversarial input in the peer tables (the worst-case suite goes to 10 MB).
ADVERSARIAL_BYTES = 1_000_000
#: Cut for the natural inputs: enough for steady speed, short enough for the slow peers.
NATURAL_BYTES = 2_000_000
DOC_BYTES = 64 * 1024


def _read(path: Path, limit: int = NATURAL_BYTES) -> str | None:
    if not path.exists():
        print(f"note: {path} not found, left out", file=sys.stderr)
        return None
    with open(path, "rb") as fh:
        raw = fh.read(limit)
    return raw.decode("utf-8", errors="ignore")  # a cut may split the last character


def adversarial(size: int) -> dict[str, str]:
    """Long runs of one character (each one piece for the pre-tokenizer, except digits, which
    the cl100k/o200k patterns cut every three), and random bytes decoded with replacement."""
    return {
        f"'a' x {size / 1e6:g}M": "a" * size,
        f"spaces x {size / 1e6:g}M": " " * size,
        f"digits x {size / 1e6:g}M": "7" * size,
        f"'中' x {size / 1e6:g}M bytes": "中" * (size // 3),
        f"random bytes {size / 1e6:g} MB (replace)": random.Random(size).randbytes(size).decode("utf-8", "replace"),
    }


@cache
def natural() -> dict[str, str]:
    """Name -> text, by language, then code."""
    docs = CORPUS / "kernel-docs"
    found = {
        "English: kjv.txt": _read(DATA / "kjv.txt"),
        "English: dr.en.txt": _read(DATA / "dr.en.txt"),
        "Italian: kernel docs it_IT": _read(docs / "it_IT.txt"),
        "Japanese: kernel docs ja_JP": _read(docs / "ja_JP.txt"),
        "Korean: kernel docs ko_KR": _read(docs / "ko_KR.txt"),
        "Chinese: dr.zh-cn.txt": _read(DATA / "dr.zh-cn.txt"),
        "Chinese: kernel docs zh_CN": _read(docs / "zh_CN.txt"),
        "Chinese (trad.): kernel docs zh_TW": _read(docs / "zh_TW.txt"),
        "Chinese (classical): Tang and Song poems": _read(CORPUS / "classical-zh.txt"),
        "Code: Linux kernel source": _read(CORPUS / "kernel.txt"),
        "Code: Python stdlib": stdlib_source(NATURAL_BYTES),
    }
    return {k: v for k, v in found.items() if v}


def inputs() -> dict[str, str]:
    return {**natural(), **adversarial(ADVERSARIAL_BYTES)}


def _documents(text: str) -> list[str]:
    """`text` cut into documents of about DOC_BYTES, at line ends."""
    out, start = [], 0
    chars = max(1, int(DOC_BYTES * len(text) / max(1, len(text.encode()))))
    while start < len(text):
        end = text.find("\n", start + chars)
        end = len(text) if end < 0 else end + 1
        out.append(text[start:end])
        start = end
    return out


#: The compositions of the stream (`TOKREG_BENCH_STREAM_MIX`): "mixed" is the kernel source plus
#: every multilingual text (about 60% code at 100 MB); the others hold one kind of text only.
MIXES = ("mixed", "prose", "cjk", "code")
#: The lang-corpora folder (shared/tools/lang-corpora.sh), for more Japanese in the CJK stream.
LANGCORP = Path(os.environ.get("TOKREG_BENCH_LANGCORP", "/work/langcorp"))


def _all_documents(paths: list[Path], total_bytes: int) -> list[str]:
    """Documents of about DOC_BYTES from `paths` in turn, until `total_bytes` (or all of them)."""
    docs: list[str] = []
    have = 0
    for path in paths:
        if have >= total_bytes:
            break
        t = _read(path, total_bytes - have + DOC_BYTES)
        docs += _documents(t) if t else []
        have = sum(len(d.encode()) for d in docs)
    return docs


def stream(total_bytes: int, mix: str = "mixed") -> list[str]:
    """At least `total_bytes` of distinct documents of about 64 KB (fewer when the texts of
    `mix` run out), shuffled with a fixed seed. No document repeats, so a cache helps only as
    much as pieces recur across documents, as in a real dataset. "mixed": the kernel source
    cut in pieces, plus every multilingual text once; "prose": English and Italian
    documentation and the Bible; "cjk": the Chinese, Japanese and Korean texts; "code": the
    kernel source, then Python's standard library."""
    docs: list[str] = []
    if mix == "prose":
        docs_dir = CORPUS / "kernel-docs"
        paths = [DATA / "kjv.txt", DATA / "dr.en.txt", docs_dir / "it_IT.txt", docs_dir / "en.txt"]
        docs = _all_documents(paths, total_bytes)
    elif mix == "cjk":
        names = ("zh_CN", "zh_TW", "ja_JP", "ko_KR")
        paths = [CORPUS / "kernel-docs" / f"{n}.txt" for n in names] + [DATA / "dr.zh-cn.txt"]
        docs = _all_documents(paths + [LANGCORP / "ja-dominant.txt"], total_bytes)
    elif mix == "code":
        docs = _all_documents([CORPUS / "kernel.txt"], total_bytes // 2)
        have = sum(len(d.encode()) for d in docs)
        docs += _documents(stdlib_source(max(total_bytes - have, 0)))
    else:
        for name in ("zh_CN", "zh_TW", "ja_JP", "ko_KR", "it_IT"):
            t = _read(CORPUS / "kernel-docs" / f"{name}.txt", 1 << 30)
            docs += _documents(t) if t else []
        for name in ("kjv.txt", "dr.en.txt", "dr.zh-cn.txt"):
            t = _read(DATA / name, 1 << 30)
            docs += _documents(t) if t else []
        have = sum(len(d.encode()) for d in docs)
        kernel = _read(CORPUS / "kernel.txt", max(total_bytes - have, 0) + DOC_BYTES)
        docs += _documents(kernel) if kernel else []
    random.Random(12).shuffle(docs)
    return docs
