"""Checking a stored version: its rows must hash to its recorded hash (xxh3-128 and sha256),
an encoder must build from them, and its sample strings must encode to the ids stored when it
was created.

    >>> reg.verify()            # every version
    [{'ref': 'gpt-mini@1', 'ok': True, 'hash': 'xxh3-128:…', 'samples': 6, 'problems': []}, …]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .content import digest
from .errors import TokregError
from .store.reads import StoredVersion
from .tokenizer import Tokenizer


def _short(ids: list[int]) -> str:
    return str(ids) if len(ids) <= 8 else "[" + ", ".join(map(str, ids[:8])) + ", …]"


def check(stored: StoredVersion, samples: Sequence[tuple[str, list[int]]]) -> dict[str, Any]:
    """Verifies one version read with `read_version(..., check=False)`; reports, never raises."""
    v = stored.info
    problems: list[str] = []
    if stored.hash != v.content_hash:
        problems.append(f"rows hash to {stored.hash}, but the version records {v.content_hash}")
    else:
        sha = digest(stored.content)[1]
        if sha != v.sha256:
            problems.append(f"rows hash to {sha}, but the version records {v.sha256}")
    checked = 0
    if not problems:
        try:
            tok = Tokenizer(stored.content, ref=v.ref, expect_hash=v.content_hash)
        except TokregError as e:
            problems.append(f"cannot build its encoder: {e}")
        else:
            for n, (text, want) in enumerate(samples):
                got = tok.encode_ordinary(text)
                checked += 1
                if got != want:
                    problems.append(f"sample {n} ({text[:30]!r}) encodes to {_short(got)}, stored {_short(want)}")
    return {
        "ref": v.ref,
        "hash": v.content_hash,
        "recomputed": stored.hash,
        "ok": not problems,
        "samples": checked,
        "problems": problems,
    }
